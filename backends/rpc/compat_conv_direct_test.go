package rpc

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// A GGMLCompat client refuses the convolution layouts ggml-cpu asserts on or computes otherwise
// (ops.cpp, supports_op) and keeps the ones test-backend-ops runs on its CPU; the harness's conv/
// cases ran against ggml d99724f2's server: 135 passed, the 11 these rules refuse excepted.
func TestGGMLCPUAcceptsConv(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	f32, f16 := core.TypeF32, core.TypeF16
	img := c.NewTensor(f32, 9, 8, 4, 1)
	cwhn := c.Permute(c.Cont(c.Permute(img, 1, 2, 0, 3)), 2, 0, 1, 3)
	ker := c.NewTensor(f16, 3, 3, 4, 5)
	cwhnKer := c.Permute(c.Cont(c.Permute(ker, 2, 3, 1, 0)), 3, 2, 0, 1)
	dw := c.NewTensor(f32, 3, 3, 1, 4)
	cwhnDw := c.Permute(c.Cont(c.Permute(dw, 2, 3, 1, 0)), 3, 2, 0, 1)
	for _, tc := range []struct {
		name string
		n    *core.Tensor
		want bool
	}{
		{"CONV_2D", c.Conv2DDirect(ker, img, 1, 1, 1, 1, 1, 1), true},
		{"CONV_2D(CWHN input)", c.Conv2DDirect(ker, cwhn, 1, 1, 1, 1, 1, 1), true},
		{"CONV_2D(CWHN kernel)", c.Conv2DDirect(cwhnKer, cwhn, 1, 1, 1, 1, 1, 1), false},
		{"CONV_2D_DW", c.Conv2DDwDirect(dw, img, 1, 1, 1, 1, 1, 1), true},
		{"CONV_2D_DW(CWHN)", c.Conv2DDwDirect(cwhnDw, cwhn, 1, 1, 1, 1, 1, 1), true},
		{"CONV_2D_DW(CWHN input, WHCN kernel)", c.Conv2DDwDirect(dw, cwhn, 1, 1, 1, 1, 1, 1), false},
		{"CONV_2D_DW(transposed input)", c.Conv2DDwDirect(dw, c.Transpose(img), 1, 1, 1, 1, 1, 1), false},
		{"CONV_TRANSPOSE_1D", c.ConvTranspose1D(c.NewTensor(f32, 3, 2, 8), c.NewTensor(f32, 9, 8), 2, 0, 1), true},
		{"CONV_TRANSPOSE_1D(transposed input)", c.ConvTranspose1D(c.NewTensor(f32, 3, 2, 8), c.Transpose(c.NewTensor(f32, 8, 9)), 2, 0, 1), false},
		{"CONV_TRANSPOSE_2D", c.ConvTranspose2DP0(c.NewTensor(f16, 3, 3, 2, 4), img, 2), true},
		{"CONV_TRANSPOSE_2D(two batches)", c.ConvTranspose2DP0(c.NewTensor(f16, 3, 3, 2, 4), c.NewTensor(f32, 9, 8, 4, 2), 2), false},
		{"CONV_3D", c.Conv3DDirect(c.NewTensor(f32, 2, 2, 2, 6), c.NewTensor(f32, 5, 5, 5, 4), core.Conv3DParams{S0: 1, S1: 1, S2: 1, D0: 1, D1: 1, D2: 1}, 2, 2, 3), true},
		{"IM2COL_3D", c.Im2Col3D(ker, c.NewTensor(f32, 5, 5, 5, 4), 2, core.Conv3DParams{S0: 1, S1: 1, S2: 1, D0: 1, D1: 1, D2: 1}, f16), true},
		{"COL2IM_1D", c.Col2Im1D(c.NewTensor(core.TypeBF16, 12, 5), 2, 3, 1), true},
	} {
		if err := c.Err(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := ggmlCPUAccepts(tc.n); got != tc.want {
			t.Errorf("%s: ggmlCPUAccepts = %v, want %v", tc.name, got, tc.want)
		}
	}
}
