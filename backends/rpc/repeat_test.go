package rpc

import (
	"errors"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

func (c *rawConn) setF32(w wireTensor, vals ...float32) {
	b := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		b = le.AppendUint32(b, math.Float32bits(v))
	}
	c.send(cmdSetTensor, w.bytes(), u64(0), b)
}

// getF32 reads w's n floats; the connection must still be open.
func (c *rawConn) getF32(w wireTensor, n int) []float32 {
	c.t.Helper()
	out := c.call(cmdGetTensor, w.bytes(), u64(0), u64(4*uint64(n)))
	if len(out) != 4*n {
		c.t.Fatalf("get tensor %d: reply % x (connection closed?)", w.ID, out)
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(le.Uint32(out[4*i:]))
	}
	return v
}

// A node listed several times in one GRAPH_COMPUTE (as ggml's test-backend-ops lists its op in
// perf mode) is accepted and computed, and the graph recomputes.
func TestGraphRepeatedNode(t *testing.T) {
	h := newHostileRig(t)
	c := h.raw(true)
	hd, base := c.alloc(64)
	a, b, r := f32Tensor(1, hd, base, 4), f32Tensor(2, hd, base+16, 4), f32Tensor(3, hd, base+32, 4)
	r.Op, r.Src[0], r.Src[1], r.Flags = ggmlOpAdd, 1, 2, flagCompute
	c.setF32(a, 1, 2, 3, 4)
	c.setF32(b, 10, 20, 30, 40)
	c.send(cmdGraphCompute, encodeGraph(0, []uint64{3, 3, 3}, []wireTensor{a, b, r}))
	if got, want := c.getF32(r, 4), []float32{11, 22, 33, 44}; !slices.Equal(got, want) {
		t.Fatalf("[r, r, r] with r = a+b gave %v, want %v", got, want)
	}
	c.setF32(a, -1, -2, -3, -4)
	c.send(cmdGraphRecompute, le.AppendUint32(nil, 0))
	if got, want := c.getF32(r, 4), []float32{9, 18, 27, 36}; !slices.Equal(got, want) {
		t.Fatalf("recompute gave %v, want %v", got, want)
	}
}

// Each occurrence of a repeated node is computed: x = ADD(acc, one) in place (ggml_add_inplace:
// x is a view of acc) adds one per occurrence, also around another node, and GRAPH_RECOMPUTE runs
// every occurrence again.
func TestGraphRepeatedInplaceNode(t *testing.T) {
	h := newHostileRig(t)
	for _, tc := range []struct {
		name     string
		nodes    []uint64
		acc, out []float32 // acc after the graph, and y where the graph computes it
	}{
		{"once", []uint64{3}, []float32{2, 3, 4, 5}, nil},
		{"three times", []uint64{3, 3, 3}, []float32{4, 5, 6, 7}, nil},
		// [x, y, x] with y = x + one into its own memory: y reads the first x's result.
		{"around another node", []uint64{3, 4, 3}, []float32{3, 4, 5, 6}, []float32{3, 4, 5, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := h.raw(true)
			c.t = t
			hd, base := c.alloc(64)
			acc, one := f32Tensor(1, hd, base, 4), f32Tensor(2, hd, base+16, 4)
			x := f32Tensor(3, hd, base, 4)
			x.Op, x.Src[0], x.Src[1], x.ViewSrc, x.Flags = ggmlOpAdd, 1, 2, 1, flagCompute
			y := f32Tensor(4, hd, base+32, 4)
			y.Op, y.Src[0], y.Src[1], y.Flags = ggmlOpAdd, 3, 2, flagCompute
			c.setF32(acc, 1, 2, 3, 4)
			c.setF32(one, 1, 1, 1, 1)
			c.send(cmdGraphCompute, encodeGraph(0, tc.nodes, []wireTensor{acc, one, x, y}))
			if got := c.getF32(acc, 4); !slices.Equal(got, tc.acc) {
				t.Fatalf("nodes %v: acc = %v, want %v", tc.nodes, got, tc.acc)
			}
			if tc.out != nil {
				if got := c.getF32(y, 4); !slices.Equal(got, tc.out) {
					t.Fatalf("nodes %v: y = %v, want %v", tc.nodes, got, tc.out)
				}
			}
			c.send(cmdGraphRecompute, le.AppendUint32(nil, 0))
			n := float32(0)
			for _, id := range tc.nodes {
				if id == 3 {
					n++
				}
			}
			want := make([]float32, 4)
			for i, v := range tc.acc {
				want[i] = v + n
			}
			if got := c.getF32(acc, 4); !slices.Equal(got, want) {
				t.Fatalf("nodes %v, recomputed: acc = %v, want %v", tc.nodes, got, want)
			}
		})
	}
}

