package scheduler

import (
	"fmt"
	"sort"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/core"
)

// split is a run of consecutive nodes on one backend.
type split struct {
	backend int
	start   int            // index of its first node in the user graph
	users   []*core.Tensor // the user's nodes of the split, in order
	nodes   []*core.Tensor // what the backend runs: the user's node, or its shadow where a source is rewritten
	inputs  []*copyItem    // copies made when the split starts
	graphs  []*core.Graph  // per pipeline slot: the shadows, reading that slot's copies
	deps    []int          // splits of the same run that must finish first

	// With pipelining, against the previous run: splits whose work must be done, splits whose
	// input copies must be done, and the last split on this backend (-1 when not needed).
	crossDone, crossCopied []int
	fifoPrev               int
}

// copyItem is one tensor copied into another backend's memory.
type copyItem struct {
	src        *core.Tensor // a user tensor, a shadow, or the snapshot of a pipelined input (slot 0)
	dst        *core.Tensor // the copy, in the split backend's compute buffer (slot 0)
	srcs, dsts []*core.Tensor
	srcBackend int
	backend    int
	leaf       bool     // src has no op: its bytes only change when the user writes them
	hash       []uint64 // per slot
	valid      []bool   // dsts[slot] holds the bytes that hashed to hash[slot]
}

// snapshot is a user input duplicated per pipeline slot: a run reads its slot's copy, taken when
// the run starts, so the user may write the next input at once.
type snapshot struct {
	orig  *core.Tensor
	slots []*core.Tensor
}

// plan is everything derived from one graph: assignments, splits, copies, the allocation graph.
//
// Memory has one owner, the graph allocator: the allocation graph holds the user's nodes
// themselves wherever their sources are the user's, and a shadow (a copy of the node reading a
// split input, an input snapshot or another shadow) only where a source is rewritten. A shadow is declared to the
// allocator as sharing its user node's memory (alloc.Alias), so the allocator places the user's
// tensor directly and reports it; placed is that report, and release undoes it.
type plan struct {
	fp       fingerprint
	matched  *core.Graph // the graph fp was last taken from or matched
	assign   map[*core.Tensor]int
	cause    map[*core.Tensor]string
	splits   []*split
	copies   []*copyItem
	aliases  []alloc.Alias // user node → its shadow
	aGraph   *core.Graph
	nodeIDs  []int
	leafIDs  []int
	ctx      *core.Context
	nCopies  int // pipeline slots
	snaps    []*snapshot
	reserved bool              // the graph allocator's current plan is aGraph's (PlaceAgain places it)
	placed   []alloc.Placement // what the allocator gave memory for this plan (alloc's report)
}

// release takes back the memory the plan gave to tensors (those not moved since by their owner).
func (p *plan) release() {
	for _, pl := range p.placed {
		if t := pl.Tensor; t.Buffer == pl.Buffer && t.Offset == pl.Offset {
			t.Buffer, t.Offset = nil, 0
		}
	}
	clear(p.placed)
	p.placed = p.placed[:0]
}

// makePlan assigns, splits and builds the allocation graph for g.
func (s *Scheduler) makePlan(g *core.Graph) (*plan, error) {
	if err := g.Err(); err != nil {
		return nil, err
	}
	if g.NNodes() > s.opts.GraphSize {
		return nil, fmt.Errorf("tandem: scheduler: graph has %d nodes, the scheduler was made for %d (Options.GraphSize)", g.NNodes(), s.opts.GraphSize)
	}
	a := &assigner{s: s, g: g, assign: make(map[*core.Tensor]int, g.NNodes()+len(g.Leafs())),
		cause: make(map[*core.Tensor]string, g.NNodes()+len(g.Leafs()))}
	if err := a.run(); err != nil {
		return nil, err
	}
	p := &plan{fp: s.takeFingerprint(g), matched: g, assign: a.assign, cause: a.cause,
		ctx: core.NewContext(core.ContextParams{NoAlloc: true}), nCopies: s.opts.Copies, placed: s.placedSpare}
	s.placedSpare = nil
	if err := s.splitGraph(p, a, g); err != nil {
		return nil, err
	}
	s.buildAllocGraph(p, g)
	s.addStats(func(st *Stats) { st.Plans++ })
	return p, nil
}

