package alloc

import (
	"github.com/tandem-ml/tandem/core"
)

// ggmlOracle is a plain transcription of ggml's gallocr planning (ggml-alloc.c: ggml_dyn_tallocr
// with its best fit, tail-block rule and 16 chunks, ggml_gallocr_allocate_node with its in-place
// rules, ggml_gallocr_alloc_graph_impl) over one buffer type, with tandem's rule that inputs live to
// the end of the graph (see freeNode). It shares no code with the package and serves as the
// yardstick: the package's plans must never need more memory than this.
type ggmlOracle struct {
	bt       core.BufferType
	align    int64
	maxChunk int64
	chunks   []*oChunk
	hash     map[*core.Tensor]*oNode
}

type oBlock struct{ off, size int64 }

type oChunk struct {
	free []oBlock
	max  int64
}

type oAddr struct {
	chunk int
	off   int64
}

type oNode struct {
	nChildren, nViews int
	allocated         bool
	addr              oAddr
}

const oMaxChunks = 16

func oPad(n, a int64) int64 { return (n + a - 1) / a * a }

func (o *ggmlOracle) newChunk(minSize int64) int {
	if len(o.chunks) >= oMaxChunks {
		return -1
	}
	c := &oChunk{free: []oBlock{{0, max(minSize, o.maxChunk)}}}
	if len(o.chunks) == oMaxChunks-1 {
		c.free[0].size = int64(1) << 62
	}
	o.chunks = append(o.chunks, c)
	return len(o.chunks) - 1
}

func (o *ggmlOracle) alloc(size int64) oAddr {
	size = oPad(size, o.align)
	bestChunk, bestBlock := -1, -1
	for c, ch := range o.chunks {
		bestSize := int64(1<<63 - 1)
		for i := 0; i < len(ch.free)-1; i++ {
			b := ch.free[i]
			if b.size >= size && b.size <= bestSize {
				bestChunk, bestBlock, bestSize = c, i, b.size
			}
		}
	}
	if bestBlock == -1 {
		bestReuse := int64(-1 << 63)
		for c, ch := range o.chunks {
			if len(ch.free) > 0 {
				b := ch.free[len(ch.free)-1]
				reuse := ch.max - b.off - size
				betterReuse := bestReuse < 0 && reuse > bestReuse
				betterFit := reuse >= 0 && reuse < bestReuse
				if b.size >= size && (betterReuse || betterFit) {
					bestChunk, bestBlock, bestReuse = c, len(ch.free)-1, reuse
				}
			}
		}
	}
	if bestBlock == -1 {
		bestChunk, bestBlock = o.newChunk(size), 0
	}
	if bestChunk == -1 {
		panic("ggml oracle: out of chunks")
	}
	ch := o.chunks[bestChunk]
	b := &ch.free[bestBlock]
	a := oAddr{bestChunk, b.off}
	b.off += size
	b.size -= size
	if b.size == 0 {
		ch.free = append(ch.free[:bestBlock], ch.free[bestBlock+1:]...)
	}
	ch.max = max(ch.max, a.off+size)
	return a
}

func (o *ggmlOracle) freeBytes(a oAddr, size int64) {
	size = oPad(size, o.align)
	ch := o.chunks[a.chunk]
	for i := 0; i < len(ch.free); i++ {
		b := &ch.free[i]
		if b.off+b.size == a.off {
			b.size += size
			if i < len(ch.free)-1 {
				next := ch.free[i+1]
				if b.off+b.size == next.off {
					b.size += next.size
					ch.free = append(ch.free[:i+1], ch.free[i+2:]...)
				}
			}
			return
		}
		if a.off+size == b.off {
			b.off = a.off
			b.size += size
			if i > 0 {
				prev := &ch.free[i-1]
				if prev.off+prev.size == b.off {
					prev.size += b.size
					ch.free = append(ch.free[:i], ch.free[i+1:]...)
				}
			}
			return
		}
	}
	pos := 0
	for pos < len(ch.free) && ch.free[pos].off < a.off {
		pos++
	}
	ch.free = append(ch.free, oBlock{})
	copy(ch.free[pos+1:], ch.free[pos:])
	ch.free[pos] = oBlock{a.off, size}
}

func (o *ggmlOracle) hn(t *core.Tensor) *oNode {
	n := o.hash[t]
	if n == nil {
		n = &oNode{}
		o.hash[t] = n
	}
	return n
}

func (o *ggmlOracle) isAllocated(t *core.Tensor) bool { return t.Buffer != nil || o.hn(t).allocated }

