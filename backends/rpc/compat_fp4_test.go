package rpc

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// A GGMLCompat client keeps the MXFP4, NVFP4 and Q1_0 nodes ggml's CPU runs (MUL_MAT, GET_ROWS,
// copies into f32 and from f32) and refuses copies of any quantized type into f16 or bf16, on
// which ggml_compute_forward_dup aborts (it dequantizes into f32 only).
func TestGGMLCPUAcceptsFP4(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	for _, typ := range []core.Type{core.TypeMXFP4, core.TypeNVFP4, core.TypeQ1_0, core.TypeQ4_0} {
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
			{"CPY(q->q)", c.Cpy(q, c.NewTensor(typ, 256, 5)), true},
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
}
