package rpc

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// A GGMLCompat client refuses the nodes that read Q8_K (ggml's CPU cannot dequantize it and its
// server aborts on GET_ROWS of q8_K) and keeps those that write it.
func TestGGMLCPUAcceptsQ8K(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	q := c.NewTensor(core.TypeQ8_K, 256, 5)
	x := c.NewTensor(core.TypeF32, 256, 5)
	for _, tc := range []struct {
		name string
		n    *core.Tensor
		want bool
	}{
		{"GET_ROWS(q8_K)", c.GetRows(q, c.NewTensor(core.TypeI32, 3)), false},
		{"CPY(q8_K->f32)", c.Cpy(q, c.NewTensor(core.TypeF32, 256, 5)), false},
		{"CPY(f32->q8_K)", c.Cpy(x, c.NewTensor(core.TypeQ8_K, 256, 5)), true},
		{"GET_ROWS(f32)", c.GetRows(x, c.NewTensor(core.TypeI32, 3)), true},
	} {
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
		if got := ggmlCPUAccepts(tc.n); got != tc.want {
			t.Errorf("%s: ggmlCPUAccepts = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A GGMLCompat client refuses the training-op layouts ggml's CPU kernels assert on or index as
// dense rows (ggml-cpu's ops.cpp), and keeps the plain ones.
func TestGGMLCPUAcceptsTrain(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	f32 := core.TypeF32
	a := c.NewTensor(f32, 8, 6)
	b := c.NewTensor(f32, 8, 6)
	tr := c.Transpose(c.NewTensor(f32, 6, 8))
	hp := c.NewTensor(f32, core.AdamWNParams)
	for _, tc := range []struct {
		name string
		n    *core.Tensor
		want bool
	}{
		{"ACC", c.Acc(a, c.NewTensor(f32, 3, 2), a.Nb[1], a.Nb[2], a.Nb[3], 4), true},
		{"ACC(transposed b)", c.Acc(a, c.Transpose(c.NewTensor(f32, 2, 3)), a.Nb[1], a.Nb[2], a.Nb[3], 4), false},
		{"SILU_BACK", c.SiluBack(a, b), true},
		{"SILU_BACK(transposed)", c.SiluBack(tr, b), false},
		{"SOFT_MAX_BACK", c.SoftMaxExtBack(a, b, 1, 0), true},
		{"SOFT_MAX_BACK(max_bias)", c.SoftMaxExtBack(a, b, 1, 8), false},
		{"CROSS_ENTROPY_LOSS(permuted rows)", c.CrossEntropyLoss(c.NewTensor(f32, 8, 3, 2), c.Permute(c.NewTensor(f32, 8, 2, 3), 0, 2, 1, 3)), false},
		{"CROSS_ENTROPY_LOSS", c.CrossEntropyLoss(a, b), true},
		{"GET_ROWS_BACK", c.GetRowsBack(c.NewTensor(f32, 8, 4), c.NewTensor(core.TypeI32, 4), a), true},
		{"GET_ROWS_BACK(f16)", c.GetRowsBack(c.NewTensor(core.TypeF16, 8, 4), c.NewTensor(core.TypeI32, 4), a), true},
		{"GET_ROWS_BACK(fewer indices)", c.GetRowsBack(c.NewTensor(f32, 8, 4), c.NewTensor(core.TypeI32, 2), a), true},
		{"GET_ROWS_BACK(batched)", c.GetRowsBack(c.NewTensor(f32, 8, 4, 2), c.NewTensor(core.TypeI32, 4, 2),
			c.NewTensor(f32, 8, 6, 2)), false},
		{"REPEAT_BACK(transposed)", c.RepeatBack(tr, c.NewTensor(f32, 4, 3)), false},
		{"OPT_STEP_ADAMW", c.OptStepAdamW(a, b, c.NewTensor(f32, 8, 6), c.NewTensor(f32, 8, 6), hp), true},
		{"OPT_STEP_ADAMW(transposed grad)", c.OptStepAdamW(a, c.Transpose(c.NewTensor(f32, 6, 8)), c.NewTensor(f32, 8, 6),
			c.NewTensor(f32, 8, 6), hp), false},
		{"DIAG_MASK_ZERO", c.DiagMaskZero(a, 1), true},
	} {
		if err := c.Err(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := ggmlCPUAccepts(tc.n); got != tc.want {
			t.Errorf("%s: ggmlCPUAccepts = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A GGMLCompat client refuses the binary-op type mixes ggml-cpu has no kernel for (its server
// aborts on ADD of f32 and f16) and keeps the ones binary-ops.cpp lists.
func TestGGMLCPUAcceptsBinaryTypes(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	f32 := c.NewTensor(core.TypeF32, 8, 3)
	f16 := c.NewTensor(core.TypeF16, 8, 3)
	bf16 := c.NewTensor(core.TypeBF16, 8, 3)
	for _, tc := range []struct {
		name string
		n    *core.Tensor
		want bool
	}{
		{"ADD(f32,f32)", c.Add(f32, f32), true},
		{"ADD(f16,f32)", c.Add(f16, f32), true},
		{"MUL(bf16,f32)", c.Mul(bf16, f32), true},
		{"SUB(f16,f16)", c.Sub(f16, f16), true},
		{"ADD(f32,f16)", c.Add(f32, f16), false},
		{"DIV(f16,bf16)", c.Div(f16, bf16), false},
	} {
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
		if got := ggmlCPUAccepts(tc.n); got != tc.want {
			t.Errorf("%s: ggmlCPUAccepts = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// CONCAT of i64 or quantized sources goes through ggml-cpu's concat_any, which asserts contiguous
// rows: a permuted source is refused; f32 (an element kernel that follows strides) is kept.
func TestGGMLCPUAcceptsConcat(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	for _, tc := range []struct {
		name string
		n    *core.Tensor
		want bool
	}{
		{"CONCAT(i64,permuted)", c.Concat(c.Transpose(c.NewTensor(core.TypeI64, 3, 4)), c.NewTensor(core.TypeI64, 4, 2), 1), false},
		{"CONCAT(i64)", c.Concat(c.NewTensor(core.TypeI64, 4, 3), c.NewTensor(core.TypeI64, 4, 2), 1), true},
		{"CONCAT(q4_0)", c.Concat(c.NewTensor(core.TypeQ4_0, 64, 3), c.NewTensor(core.TypeQ4_0, 64, 2), 1), true},
		{"CONCAT(f32,permuted)", c.Concat(c.Transpose(c.NewTensor(core.TypeF32, 3, 4)), c.NewTensor(core.TypeF32, 4, 2), 1), true},
	} {
		if err := c.Err(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := ggmlCPUAccepts(tc.n); got != tc.want {
			t.Errorf("%s: ggmlCPUAccepts = %v, want %v", tc.name, got, tc.want)
		}
	}
}
