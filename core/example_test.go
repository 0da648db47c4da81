package core_test

import (
	"fmt"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// The function f(x) = a·x² + b is built first and computed afterwards, at x = 2, a = 3, b = 4.
func Example() {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	x := ctx.NewTensor1D(core.TypeF32, 1)
	a := ctx.NewTensor1D(core.TypeF32, 1)
	b := ctx.NewTensor1D(core.TypeF32, 1)
	f := ctx.Add(ctx.Mul(a, ctx.Sqr(x)), b) // nothing is computed yet
	if err := ctx.Err(); err != nil {
		fmt.Println(err)
		return
	}

	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(f)
	for t, v := range map[*core.Tensor]float32{x: 2, a: 3, b: 4} {
		if err := core.SetFloat32s(t, []float32{v}); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := cpu.Compute(g, 1); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := core.GetFloat32s(f)
	fmt.Println("f =", out[0], "nodes:", len(g.Nodes()))
	// Output: f = 16 nodes: 3
}

// MulMat multiplies every row of a with every row of b: a is 4 rows of 2, b is 3 rows of 2, and
// the result has 3 rows of 4 (ne = [4 3]).
func ExampleContext_MulMat() {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	a := ctx.NewTensor2D(core.TypeF32, 2, 4)
	b := ctx.NewTensor2D(core.TypeF32, 2, 3)
	r := ctx.MulMat(a, b)
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(r)

	_ = core.SetFloat32s(a, []float32{2, 8, 5, 1, 4, 2, 8, 6})
	_ = core.SetFloat32s(b, []float32{10, 5, 9, 9, 5, 4})
	if err := cpu.Compute(g, 2); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := core.GetFloat32s(r)
	fmt.Println("ne:", r.Ne[0], r.Ne[1])
	for j := 0; j < 3; j++ {
		fmt.Println(out[4*j : 4*j+4])
	}
	// Output:
	// ne: 4 3
	// [60 55 50 110]
	// [90 54 54 126]
	// [42 29 28 64]
}

// Quantized weights are made by writing float32 values into a tensor of a quantized type:
// SetFloat32s quantizes them with the reference quantizer (ggml's bytes: one f16 scale and 16
// bytes of 4-bit values per block of 32), and GetFloat32s dequantizes. Here the block's scale is
// 1, so -7.5 and 7.5 come back as -7 and 7.
func ExampleSetFloat32s_quantized() {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
	w := ctx.NewTensor1D(core.TypeQ4_0, 32)
	v := make([]float32, 32)
	for i := range v {
		v[i] = float32(i-16) / 2 // -8 … 7.5
	}
	if err := core.SetFloat32s(w, v); err != nil {
		fmt.Println(err)
		return
	}
	back, err := core.GetFloat32s(w)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(w.NBytes(), "bytes")
	fmt.Println(back[0], back[1], back[16], back[31])
	// Output:
	// 18 bytes
	// -8 -7 0 7
}
