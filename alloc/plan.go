package alloc

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/tandem-ml/tandem/core"
)

// Planning works on a canonical numbering of the graph's tensors (leafs, then nodes, then the other
// tensors they reference, in the order they are met), so that two graphs with the same structure
// get the same records even when their tensors are different objects. The records are the plan's
// fingerprint: a plan is reused only when the records, the buffer ids and the options are equal.

type role uint8

const (
	roleExtra role = iota // referenced by a node (source or view source) but neither a node nor a leaf
	roleLeaf
	roleNode
)

// rec is what planning needs to know about one tensor; it is comparable, and equal records make
// equal plans.
type rec struct {
	ne, nb   [core.MaxDims]int64
	src      [core.MaxSrc]int32 // canonical ids of a node's sources, -1 where none
	viewOffs int64
	size     int64 // AllocSize in its buffer type (0 for views and external tensors)
	viewSrc  int32 // -1 when not a view
	bufID    int32 // buffer id the tensor is allocated in (-1: never allocated here)
	typ      core.Type
	op       core.Op
	flags    core.Flags
	role     role
	ext      bool // memory provided by someone else: a Buffer that is not this allocator's
	view     bool
	outView  bool // a view of this tensor is an output: keep it to the end (ggml does not)
}

// graphInfo is the canonical description of a graph: the fingerprint and the tensors behind it.
type graphInfo struct {
	recs    []rec
	ts      []*core.Tensor
	nodes   []int32
	leafs   []int32
	nodeIDs []int32
	leafIDs []int32

	// aliases of the graph's tensors (SetAliases) by record; not part of the fingerprint
	aliases []aliasRef
}

// aliasRef is an alias and the record of the tensor it shares memory with.
type aliasRef struct {
	rec int32
	t   *core.Tensor
}

// input reports whether the tensor is one the caller writes rather than one the graph computes:
// a leaf or another source that no op computes (Op none, not a view), or a tensor flagged input or
// param. The graph allocator never frees an input it places nor lets a node overwrite it, so its
// bytes survive every computation of the graph.
func (r *rec) input() bool {
	return !r.view && ((r.op == core.OpNone && r.role != roleNode) || r.flags&(core.FlagInput|core.FlagParam) != 0)
}

func (gi *graphInfo) sameAs(o *graphInfo) bool {
	return slices.Equal(gi.recs, o.recs) &&
		slices.Equal(gi.nodes, o.nodes) && slices.Equal(gi.leafs, o.leafs) &&
		slices.Equal(gi.nodeIDs, o.nodeIDs) && slices.Equal(gi.leafIDs, o.leafIDs)
}

func (gi *graphInfo) reset() {
	gi.recs = gi.recs[:0]
	clear(gi.ts)
	gi.ts = gi.ts[:0]
	gi.nodes = gi.nodes[:0]
	gi.leafs = gi.leafs[:0]
	gi.nodeIDs = gi.nodeIDs[:0]
	gi.leafIDs = gi.leafIDs[:0]
	clear(gi.aliases)
	gi.aliases = gi.aliases[:0]
}

// analyzer interns tensors into a graphInfo.
type analyzer struct {
	ids   map[*core.Tensor]int32
	alias map[*core.Tensor]*core.Tensor // SetAliases: alias → the tensor whose record it shares
	gi    *graphInfo
}

func (an *analyzer) intern(t *core.Tensor, r role, bufID int32) int32 {
	if id, ok := an.ids[t]; ok {
		return id
	}
	if of, ok := an.alias[t]; ok {
		id := an.intern(of, r, bufID)
		an.ids[t] = id
		return id
	}
	vs := int32(-1)
	if t.ViewSrc != nil {
		vs = an.intern(t.ViewSrc, roleExtra, -1)
	}
	id := int32(len(an.gi.recs))
	an.ids[t] = id
	an.gi.recs = append(an.gi.recs, rec{
		ne: t.Ne, nb: t.Nb, viewOffs: t.ViewOffs, viewSrc: vs, bufID: bufID,
		typ: t.Type, op: t.Op, flags: t.Flags, role: r, view: t.ViewSrc != nil,
		src: [core.MaxSrc]int32{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1},
	})
	an.gi.ts = append(an.gi.ts, t)
	return id
}