func (o *ggmlOracle) freeExtra(node, parent *core.Tensor) {
	ps := oPad(o.bt.AllocSize(parent), o.align)
	ns := oPad(o.bt.AllocSize(node), o.align)
	if ps > ns {
		a := o.hn(parent).addr
		a.off += ns
		o.freeBytes(a, ps-ns)
	}
}

func (o *ggmlOracle) allocateNode(node *core.Tensor) {
	hn := o.hn(node)
	if o.isAllocated(node) || node.ViewSrc != nil {
		return
	}
	hn.allocated = true
	if node.Op.CanInplace() {
		for _, parent := range node.Src {
			if parent == nil {
				continue
			}
			if !o.hn(parent).allocated { // ggml_gallocr_is_own
				continue
			}
			if parent.Flags&core.FlagOutput != 0 || (parent.ViewSrc != nil && parent.ViewSrc.Flags&core.FlagOutput != 0) {
				continue
			}
			if oInput(parent) || (parent.ViewSrc != nil && oInput(parent.ViewSrc)) {
				continue // never overwritten (see freeNode)
			}
			if !core.SameLayout(node, parent) {
				continue
			}
			phn := o.hn(parent)
			if phn.nChildren == 1 && phn.nViews == 0 {
				if parent.ViewSrc != nil {
					vs := parent.ViewSrc
					vhn := o.hn(vs)
					if vhn.nViews == 1 && vhn.nChildren == 0 && parent.ViewOffs == 0 {
						hn.addr = phn.addr
						phn.allocated = false
						vhn.allocated = false
						o.freeExtra(node, vs)
						return
					}
				} else {
					hn.addr = phn.addr
					phn.allocated = false
					o.freeExtra(node, parent)
					return
				}
			}
		}
	}
	hn.addr = o.alloc(o.bt.AllocSize(node))
}

// oInput reports whether t is an input: not computed by an op (and not a view), or flagged input
// or param.
func oInput(t *core.Tensor) bool {
	return (t.ViewSrc == nil && t.Op == core.OpNone) || t.Flags&(core.FlagInput|core.FlagParam) != 0
}

func (o *ggmlOracle) freeNode(node *core.Tensor) {
	if node.Flags&core.FlagOutput != 0 {
		return
	}
	// tandem's one departure from ggml's lifetimes: inputs (tensors no op computes, and tensors
	// flagged input or param) are never freed, so a graph computed again reads them unchanged
	if oInput(node) {
		return
	}
	hn := o.hn(node)
	o.freeBytes(hn.addr, o.bt.AllocSize(node))
	hn.allocated = false
}

// ggmlPlanSize returns the compute buffer size ggml_gallocr_reserve would allocate for g with one
// buffer of type bt (the sum of its chunks), and the number of chunks.
func ggmlPlanSize(g *core.Graph, bt core.BufferType) (int64, int) {
	maxChunk := bt.MaxSize()
	if maxChunk <= 0 {
		maxChunk = int64(1) << 62
	}
	o := &ggmlOracle{bt: bt, align: bt.Alignment(), maxChunk: maxChunk, hash: map[*core.Tensor]*oNode{}}
	for _, leaf := range g.Leafs() {
		o.allocateNode(leaf)
	}
	for _, node := range g.Nodes() {
		if node.ViewSrc != nil && node.Op != core.OpNone {
			o.hn(node.ViewSrc).nViews++
		}
		if node.Flags&core.FlagInput != 0 {
			o.allocateNode(node)
		}
		for _, src := range node.Src {
			if src == nil {
				continue
			}
			o.hn(src).nChildren++
			if src.Flags&core.FlagInput != 0 {
				o.allocateNode(src)
			}
		}
	}
	for _, node := range g.Nodes() {
		for _, parent := range node.Src {
			if parent != nil {
				o.allocateNode(parent)
			}
		}
		o.allocateNode(node)
		for _, parent := range node.Src {
			if parent == nil {
				continue
			}
			phn := o.hn(parent)
			phn.nChildren--
			if phn.nChildren == 0 && phn.nViews == 0 {
				if parent.ViewSrc != nil {
					vs := parent.ViewSrc
					vhn := o.hn(vs)
					vhn.nViews--
					if vhn.nViews == 0 && vhn.nChildren == 0 && vhn.allocated {
						o.freeNode(vs)
					}
				} else if phn.allocated {
					o.freeNode(parent)
				}
			}
		}
	}
	var total int64
	for _, c := range o.chunks {
		total += c.max
	}
	return total, len(o.chunks)
}
