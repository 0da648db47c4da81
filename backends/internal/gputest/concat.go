package gputest

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// ConcatI8 runs CONCAT of i8 tensors along each dimension on be (test-backend-ops' shapes: odd
// rows, so result words hold bytes of both sources), with a dense and a permuted a, and checks the
// result bit for bit against the concatenation done here.
func ConcatI8(t *testing.T, be core.Backend) {
	t.Helper()
	for dim := 0; dim < core.MaxDims; dim++ {
		for _, permuted := range []bool{false, true} {
			ctx := core.NewContext(core.ContextParams{NoAlloc: true})
			ne := [4]int64{11, 12, 13, 14}
			root := ctx.NewTensor(core.TypeI8, ne[0], ne[1], ne[2], ne[3])
			a := root
			if permuted {
				root = ctx.NewTensor(core.TypeI8, ne[1], ne[0], ne[2], ne[3])
				a = ctx.Permute(root, 1, 0, 2, 3)
			}
			nb := ne
			nb[dim] = 7
			b := ctx.NewTensor(core.TypeI8, nb[0], nb[1], nb[2], nb[3])
			out := ctx.Concat(a, b, dim)
			AllocCtx(t, ctx, be.DefaultBufferType())
			ra, rb := make([]byte, root.NBytes()), make([]byte, b.NBytes())
			for i := range ra {
				ra[i] = byte(i*7 + 1)
			}
			for i := range rb {
				rb[i] = byte(i*13 + 200)
			}
			if err := core.TensorSet(root, ra, 0); err != nil {
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
							src, raw := a, ra
							if idx[dim] >= a.Ne[dim] {
								idx[dim] -= a.Ne[dim]
								src, raw = b, rb
							}
							want := raw[idx[0]*src.Nb[0]+idx[1]*src.Nb[1]+idx[2]*src.Nb[2]+idx[3]*src.Nb[3]]
							if got[k] != want {
								t.Fatalf("%s: dim %d permuted %v: byte %d = %d, want %d", be.Name(), dim, permuted, k, got[k], want)
							}
							k++
						}
					}
				}
			}
		}
	}
}
