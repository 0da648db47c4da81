package scheduler

import (
	"fmt"
	"sort"

	"github.com/tandem-ml/tandem/core"
)

// split is a run of consecutive nodes on one backend.
type split struct {
	backend int
	start   int            // index of its first node in the user graph
	users   []*core.Tensor // the user's nodes of the split, in order
	nodes   []*core.Tensor // their shadows (sources rewritten to copies), what the backend runs
	inputs  []*copyItem    // copies made when the split starts
	graph   *core.Graph
	deps    []int // splits that must finish first
}

// copyItem is one tensor copied into another backend's memory.
type copyItem struct {
	src        *core.Tensor // a user leaf or the shadow of a node
	dst        *core.Tensor // the copy, in the split backend's compute buffer
	srcBackend int
	backend    int
	leaf       bool // src has no op: its bytes only change when the user writes them
	hash       uint64
	valid      bool // dst holds the bytes that hashed to hash
}

// plan is everything derived from one graph: assignments, splits, copies, the allocation graph.
type plan struct {
	fp      fingerprint
	assign  map[*core.Tensor]int
	cause   map[*core.Tensor]string
	splits  []*split
	copies  []*copyItem
	shadow  map[*core.Tensor]*core.Tensor
	aGraph  *core.Graph
	nodeIDs []int
	leafIDs []int
	ctx     *core.Context
	owned   map[*core.Tensor]bool // user tensors that got memory from this plan
}

// release takes back the memory the plan gave to user tensors.
func (p *plan) release() {
	for t := range p.owned {
		t.Buffer, t.Offset = nil, 0
	}
	clear(p.owned)
}

// makePlan assigns, splits and builds the allocation graph for g.
func (s *Scheduler) makePlan(g *core.Graph) (*plan, error) {
	if err := g.Err(); err != nil {
		return nil, err
	}
	if g.NNodes() > s.opts.GraphSize {
		return nil, fmt.Errorf("tandem: scheduler: graph has %d nodes, the scheduler was made for %d (Options.GraphSize)", g.NNodes(), s.opts.GraphSize)
	}
	a := &assigner{s: s, g: g, assign: make(map[*core.Tensor]int, g.NNodes()+len(g.Leafs()))}
	if s.debug > 0 {
		a.cause = map[*core.Tensor]string{}
	}
	if err := a.run(); err != nil {
		return nil, err
	}
	p := &plan{fp: takeFingerprint(g, s), assign: a.assign, cause: a.cause,
		shadow: make(map[*core.Tensor]*core.Tensor, g.NNodes()),
		ctx:    core.NewContext(core.ContextParams{NoAlloc: true}), owned: map[*core.Tensor]bool{}}
	if err := s.splitGraph(p, a, g); err != nil {
		return nil, err
	}
	s.buildAllocGraph(p, g)
	s.stats.Plans++
	if s.debug > 0 {
		s.dump(p, g)
	}
	return p, nil
}

// splitGraph is pass 5: cut the node list where the backend changes and give every split a copy of
// each input it cannot read where it lives. Shadows of the user's nodes carry the rewritten sources.
func (s *Scheduler) splitGraph(p *plan, a *assigner, g *core.Graph) error {
	nodes := g.Nodes()
	copyOf := map[copyKey]*copyItem{}
	var cur *split
	shadows := make([]core.Tensor, len(nodes))
	mapped := func(t *core.Tensor) *core.Tensor {
		if sh, ok := p.shadow[t]; ok {
			return sh
		}
		return t
	}
	for i, n := range nodes {
		sh := &shadows[i]
		*sh = *n
		for j, src := range n.Src {
			if src != nil {
				sh.Src[j] = mapped(src)
			}
		}
		if n.ViewSrc != nil {
			sh.ViewSrc = mapped(n.ViewSrc)
		}
		p.shadow[n] = sh
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
					c = &copyItem{src: mapped(src), srcBackend: sb, backend: cur.backend, leaf: src.Op == core.OpNone}
					c.dst = p.ctx.NewTensor(src.Type, src.Ne[:]...)
					c.dst.Nb = src.Nb
					c.dst.SetName(s.backends[cur.backend].Name() + "#" + src.Name)
					if c.leaf {
						// Copies of constants persist between runs so unchanged ones are not copied again.
						c.dst.Flags |= core.FlagOutput
					}
					copyOf[key] = c
					p.copies = append(p.copies, c)
					cur.inputs = append(cur.inputs, c)
				}
				sh.Src[j] = c.dst
			}
		}
		cur.users = append(cur.users, n)
		cur.nodes = append(cur.nodes, sh)
	}
	if err := p.ctx.Err(); err != nil {
		return fmt.Errorf("tandem: scheduler: making copies: %w", err)
	}
	for _, sp := range p.splits {
		sp.graph = core.NewGraphFromLists(sp.nodes, nil)
	}
	return nil
}

type copyKey struct {
	t       *core.Tensor
	backend int
}

// buildAllocGraph lays out what the graph allocator plans: per split, a dependency view that keeps
// each input alive until it is copied, the copy, then the split's nodes; the user's leafs last.
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
	leafs := g.Leafs()
	leafIDs := make([]int, len(leafs))
	for i, l := range leafs {
		leafIDs[i] = p.assign[l]
	}
	p.aGraph = core.NewGraphFromLists(nodes, leafs)
	p.nodeIDs, p.leafIDs = ids, leafIDs
}

// adopt gives the user's tensors the memory their shadows got, and records which it set.
func (p *plan) adopt(g *core.Graph, before map[*core.Tensor]bool) {
	for _, n := range g.Nodes() {
		sh := p.shadow[n]
		if n.Buffer == nil && sh.Buffer != nil {
			n.Buffer, n.Offset = sh.Buffer, sh.Offset
			p.owned[n] = true
		}
	}
	for _, l := range g.Leafs() {
		if l.Buffer != nil && !before[l] {
			p.owned[l] = true
		}
	}
}

// computeDeps finds, for every split, the earlier splits it must wait for: the same backend, or a
// memory conflict (one writes bytes the other reads or writes).
func (p *plan) computeDeps() {
	type access struct{ reads, writes rangeSet }
	acc := make([]access, len(p.splits))
	ids := bufferIDs{}
	for i, sp := range p.splits {
		for _, c := range sp.inputs {
			acc[i].reads.add(ids, c.src)
			acc[i].writes.add(ids, c.dst)
		}
		for _, n := range sp.nodes {
			if n.Op.IsView() || n.Op == core.OpNone {
				continue
			}
			acc[i].writes.add(ids, n)
			for _, src := range n.Src {
				if src != nil {
					acc[i].reads.add(ids, src)
				}
			}
		}
		acc[i].reads.normalize()
		acc[i].writes.normalize()
	}
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
			if acc[i].writes.overlaps(&acc[j].reads) || acc[i].writes.overlaps(&acc[j].writes) ||
				acc[i].reads.overlaps(&acc[j].writes) {
				addDep(i)
			}
		}
		sort.Ints(sp.deps)
	}
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
