package scheduler

import (
	"context"
	"fmt"
	"hash/maphash"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/tandem-ml/tandem/core"
)

// ensurePlan makes the current plan match g, re-planning only when g's fingerprint changed.
func (s *Scheduler) ensurePlan(g *core.Graph) (replanned bool, err error) {
	if s.plan != nil && s.plan.fp.matches(g, s, s.plan.isOwned) {
		return false, nil
	}
	if s.plan != nil {
		s.plan.release()
		s.plan = nil
		s.allocked = false
	}
	p, err := s.makePlan(g)
	if err != nil {
		return false, err
	}
	s.plan = p
	return true, nil
}

func (p *plan) isOwned(t *core.Tensor) bool { return p.owned[t] }

// Reserve plans g and sizes every backend's compute buffer for it (use the largest graph you will
// run, so later graphs fit without growing buffers).
func (s *Scheduler) Reserve(g *core.Graph) error {
	if err := s.Synchronize(); err != nil {
		return err
	}
	if _, err := s.ensurePlan(g); err != nil {
		return err
	}
	if err := s.galloc.ReserveN(s.plan.aGraph, s.plan.nodeIDs, s.plan.leafIDs); err != nil {
		return fmt.Errorf("tandem: scheduler: reserve: %w", err)
	}
	s.stats.Reserves++
	return nil
}

// AllocGraph plans g (unless it is the graph already planned) and gives every tensor of it memory.
func (s *Scheduler) AllocGraph(g *core.Graph) error {
	if err := s.Synchronize(); err != nil {
		return err
	}
	replanned, err := s.ensurePlan(g)
	if err != nil {
		return err
	}
	if !replanned && s.allocked {
		return nil
	}
	p := s.plan
	before := make(map[*core.Tensor]bool, len(g.Leafs()))
	for _, l := range g.Leafs() {
		before[l] = l.Buffer != nil
	}
	if err := s.galloc.AllocGraphN(p.aGraph, p.nodeIDs, p.leafIDs); err != nil {
		return fmt.Errorf("tandem: scheduler: allocating compute buffers: %w", err)
	}
	if s.galloc.Replanned() {
		s.stats.Reserves++
	}
	p.adopt(g, before)
	p.computeDeps()
	for _, c := range p.copies {
		c.valid = false
	}
	s.allocked = true
	return nil
}

// GraphCompute runs g: plans and allocates it when needed, copies split inputs, computes every split
// and waits.
func (s *Scheduler) GraphCompute(g *core.Graph) error {
	if err := s.GraphComputeAsync(g); err != nil {
		return err
	}
	return s.Synchronize()
}

// GraphComputeAsync starts computing g and returns; Synchronize waits for it and returns its error.
// Tensors of g must not be read or written until then.
func (s *Scheduler) GraphComputeAsync(g *core.Graph) error {
	if err := s.Synchronize(); err != nil {
		return err
	}
	if err := s.AllocGraph(g); err != nil {
		return err
	}
	done := make(chan struct{})
	s.async.mu.Lock()
	s.async.done, s.async.err = done, nil
	s.async.mu.Unlock()
	p := s.plan
	go func() {
		err := s.run(p)
		s.async.mu.Lock()
		s.async.err = err
		s.async.mu.Unlock()
		close(done)
	}()
	return nil
}

// Synchronize waits for an asynchronous computation and for every backend.
func (s *Scheduler) Synchronize() error {
	s.async.mu.Lock()
	done := s.async.done
	s.async.mu.Unlock()
	var err error
	if done != nil {
		<-done
		s.async.mu.Lock()
		err = s.async.err
		s.async.done, s.async.err = nil, nil
		s.async.mu.Unlock()
	}
	for _, b := range s.backends {
		if e := b.Synchronize(); e != nil && err == nil {
			err = e
		}
	}
	return err
}

