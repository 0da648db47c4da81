//go:build gl && cgo

package gl

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestConcatI8: CONCAT of i8 tensors along each dimension (odd rows, so result words hold bytes
// of both sources) on GL, bit for bit against the concatenation done here: eltwise_copy_b8's
// word assembly and its atomics on words shared with neighbours.
func TestConcatI8(t *testing.T) {
	be := newBackend(t)
	for dim := 0; dim < 4; dim++ {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		a := ctx.NewTensor(core.TypeI8, 11, 12, 13, 14)
		nb := [4]int64{11, 12, 13, 14}
		nb[dim] = 7
		b := ctx.NewTensor(core.TypeI8, nb[0], nb[1], nb[2], nb[3])
		out := ctx.Concat(a, b, dim)
		allocCtx(t, ctx, be.DefaultBufferType())
		ra := make([]byte, a.NBytes())
		for i := range ra {
			ra[i] = byte(i*7 + 1)
		}
		rb := make([]byte, b.NBytes())
		for i := range rb {
			rb[i] = byte(i*13 + 200)
		}
		if err := core.TensorSet(a, ra, 0); err != nil {
			t.Fatal(err)
		}
		if err := core.TensorSet(b, rb, 0); err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(out)
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, out.NBytes())
		if err := core.TensorGet(out, got, 0); err != nil {
			t.Fatal(err)
		}
		k := 0
		for i3 := int64(0); i3 < out.Ne[3]; i3++ {
			for i2 := int64(0); i2 < out.Ne[2]; i2++ {
				for i1 := int64(0); i1 < out.Ne[1]; i1++ {
					for i0 := int64(0); i0 < out.Ne[0]; i0++ {
						idx := [4]int64{i0, i1, i2, i3}
						var want byte
						if idx[dim] < a.Ne[dim] {
							want = ra[idx[0]*a.Nb[0]+idx[1]*a.Nb[1]+idx[2]*a.Nb[2]+idx[3]*a.Nb[3]]
						} else {
							idx[dim] -= a.Ne[dim]
							want = rb[idx[0]*b.Nb[0]+idx[1]*b.Nb[1]+idx[2]*b.Nb[2]+idx[3]*b.Nb[3]]
						}
						if got[k] != want {
							t.Fatalf("dim %d: byte %d = %d, want %d", dim, k, got[k], want)
						}
						k++
					}
				}
			}
		}
	}
}