// failingBackend counts its computes, remembers the graphs and fails compute number failAt.
type failingBackend struct {
	core.Backend
	mu     sync.Mutex
	graphs []*core.Graph
	failAt int
}

func (b *failingBackend) GraphCompute(g *core.Graph) error {
	b.mu.Lock()
	b.graphs = append(b.graphs, g)
	n := len(b.graphs)
	b.mu.Unlock()
	if n == b.failAt {
		return errors.New("injected failure")
	}
	return b.Backend.GraphCompute(g)
}

// A list with repeats runs as segments on the backend, one compute each, an unchanged segment
// again as the same graph; the first failing segment ends the request (and the connection).
func TestGraphRepeatedNodeSegments(t *testing.T) {
	for _, tc := range []struct {
		name   string
		nodes  []uint64
		failAt int
		graphs int // computes made
		uniq   int // distinct graphs among them
	}{
		{"no repeat is one graph", []uint64{3, 4}, 0, 1, 1},
		{"same segment reused", []uint64{3, 3, 3}, 0, 3, 1},
		{"cut before the repeat", []uint64{3, 4, 3, 3}, 0, 3, 2},
		{"stop at the failure", []uint64{3, 3, 3}, 2, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fb := &failingBackend{Backend: cpuBackends(t, 1)[0], failAt: tc.failAt}
			h := &hostileRig{t: t, addr: listenTest(t, &Server{Backends: []core.Backend{fb}})}
			c := h.raw(true)
			hd, base := c.alloc(64)
			a, b := f32Tensor(1, hd, base, 4), f32Tensor(2, hd, base+16, 4)
			r := f32Tensor(3, hd, base+32, 4)
			r.Op, r.Src[0], r.Src[1], r.Flags = ggmlOpAdd, 1, 2, flagCompute
			s := f32Tensor(4, hd, base+48, 4)
			s.Op, s.Src[0], s.Src[1], s.Flags = ggmlOpAdd, 3, 2, flagCompute
			c.setF32(a, 1, 2, 3, 4)
			c.setF32(b, 1, 1, 1, 1)
			c.send(cmdGraphCompute, encodeGraph(0, tc.nodes, []wireTensor{a, b, r, s}))
			if tc.failAt > 0 {
				c.send(cmdDeviceCount)
				if !c.closed() {
					t.Fatal("connection still open after a failed compute")
				}
			} else if got := c.getF32(r, 4); !slices.Equal(got, []float32{2, 3, 4, 5}) {
				t.Fatalf("r = %v", got)
			}
			fb.mu.Lock()
			defer fb.mu.Unlock()
			distinct := map[*core.Graph]bool{}
			for _, g := range fb.graphs {
				distinct[g] = true
			}
			if len(fb.graphs) != tc.graphs || len(distinct) != tc.uniq {
				t.Fatalf("nodes %v: %d computes of %d graphs, want %d of %d", tc.nodes, len(fb.graphs), len(distinct), tc.graphs, tc.uniq)
			}
		})
	}
}