// splitGraph is pass 5: cut the node list where the backend changes and give every split a copy of
// each input it cannot read where it lives. A node that reads a copy, an input snapshot or a shadow
// runs as a shadow carrying the rewritten sources (so that no graph a backend runs reaches a
// source it cannot read, through any chain of sources: the RPC backend sends them all); every
// other node runs as itself.
func (s *Scheduler) splitGraph(p *plan, a *assigner, g *core.Graph) error {
	nodes := g.Nodes()
	copyOf := map[copyKey]*copyItem{}
	var cur *split
	snapOf := map[*core.Tensor]*snapshot{}
	shadowOf := map[*core.Tensor]*core.Tensor{}
	// snap is what the plan reads for t: its shadow, its snapshot for a pipelined input, else t.
	snap := func(t *core.Tensor) *core.Tensor {
		if sh, ok := shadowOf[t]; ok {
			return sh
		}
		if p.nCopies <= 1 || t.Op != core.OpNone || t.Flags&core.FlagInput == 0 {
			return t
		}
		sn := snapOf[t]
		if sn == nil {
			sn = &snapshot{orig: t}
			for c := 0; c < p.nCopies; c++ {
				d := p.ctx.NewTensor(t.Type, t.Ne[:]...)
				d.Nb = t.Nb
				d.SetName(fmt.Sprintf("%s#%d", t.Name, c))
				d.Flags |= core.FlagInput | core.FlagOutput
				sn.slots = append(sn.slots, d)
				p.assign[d] = a.get(t)
			}
			snapOf[t] = sn
			p.snaps = append(p.snaps, sn)
		}
		return sn.slots[0]
	}
	var slab []core.Tensor // shadows are carved from chunks, each allocated once
	for i, n := range nodes {
		run := n // what the backend runs: n, or its shadow once a source is rewritten
		shadow := func() *core.Tensor {
			if run == n {
				if len(slab) == cap(slab) {
					slab = make([]core.Tensor, 0, min(max(len(nodes)-i, 1), 64))
				}
				slab = append(slab, *n)
				run = &slab[len(slab)-1]
			}
			return run
		}
		for j, src := range n.Src {
			if src != nil {
				if m := snap(src); m != src {
					shadow().Src[j] = m
				}
			}
		}
		if n.ViewSrc != nil {
			if m := snap(n.ViewSrc); m != n.ViewSrc {
				shadow().ViewSrc = m
			}
		}
		id := a.get(n)
		if cur == nil {
			// The first split takes the backend of the first non-view node.
			first := id
			for _, m := range nodes[i:] {
				if !m.Op.IsView() {
					first = a.get(m)
					break
				}
			}
			cur = &split{backend: first, start: 0}
			p.splits = append(p.splits, cur)
		}
		if !n.Op.IsView() {
			need := id != cur.backend
			if !need && len(cur.inputs) > 0 {
				for _, src := range n.Src {
					if src == nil {
						continue
					}
					if buf := bufferOf(src); buf != nil && buf.Usage() == core.BufferUsageWeights &&
						a.get(src) != cur.backend && !a.bufferSupported(src, cur.backend) {
						need = true // lets the memory of earlier copied weights be reused
						break
					}
				}
			}
			if need {
				cur = &split{backend: id, start: i}
				p.splits = append(p.splits, cur)
			}
			for j, src := range n.Src {
				if src == nil {
					continue
				}
				sb := a.get(src)
				if sb == cur.backend || a.bufferSupported(src, cur.backend) {
					continue
				}
				key := copyKey{src, cur.backend}
				c := copyOf[key]
				if c == nil {
					c = &copyItem{src: snap(src), srcBackend: sb, backend: cur.backend, leaf: src.Op == core.OpNone,
						hash: make([]uint64, p.nCopies), valid: make([]bool, p.nCopies)}
					for k := 0; k < p.nCopies; k++ {
						d := p.ctx.NewTensor(src.Type, src.Ne[:]...)
						d.Nb = src.Nb
						d.SetName(s.backends[cur.backend].Name() + "#" + src.Name)
						if c.leaf || p.nCopies > 1 {
							// Copies of constants persist between runs so unchanged ones are not
							// copied again; pipeline copies must outlive their run.
							d.Flags |= core.FlagOutput
						}
						c.dsts = append(c.dsts, d)
					}
					c.dst = c.dsts[0]
					copyOf[key] = c
					p.copies = append(p.copies, c)
					cur.inputs = append(cur.inputs, c)
				}
				shadow().Src[j] = c.dst
			}
		}
		if run != n {
			shadowOf[n] = run
			p.aliases = append(p.aliases, alloc.Alias{Tensor: n, Of: run})
		}
		cur.users = append(cur.users, n)
		cur.nodes = append(cur.nodes, run)
	}
	if err := p.ctx.Err(); err != nil {
		return core.Errorf("tandem: scheduler: making copies: %w", err)
	}
	for _, sp := range p.splits {
		sp.graphs = []*core.Graph{core.NewGraphFromLists(sp.nodes, nil)}
	}
	return nil
}

