package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// TestEltBinaryBroadcast: ADD, SUB, MUL and DIV of f32 rows by a broadcast b, bit for bit the
// float32 operation per element, with b of one element per row (a mixture of experts weighing
// its experts' outputs: the scalar path), one element in all, and whole rows repeated; a dense,
// permuted and strided a.
func TestEltBinaryBroadcast(t *testing.T) {
	ops := []struct {
		op core.Op
		f  func(x, y float32) float32
	}{
		{core.OpAdd, func(x, y float32) float32 { return x + y }},
		{core.OpSub, func(x, y float32) float32 { return x - y }},
		{core.OpMul, func(x, y float32) float32 { return x * y }},
		{core.OpDiv, func(x, y float32) float32 { return x / y }},
	}
	an := [4]int64{37, 3, 2, 1}
	for _, bn := range [][4]int64{{1, 3, 2, 1}, {1, 1, 1, 1}, {37, 1, 2, 1}, {37, 3, 2, 1}} {
		for _, o := range ops {
			for _, layout := range eltLayouts {
				name := fmt.Sprintf("%v b%v %s", o.op, bn, layout)
				eltCheck(t, name, 0, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
					a, x := eltSource(t, ctx, rng, core.TypeF32, an, layout, -3, 3)
					b, y := eltSource(t, ctx, rng, core.TypeF32, bn, "contig", 0.5, 2)
					want := make([]float64, len(x))
					for i3 := int64(0); i3 < an[3]; i3++ {
						for i2 := int64(0); i2 < an[2]; i2++ {
							for i1 := int64(0); i1 < an[1]; i1++ {
								for i0 := int64(0); i0 < an[0]; i0++ {
									yi := eltAt(bn, i0%bn[0], i1%bn[1], i2%bn[2], i3%bn[3])
									i := eltAt(an, i0, i1, i2, i3)
									want[i] = float64(o.f(float32(x[i]), float32(y[yi])))
								}
							}
						}
					}
					return binaryOf(ctx, o.op, a, b), want
				})
			}
		}
	}
}

func binaryOf(ctx *core.Context, op core.Op, a, b *core.Tensor) *core.Tensor {
	switch op {
	case core.OpAdd:
		return ctx.Add(a, b)
	case core.OpSub:
		return ctx.Sub(a, b)
	case core.OpMul:
		return ctx.Mul(a, b)
	}
	return ctx.Div(a, b)
}

// TestEltBinaryOverSrc1: ggml's allocator may write a node's result over any source of the same
// layout, src1 included; with rows of one element (the scalar path) the result written over b
// must still be a op b of b's values before the node ran.
func TestEltBinaryOverSrc1(t *testing.T) {
	a0 := []float32{1.5, -2, 3, 0.25, 7}
	b0 := []float32{2, 4, -0.5, 8, 3}
	for _, op := range []core.Op{core.OpAdd, core.OpSub, core.OpMul, core.OpDiv} {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		a := ctx.NewTensor2D(core.TypeF32, 1, 5)
		b := ctx.NewTensor2D(core.TypeF32, 1, 5)
		r := binaryOf(ctx, op, a, b)
		buf, err := core.HostBufferType().Alloc(64)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []struct {
			t   *core.Tensor
			off int64
		}{{a, 0}, {b, 32}, {r, 32}} {
			if err := core.TensorAlloc(buf, p.t, p.off); err != nil {
				t.Fatal(err)
			}
		}
		if err := core.SetFloat32s(a, a0); err != nil {
			t.Fatal(err)
		}
		if err := core.SetFloat32s(b, b0); err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(r)
		if err := cpu.Compute(g, 2); err != nil {
			t.Fatal(err)
		}
		got, err := core.GetFloat32s(r)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			want := map[core.Op]float32{core.OpAdd: a0[i] + b0[i], core.OpSub: a0[i] - b0[i],
				core.OpMul: a0[i] * b0[i], core.OpDiv: a0[i] / b0[i]}[op]
			if got[i] != want {
				t.Fatalf("%v written over src1: element %d = %v, want %v", op, i, got[i], want)
			}
		}
		buf.Free()
	}
}
