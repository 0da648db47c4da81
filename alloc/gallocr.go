package alloc

import (
	"errors"
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// ErrNeedReserve is returned (wrapped) by AllocGraph when the graph no longer matches the plan and
// the allocator has several buffers: the caller must call ReserveN with the buffer ids (the
// scheduler does), or use AllocGraphN.
var ErrNeedReserve = errors.New("tandem: alloc: graph changed since the last reserve; call ReserveN")

// GraphAllocator plans and allocates the memory of compute graphs (ggml's gallocr). It simulates the
// graph's execution order: leafs and inputs first, then each node, freeing a tensor once its last
// consumer and its last view are done (outputs and inputs are never freed), and letting
// in-place-capable ops take over a parent's memory when the parent is owned here, has the node's
// layout, is not an output or an input and this node is its last user.
//
// Inputs are the tensors a caller writes rather than the graph computes: every leaf (and other
// source) that no op computes, flagged or not, and every tensor flagged input or param. An input
// placed here keeps its memory for the whole graph, so a graph computed again reads the same
// input. An input that AllocGraph places anywhere but where the previous placement of this
// allocator had it holds another tensor's bytes: it is marked (core.ExpectWrite), and computing a
// graph that reads it before it is written is an error (core.ErrInputNotSet) naming it. Inputs
// with memory of their own (weights, KV caches) are not placed here and never marked. Each buffer id has a buffer type; ids with the same buffer
// type share one logical buffer (several chunk buffers when the type has a maximum size). Buffers
// are tagged BufferUsageCompute and only grow.
//
// Where it differs from ggml:
//   - The plan is keyed by a fingerprint of the whole graph (ops, shapes, strides, flags, sources,
//     views, buffer ids, which tensors are pre-allocated), not by node positions: a graph that changed
//     behind the same node count is re-planned (ggml reuses a stale plan, llama.cpp #28448), while a
//     rebuilt graph of the same structure reuses the plan.
//   - The free lists and the number of chunks grow instead of asserting.
//   - Several placements are tried and the smallest kept: ggml's own (so the result is never larger
//     than ggml's), an offline "largest first" placement that knows every lifetime in advance, and
//     both again with in-place reuse through a view at offset 0 (ggml has that rule but its ownership
//     test never admits a view).
//   - Tensors placed by this allocator in an earlier AllocGraph are placed again; only tensors whose
//     Buffer belongs to someone else (weights, user allocations) are left alone.
//   - A tensor computed in place must share its parent's buffer type.
//   - Inputs live to the end of the graph, flagged or not (ggml frees a leaf after its last reader,
//     so computing the graph again reads garbage unless every leaf is set again), and one that was
//     not written since it was placed is an error, not stale bytes.
//
// A GraphAllocator is not safe for concurrent use.
type GraphAllocator struct {
	bts     []core.BufferType
	allocOf []int           // buffer id → id of the first buffer id with the same type (its allocator)
	align   []int64         // per allocator
	dyn     []*DynAllocator // per allocator (nil for ids that share an earlier id's allocator)
	bufs    [][]core.Buffer // per allocator: one buffer per chunk
	// owned holds every buffer this allocator created, current and replaced (grown or freed),
	// with the stand-ins Free left in tensors: a tensor whose Buffer is one of them was placed
	// here and is placed again; any other Buffer belongs to someone else.
	owned map[core.Buffer]struct{}

	aliases []Alias                       // set by SetAliases
	aliasOf map[*core.Tensor]*core.Tensor // alias → the graph tensor it shares memory with

	// where the last placement put each input (see place): an input placed again at the same
	// address keeps its bytes; any other is marked with core.ExpectWrite
	inputsAt, inputsSpare map[*core.Tensor]inputAt

	ids     map[*core.Tensor]int32
	scratch *graphInfo
	cur     *planData
	spare   *planData
	st      simState
	sims    [2]simResult
	cands   [4]placement
	off     offline
	idBuf   [2][]int32
	candOK  [4]bool

	placed []Placement // what the last place gave memory (the report of Placed)

	replans   int
	replanned bool
	err       error // from the constructor (a nil buffer type)
}

// planData is one complete plan: its fingerprint and where every slot goes.
type planData struct {
	gi        *graphInfo
	tslot     []int32 // per record
	slotAddr  []Addr
	slotAlloc []int32
	chunks    [][]int64 // per allocator
	lb        []int64   // per allocator
	policy    string
	valid     bool
}

// ErrNoBufferTypes is the error of a graph allocator made without buffer types.
var ErrNoBufferTypes = errors.New("tandem: alloc: NewGraphAllocator: no buffer types given (pass at least one, e.g. backend.DefaultBufferType())")

// NewGraphAllocator returns a graph allocator with one buffer id per buffer type given (at least
// one). Ids with the same buffer type share memory, as in ggml_gallocr_new_n.
//
// Bad arguments do not panic and do not return nil: as a Context records a bad op, with no buffer
// types (ErrNoBufferTypes) or a nil one the allocator records the error, Err returns it, and the
// first (and every) Reserve, ReserveN, ReserveSizeN, AllocGraph and AllocGraphN call fails with it.
func NewGraphAllocator(bufferTypes ...core.BufferType) *GraphAllocator {
	var noTypes bool
	if len(bufferTypes) == 0 {
		// keep the other methods safe with one placeholder id; every plan fails with the error
		bufferTypes = []core.BufferType{core.HostBufferType()}
		noTypes = true
	}
	n := len(bufferTypes)
	ga := &GraphAllocator{
		bts:     append([]core.BufferType(nil), bufferTypes...),
		allocOf: make([]int, n),
		align:   make([]int64, n),
		dyn:     make([]*DynAllocator, n),
		bufs:    make([][]core.Buffer, n),
		owned:   map[core.Buffer]struct{}{},
		scratch: &graphInfo{},
		cur:     &planData{gi: &graphInfo{}},
		spare:   &planData{gi: &graphInfo{}},
	}
	for i, bt := range ga.bts {
		if bt == nil {
			ga.err = fmt.Errorf("tandem: alloc: NewGraphAllocator: buffer type %d is nil", i)
			ga.bts[i] = core.HostBufferType() // keeps the other methods safe; every plan fails
			bt = ga.bts[i]
		}
		ga.allocOf[i] = i
		for j := 0; j < i; j++ {
			if ga.bts[j] == bt {
				ga.allocOf[i] = j
				break
			}
		}
		a := ga.allocOf[i]
		if a == i {
			ga.dyn[i] = NewDynAllocator(bt.Alignment(), bt.MaxSize())
			ga.align[i] = ga.dyn[i].Alignment()
		}
	}
	for i := range ga.bts {
		ga.align[i] = ga.align[ga.allocOf[i]]
		if ga.dyn[i] == nil {
			ga.dyn[i] = ga.dyn[ga.allocOf[i]]
		}
	}
	if noTypes {
		ga.err = ErrNoBufferTypes
	}
	return ga
}

// errNilAllocator and errZeroAllocator are returned by the methods of a nil *GraphAllocator and of
// a zero GraphAllocator (one not made by NewGraphAllocator: it has no buffer types).
var (
	errNilAllocator  = errors.New("tandem: alloc: nil graph allocator (create one with alloc.NewGraphAllocator)")
	errZeroAllocator = errors.New("tandem: alloc: zero GraphAllocator: create one with alloc.NewGraphAllocator")
)

// usable is nil for an allocator made by NewGraphAllocator (whose own error, if any, Err reports),
// and otherwise the error saying how to make one.
func (ga *GraphAllocator) usable() error {
	switch {
	case ga == nil:
		return errNilAllocator
	case ga.cur == nil && ga.err == nil:
		return errZeroAllocator
	}
	return nil
}

// Err returns the error recorded by NewGraphAllocator (no buffer types, a nil buffer type), or nil.
// For a nil allocator it says so.
func (ga *GraphAllocator) Err() error {
	if err := ga.usable(); err != nil {
		return err
	}
	return ga.err
}

// NumBuffers is the number of buffer ids (0 for a nil allocator).
func (ga *GraphAllocator) NumBuffers() int {
	if ga == nil {
		return 0
	}
	return len(ga.bts)
}

// Replans counts the plans made so far (by Reserve, ReserveN, and AllocGraph when the graph no
// longer matched the plan); 0 for a nil allocator.
func (ga *GraphAllocator) Replans() int {
	if ga == nil {
		return 0
	}
	return ga.replans
}

// Replanned reports whether the last Reserve/AllocGraph call made a new plan (false for a nil
// allocator).
func (ga *GraphAllocator) Replanned() bool { return ga != nil && ga.replanned }

// Reserve plans g with every tensor in buffer id 0 and allocates (or grows) the buffers to fit.
// Tensors get no memory yet; AllocGraph places them. A nil g (or allocator) is an error.
func (ga *GraphAllocator) Reserve(g *core.Graph) error { return ga.ReserveN(g, nil, nil) }

// ReserveN plans g with node i in buffer id nodeBufferIDs[i] and leaf i in leafBufferIDs[i] (nil:
// all 0), then allocates or grows the buffers to fit the plan. A buffer id whose plan holds nothing
// still gets a (possibly empty) buffer, so views into it can be initialised. A nil g (or allocator)
// is an error.
func (ga *GraphAllocator) ReserveN(g *core.Graph, nodeBufferIDs, leafBufferIDs []int) error {
	if err := ga.usable(); err != nil {
		return err
	}
	ga.replanned = false
	nIDs, lIDs, err := ga.convertIDs(nodeBufferIDs, leafBufferIDs)
	if err != nil {
		return err
	}
	if err := ga.analyze(g, nIDs, lIDs, ga.scratch); err != nil {
		return err
	}
	ga.plan(ga.scratch)
	ga.commit()
	return ga.ensureBuffers()
}

// ReserveSizeN plans g like ReserveN but allocates nothing and keeps the current plan; it returns
// the bytes each buffer id would need (0 for ids sharing an earlier id's buffer). A nil g (or
// allocator) is an error.
func (ga *GraphAllocator) ReserveSizeN(g *core.Graph, nodeBufferIDs, leafBufferIDs []int) ([]int64, error) {
	if err := ga.usable(); err != nil {
		return nil, err
	}
	nIDs, lIDs, err := ga.convertIDs(nodeBufferIDs, leafBufferIDs)
	if err != nil {
		return nil, err
	}
	if err := ga.analyze(g, nIDs, lIDs, ga.scratch); err != nil {
		return nil, err
	}
	ga.plan(ga.scratch)
	sizes := make([]int64, len(ga.bts))
	for id := range ga.bts {
		if ga.allocOf[id] == id {
			for _, c := range ga.spare.chunks[id] {
				sizes[id] += c
			}
		}
	}
	ga.spare.valid = false
	return sizes, nil
}

// AllocGraph gives every tensor of g that needs memory its place in the buffers: planned tensors
// their planned offset, views their source's memory. Tensors whose Buffer belongs to someone else
// are left alone. When g no longer matches the plan it is re-planned first with one buffer id; with
// several it returns ErrNeedReserve (use ReserveN or AllocGraphN). A nil g (or allocator) is an
// error.
func (ga *GraphAllocator) AllocGraph(g *core.Graph) error {
	if err := ga.usable(); err != nil {
		return err
	}
	ga.replanned = false
	if ga.err != nil {
		return ga.err
	}
	var nIDs, lIDs []int32
	if ga.cur.valid && g != nil && len(ga.cur.gi.nodeIDs) == len(g.Nodes()) && len(ga.cur.gi.leafIDs) == len(g.Leafs()) {
		nIDs, lIDs = ga.cur.gi.nodeIDs, ga.cur.gi.leafIDs // compare under the plan's buffer ids
	}
	gi := ga.scratch
	if err := ga.analyze(g, nIDs, lIDs, gi); err != nil {
		return err
	}
	if !ga.cur.valid || !gi.sameAs(ga.cur.gi) {
		if len(ga.bts) > 1 {
			return fmt.Errorf("%w (graph of %d nodes, %d leafs)", ErrNeedReserve, len(g.Nodes()), len(g.Leafs()))
		}
		ga.plan(gi)
		ga.commit()
		if err := ga.ensureBuffers(); err != nil {
			return err
		}
	}
	return ga.placeAnalyzed(gi)
}

// AllocGraphN is AllocGraph with explicit buffer ids: it re-plans (and grows the buffers) whenever g
// or the ids differ from the plan. A nil g (or allocator) is an error.
func (ga *GraphAllocator) AllocGraphN(g *core.Graph, nodeBufferIDs, leafBufferIDs []int) error {
	if err := ga.usable(); err != nil {
		return err
	}
	ga.replanned = false
	nIDs, lIDs, err := ga.convertIDs(nodeBufferIDs, leafBufferIDs)
	if err != nil {
		return err
	}
	gi := ga.scratch
	if err := ga.analyze(g, nIDs, lIDs, gi); err != nil {
		return err
	}
	if !ga.cur.valid || !gi.sameAs(ga.cur.gi) {
		ga.plan(gi)
		ga.commit()
		if err := ga.ensureBuffers(); err != nil {
			return err
		}
	}
	return ga.placeAnalyzed(gi)
}

// BufferSize is the size of buffer id's memory (the sum of its chunk buffers), 0 when the id shares
// an earlier id's buffer type, nothing is allocated yet, id is out of range or the allocator is nil.
func (ga *GraphAllocator) BufferSize(id int) int64 {
	if ga == nil || id < 0 || id >= len(ga.bts) || ga.allocOf[id] != id {
		return 0
	}
	var s int64
	for _, b := range ga.bufs[id] {
		if b != nil {
			s += b.Size()
		}
	}
	return s
}

// Buffers returns buffer id's chunk buffers (nil for ids sharing an earlier id's buffer, ids out of
// range and a nil allocator).
func (ga *GraphAllocator) Buffers(id int) []core.Buffer {
	if ga == nil || id < 0 || id >= len(ga.bts) || ga.allocOf[id] != id {
		return nil
	}
	return append([]core.Buffer(nil), ga.bufs[id]...)
}

// BufferType returns buffer id's buffer type (nil for an id out of range or a nil allocator).
func (ga *GraphAllocator) BufferType(id int) core.BufferType {
	if ga == nil || id < 0 || id >= len(ga.bts) {
		return nil
	}
	return ga.bts[id]
}

// Stats describes the current plan.
type Stats struct {
	// Policy names the placement that won: "ggml" (ggml's best fit), "offline" (largest first), with
	// "+view" when in-place reuse through views was used.
	Policy string
	// Planned is, per buffer id, the bytes the plan needs (0 for ids sharing an earlier id's buffer).
	Planned []int64
	// LowerBound is, per buffer id, the largest sum of live tensor bytes at any point of the plan's
	// execution order: no placement of the same lifetimes can use less.
	LowerBound []int64
	// Chunks is, per buffer id, the number of chunk buffers the plan uses.
	Chunks []int
	// InPlace is the number of tensors computed in their parent's memory.
	InPlace int
}

// Stats reports on the current plan (zero values before the first plan and for a nil allocator).
func (ga *GraphAllocator) Stats() Stats {
	if ga.usable() != nil || ga.cur == nil {
		return Stats{}
	}
	p := ga.cur
	s := Stats{Planned: make([]int64, len(ga.bts)), LowerBound: make([]int64, len(ga.bts)), Chunks: make([]int, len(ga.bts))}
	if !p.valid {
		return s
	}
	s.Policy = p.policy
	for id := range ga.bts {
		if ga.allocOf[id] != id {
			continue
		}
		for _, c := range p.chunks[id] {
			s.Planned[id] += c
		}
		s.Chunks[id] = len(p.chunks[id])
		s.LowerBound[id] = p.lb[id]
	}
	seen := map[int32]int{}
	for _, sl := range p.tslot {
		if sl >= 0 {
			seen[sl]++
		}
	}
	for _, n := range seen {
		s.InPlace += n - 1
	}
	return s
}

// Free releases the buffers and forgets the plan. The allocator can be used again (a later
// AllocGraph places the graph's tensors anew). Until then, tensors that were placed in the freed
// buffers fail every transfer with core.ErrBufferFreed ("buffer was freed") when their buffers
// report it (core.FreedReporter; host buffers do). Free on a nil or zero allocator does nothing.
func (ga *GraphAllocator) Free() error {
	if ga.usable() != nil || ga.cur == nil {
		return nil
	}
	var first error
	tombs := map[core.Buffer]core.Buffer{}
	for a := range ga.bufs {
		for _, b := range ga.bufs[a] {
			if b != nil {
				if err := b.Free(); err != nil && first == nil {
					first = err
				}
				if _, reports := b.(core.FreedReporter); !reports {
					tombs[b] = core.FreedBuffer(b)
					ga.owned[tombs[b]] = struct{}{}
				}
			}
		}
		ga.bufs[a] = nil
	}
	// Tensors in buffers that cannot say they were freed get a stand-in that does.
	for _, pl := range ga.placed {
		if tomb, ok := tombs[pl.Tensor.Buffer]; ok {
			pl.Tensor.Buffer = tomb
		}
	}
	clear(ga.placed)
	ga.placed = ga.placed[:0]
	ga.forgetInputs()
	ga.cur.valid = false
	ga.spare.valid = false
	return first
}

func (ga *GraphAllocator) owns(b core.Buffer) bool {
	_, ok := ga.owned[b]
	return ok
}

func (ga *GraphAllocator) convertIDs(nodeIDs, leafIDs []int) ([]int32, []int32, error) {
	if ga.err != nil {
		return nil, nil, ga.err
	}
	conv := func(k int, ids []int, what string) ([]int32, error) {
		if ids == nil {
			return nil, nil
		}
		out := ga.idBuf[k][:0]
		for i, id := range ids {
			if id < 0 || id >= len(ga.bts) {
				return nil, fmt.Errorf("tandem: alloc: %s %d has buffer id %d, want 0..%d", what, i, id, len(ga.bts)-1)
			}
			out = append(out, int32(id))
		}
		ga.idBuf[k] = out
		return out, nil
	}
	n, err := conv(0, nodeIDs, "node")
	if err != nil {
		return nil, nil, err
	}
	l, err := conv(1, leafIDs, "leaf")
	return n, l, err
}

// plan computes the candidate plans for gi and leaves the smallest in ga.spare (with gi).
func (ga *GraphAllocator) plan(gi *graphInfo) {
	nAlloc := len(ga.bts)
	best, bestSim, name := -1, -1, ""
	ga.candOK = [4]bool{}
	try := func(k, simIdx int, label string) {
		ga.candOK[k] = true
		if best < 0 || ga.cands[k].total < ga.cands[best].total {
			best, bestSim, name = k, simIdx, label
		}
	}
	ga.simulate(gi, false, &ga.st, &ga.sims[0])
	ga.placeOnline(&ga.sims[0], &ga.cands[0])
	try(0, 0, "ggml")
	if ga.placeOffline(&ga.sims[0], &ga.cands[1], &ga.off) {
		try(1, 0, "offline")
	}
	ga.simulate(gi, true, &ga.st, &ga.sims[1])
	if ga.sims[1].viewRe > 0 {
		ga.placeOnline(&ga.sims[1], &ga.cands[2])
		try(2, 1, "ggml+view")
		if ga.placeOffline(&ga.sims[1], &ga.cands[3], &ga.off) {
			try(3, 1, "offline+view")
		}
	}

	p := ga.spare
	sr := &ga.sims[bestSim]
	pl := &ga.cands[best]
	p.tslot = append(p.tslot[:0], sr.tslot...)
	p.slotAddr = append(p.slotAddr[:0], pl.addr...)
	p.slotAlloc = p.slotAlloc[:0]
	for _, s := range sr.slots {
		p.slotAlloc = append(p.slotAlloc, s.alloc)
	}
	if len(p.chunks) < nAlloc {
		p.chunks = make([][]int64, nAlloc)
	}
	for a := 0; a < nAlloc; a++ {
		p.chunks[a] = append(p.chunks[a][:0], pl.chunks[a]...)
	}
	p.lb = ga.lowerBound(sr, p.lb)
	p.policy = name
	p.valid = true
	// the plan owns gi from now on; the caller's scratch becomes the old plan's description
	if p.gi != gi {
		old := p.gi
		p.gi = gi
		ga.scratch = old
	}
}

// commit makes the plan in ga.spare the current one.
func (ga *GraphAllocator) commit() {
	ga.cur, ga.spare = ga.spare, ga.cur
	ga.spare.valid = false
	ga.replans++
	ga.replanned = true
}

// ensureBuffers allocates or grows every chunk buffer the current plan needs.
func (ga *GraphAllocator) ensureBuffers() error {
	p := ga.cur
	for a := range ga.bts {
		if ga.allocOf[a] != a {
			continue
		}
		need := p.chunks[a]
		if len(need) == 0 {
			need = []int64{0}
		}
		for c, size := range need {
			if c < len(ga.bufs[a]) && ga.bufs[a][c] != nil && ga.bufs[a][c].Size() >= size {
				continue
			}
			ga.forgetInputs() // a buffer is replaced: no input keeps its bytes
			if c < len(ga.bufs[a]) && ga.bufs[a][c] != nil {
				if err := ga.bufs[a][c].Free(); err != nil {
					p.valid = false
					return core.Errorf("tandem: alloc: freeing %s buffer to grow it: %w", ga.bts[a].Name(), err)
				}
				ga.bufs[a][c] = nil
			}
			b, err := allocBuffer(ga.bts[a], size)
			if err != nil {
				p.valid = false
				return err
			}
			b.SetUsage(core.BufferUsageCompute)
			for len(ga.bufs[a]) <= c {
				ga.bufs[a] = append(ga.bufs[a], nil)
			}
			ga.bufs[a][c] = b
			ga.owned[b] = struct{}{}
		}
	}
	return nil
}

// placeAnalyzed places the graph just analyzed into gi under the current plan, which was made for
// it or for a graph equal to it; gi becomes the plan's description (PlaceAgain places its tensors).
func (ga *GraphAllocator) placeAnalyzed(gi *graphInfo) error {
	if ga.cur.gi != gi {
		ga.cur.gi, ga.scratch = gi, ga.cur.gi
	}
	return ga.place(ga.cur, gi)
}