// buildSlots makes the shadows of pipeline slots 1.. once slot 0 has memory: the same nodes and
// memory, reading their slot's copies and input snapshots.
func (p *plan) buildSlots() {
	for _, c := range p.copies {
		c.srcs = make([]*core.Tensor, p.nCopies)
	}
	for k := 1; k < p.nCopies; k++ {
		m := map[*core.Tensor]*core.Tensor{}
		for _, c := range p.copies {
			m[c.dsts[0]] = c.dsts[k]
		}
		for _, sn := range p.snaps {
			m[sn.slots[0]] = sn.slots[k]
		}
		for _, sp := range p.splits {
			shadows := make([]core.Tensor, len(sp.nodes))
			nodes := make([]*core.Tensor, len(sp.nodes))
			for i, sh := range sp.nodes {
				shadows[i] = *sh
				nodes[i] = &shadows[i]
				m[sh] = nodes[i]
			}
			for _, n := range nodes {
				for j, src := range n.Src {
					if r, ok := m[src]; ok && src != nil {
						n.Src[j] = r
					}
				}
				if r, ok := m[n.ViewSrc]; ok && n.ViewSrc != nil {
					n.ViewSrc = r
				}
			}
			sp.graphs = append(sp.graphs[:k], core.NewGraphFromLists(nodes, nil))
		}
		for _, c := range p.copies {
			c.srcs[k] = c.src
			if r, ok := m[c.src]; ok {
				c.srcs[k] = r
			}
		}
	}
	for _, c := range p.copies {
		c.srcs[0] = c.src
	}
}

type copyKey struct {
	t       *core.Tensor
	backend int
}