// run executes the splits of p: in order when sequential, else each as soon as the splits it
// depends on are done.
func (s *Scheduler) run(p *plan) error {
	s.stats.Runs++
	var copies, skips atomic.Int64
	var bytes atomic.Int64
	defer func() {
		s.stats.Copies += int(copies.Load())
		s.stats.CopySkips += int(skips.Load())
		s.stats.CopyBytes += bytes.Load()
	}()
	runOne := func(sp *split) error {
		for _, c := range sp.inputs {
			n, skipped, err := s.copyInput(c)
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
		return s.computeSplit(sp)
	}
	if s.opts.Sequential || s.evalCB != nil || len(p.splits) < 2 {
		for _, sp := range p.splits {
			if err := runOne(sp); err != nil {
				return err
			}
		}
		return nil
	}
	done := make([]chan struct{}, len(p.splits))
	for i := range done {
		done[i] = make(chan struct{})
	}
	var running atomic.Int32
	var concurrent atomic.Int32
	eg, ctx := errgroup.WithContext(context.Background())
	for i, sp := range p.splits {
		eg.Go(func() error {
			for _, d := range sp.deps {
				select {
				case <-done[d]:
				case <-ctx.Done():
					return nil
				}
			}
			if running.Add(1) > 1 {
				concurrent.Add(1)
			}
			defer running.Add(-1)
			err := runOne(sp)
			if err == nil {
				close(done[i])
			}
			return err
		})
	}
	err := eg.Wait()
	s.stats.Concurrent += int(concurrent.Load())
	return err
}

var hashSeed = maphash.MakeSeed()

// copyInput copies one split input; constants whose bytes have not changed since the last copy are
// skipped.
func (s *Scheduler) copyInput(c *copyItem) (int64, bool, error) {
	var h uint64
	if c.leaf {
		if data := c.src.Data(); data != nil {
			h = maphash.Bytes(hashSeed, data)
			if c.valid && h == c.hash {
				return 0, true, nil
			}
		}
	}
	dst := s.backends[c.backend]
	if ab, ok := dst.(core.AsyncBackend); ok && c.src.Flags&core.FlagInput == 0 {
		ok, err := ab.CopyTensorAsync(c.src, c.dst)
		if err != nil {
			return 0, false, fmt.Errorf("tandem: scheduler: copying %v to %s: %w", c.src, dst.Name(), err)
		}
		if ok {
			c.hash, c.valid = h, c.leaf
			return c.src.NBytes(), false, nil
		}
	}
	if err := s.backends[c.srcBackend].Synchronize(); err != nil {
		return 0, false, err
	}
	if err := dst.Synchronize(); err != nil {
		return 0, false, err
	}
	if err := core.TensorCopy(c.src, c.dst); err != nil {
		return 0, false, fmt.Errorf("tandem: scheduler: copying %v to %s: %w", c.src, dst.Name(), err)
	}
	c.hash, c.valid = h, c.leaf
	return c.src.NBytes(), false, nil
}

// computeSplit runs one split; with an eval callback it runs up to each node the callback asks for,
// shows it, and stops everything when the callback says so.
func (s *Scheduler) computeSplit(sp *split) error {
	be := s.backends[sp.backend]
	if s.evalCB == nil {
		if err := be.GraphCompute(sp.graph); err != nil {
			return fmt.Errorf("tandem: scheduler: split at node %d on %s: %w", sp.start, be.Name(), err)
		}
		return nil
	}
	for j0 := 0; j0 < len(sp.nodes); {
		j1 := j0
		for j1 < len(sp.nodes) && !s.evalCB(sp.users[j1], true) {
			j1++
		}
		end := min(j1+1, len(sp.nodes))
		if err := be.GraphCompute(sp.graph.View(j0, end)); err != nil {
			return fmt.Errorf("tandem: scheduler: split at node %d on %s: %w", sp.start, be.Name(), err)
		}
		if err := be.Synchronize(); err != nil {
			return err
		}
		if j1 < len(sp.nodes) && !s.evalCB(sp.users[j1], false) {
			return ErrStopped
		}
		j0 = end
	}
	return nil
}
