package scheduler

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/tandem-ml/tandem/core"
)

// samePlan reports whether g is the graph of the current plan: the one look at the graph a run
// takes (fingerprints are compared, never recomputed, on the way to running). During a
// GraphComputeReused call, the graph the plan last matched is the plan's without a look.
func (s *Scheduler) samePlan(g *core.Graph) bool {
	if s.plan == nil {
		return false
	}
	if s.reusing && s.plan.matched == g {
		s.trusted = true
		return true
	}
	if !s.matches(&s.plan.fp, g) {
		return false
	}
	s.plan.matched = g
	return true
}

// ensurePlan makes the current plan g's: it re-plans unless same (samePlan's answer for g).
func (s *Scheduler) ensurePlan(g *core.Graph, same bool) error {
	if same {
		return nil
	}
	s.dropPlan()
	p, err := s.makePlan(g)
	if err != nil {
		return err
	}
	s.plan = p
	s.galloc.SetAliases(p.aliases)
	return nil
}

// dropPlan forgets the current plan and takes back the memory it gave; runs in flight must be
// done.
func (s *Scheduler) dropPlan() {
	if s.plan != nil {
		s.plan.release()
		s.placedSpare = s.plan.placed[:0] // the next plan's report reuses the memory
	}
	s.plan = nil
	s.allocked = false
	s.galloc.SetAliases(nil)
}