// analyze builds the canonical description of g into gi. nodeIDs and leafIDs give the buffer id of
// each node and leaf (nil: all 0).
func (ga *GraphAllocator) analyze(g *core.Graph, nodeIDs, leafIDs []int32, gi *graphInfo) error {
	if g == nil {
		return fmt.Errorf("tandem: alloc: nil graph")
	}
	if err := g.Err(); err != nil {
		return err
	}
	nodes, leafs := g.Nodes(), g.Leafs()
	if slices.Contains(nodes, nil) || slices.Contains(leafs, nil) {
		return fmt.Errorf("tandem: alloc: the graph holds a nil tensor")
	}
	if nodeIDs != nil && len(nodeIDs) != len(nodes) {
		return fmt.Errorf("tandem: alloc: %d node buffer ids for %d nodes", len(nodeIDs), len(nodes))
	}
	if leafIDs != nil && len(leafIDs) != len(leafs) {
		return fmt.Errorf("tandem: alloc: %d leaf buffer ids for %d leafs", len(leafIDs), len(leafs))
	}
	bufID := func(ids []int32, i int) int32 {
		if ids == nil {
			return 0
		}
		return ids[i]
	}
	gi.reset()
	if ga.ids == nil {
		ga.ids = make(map[*core.Tensor]int32, 2*(len(nodes)+len(leafs)))
	} else {
		clear(ga.ids)
	}
	an := analyzer{ids: ga.ids, alias: ga.aliasOf, gi: gi}
	for i, t := range leafs {
		id := bufID(leafIDs, i)
		gi.leafIDs = append(gi.leafIDs, id)
		gi.leafs = append(gi.leafs, an.intern(t, roleLeaf, id))
	}
	for i, t := range nodes {
		id := bufID(nodeIDs, i)
		gi.nodeIDs = append(gi.nodeIDs, id)
		n := an.intern(t, roleNode, id)
		if r := &gi.recs[n]; r.role == roleExtra {
			// met earlier as a view source: it is a node after all
			r.role, r.bufID = roleNode, id
		}
		gi.nodes = append(gi.nodes, n)
	}
	for i, t := range nodes {
		n := gi.nodes[i]
		for j, s := range t.Src {
			if s == nil {
				continue
			}
			sid := an.intern(s, roleExtra, -1)
			if r := &gi.recs[sid]; r.bufID < 0 {
				// first use of a tensor outside the graph: ggml allocates it for this node's buffer
				r.bufID = gi.nodeIDs[i]
			}
			gi.recs[n].src[j] = sid
		}
	}
	for _, a := range ga.aliases {
		if id, ok := ga.ids[a.Of]; ok {
			gi.aliases = append(gi.aliases, aliasRef{id, a.Tensor})
		}
	}
	// place walks the records in order and gives an alias its memory right after its record's
	slices.SortStableFunc(gi.aliases, func(a, b aliasRef) int { return cmp.Compare(a.rec, b.rec) })
	var total int64
	for i := range gi.recs {
		r := &gi.recs[i]
		if r.view {
			if r.flags&core.FlagOutput != 0 {
				gi.recs[r.viewSrc].outView = true
			}
			continue
		}
		t := gi.ts[i]
		if t.Buffer != nil && !ga.owns(t.Buffer) {
			r.ext = true
			continue
		}
		if _, err := t.CheckedBytes(); err != nil {
			return core.Errorf("tandem: alloc: tensor %v: %w", t, err)
		}
		if r.bufID >= 0 {
			bt := ga.bts[r.bufID]
			r.size = bt.AllocSize(t)
			if r.size < 0 {
				return fmt.Errorf("tandem: alloc: buffer type %s reports a negative size %d for %v", bt.Name(), r.size, t)
			}
			aligned, ok := core.CheckedAlignUp(r.size, ga.align[r.bufID])
			if ok {
				total, ok = core.CheckedAdd(total, aligned)
			}
			if !ok || total > maxPlanBytes {
				return core.Errorf("tandem: alloc: the graph's tensors need more than %d bytes in all (at %v): %w",
					int64(maxPlanBytes), t, core.ErrOverflow)
			}
		}
	}
	return nil
}

// maxPlanBytes bounds the sum of the aligned sizes of a graph's tensors, so that no offset, chunk
// size or live-bytes sum computed while planning can overflow an int64.
const maxPlanBytes = 1 << 61

