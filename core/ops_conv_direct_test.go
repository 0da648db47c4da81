package core_test

import (
	"math"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// The convolution nodes' shapes, result types, op_params and strides as ggml's constructors make
// them (ggml/src/ggml.c).
func TestConvDirectShapes(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	img := c.NewTensor4D(f32, 13, 11, 4, 2)
	ker := c.NewTensor4D(f16, 3, 2, 4, 6)
	p3 := core.Conv3DParams{S0: 1, S1: 2, S2: 3, P0: 1, P1: 0, P2: 2, D0: 2, D1: 1, D2: 1}
	checks := []struct {
		name   string
		t      *core.Tensor
		op     core.Op
		typ    core.Type
		ne     [4]int64
		params []int32
	}{
		{"ConvTranspose1D", c.ConvTranspose1D(c.NewTensor3D(f16, 5, 3, 4), c.NewTensor2D(f32, 7, 4), 3, 0, 1),
			core.OpConvTranspose1D, f32, [4]int64{6*3 + 5, 3, 1, 1}, []int32{3, 0, 1}},
		{"Im2Col3D", c.Im2Col3D(c.NewTensor4D(f16, 3, 2, 2, 6), c.NewTensor4D(f32, 9, 8, 7, 7), 3, p3, f16),
			core.OpIm2Col3D, f16, [4]int64{3 * 2 * 2 * 3, 7, 4, 4 * 2}, []int32{1, 2, 3, 1, 0, 2, 2, 1, 1, 3}},
		{"Col2Im1D", c.Col2Im1D(c.NewTensor2D(core.TypeBF16, 12, 5), 2, 3, 1), core.OpCol2Im1D, core.TypeBF16,
			[4]int64{4*2 + 4 - 2, 3, 1, 1}, []int32{2, 3, 1}},
		{"Conv2DDirect", c.Conv2DDirect(ker, img, 2, 1, 1, 0, 1, 2), core.OpConv2D, f32, [4]int64{7, 9, 6, 2},
			[]int32{2, 1, 1, 0, 1, 2}},
		{"Conv3DDirect", c.Conv3DDirect(c.NewTensor4D(f32, 3, 2, 2, 6), c.NewTensor4D(f32, 9, 8, 7, 4), p3, 2, 2, 3),
			core.OpConv3D, f32, [4]int64{7, 4, 4, 6}, []int32{1, 2, 3, 1, 0, 2, 2, 1, 1, 2, 2, 3}},
		{"Conv2DDwDirect", c.Conv2DDwDirect(c.NewTensor4D(f32, 3, 3, 1, 4), img, 2, 2, 1, 1, 1, 1), core.OpConv2DDw, f32,
			[4]int64{7, 6, 4, 2}, []int32{2, 2, 1, 1, 1, 1}},
		{"ConvTranspose2DP0", c.ConvTranspose2DP0(c.NewTensor4D(f16, 3, 2, 5, 4), img, 2), core.OpConvTranspose2D, f32,
			[4]int64{12*2 + 3, 10*2 + 2, 5, 2}, []int32{2}},
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	for _, ck := range checks {
		if ck.t.Op != ck.op || ck.t.Type != ck.typ || ck.t.Ne != ck.ne {
			t.Errorf("%s: %v %v %v, want %v %v %v", ck.name, ck.t.Op, ck.t.Type, ck.t.Ne, ck.op, ck.typ, ck.ne)
		}
		for i, v := range ck.params {
			if ck.t.Params[i] != v {
				t.Errorf("%s: param %d = %d, want %d", ck.name, i, ck.t.Params[i], v)
			}
		}
		if !ck.t.IsContiguous() {
			t.Errorf("%s: result strides %v", ck.name, ck.t.Nb)
		}
		if !core.ConvNodeValid(ck.t) {
			t.Errorf("%s: ConvNodeValid false for the constructor's node", ck.name)
		}
		// A node assembled by hand with other parameters or shape is not valid.
		bad := *ck.t
		bad.Params[0] = 0
		if core.ConvNodeValid(&bad) {
			t.Errorf("%s: ConvNodeValid true with stride/parameter 0 zeroed", ck.name)
		}
		bad = *ck.t
		bad.Ne[0]++
		if core.ConvNodeValid(&bad) {
			t.Errorf("%s: ConvNodeValid true with ne0 %d", ck.name, bad.Ne[0])
		}
	}
	if core.ConvNodeValid(nil) || core.ConvNodeValid(img) {
		t.Error("ConvNodeValid true for nil or a leaf")
	}
	// CONV_2D_DW of a CWHN input (channels densest) lays its result out the same way.
	cw := c.Permute(c.NewTensor4D(f32, 4, 13, 11, 2), 2, 0, 1, 3) // [C, W, H, N] viewed [W, H, C, N]
	r := c.Conv2DDwDirect(c.NewTensor4D(f32, 3, 3, 1, 4), cw, 1, 1, 1, 1, 1, 1)
	if want := [4]int64{16, 16 * 13, 4, 16 * 13 * 11}; r.Nb != want || r.Ne != [4]int64{13, 11, 4, 2} {
		t.Errorf("CONV_2D_DW of CWHN input: ne %v nb %v, want nb %v", r.Ne, r.Nb, want)
	}
	if p := core.Conv3DParamsOf(checks[4].t); p != p3 {
		t.Errorf("Conv3DParamsOf = %+v", p)
	}
	if p := core.Conv2DParamsOf(checks[3].t); p != (core.Conv2DParams{S0: 2, S1: 1, P0: 1, P1: 0, D0: 1, D1: 2}) {
		t.Errorf("Conv2DParamsOf = %+v", p)
	}
}

// Hostile calls record an error naming the problem and never panic.
func TestConvDirectBadInput(t *testing.T) {
	p1 := core.Conv3DParams{S0: 1, S1: 1, S2: 1, D0: 1, D1: 1, D2: 1}
	k4 := func(c *core.Context) *core.Tensor { return c.NewTensor4D(f32, 3, 3, 2, 4) }
	in4 := func(c *core.Context) *core.Tensor { return c.NewTensor4D(f32, 8, 8, 2, 1) }
	cases := []badCase{
		{2, "ConvTranspose1D with padding", []string{"padding"}, func() error {
			return build(func(c *core.Context) {
				c.ConvTranspose1D(c.NewTensor3D(f32, 3, 2, 4), c.NewTensor2D(f32, 5, 4), 1, 1, 1)
			})
		}},
		{2, "ConvTranspose1D channel mismatch", []string{"input channels"}, func() error {
			return build(func(c *core.Context) {
				c.ConvTranspose1D(c.NewTensor3D(f32, 3, 2, 4), c.NewTensor2D(f32, 5, 3), 1, 0, 1)
			})
		}},
		{2, "ConvTranspose1D of a 3-D input", []string{"matrix"}, func() error {
			return build(func(c *core.Context) {
				c.ConvTranspose1D(c.NewTensor3D(f32, 3, 2, 4), c.NewTensor3D(f32, 5, 4, 2), 1, 0, 1)
			})
		}},
		{2, "ConvTranspose1D zero stride", []string{"stride"}, func() error {
			return build(func(c *core.Context) {
				c.ConvTranspose1D(c.NewTensor3D(f32, 3, 2, 4), c.NewTensor2D(f32, 5, 4), 0, 0, 1)
			})
		}},
		{1, "ConvTranspose1D output overflows", []string{"overflow"}, func() error {
			return build(func(c *core.Context) {
				c.ConvTranspose1D(c.NewTensor3D(f32, 3, 2, 1), c.NewTensor2D(f32, 1<<40, 1), math.MaxInt32, 0, 1)
			})
		}},
		{2, "Im2Col3D f16 input", []string{"want f32"}, func() error {
			return build(func(c *core.Context) { c.Im2Col3D(k4(c), c.NewTensor4D(f16, 8, 8, 8, 2), 2, p1, f32) })
		}},
		{2, "Im2Col3D zero channels", []string{"channels"}, func() error {
			return build(func(c *core.Context) { c.Im2Col3D(k4(c), c.NewTensor4D(f32, 8, 8, 8, 2), 0, p1, f32) })
		}},
		{2, "Im2Col3D kernel deeper than the input", []string{"does not fit"}, func() error {
			return build(func(c *core.Context) {
				c.Im2Col3D(c.NewTensor4D(f32, 3, 3, 9, 2), c.NewTensor4D(f32, 8, 8, 8, 2), 2, p1, f32)
			})
		}},
		{2, "Im2Col3D quantized result", []string{"f32 or f16"}, func() error {
			return build(func(c *core.Context) { c.Im2Col3D(k4(c), c.NewTensor4D(f32, 8, 8, 8, 2), 2, p1, q4_0) })
		}},
		{2, "Im2Col3D negative padding", []string{"paddings"}, func() error {
			return build(func(c *core.Context) {
				c.Im2Col3D(k4(c), c.NewTensor4D(f32, 8, 8, 8, 2), 2, core.Conv3DParams{S0: 1, S1: 1, S2: 1, P1: -1, D0: 1, D1: 1, D2: 1}, f32)
			})
		}},
		{2, "Col2Im1D channels do not divide", []string{"multiple"}, func() error {
			return build(func(c *core.Context) { c.Col2Im1D(c.NewTensor2D(f32, 10, 4), 1, 3, 0) })
		}},
		{2, "Col2Im1D padding crops everything", []string{"crops"}, func() error {
			return build(func(c *core.Context) { c.Col2Im1D(c.NewTensor2D(f32, 6, 2), 1, 3, 2) })
		}},
		{2, "Col2Im1D transposed input", []string{"contiguous"}, func() error {
			return build(func(c *core.Context) { c.Col2Im1D(c.Transpose(c.NewTensor2D(f32, 6, 6)), 1, 3, 0) })
		}},
		{2, "Col2Im1D i32 input", []string{"want f32"}, func() error {
			return build(func(c *core.Context) { c.Col2Im1D(c.NewTensor2D(i32, 6, 6), 1, 3, 0) })
		}},
		{2, "Conv2DDirect channel mismatch", []string{"input channels"}, func() error {
			return build(func(c *core.Context) { c.Conv2DDirect(k4(c), c.NewTensor4D(f32, 8, 8, 3, 1), 1, 1, 0, 0, 1, 1) })
		}},
		{2, "Conv2DDirect quantized kernel", []string{"f32 or f16"}, func() error {
			return build(func(c *core.Context) { c.Conv2DDirect(c.NewTensor4D(q4_0, 32, 3, 2, 4), in4(c), 1, 1, 0, 0, 1, 1) })
		}},
		{2, "Conv2DDirect zero dilation", []string{"dilations"}, func() error {
			return build(func(c *core.Context) { c.Conv2DDirect(k4(c), in4(c), 1, 1, 0, 0, 0, 1) })
		}},
		{2, "Conv2DDirect kernel larger than the input", []string{"does not fit"}, func() error {
			return build(func(c *core.Context) { c.Conv2DDirect(c.NewTensor4D(f32, 9, 3, 2, 4), in4(c), 1, 1, 0, 0, 1, 1) })
		}},
		{1, "Conv2DDirect dilation times kernel overflows", []string{"overflow"}, func() error {
			return build(func(c *core.Context) {
				c.Conv2DDirect(c.NewTensor4D(f32, 1<<40, 1, 1, 1), c.NewTensor4D(f32, 8, 8, 1, 1), 1, 1, 0, 0, math.MaxInt32, 1)
			})
		}},
		{2, "Conv3DDirect channels do not match the kernel", []string{"output channels"}, func() error {
			return build(func(c *core.Context) {
				c.Conv3DDirect(c.NewTensor4D(f32, 3, 3, 3, 5), c.NewTensor4D(f32, 8, 8, 8, 4), p1, 2, 2, 3)
			})
		}},
		{2, "Conv3DDirect batch does not match the input", []string{"batch"}, func() error {
			return build(func(c *core.Context) {
				c.Conv3DDirect(c.NewTensor4D(f32, 3, 3, 3, 6), c.NewTensor4D(f32, 8, 8, 8, 5), p1, 2, 2, 3)
			})
		}},
		{2, "Conv3DDirect zero output channels", []string{"positive"}, func() error {
			return build(func(c *core.Context) {
				c.Conv3DDirect(c.NewTensor4D(f32, 3, 3, 3, 6), c.NewTensor4D(f32, 8, 8, 8, 4), p1, 2, 2, 0)
			})
		}},
		{2, "Conv2DDwDirect kernel with input channels", []string{"[KW, KH, 1, C]"}, func() error {
			return build(func(c *core.Context) { c.Conv2DDwDirect(k4(c), in4(c), 1, 1, 0, 0, 1, 1) })
		}},
		{2, "Conv2DDwDirect f16 input", []string{"want f32"}, func() error {
			return build(func(c *core.Context) {
				c.Conv2DDwDirect(c.NewTensor4D(f32, 3, 3, 1, 2), c.NewTensor4D(f16, 8, 8, 2, 1), 1, 1, 0, 0, 1, 1)
			})
		}},
		{2, "ConvTranspose2DP0 channel mismatch", []string{"input channels"}, func() error {
			return build(func(c *core.Context) { c.ConvTranspose2DP0(k4(c), in4(c), 1) })
		}},
		{2, "ConvTranspose2DP0 negative stride", []string{"stride"}, func() error {
			return build(func(c *core.Context) { c.ConvTranspose2DP0(c.NewTensor4D(f32, 3, 3, 4, 2), in4(c), -2) })
		}},
		{2, "ConvTranspose2DP0 empty kernel", []string{"empty"}, func() error {
			return build(func(c *core.Context) { c.ConvTranspose2DP0(c.NewTensor4D(f32, 3, 0, 4, 2), in4(c), 1) })
		}},
		{3, "Conv2DDirect nil kernel", []string{"nil"}, func() error {
			return build(func(c *core.Context) { c.Conv2DDirect(nil, in4(c), 1, 1, 0, 0, 1, 1) })
		}},
		{3, "Col2Im1D nil", []string{"nil"}, func() error {
			return build(func(c *core.Context) { c.Col2Im1D(nil, 1, 1, 0) })
		}},
	}
	runBadCases(t, cases)
}
