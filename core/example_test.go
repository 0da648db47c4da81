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
