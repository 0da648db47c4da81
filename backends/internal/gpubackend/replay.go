package gpubackend

import (
	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/core"
)

// A graph that runs again unchanged (llm's generation runs one graph a token) is not recorded
// again where the Dispatcher is a Replayer: the backend keeps the last graph's recording with a
// snapshot of everything the recording was made from, and replays it while the snapshot holds.
// Recording a TinyLlama token's ~330 dispatches took ~2.6 ms of the host on an H200's machine,
// about as long as the device ran them.

// kept is the last graph's recording and what it was recorded from.
type kept struct {
	rec        Recording
	g          *core.Graph
	snap       []tensorSnap // per node: the node, then its sources
	set        gpuops.Setting
	dispatches int
	barriers   int
}

// tensorSnap is what a recording depends on of one tensor: its identity, op, parameters, sources,
// type, shape, strides and memory.
type tensorSnap struct {
	t      *core.Tensor
	op     core.Op
	typ    core.Type
	params [core.MaxOpParams]int32
	src    [core.MaxSrc]*core.Tensor
	ne, nb [core.MaxDims]int64
	buf    core.Buffer
	off    int64
}

func snapOf(t *core.Tensor) tensorSnap {
	return tensorSnap{t: t, op: t.Op, typ: t.Type, params: t.Params, src: t.Src, ne: t.Ne, nb: t.Nb, buf: t.Buffer, off: t.Offset}
}

// snapshot appends the snapshots of g's nodes and their sources to s[:0].
func snapshot(s []tensorSnap, g *core.Graph) []tensorSnap {
	s = s[:0]
	for _, n := range g.Nodes() {
		s = append(s, snapOf(n))
		for _, src := range n.Src {
			if src != nil {
				s = append(s, snapOf(src))
			}
		}
	}
	return s
}

// holds reports whether g, recorded now with set, would give k's recording.
func (k *kept) holds(g *core.Graph, set gpuops.Setting) bool {
	if k.g != g || k.set != set {
		return false
	}
	i := 0
	for _, n := range g.Nodes() {
		if i >= len(k.snap) || k.snap[i] != snapOf(n) {
			return false
		}
		i++
		for _, src := range n.Src {
			if src != nil {
				if i >= len(k.snap) || k.snap[i] != snapOf(src) {
					return false
				}
				i++
			}
		}
	}
	return i == len(k.snap)
}

// Replays returns the number of graphs GraphCompute ran again from their recording (0 for a
// stand-in).
func (b *Backend) Replays() int {
	if b.unmade != "" {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.replays
}

// dropKept releases the kept recording, if any.
func (b *Backend) dropKept() {
	if b.kept != nil {
		b.kept.rec.Release()
		b.kept = nil
	}
}