// Simulation: ggml's execution-order walk over the canonical records, producing slots (regions of
// memory with a lifetime; a tensor computed in place shares its parent's slot) and the stream of
// alloc/free events that an online allocator replays.

const (
	evAlloc uint8 = iota
	evFree
)

type event struct {
	off, size int64 // offset inside the slot and aligned size
	slot      int32
	kind      uint8
}

type slotInfo struct {
	size         int64 // aligned size at allocation
	birth, death int32 // event indices; death = never when the slot lives to the end
	alloc        int32 // allocator index
}

const never = math.MaxInt32

type simResult struct {
	slots   []slotInfo
	events  []event
	tslot   []int32 // per record: slot, or -1
	viewRe  int     // number of in-place reuses through a view (0 with ggml's rules)
	inplace int     // number of in-place reuses
}

// simState is scratch for simulate.
type simState struct {
	nChildren, nViews []int32
	allocated         []bool
}

// simulate runs ggml's planning walk (ggml_gallocr_alloc_graph_impl) over gi. With viewInplace, a
// node may also take over the memory of a view parent at offset 0 whose source has no other users
// (ggml has this rule too, but its ownership test never lets a view through).
func (ga *GraphAllocator) simulate(gi *graphInfo, viewInplace bool, st *simState, out *simResult) {
	n := len(gi.recs)
	recs := gi.recs
	st.nChildren = resize(st.nChildren, n)
	st.nViews = resize(st.nViews, n)
	st.allocated = resize(st.allocated, n)
	nChildren, nViews, allocated := st.nChildren, st.nViews, st.allocated
	out.slots = out.slots[:0]
	out.events = out.events[:0]
	out.tslot = resize(out.tslot, n)
	for i := range out.tslot {
		out.tslot[i] = -1
	}
	out.viewRe, out.inplace = 0, 0

	pinned := func(r *rec) bool {
		return r.flags&core.FlagOutput != 0 || r.outView || r.input()
	}

	allocate := func(t int32) {
		r := &recs[t]
		if r.ext || allocated[t] || r.view || r.bufID < 0 {
			return
		}
		allocated[t] = true
		a := ga.allocOf[r.bufID]
		align := ga.align[a]
		size := core.AlignUp(r.size, align)
		if r.op.CanInplace() {
			for _, s := range r.src {
				if s < 0 {
					continue
				}
				ps := &recs[s]
				root := s
				if ps.view {
					if !viewInplace {
						continue // ggml: a view is never "own"
					}
					root = ps.viewSrc
				}
				if !allocated[root] {
					continue // external, or not planned here
				}
				rr := &recs[root]
				if pinned(ps) || (ps.view && pinned(rr)) {
					continue
				}
				if ps.typ != r.typ || ps.ne != r.ne || ps.nb != r.nb {
					continue
				}
				if nChildren[s] != 1 || nViews[s] != 0 {
					continue
				}
				if ps.view && (nViews[root] != 1 || nChildren[root] != 0 || ps.viewOffs != 0) {
					continue
				}
				sl := out.tslot[root]
				if out.slots[sl].alloc != int32(a) {
					continue // memory of another buffer type
				}
				psize := core.AlignUp(rr.size, align)
				if psize < size {
					continue // ggml asserts here
				}
				out.tslot[t] = sl
				allocated[root] = false
				allocated[s] = false
				if psize > size {
					out.events = append(out.events, event{kind: evFree, slot: sl, off: size, size: psize - size})
				}
				out.inplace++
				if ps.view {
					out.viewRe++
				}
				return
			}
		}
		sl := int32(len(out.slots))
		out.slots = append(out.slots, slotInfo{size: size, birth: int32(len(out.events)), death: never, alloc: int32(a)})
		out.events = append(out.events, event{kind: evAlloc, slot: sl, size: size})
		out.tslot[t] = sl
	}

	free := func(t int32) {
		r := &recs[t]
		if pinned(r) {
			return
		}
		sl := out.tslot[t]
		size := core.AlignUp(r.size, ga.align[out.slots[sl].alloc])
		out.slots[sl].death = int32(len(out.events))
		out.events = append(out.events, event{kind: evFree, slot: sl, size: size})
		allocated[t] = false
	}

	for _, l := range gi.leafs {
		allocate(l)
	}
	for _, nd := range gi.nodes {
		r := &recs[nd]
		if r.view && r.op != core.OpNone {
			nViews[r.viewSrc]++
		}
		if r.flags&core.FlagInput != 0 {
			allocate(nd)
		}
		for _, s := range r.src {
			if s < 0 {
				continue
			}
			nChildren[s]++
			if recs[s].flags&core.FlagInput != 0 {
				allocate(s)
			}
		}
	}
	for _, nd := range gi.nodes {
		r := &recs[nd]
		for _, s := range r.src {
			if s >= 0 {
				allocate(s)
			}
		}
		allocate(nd)
		for _, s := range r.src {
			if s < 0 {
				continue
			}
			nChildren[s]--
			if nChildren[s] != 0 || nViews[s] != 0 {
				continue
			}
			if ps := &recs[s]; ps.view {
				vs := ps.viewSrc
				nViews[vs]--
				if nViews[vs] == 0 && nChildren[vs] == 0 && allocated[vs] {
					free(vs)
				}
			} else if allocated[s] {
				free(s)
			}
		}
	}
}

