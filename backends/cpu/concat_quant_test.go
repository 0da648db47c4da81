package cpu_test

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// CONCAT of quantized tensors copies whole blocks (ggml_compute_forward_concat_any): along rows
// each dst row is a's blocks then b's, along dimension 1 a's rows then b's; the values read back
// are the sources' exactly.
func TestConcatQuantized(t *testing.T) {
	for _, typ := range []core.Type{core.TypeQ8_0, core.TypeQ4_K} {
		bs := typ.BlockSize()
		for _, dim := range []int{0, 1} {
			ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
			a := ctx.NewTensor2D(typ, 2*bs, 3)
			neB := []int64{bs, 3}
			if dim == 1 {
				neB = []int64{2 * bs, 2}
			}
			b := ctx.NewTensor2D(typ, neB[0], neB[1])
			av, bv := make([]float32, a.NElements()), make([]float32, b.NElements())
			for i := range av {
				av[i] = float32(i%7) - 3
			}
			for i := range bv {
				bv[i] = float32(i%5) + 10
			}
			if err := core.SetFloat32s(a, av); err != nil {
				t.Fatal(err)
			}
			if err := core.SetFloat32s(b, bv); err != nil {
				t.Fatal(err)
			}
			out := ctx.Concat(a, b, dim)
			if err := ctx.Err(); err != nil {
				t.Fatal(err)
			}
			g := core.NewGraph(8)
			g.BuildForwardExpand(out)
			if err := cpu.Compute(g, 2); err != nil {
				t.Fatal(err)
			}
			got, err := core.GetFloat32s(out)
			if err != nil {
				t.Fatal(err)
			}
			qa, _ := core.GetFloat32s(a) // the sources as their blocks hold them
			qb, _ := core.GetFloat32s(b)
			var want []float32
			if dim == 0 {
				for r := int64(0); r < 3; r++ {
					want = append(want, qa[r*a.Ne[0]:(r+1)*a.Ne[0]]...)
					want = append(want, qb[r*b.Ne[0]:(r+1)*b.Ne[0]]...)
				}
			} else {
				want = append(append(want, qa...), qb...)
			}
			if len(got) != len(want) {
				t.Fatalf("%v dim %d: %d values, want %d", typ, dim, len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%v dim %d: value %d = %v, want %v", typ, dim, i, got[i], want[i])
				}
			}
		}
	}
	// views whose rows are whole blocks join too
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	q := ctx.NewTensor2D(core.TypeQ8_0, 64, 4)
	v := ctx.View2D(q, 32, 4, q.Nb[1], 0) // rows of one block, 2-block strides: still consecutive
	w := ctx.View3D(q, 32, 2, 2, q.Nb[1], 2*q.Nb[1], 0)
	if ctx.Concat(v, v, 0); ctx.Err() != nil {
		t.Fatalf("CONCAT of row views refused: %v", ctx.Err())
	}
	p := ctx.Permute(w, 0, 2, 1, 3)
	ctx.Concat(p, p, 1)
	if err := ctx.Err(); err != nil {
		t.Fatalf("CONCAT of permuted rows of blocks refused: %v", err)
	}
	// (a quantized view cannot split a row's blocks: PERMUTE and TRANSPOSE refuse to move dim 0)
	tq := ctx.Transpose(q)
	if err := ctx.Err(); err == nil || !strings.Contains(err.Error(), "block size") {
		t.Errorf("TRANSPOSE of a quantized tensor: %v, want the block-size error", err)
	}
	_ = tq
}
