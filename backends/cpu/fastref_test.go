package cpu_test

import (
	"fmt"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// The SIMD MUL_MAT (packed GEMM for f32/f16 weights, assembly dots and quantizers for the rest)
// against the reference kernels, ggml's 5e-4 matmul bound being far looser than what must hold.
func TestMulMatFastVsReference(t *testing.T) {
	ref, _ := cpu.New(cpu.Options{Threads: 2, Reference: true})
	defer ref.Close()
	fast, _ := cpu.New(cpu.Options{Threads: 3})
	defer fast.Close()
	types := []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0}
	shapes := [][3]int64{{64, 5, 1}, {96, 33, 3}, {256, 70, 17}, {512, 130, 100}, {32, 1, 9}}
	for _, typ := range types {
		for _, s := range shapes {
			k, m, n := s[0], s[1], s[2]
			t.Run(fmt.Sprintf("%v_k%d_m%d_n%d", typ, k, m, n), func(t *testing.T) {
				ctx := core.NewContext(core.ContextParams{MemSize: 8 << 20})
				a := ctx.NewTensor3D(typ, k, m, 2)
				b := ctx.NewTensor3D(core.TypeF32, k, n, 4)
				fillRandom(t, a, 5)
				fillRandom(t, b, 6)
				_, e := mulMatFastVsRef(t, ref, fast, ctx, a, b)
				limit := 1e-10
				if typ == core.TypeF16 {
					limit = 1e-6 // the GEMM keeps activations in f32; the reference rounds them to f16
				}
				if e > limit {
					t.Fatalf("NMSE %g > %g", e, limit)
				}
			})
		}
	}
}

// mulMatFastVsRef computes MUL_MAT(a, b) (both filled already) on the reference backend and on
// fast, and returns fast's result with its NMSE against the reference's.
func mulMatFastVsRef(t *testing.T, ref, fast core.Backend, ctx *core.Context, a, b *core.Tensor) ([]float32, float64) {
	t.Helper()
	r := ctx.MulMat(a, b)
	g := core.NewGraph(8)
	g.BuildForwardExpand(r)
	if err := ref.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	want := append([]float32(nil), mustF32(t, r)...)
	if err := fast.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	got := mustF32(t, r)
	w64 := make([]float64, len(want))
	for i, v := range want {
		w64[i] = float64(v)
	}
	return got, nmse(got, w64)
}

// The SIMD paths of elementwise ops, GLU and soft_max against the reference kernels.
func TestElementwiseFastVsReference(t *testing.T) {
	ref, _ := cpu.New(cpu.Options{Threads: 2, Reference: true})
	defer ref.Close()
	fast, _ := cpu.New(cpu.Options{Threads: 2})
	defer fast.Close()
	builds := map[string]func(c *core.Context, a, b *core.Tensor) *core.Tensor{
		"add":        func(c *core.Context, a, b *core.Tensor) *core.Tensor { return c.Add(a, b) },
		"mul":        func(c *core.Context, a, b *core.Tensor) *core.Tensor { return c.Mul(a, b) },
		"add_bcast":  func(c *core.Context, a, b *core.Tensor) *core.Tensor { return c.Add(a, c.View1D(b, 37, 0)) },
		"scale":      func(c *core.Context, a, _ *core.Tensor) *core.Tensor { return c.Scale(a, 0.37) },
		"silu":       func(c *core.Context, a, _ *core.Tensor) *core.Tensor { return c.Silu(a) },
		"gelu":       func(c *core.Context, a, _ *core.Tensor) *core.Tensor { return c.Gelu(a) },
		"exp":        func(c *core.Context, a, _ *core.Tensor) *core.Tensor { return c.Exp(a) },
		"swiglu":     func(c *core.Context, a, _ *core.Tensor) *core.Tensor { return c.Swiglu(a) },
		"soft_max":   func(c *core.Context, a, _ *core.Tensor) *core.Tensor { return c.SoftMaxExt(a, nil, 3, 0) },
		"soft_max_m": func(c *core.Context, a, b *core.Tensor) *core.Tensor { return c.SoftMaxExt(a, b, 0.5, 0) },
	}
	for name, build := range builds {
		t.Run(name, func(t *testing.T) {
			ctx := core.NewContext(core.ContextParams{MemSize: 8 << 20})
			a := ctx.NewTensor3D(core.TypeF32, 74, 9, 3)
			b := ctx.NewTensor3D(core.TypeF32, 74, 9, 1)
			fillRandom(t, a, 11)
			fillRandom(t, b, 12)
			for i, v := range a.Float32s() {
				a.Float32s()[i] = v * 12 // cover the tails of exp, silu and gelu
			}
			r := build(ctx, a, b)
			g := core.NewGraph(8)
			g.BuildForwardExpand(r)
			if err := ref.GraphCompute(g); err != nil {
				t.Fatal(err)
			}
			want := append([]float32(nil), mustF32(t, r)...)
			if err := fast.GraphCompute(g); err != nil {
				t.Fatal(err)
			}
			w64 := make([]float64, len(want))
			for i, v := range want {
				w64[i] = float64(v)
			}
			if e := nmse(mustF32(t, r), w64); e > 1e-12 {
				t.Fatalf("NMSE %g > 1e-12", e)
			}
		})
	}
}
