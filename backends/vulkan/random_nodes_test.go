//go:build cgo && !novulkan

package vulkan

import (
	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestRandomNodesNeverPanic hand-builds nodes of every op the backend registers from random
// types, shapes, strides, parameters and missing sources, and runs those it claims to support:
// SupportsOp and GraphCompute must never panic (any error is allowed), and with
// TANDEM_VK_VALIDATE=1 the layer must stay silent (no out-of-range binding or access).
func TestRandomNodesNeverPanic(t *testing.T) {
	be := newBackend(t)
	bt := be.DefaultBufferType()
	buf, err := bt.Alloc(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	r := rand.New(rand.NewPCG(1, 2))
	types := []core.Type{core.TypeF32, core.TypeF16, core.TypeQ4_0, core.TypeI32, core.TypeQ8_0, core.TypeBF16, core.TypeI64}
	mk := func() *core.Tensor {
		typ := types[r.IntN(len(types))]
		var ne [4]int64
		for i := range ne {
			ne[i] = int64(r.IntN(4))
			if r.IntN(3) > 0 {
				ne[i] = 1
			}
		}
		ne[0] = int64(r.IntN(3)) * typ.BlockSize() * int64(1+r.IntN(2))
		if r.IntN(4) == 0 {
			ne[0] = int64(r.IntN(70))
		}
		x := &core.Tensor{Type: typ, Ne: ne}
		x.Nb[0] = typ.Size()
		x.Nb[1] = x.Nb[0] * ne[0] / typ.BlockSize()
		if r.IntN(5) == 0 {
			x.Nb[1] += 64
		}
		for i := 2; i < 4; i++ {
			x.Nb[i] = x.Nb[i-1] * ne[i-1]
		}
		x.Buffer, x.Offset = buf, int64(r.IntN(64))*64
		return x
	}
	panics, ran := 0, 0
	for it := 0; it < 60000; it++ {
		op := core.Op(1 + r.IntN(int(core.OpCount)-1))
		if !gpuops.Implemented(op) {
			continue
		}
		n := mk()
		n.Op = op
		for i := 0; i < 3; i++ {
			if r.IntN(4) > 0 {
				n.Src[i] = mk()
			}
		}
		if n.Src[0] != nil && r.IntN(2) == 0 {
			n.Type, n.Ne, n.Nb = core.TypeF32, n.Src[0].Ne, [4]int64{4, 4 * n.Src[0].Ne[0], 4 * n.Src[0].Ne[0] * n.Src[0].Ne[1], 4 * n.Src[0].Ne[0] * n.Src[0].Ne[1] * n.Src[0].Ne[2]}
			if r.IntN(3) == 0 {
				n.Ne[0], n.Nb[1] = n.Src[0].Ne[1], 4*n.Src[0].Ne[1]
				n.Ne[1] = 1 + int64(r.IntN(3))
			}
		}
		if n.Src[0] != nil && n.Src[1] != nil && r.IntN(2) == 0 {
			o := n.Src[1].Offset
			*n.Src[1] = *n.Src[0]
			n.Src[1].Offset = o
			if r.IntN(2) == 0 {
				n.Src[1].Type = types[r.IntN(len(types))]
			}
		}
		for i := range n.Params {
			if r.IntN(3) == 0 {
				n.Params[i] = int32(r.IntN(9) - 3)
			}
		}
		func() {
			defer func() {
				if rec := recover(); rec != nil {
					panics++
					if panics < 10 {
						t.Errorf("panic %v on %v srcs %v %v %v", rec, n, n.Src[0], n.Src[1], n.Src[2])
					}
				}
			}()
			if !be.Device().SupportsOp(n) {
				return
			}
			ran++
			g := core.NewGraph(8)
			g.BuildForwardExpand(n)
			_ = be.GraphCompute(g)
		}()
	}
	t.Logf("%d random nodes supported and computed, %d panics", ran, panics)
	if ran < 1000 {
		t.Errorf("only %d random nodes were supported: the sweep lost its reach", ran)
	}
}