func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// placement is where a plan puts its slots, per allocator.
type placement struct {
	addr   []Addr    // per slot
	chunks [][]int64 // per allocator: chunk sizes
	total  int64
}

func (p *placement) init(nSlots, nAlloc int) {
	p.addr = resize(p.addr, nSlots)
	if len(p.chunks) < nAlloc {
		p.chunks = make([][]int64, nAlloc)
	}
	p.chunks = p.chunks[:nAlloc]
	for i := range p.chunks {
		p.chunks[i] = p.chunks[i][:0]
	}
	p.total = 0
}

func (p *placement) sum() {
	p.total = 0
	for _, cs := range p.chunks {
		for _, c := range cs {
			p.total += c
		}
	}
}

// placeOnline replays the events through ggml's dynamic allocator, one per allocator.
func (ga *GraphAllocator) placeOnline(sr *simResult, p *placement) {
	nAlloc := len(ga.bts)
	p.init(len(sr.slots), nAlloc)
	for a := 0; a < nAlloc; a++ {
		if ga.allocOf[a] == a {
			ga.dyn[a].Reset()
		}
	}
	for _, ev := range sr.events {
		s := &sr.slots[ev.slot]
		d := ga.dyn[s.alloc]
		if ev.kind == evAlloc {
			p.addr[ev.slot] = d.Alloc(ev.size)
			continue
		}
		at := p.addr[ev.slot]
		at.Offset += ev.off
		d.Free(at, ev.size)
	}
	for a := 0; a < nAlloc; a++ {
		if ga.allocOf[a] != a {
			continue
		}
		d := ga.dyn[a]
		for c := 0; c < d.NumChunks(); c++ {
			p.chunks[a] = append(p.chunks[a], d.ChunkSize(c))
		}
	}
	p.sum()
}

// offline is scratch for placeOffline.
type offline struct {
	order []int32
	live  []int32
	pos   []int32 // slot → index in live
	deg   []int32
	start []int32
	adj   []int32
	edges [][2]int32
	near  []span
	caps  [][]int64 // per allocator and chunk: capacity
}

type span struct {
	chunk    int32
	off, end int64
}

// maxEdgesPerSlot bounds the work of the offline placement: beyond it (graphs where most tensors
// live at the same time) only the online placement is used.
const maxEdgesPerSlot = 64

