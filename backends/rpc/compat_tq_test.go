package rpc

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// A GGMLCompat client keeps the TQ1_0, TQ2_0 and Q2_0 nodes ggml's CPU runs (MUL_MAT, GET_ROWS,
// copies into f32 and from f32) and refuses their copies into f16 or bf16, as for every quantized type;
// F64 nodes pass only as same-type copies and CONCAT (ggml's CPU has no F64 conversion).
func TestGGMLCPUAcceptsTQAndF64(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	for _, typ := range []core.Type{core.TypeTQ1_0, core.TypeTQ2_0, core.TypeQ2_0} {
		q := c.NewTensor(typ, 256, 5)
		x := c.NewTensor(core.TypeF32, 256, 5)
		for _, tc := range []struct {
			name string
			n    *core.Tensor
			want bool
		}{
			{"MUL_MAT", c.MulMat(q, x), true},
			{"GET_ROWS", c.GetRows(q, c.NewTensor(core.TypeI32, 3)), true},
			{"CPY(q->f32)", c.Cpy(q, c.NewTensor(core.TypeF32, 256, 5)), true},
			{"CPY(f32->q)", c.Cpy(x, c.NewTensor(typ, 256, 5)), true},
			{"CPY(q->f16)", c.Cpy(q, c.NewTensor(core.TypeF16, 256, 5)), false},
			{"CPY(q->bf16)", c.Cpy(q, c.NewTensor(core.TypeBF16, 256, 5)), false},
		} {
			if err := c.Err(); err != nil {
				t.Fatal(err)
			}
			if got := ggmlCPUAccepts(tc.n); got != tc.want {
				t.Errorf("%v %s: ggmlCPUAccepts = %v, want %v", typ, tc.name, got, tc.want)
			}
		}
	}
	f64 := core.TypeF64
	a := c.NewTensor(f64, 6, 4)
	for _, tc := range []struct {
		name string
		n    *core.Tensor
		want bool
	}{
		{"DUP", c.Dup(a), true},
		{"CONT(permuted)", c.Cont(c.Permute(a, 1, 0, 2, 3)), true},
		{"CPY", c.Cpy(a, c.NewTensor(f64, 4, 6)), true},
		{"CONCAT", c.Concat(a, c.NewTensor(f64, 6, 2), 1), true},
		{"VIEW", c.View2D(a, 3, 4, a.Nb[1], 8), true},
	} {
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
		if got := ggmlCPUAccepts(tc.n); got != tc.want {
			t.Errorf("f64 %s: ggmlCPUAccepts = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Nodes tandem's constructors build on F64 but ggml's CPU aborts on (hand-made, as tandem's
	// CPU refuses them too).
	for _, op := range []core.Op{core.OpGetRows, core.OpSum, core.OpAdd, core.OpRepeat} {
		n := &core.Tensor{Op: op, Type: f64, Ne: a.Ne, Nb: a.Nb, Src: [core.MaxSrc]*core.Tensor{a, a}}
		if ggmlCPUAccepts(n) {
			t.Errorf("f64 %v: accepted", op)
		}
	}
}