// buildAllocGraph lays out what the graph allocator plans: per split, a dependency view that keeps
// each input alive until it is copied, the copy, then the split's nodes (the user's, or their
// shadows); the user's leafs last.
func (s *Scheduler) buildAllocGraph(p *plan, g *core.Graph) {
	var nodes []*core.Tensor
	var ids []int
	for _, sp := range p.splits {
		for _, c := range sp.inputs {
			dep := &core.Tensor{Type: c.src.Type, Ne: c.src.Ne, Nb: c.src.Nb, Name: c.src.Name + " (dep)"}
			dep.ViewSrc, dep.ViewOffs = c.src, 0
			if c.src.ViewSrc != nil {
				dep.ViewSrc, dep.ViewOffs = c.src.ViewSrc, c.src.ViewOffs
			}
			dep.Src[0] = c.src
			nodes = append(nodes, dep, c.dst)
			ids = append(ids, c.srcBackend, c.backend)
		}
		for k, sh := range sp.nodes {
			nodes = append(nodes, sh)
			ids = append(ids, p.assign[sp.users[k]])
		}
	}
	leafs := append([]*core.Tensor(nil), g.Leafs()...)
	leafIDs := make([]int, len(leafs))
	for i, l := range leafs {
		leafIDs[i] = p.assign[l]
	}
	// Pipeline slots: every snapshot and the copies of slots 1.. are allocated from the start and
	// kept (flagged output), as ggml does with n_copies > 1.
	for _, sn := range p.snaps {
		for _, d := range sn.slots {
			leafs = append(leafs, d)
			leafIDs = append(leafIDs, p.assign[sn.orig])
		}
	}
	for _, c := range p.copies {
		for _, d := range c.dsts[1:] {
			leafs = append(leafs, d)
			leafIDs = append(leafIDs, c.backend)
		}
	}
	p.aGraph = core.NewGraphFromLists(nodes, leafs)
	p.nodeIDs, p.leafIDs = ids, leafIDs
}

// computeDeps finds, for every split, the earlier splits of the same run it must wait for: the
// same backend, or a memory conflict (one writes bytes the other reads or writes). With
// pipelining it also finds what a split must wait for in the previous run.
func (p *plan) computeDeps() {
	ids := bufferIDs{}
	acc := p.accesses(ids, func(*core.Tensor) bool { return true })
	// Ancestor sets as bitsets: a split already ordered after i (through another dependency) needs
	// no check against i, so an alternating chain of splits costs O(1) checks per split.
	words := (len(p.splits) + 63) / 64
	anc := make([][]uint64, len(p.splits))
	for j := range p.splits {
		sp := p.splits[j]
		sp.deps = sp.deps[:0]
		anc[j] = make([]uint64, words)
		addDep := func(i int) {
			sp.deps = append(sp.deps, i)
			anc[j][i/64] |= 1 << (i % 64)
			for w := range anc[j] {
				anc[j][w] |= anc[i][w]
			}
		}
		for i := j - 1; i >= 0; i-- {
			if p.splits[i].backend == sp.backend {
				addDep(i) // the previous split on the same backend
				break
			}
		}
		for i := j - 1; i >= 0; i-- {
			if anc[j][i/64]&(1<<(i%64)) != 0 {
				continue
			}
			if acc[i].conflicts(&acc[j]) {
				addDep(i)
			}
		}
		sort.Ints(sp.deps)
	}
	if p.nCopies > 1 {
		p.crossDeps(ids)
	}
}

// crossDeps orders run k+1 after run k where they share memory. Copies and input snapshots belong
// to one pipeline slot each and are left out; nodes' memory is shared by every run.
func (p *plan) crossDeps(ids bufferIDs) {
	perSlot := map[*core.Tensor]bool{}
	for _, c := range p.copies {
		for _, d := range c.dsts {
			perSlot[d] = true
		}
	}
	for _, sn := range p.snaps {
		for _, d := range sn.slots {
			perSlot[d] = true
		}
	}
	acc := p.accesses(ids, func(t *core.Tensor) bool { return !perSlot[t] })
	last := map[int]int{} // backend → its last split in a run
	for i, sp := range p.splits {
		last[sp.backend] = i
	}
	seen := map[int]bool{}
	for j, sp := range p.splits {
		sp.crossDone, sp.crossCopied, sp.fifoPrev = nil, nil, -1
		if !seen[sp.backend] {
			seen[sp.backend] = true
			sp.fifoPrev = last[sp.backend]
		}
		for i := range p.splits {
			// Slot tensors were left out, so only the nodes' shared memory and the copies' sources
			// count here: a conflict with i's nodes waits for i, one with its copy sources only for
			// i's copies.
			nodesOnly := splitAccess{reads: acc[i].nodeReads, writes: acc[i].writes}
			switch {
			case nodesOnly.conflicts(&acc[j]):
				sp.crossDone = append(sp.crossDone, i)
			case acc[j].writes.overlaps(&acc[i].copyReads):
				sp.crossCopied = append(sp.crossCopied, i)
			}
		}
	}
}