// placeOffline knows every slot's lifetime in advance, so it can do what an online allocator
// cannot: place the largest slots first, each at the lowest offset where it does not overlap a
// placed slot that is alive at the same time ("greedy by size"). It reports false when the graph is
// too dense for it.
func (ga *GraphAllocator) placeOffline(sr *simResult, p *placement, o *offline) bool {
	nSlots := len(sr.slots)
	nAlloc := len(ga.bts)
	p.init(nSlots, nAlloc)
	if len(o.caps) < nAlloc {
		o.caps = make([][]int64, nAlloc)
	}
	for a := range o.caps {
		o.caps[a] = o.caps[a][:0]
	}

	// conflict graph: two slots conflict when their lifetimes overlap (sweep over the events)
	o.edges = o.edges[:0]
	o.live = o.live[:0]
	o.pos = resize(o.pos, nSlots)
	budget := maxEdgesPerSlot*nSlots + 4096
	for _, ev := range sr.events {
		s := &sr.slots[ev.slot]
		switch {
		case ev.kind == evAlloc:
			if s.size > 0 {
				for _, l := range o.live {
					if sr.slots[l].alloc == s.alloc {
						o.edges = append(o.edges, [2]int32{ev.slot, l})
					}
				}
				if len(o.edges) > budget {
					return false
				}
				o.pos[ev.slot] = int32(len(o.live))
				o.live = append(o.live, ev.slot)
			}
		case ev.off == 0: // the slot's last free (tail frees have an offset)
			if s.size > 0 {
				i := o.pos[ev.slot]
				last := o.live[len(o.live)-1]
				o.live[i] = last
				o.pos[last] = i
				o.live = o.live[:len(o.live)-1]
			}
		}
	}
	o.deg = resize(o.deg, nSlots+1)
	for _, e := range o.edges {
		o.deg[e[0]+1]++
		o.deg[e[1]+1]++
	}
	for i := 1; i <= nSlots; i++ {
		o.deg[i] += o.deg[i-1]
	}
	o.start = append(o.start[:0], o.deg...)
	o.adj = resize(o.adj, 2*len(o.edges))
	for _, e := range o.edges {
		o.adj[o.start[e[0]]] = e[1]
		o.start[e[0]]++
		o.adj[o.start[e[1]]] = e[0]
		o.start[e[1]]++
	}

	o.order = o.order[:0]
	for i := range sr.slots {
		o.order = append(o.order, int32(i))
	}
	slices.SortFunc(o.order, func(a, b int32) int {
		sa, sb := &sr.slots[a], &sr.slots[b]
		if c := cmp.Compare(sb.size, sa.size); c != 0 {
			return c
		}
		return cmp.Compare(sa.birth, sb.birth)
	})

	placed := o.pos // reuse: 1 when placed
	clear(placed)
	for _, s := range o.order {
		si := &sr.slots[s]
		a := si.alloc
		maxChunk := ga.dyn[a].maxChunk
		o.near = o.near[:0]
		for _, nb := range o.adj[o.deg[s]:o.deg[s+1]] {
			if placed[nb] != 0 {
				at := p.addr[nb]
				o.near = append(o.near, span{int32(at.Chunk), at.Offset, at.Offset + sr.slots[nb].size})
			}
		}
		slices.SortFunc(o.near, func(x, y span) int {
			if c := cmp.Compare(x.chunk, y.chunk); c != 0 {
				return c
			}
			return cmp.Compare(x.off, y.off)
		})
		chunks := p.chunks[a]
		at := Addr{Chunk: -1}
		j := 0
		for c := 0; c < len(chunks) && at.Chunk < 0; c++ {
			capacity := o.caps[a][c]
			cur := int64(0)
			for ; j < len(o.near) && o.near[j].chunk == int32(c); j++ {
				if o.near[j].off-cur >= si.size && at.Chunk < 0 {
					at = Addr{c, cur} // the lowest gap that fits
				}
				cur = max(cur, o.near[j].end)
			}
			if at.Chunk < 0 && cur+si.size <= capacity {
				at = Addr{c, cur}
			}
		}
		if at.Chunk < 0 {
			at = Addr{len(chunks), 0}
			p.chunks[a] = append(p.chunks[a], 0)
			o.caps[a] = append(o.caps[a], max(maxChunk, si.size))
		}
		p.addr[s] = at
		placed[s] = 1
		p.chunks[a][at.Chunk] = max(p.chunks[a][at.Chunk], at.Offset+si.size)
	}
	p.sum()
	return true
}

// lowerBound is, per allocator, the largest sum of live slot bytes at any time of the simulation:
// no placement of these lifetimes can use less.
func (ga *GraphAllocator) lowerBound(sr *simResult, lb []int64) []int64 {
	lb = resize(lb, len(ga.bts))
	live := make([]int64, len(ga.bts))
	for _, ev := range sr.events {
		a := sr.slots[ev.slot].alloc
		if ev.kind == evAlloc {
			live[a] += ev.size
			lb[a] = max(lb[a], live[a])
		} else {
			live[a] -= ev.size
		}
	}
	return lb
}
