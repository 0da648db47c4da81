package rpc

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// A GGMLCompat client keeps the nodes ggml's CPU runs on the read-only IQ types (every quantized
// type without a quantizer: IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M and the IQ3 types): MUL_MAT and
// FLASH_ATTN_EXT weights, GET_ROWS, dense copies into f32 and into the same type, OUT_PROD with
// the batch of its activations. It refuses what ggml's CPU aborts on for any quantized source
// (copies into f16, permuted copies, broadcast OUT_PROD); copies into these types are refused by
// the constructors already (ggml's CPU has no from_float for them).
func TestGGMLCPUAcceptsReadOnlyIQ(t *testing.T) {
	n := 0
	for typ := range core.Type(64) {
		if !typ.Valid() || !typ.IsQuantized() || typ.CanConvert() {
			continue
		}
		n++
		c := core.NewContext(core.ContextParams{NoAlloc: true})
		q := c.NewTensor(typ, 256, 5, 2)
		f16 := core.TypeF16
		for _, tc := range []struct {
			name string
			n    *core.Tensor
			want bool
		}{
			{"MUL_MAT", c.MulMat(q, c.NewTensor(core.TypeF32, 256, 3, 2)), true},
			{"GET_ROWS", c.GetRows(q, c.NewTensor(core.TypeI32, 3, 2)), true},
			{"CPY(q->f32)", c.Cpy(q, c.NewTensor(core.TypeF32, 256, 5, 2)), true},
			{"CPY(q->q)", c.Cpy(q, c.NewTensor(typ, 256, 5, 2)), true},
			{"CPY(q->f16)", c.Cpy(q, c.NewTensor(f16, 256, 5, 2)), false},
			{"CPY(permuted q->f32)", c.Cpy(c.Permute(q, 0, 2, 1, 3), c.NewTensor(core.TypeF32, 256, 2, 5)), false},
			{"OUT_PROD", c.OutProd(q, c.NewTensor(core.TypeF32, 4, 5, 2)), true},
			{"OUT_PROD(broadcast)", c.OutProd(q, c.NewTensor(core.TypeF32, 4, 5, 4)), false},
			{"FLASH_ATTN_EXT", c.FlashAttnExt(c.NewTensor(core.TypeF32, 256, 3, 2), q, q, c.NewTensor(f16, 5, 3), 0.1, 0, 0), true},
		} {
			if err := c.Err(); err != nil {
				t.Fatalf("%v %s: %v", typ, tc.name, err)
			}
			if got := ggmlCPUAccepts(tc.n); got != tc.want {
				t.Errorf("%v %s: ggmlCPUAccepts = %v, want %v", typ, tc.name, got, tc.want)
			}
		}
	}
	if n < 5 {
		t.Errorf("%d quantized types without a quantizer, want at least IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S, IQ1_M", n)
	}
}