// splitAccess is the memory a split touches: what its copies and nodes read (reads), what its
// nodes alone read (nodeReads), what its copy sources are (copyReads), and what it writes.
type splitAccess struct{ reads, nodeReads, copyReads, writes rangeSet }

// conflicts reports whether a and b touch the same bytes with at least one of them writing.
func (a *splitAccess) conflicts(b *splitAccess) bool {
	return a.writes.overlaps(&b.reads) || a.writes.overlaps(&b.writes) || a.reads.overlaps(&b.writes)
}

// accesses collects every split's memory accesses, counting only the tensors keep accepts.
func (p *plan) accesses(ids bufferIDs, keep func(*core.Tensor) bool) []splitAccess {
	acc := make([]splitAccess, len(p.splits))
	for i, sp := range p.splits {
		a := &acc[i]
		for _, c := range sp.inputs {
			if keep(c.src) {
				a.reads.add(ids, c.src)
				a.copyReads.add(ids, c.src)
			}
			if keep(c.dst) {
				a.writes.add(ids, c.dst)
			}
		}
		for _, n := range sp.nodes {
			if n.Op.IsView() || n.Op == core.OpNone {
				continue
			}
			a.writes.add(ids, n)
			for _, src := range n.Src {
				if src != nil && keep(src) {
					a.reads.add(ids, src)
					a.nodeReads.add(ids, src)
				}
			}
		}
		for _, rs := range []*rangeSet{&a.reads, &a.nodeReads, &a.copyReads, &a.writes} {
			rs.normalize()
		}
	}
	return acc
}

// memRange is a byte range of one buffer (buffers numbered per plan).
type memRange struct {
	buf        int
	start, end int64
}

type rangeSet struct{ r []memRange }

// bufferIDs numbers the buffers met while computing dependencies.
type bufferIDs map[core.Buffer]int

func (ids bufferIDs) of(b core.Buffer) int {
	id, ok := ids[b]
	if !ok {
		id = len(ids)
		ids[b] = id
	}
	return id
}

func (rs *rangeSet) add(ids bufferIDs, t *core.Tensor) {
	if t.Buffer == nil || t.NBytes() == 0 {
		return
	}
	rs.r = append(rs.r, memRange{ids.of(t.Buffer), t.Offset, t.Offset + t.NBytes()})
}

// normalize sorts the ranges by buffer and start and merges overlapping ones.
func (rs *rangeSet) normalize() {
	sort.Slice(rs.r, func(i, j int) bool {
		a, b := rs.r[i], rs.r[j]
		if a.buf != b.buf {
			return a.buf < b.buf
		}
		return a.start < b.start
	})
	out := rs.r[:0]
	for _, r := range rs.r {
		if k := len(out) - 1; k >= 0 && out[k].buf == r.buf && r.start < out[k].end {
			out[k].end = max(out[k].end, r.end)
			continue
		}
		out = append(out, r)
	}
	rs.r = out
}

// overlaps reports whether any byte is in both normalized sets (a merge walk).
func (rs *rangeSet) overlaps(o *rangeSet) bool {
	i, j := 0, 0
	for i < len(rs.r) && j < len(o.r) {
		a, b := rs.r[i], o.r[j]
		switch {
		case a.buf < b.buf:
			i++
		case b.buf < a.buf:
			j++
		case a.end <= b.start:
			i++
		case b.end <= a.start:
			j++
		default:
			return true
		}
	}
	return false
}