// Reserve plans g and sizes every backend's compute buffer for it (use the largest graph you will
// run, so later graphs fit without growing buffers). A nil g is an error.
func (s *Scheduler) Reserve(g *core.Graph) error {
	if err := s.usable(); err != nil {
		return err
	}
	if g == nil {
		return fmt.Errorf("%w (Reserve)", errNilGraph)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.synchronize(); err != nil {
		return err
	}
	if err := s.ensurePlan(g, s.samePlan(g)); err != nil {
		return err
	}
	s.probe.analyses++
	if err := s.galloc.ReserveN(s.plan.aGraph, s.plan.nodeIDs, s.plan.leafIDs); err != nil {
		return core.Errorf("tandem: scheduler: reserve: %w", err)
	}
	// The allocator holds this plan now: the next run places it without analyzing it again.
	s.plan.reserved = true
	s.allocked = false
	s.addStats(func(st *Stats) { st.Reserves++ })
	return nil
}

// AllocGraph plans g (unless it is the graph already planned) and gives every tensor of it memory.
// A nil g is an error.
func (s *Scheduler) AllocGraph(g *core.Graph) error {
	if err := s.usable(); err != nil {
		return err
	}
	if g == nil {
		return fmt.Errorf("%w (AllocGraph)", errNilGraph)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.allocGraph(g)
}

func (s *Scheduler) allocGraph(g *core.Graph) error {
	same := s.samePlan(g)
	if same && s.allocked {
		return nil // nothing changes: runs in flight may go on
	}
	s.trusted = false // placed again below: the backends check the graph as it then is
	if err := s.synchronize(); err != nil {
		return err
	}
	if err := s.ensurePlan(g, same); err != nil {
		return err
	}
	p := s.plan
	// A plan the allocator already holds (Reserve, or an earlier allocation of it) is placed
	// again as it is: the fingerprint vouches for the graph, so the allocator need not look.
	if !p.reserved || s.galloc.PlaceAgain() != nil {
		s.probe.analyses++
		if err := s.galloc.AllocGraphN(p.aGraph, p.nodeIDs, p.leafIDs); err != nil {
			return core.Errorf("tandem: scheduler: allocating compute buffers: %w", err)
		}
		if s.galloc.Replanned() {
			s.addStats(func(st *Stats) { st.Reserves++ })
		}
		p.reserved = true
	}
	p.placed = s.galloc.AppendPlaced(p.placed[:0])
	p.fp.setPlaced(g)
	p.buildSlots()
	p.computeDeps()
	s.report(p) // after the dependencies: the dump shows what runs will wait for
	for _, c := range p.copies {
		clear(c.valid)
	}
	s.allocked = true
	return nil
}

// GraphCompute runs g: plans and allocates it when needed, copies split inputs, computes every split
// and waits. A nil g is an error.
func (s *Scheduler) GraphCompute(g *core.Graph) error {
	return s.GraphComputeContext(context.Background(), g)
}

// GraphComputeContext is GraphCompute that stops once ctx is done: no split starts (and no input
// is copied) after that, a backend that takes a context (a core.ContextComputer: the CPU, Vulkan,
// OpenGL and RPC backends) stops before its next node, and the error wraps ctx.Err() and names the split and backend. The
// graph's outputs are then undefined; the scheduler stays usable. A nil ctx means
// context.Background(); a nil g is an error.
func (s *Scheduler) GraphComputeContext(ctx context.Context, g *core.Graph) error {
	return s.graphCompute(ctx, g, false)
}

// graphCompute is GraphComputeContext, or GraphComputeReused when reused is set.
func (s *Scheduler) graphCompute(ctx context.Context, g *core.Graph, reused bool) error {
	if err := s.usable(); err != nil {
		return err
	}
	if g == nil {
		return fmt.Errorf("%w (GraphCompute)", errNilGraph)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if reused {
		s.reusing = true
		defer func() { s.reusing, s.trusted = false, false }()
	}
	if s.opts.Copies <= 1 {
		return s.computeSync(ctx, g)
	}
	if err := s.graphComputeAsync(ctx, g); err != nil {
		return err
	}
	return s.synchronize()
}

// GraphComputeReused is GraphComputeContext for a caller that runs the graph of its last run again
// with only tensor data changed since: no node or leaf of g, nor any field of theirs (shape,
// strides, op, parameters, sources, view, flags, buffer), was changed and no buffer of theirs
// freed, as llama.cpp trusts its reused graphs. When g is the graph the current plan was last
// checked against, the scheduler skips comparing every node and leaf with its plan and tells the
// backends that have it (core.ReusedComputer) that their splits are the graphs they computed
// last (a generated token of an MoE model: ~50 µs of 3.3 ms); for any other g it checks as
// GraphComputeContext does. A g changed against the promise runs on a plan that no longer fits
// it: the outputs are then undefined, and a backend's own checks may fail the run. A nil ctx
// means context.Background(); a nil g is an error.
func (s *Scheduler) GraphComputeReused(ctx context.Context, g *core.Graph) error {
	return s.graphCompute(ctx, g, true)
}

// computeSync runs g on the calling goroutine when splits run one after another (no pipelining,
// and Sequential, an eval callback or a single split): nothing is allocated per run. Graphs whose
// independent splits may run concurrently take the general path. Called with s.mu held.
func (s *Scheduler) computeSync(ctx context.Context, g *core.Graph) error {
	if err := s.synchronize(); err != nil { // runs started by GraphComputeAsync
		return err
	}
	if err := s.allocGraph(g); err != nil {
		return err
	}
	if err := core.CheckInputsSet(g); err != nil {
		return core.Errorf("tandem: scheduler: %w", err)
	}
	p, cb := s.plan, s.evalCB
	if !s.opts.Sequential && cb == nil && len(p.splits) >= 2 {
		if err := s.startRun(ctx, cb); err != nil {
			return err
		}
		return s.synchronize()
	}
	var copies, skips int
	var bytes int64
	var err error
	for _, sp := range p.splits {
		if err = s.runSplitSync(ctx, sp, cb, &copies, &skips, &bytes); err != nil {
			break
		}
	}
	s.addStats(func(st *Stats) {
		st.Runs++
		st.Copies += copies
		st.CopySkips += skips
		st.CopyBytes += bytes
	})
	for _, b := range s.backends {
		if e := b.Synchronize(); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// runSplitSync copies one split's inputs and computes it on the calling goroutine; a panic in a
// backend, a copy or the eval callback becomes the split's error, as on the general path.
func (s *Scheduler) runSplitSync(ctx context.Context, sp *split, cb EvalCallback, copies, skips *int, bytes *int64) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = core.Errorf("tandem: scheduler: split at node %d on %s panicked: %v", sp.start, s.backends[sp.backend].Name(), v)
		}
	}()
	if err := ctx.Err(); err != nil {
		return core.Errorf("tandem: scheduler: stopped before the split at node %d on %s: %w", sp.start, s.backends[sp.backend].Name(), err)
	}
	for _, c := range sp.inputs {
		n, skipped, err := s.copyInput(c, 0)
		if err != nil {
			return err
		}
		if skipped {
			*skips++
		} else {
			*copies++
			*bytes += n
		}
	}
	return s.computeSplit(ctx, sp, 0, cb, s.trusted)
}

// runState tracks one run of the plan: per split, when its input copies and its work are done.
type runState struct {
	ctx      context.Context
	slot     int
	reused   bool // a GraphComputeReused run of the plan's graph (computeSplit)
	copied   []chan struct{}
	done     []chan struct{}
	finished chan struct{}
	err      error
}

// GraphComputeAsync starts computing g and returns; Synchronize waits and returns the first error.
// Without Options.Parallel a call first waits for the previous run. With it, up to Options.Copies
// runs of the same graph are in flight: user inputs are snapshotted when the call returns (write
// the next input at once), and outputs are valid after Synchronize. A nil g is an error.
func (s *Scheduler) GraphComputeAsync(g *core.Graph) error {
	if err := s.usable(); err != nil {
		return err
	}
	if g == nil {
		return fmt.Errorf("%w (GraphComputeAsync)", errNilGraph)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.graphComputeAsync(context.Background(), g)
}

// graphComputeAsync allocates g when needed and starts a run; called with s.mu held.
func (s *Scheduler) graphComputeAsync(ctx context.Context, g *core.Graph) error {
	cb := s.evalCB
	pipelined := s.opts.Copies > 1 && cb == nil
	if !pipelined {
		if err := s.synchronize(); err != nil {
			return err
		}
	}
	if err := s.allocGraph(g); err != nil {
		return err
	}
	if err := core.CheckInputsSet(g); err != nil {
		return core.Errorf("tandem: scheduler: %w", err)
	}
	return s.startRun(ctx, cb)
}

// startRun starts a run of the current (allocated) plan; called with s.mu held. It may wait for
// the oldest run in flight, which never needs s.mu to finish.
func (s *Scheduler) startRun(ctx context.Context, cb EvalCallback) error {
	p := s.plan
	s.async.mu.Lock()
	for len(s.async.inflight) >= p.nCopies {
		oldest := s.async.inflight[0]
		s.async.mu.Unlock()
		<-oldest.finished
		s.async.mu.Lock()
		s.reap()
	}
	slot := s.async.runs % p.nCopies
	s.async.runs++
	var prev *runState
	if n := len(s.async.inflight); n > 0 {
		prev = s.async.inflight[n-1]
	}
	s.async.mu.Unlock()

	for _, sn := range p.snaps {
		if err := core.TensorCopy(sn.orig, sn.slots[slot]); err != nil {
			return core.Errorf("tandem: scheduler: snapshot of input %v: %w", sn.orig, err)
		}
	}
	rs := &runState{ctx: ctx, slot: slot, reused: s.trusted, finished: make(chan struct{}),
		copied: make([]chan struct{}, len(p.splits)), done: make([]chan struct{}, len(p.splits))}
	for i := range p.splits {
		rs.copied[i] = make(chan struct{})
		rs.done[i] = make(chan struct{})
	}
	s.async.mu.Lock()
	s.async.inflight = append(s.async.inflight, rs)
	s.async.mu.Unlock()
	go func() {
		rs.err = s.run(p, rs, prev, cb)
		close(rs.finished)
	}()
	return nil
}

// reap drops finished runs from the front of the in-flight list, keeping the first error.
// Called with s.async.mu held.
func (s *Scheduler) reap() {
	for len(s.async.inflight) > 0 {
		r := s.async.inflight[0]
		select {
		case <-r.finished:
		default:
			return
		}
		if r.err != nil && s.async.err == nil {
			s.async.err = r.err
		}
		s.async.inflight = s.async.inflight[1:]
	}
}

// Synchronize waits for every run in flight and for every backend, and returns the first error.
func (s *Scheduler) Synchronize() error {
	if err := s.usable(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.synchronize()
}

func (s *Scheduler) synchronize() error {
	s.async.mu.Lock()
	runs := append([]*runState(nil), s.async.inflight...)
	s.async.mu.Unlock()
	for _, r := range runs {
		<-r.finished
	}
	s.async.mu.Lock()
	s.reap()
	err := s.async.err
	s.async.err = nil
	s.async.mu.Unlock()
	for _, b := range s.backends {
		if e := b.Synchronize(); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// run executes the splits of p for one run: in order when sequential, else each as soon as the
// splits it depends on (in this run, and with pipelining in the previous one) are done. Every
// split's channels are closed even on failure, so later runs never wait forever.
func (s *Scheduler) run(p *plan, rs *runState, prev *runState, cb EvalCallback) error {
	var copies, skips, bytes atomic.Int64
	defer func() {
		s.addStats(func(st *Stats) {
			st.Runs++
			st.Copies += int(copies.Load())
			st.CopySkips += int(skips.Load())
			st.CopyBytes += bytes.Load()
		})
	}()
	var failed atomic.Bool
	runOne := func(i int, sp *split) (err error) {
		defer func() {
			// Runs execute on goroutines of their own, where a panic (in a backend, a copy or the
			// eval callback) would kill the process: it becomes the split's error.
			if v := recover(); v != nil {
				err = fmt.Errorf("tandem: scheduler: split at node %d on %s panicked: %v", sp.start, s.backends[sp.backend].Name(), v)
			}
			if err != nil {
				failed.Store(true)
			}
			closeOnce(rs.copied[i])
			close(rs.done[i])
		}()
		if failed.Load() {
			return nil
		}
		if err := rs.ctx.Err(); err != nil {
			return core.Errorf("tandem: scheduler: stopped before the split at node %d on %s: %w", sp.start, s.backends[sp.backend].Name(), err)
		}
		for _, c := range sp.inputs {
			n, skipped, err := s.copyInput(c, rs.slot)
			if err != nil {
				return err
			}
			if skipped {
				skips.Add(1)
			} else {
				copies.Add(1)
				bytes.Add(n)
			}
		}
		closeOnce(rs.copied[i])
		return s.computeSplit(rs.ctx, sp, rs.slot, cb, rs.reused)
	}
	waitPrev := func(sp *split) {
		if prev == nil {
			return
		}
		if sp.fifoPrev >= 0 {
			<-prev.done[sp.fifoPrev]
		}
		for _, i := range sp.crossDone {
			<-prev.done[i]
		}
		for _, i := range sp.crossCopied {
			<-prev.copied[i]
		}
	}
	if s.opts.Sequential || cb != nil || len(p.splits) < 2 {
		var first error
		for i, sp := range p.splits {
			waitPrev(sp)
			if err := runOne(i, sp); err != nil && first == nil {
				first = err
			}
		}
		return first
	}
	var running, concurrent atomic.Int32
	var eg errgroup.Group
	for i, sp := range p.splits {
		eg.Go(func() error {
			for _, d := range sp.deps {
				<-rs.done[d]
			}
			waitPrev(sp)
			if running.Add(1) > 1 {
				concurrent.Add(1)
			}
			defer running.Add(-1)
			return runOne(i, sp)
		})
	}
	err := eg.Wait()
	s.addStats(func(st *Stats) { st.Concurrent += int(concurrent.Load()) })
	return err
}

// closeOnce closes ch unless it is closed already (only its owner goroutine closes it).
func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

var hashSeed = maphash.MakeSeed()

// copyInput copies one split input into its pipeline slot; constants whose bytes have not changed
// since that slot's last copy are skipped.
func (s *Scheduler) copyInput(c *copyItem, slot int) (int64, bool, error) {
	src, dst := c.srcs[slot], c.dsts[slot]
	var h uint64
	if c.leaf {
		if data := src.Data(); data != nil {
			h = maphash.Bytes(hashSeed, data)
			if c.valid[slot] && h == c.hash[slot] {
				return 0, true, nil
			}
		}
	}
	be := s.backends[c.backend]
	if err := s.backends[c.srcBackend].Synchronize(); err != nil {
		return 0, false, err
	}
	if err := be.Synchronize(); err != nil {
		return 0, false, err
	}
	if err := core.TensorCopy(src, dst); err != nil {
		return 0, false, core.Errorf("tandem: scheduler: copying %v to %s: %w", src, be.Name(), err)
	}
	c.hash[slot], c.valid[slot] = h, c.leaf
	return src.NBytes(), false, nil
}

// computeSplit runs one split; with an eval callback it runs up to each node the callback asks for,
// shows it, and stops everything when the callback says so. reused: the run is a
// GraphComputeReused of the plan's graph, so a backend that is a core.ReusedComputer is told the
// split's graph is the one it computed last, unchanged.
func (s *Scheduler) computeSplit(ctx context.Context, sp *split, slot int, cb EvalCallback, reused bool) error {
	be := s.backends[sp.backend]
	g := sp.graphs[slot]
	if cb == nil {
		var err error
		if rc, ok := be.(core.ReusedComputer); ok && reused {
			err = rc.GraphComputeReused(ctx, g)
		} else {
			err = core.GraphComputeContext(ctx, be, g)
		}
		if err != nil {
			return core.Errorf("tandem: scheduler: split at node %d on %s: %w", sp.start, be.Name(), err)
		}
		return nil
	}
	for j0 := 0; j0 < len(sp.nodes); {
		j1 := j0
		for j1 < len(sp.nodes) && !cb(sp.users[j1], true) {
			j1++
		}
		end := min(j1+1, len(sp.nodes))
		if err := core.GraphComputeContext(ctx, be, g.View(j0, end)); err != nil {
			return core.Errorf("tandem: scheduler: split at node %d on %s: %w", sp.start, be.Name(), err)
		}
		if err := be.Synchronize(); err != nil {
			return err
		}
		if j1 < len(sp.nodes) && !cb(sp.users[j1], false) {
			return ErrStopped
		}
		j0 = end
	}
	return nil
}
