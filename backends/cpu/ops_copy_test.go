package cpu_test

import (
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

var eltCopyTypes = []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0, core.TypeI32}

// eltRowLen is a row length every type accepts (a whole number of quantization blocks).
func eltRowLen(typ core.Type) int64 {
	if typ.IsQuantized() {
		return 64
	}
	return 5
}

// eltLayoutsFor are the source layouts a type supports (a permuted quantized tensor would need a
// block-sized dim 1).
func eltLayoutsFor(typ core.Type) []string {
	if typ.IsQuantized() {
		return []string{"contig", "view"}
	}
	return eltLayouts
}

func eltSourceAny(t *testing.T, ctx *core.Context, rng *rand.Rand, typ core.Type, ne [4]int64, layout string) (*core.Tensor, []float64) {
	if typ == core.TypeI32 {
		return eltSource(t, ctx, rng, typ, ne, layout, -1000, 1000)
	}
	return eltSource(t, ctx, rng, typ, ne, layout, -3, 3)
}

// TestEltDupCont: same-type copies of every type from dense, permuted and strided sources are exact,
// and copies to another shape keep row-major element order.
func TestEltDupCont(t *testing.T) {
	for _, typ := range eltCopyTypes {
		ne := [4]int64{eltRowLen(typ), 7, 3, 2}
		for _, layout := range eltLayoutsFor(typ) {
			for _, op := range []string{"DUP", "CONT", "CONT_SHAPE"} {
				typ, layout, op := typ, layout, op
				eltCheckRaw(t, eltName(op, typ, layout), func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []byte) {
					a, _ := eltSourceAny(t, ctx, rng, typ, ne, layout)
					want := eltRaw(t, a)
					switch op {
					case "DUP":
						return ctx.Dup(a), want
					case "CONT":
						return ctx.Cont(a), want
					}
					if typ.IsQuantized() {
						return ctx.ContShape(a, 32, ne[1]*ne[2]*ne[3]*2), want
					}
					return ctx.ContShape(a, 15, 14), want
				})
			}
		}
	}
	// A larger permuted case.
	eltCheckRaw(t, "CONT/large", func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []byte) {
		a, _ := eltSource(t, ctx, rng, core.TypeF32, [4]int64{5, 7, 11, 13}, "perm", -1, 1)
		return ctx.Cont(a), eltRaw(t, a)
	})
}

// eltConvertible mirrors the pairs core's CPY constructor accepts.
func eltConvertible(from, to core.Type) bool {
	switch {
	case from == to:
		return true
	case from == core.TypeI32 || to == core.TypeI32:
		return from == core.TypeF32 || to == core.TypeF32
	case from.IsQuantized():
		return !to.IsQuantized()
	}
	return true
}

// eltCopyWant is what converting src's values (row-major) into type to gives: src's bytes for the
// same type, else the reference conversion of the f32 values (dequantized, widened) into to.
func eltCopyWant(t *testing.T, a *core.Tensor, to core.Type) []byte {
	if a.Type == to {
		return eltRaw(t, a)
	}
	return eltFromFloat(t, to, eltGet64(t, a))
}

// TestEltCast converts between every pair of types the constructor allows, from every layout; the
// result must match core's reference conversions bit for bit (quantization included).
func TestEltCast(t *testing.T) {
	for _, from := range eltCopyTypes {
		for _, to := range eltCopyTypes {
			if !eltConvertible(from, to) {
				from, to := from, to
				eltWantErr(t, "CPY", func(ctx *core.Context) { ctx.Cast(ctx.NewTensor1D(from, 64), to) })
				continue
			}
			ne := [4]int64{64, 7, 3, 2}
			if !from.IsQuantized() && !to.IsQuantized() {
				ne[0] = 5
			}
			for _, layout := range eltLayoutsFor(from) {
				from, to, layout := from, to, layout
				eltCheckRaw(t, eltName("CAST", from, to, layout), func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []byte) {
					a, _ := eltSourceAny(t, ctx, rng, from, ne, layout)
					return ctx.Cast(a, to), eltCopyWant(t, a, to)
				})
			}
		}
	}
	eltCheckRaw(t, "CAST/large", func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []byte) {
		a, _ := eltSource(t, ctx, rng, core.TypeF32, [4]int64{5, 7, 11, 13}, "perm", -1, 1)
		return ctx.Cast(a, core.TypeF16), eltCopyWant(t, a, core.TypeF16)
	})
}

// TestEltCpyReshape copies between tensors of different shapes and equal element counts: the
// k-th element of the source (row-major) becomes the k-th of the destination.
func TestEltCpyReshape(t *testing.T) {
	cases := []struct {
		from, to core.Type
		a, b     [4]int64
		layout   string
	}{
		{core.TypeF32, core.TypeF16, [4]int64{6, 5, 4, 1}, [4]int64{8, 15, 1, 1}, "perm"},
		{core.TypeF16, core.TypeBF16, [4]int64{10, 12, 1, 1}, [4]int64{24, 5, 1, 1}, "perm"},
		{core.TypeF32, core.TypeF32, [4]int64{6, 5, 4, 1}, [4]int64{4, 3, 10, 1}, "view"},
		{core.TypeF32, core.TypeF32, [4]int64{5, 6, 4, 1}, [4]int64{5, 4, 3, 2}, "perm"},
		{core.TypeF32, core.TypeF16, [4]int64{5, 6, 4, 1}, [4]int64{5, 4, 6, 1}, "perm"},
		{core.TypeQ8_0, core.TypeF32, [4]int64{32, 6, 2, 1}, [4]int64{32, 2, 3, 2}, "view"},
		{core.TypeI32, core.TypeF32, [4]int64{6, 5, 4, 1}, [4]int64{12, 10, 1, 1}, "perm"},
		{core.TypeF32, core.TypeQ8_0, [4]int64{48, 4, 1, 1}, [4]int64{64, 3, 1, 1}, "perm"},
		{core.TypeF32, core.TypeQ4_1, [4]int64{3, 64, 1, 1}, [4]int64{32, 6, 1, 1}, "perm"},
		{core.TypeQ4_0, core.TypeF32, [4]int64{64, 3, 1, 1}, [4]int64{48, 4, 1, 1}, "view"},
		{core.TypeQ4_1, core.TypeF16, [4]int64{64, 3, 1, 1}, [4]int64{96, 2, 1, 1}, "contig"},
		{core.TypeQ8_0, core.TypeF32, [4]int64{32, 3, 2, 1}, [4]int64{16, 12, 1, 1}, "contig"},
		{core.TypeQ8_0, core.TypeQ8_0, [4]int64{64, 3, 1, 1}, [4]int64{32, 6, 1, 1}, "view"},
	}
	for _, c := range cases {
		c := c
		eltCheckRaw(t, eltName("CPY", c.from, c.to, c.a, c.b, c.layout), func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []byte) {
			a, _ := eltSourceAny(t, ctx, rng, c.from, c.a, c.layout)
			b := ctx.NewTensor(c.to, c.b[:]...)
			return ctx.Cpy(a, b), eltCopyWant(t, a, c.to)
		})
	}
}

// TestEltCpyIntoView copies into strided views of larger tensors (f16 with gaps in every
// dimension, q8_0 rows in the middle of a matrix): the view's elements get the converted values
// and every byte outside the view keeps its value.
func TestEltCpyIntoView(t *testing.T) {
	type viewCase struct {
		name string
		make func(ctx *core.Context) (base, view *core.Tensor)
		ne   [4]int64
	}
	cases := []viewCase{
		{"f16-gaps", func(ctx *core.Context) (*core.Tensor, *core.Tensor) {
			base := ctx.NewTensor(core.TypeF16, 9, 7, 4, 2)
			// Rows 1..5 of planes 0..2, from element 1; then every other element of those rows
			// (a stride core's view constructors do not offer, set by hand).
			v := ctx.View4D(base, 4, 5, 3, 2, base.Nb[1], base.Nb[2], base.Nb[3], base.Nb[1]+2)
			v.Nb[0] = 4
			return base, v
		}, [4]int64{4, 5, 3, 2}},
		{"q8_0-rows", func(ctx *core.Context) (*core.Tensor, *core.Tensor) {
			base := ctx.NewTensor2D(core.TypeQ8_0, 64, 10)
			return base, ctx.View2D(base, 64, 4, base.Nb[1], 2*base.Nb[1])
		}, [4]int64{64, 4, 1, 1}},
		{"bf16-transposed", func(ctx *core.Context) (*core.Tensor, *core.Tensor) {
			base := ctx.NewTensor2D(core.TypeBF16, 6, 5)
			return base, ctx.Transpose(base)
		}, [4]int64{5, 6, 1, 1}},
	}
	for _, c := range cases {
		for _, same := range []bool{false, true} {
			for _, th := range eltThreads {
				ctx := eltCtx()
				rng := eltRng()
				base, view := c.make(ctx)
				if err := core.SetFloat32s(base, eltRandVals(rng, base.Type, base.NElements(), -2, 2)); err != nil {
					t.Fatal(err)
				}
				// The source is f32 (converting copy) or of the view's type (byte copy).
				styp, layout := core.TypeF32, "perm"
				if same {
					styp = view.Type
					layout = eltLayoutsFor(styp)[len(eltLayoutsFor(styp))-1]
				}
				a, _ := eltSource(t, ctx, rng, styp, c.ne, layout, -3, 3)
				before := append([]byte(nil), base.Data()...)
				// Byte ranges of base that the view covers.
				covered := make([]bool, len(before))
				off := view.Offset - base.Offset
				bs, es := view.Type.BlockSize(), view.Type.Size()
				for i3 := int64(0); i3 < view.Ne[3]; i3++ {
					for i2 := int64(0); i2 < view.Ne[2]; i2++ {
						for i1 := int64(0); i1 < view.Ne[1]; i1++ {
							for j := int64(0); j < view.Ne[0]/bs; j++ {
								p := off + i1*view.Nb[1] + i2*view.Nb[2] + i3*view.Nb[3] + j*view.Nb[0]
								for k := p; k < p+es; k++ {
									covered[k] = true
								}
							}
						}
					}
				}
				want := eltCopyWant(t, a, view.Type)
				out := ctx.Cpy(a, view)
				eltCompute(t, ctx, out, th)
				if got := eltRaw(t, out); string(got) != string(want) {
					t.Fatalf("%s same-type %v threads %d: copied bytes differ", c.name, same, th)
				}
				after := base.Data()
				for i := range before {
					if !covered[i] && before[i] != after[i] {
						t.Fatalf("%s threads %d: byte %d outside the view changed", c.name, th, i)
					}
				}
			}
		}
	}
}

func TestEltCopyBadInput(t *testing.T) {
	eltWantErr(t, "CPY", func(ctx *core.Context) {
		ctx.Cpy(ctx.NewTensor1D(core.TypeF32, 6), ctx.NewTensor1D(core.TypeF32, 5))
	})
	eltWantErr(t, "CPY", func(ctx *core.Context) {
		ctx.Cpy(ctx.NewTensor1D(core.TypeQ4_0, 32), ctx.NewTensor1D(core.TypeQ8_0, 32))
	})
	eltWantErr(t, "CPY", func(ctx *core.Context) {
		ctx.Cpy(ctx.NewTensor1D(core.TypeF16, 4), ctx.NewTensor1D(core.TypeI32, 4))
	})
	eltWantErr(t, "CPY", func(ctx *core.Context) { ctx.Cast(ctx.NewTensor1D(core.TypeF32, 48), core.TypeQ4_0) })
	eltWantErr(t, "CONT", func(ctx *core.Context) { ctx.ContShape(ctx.NewTensor1D(core.TypeF32, 6), 4) })
}

// TestCpyAliasedSource copies a tensor onto itself in another layout (transposed in place, and
// shifted by one element): the result must be as if every source element were read before any is
// written, on every thread count.
func TestCpyAliasedSource(t *testing.T) {
	for _, threads := range []int{1, 3} {
		ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
		x := ctx.NewTensor2D(core.TypeF32, 4, 4)
		y := ctx.NewTensor1D(core.TypeF32, 16)
		v := make([]float32, 16)
		for i := range v {
			v[i] = float32(i)
		}
		if err := core.SetFloat32s(x, v); err != nil {
			t.Fatal(err)
		}
		if err := core.SetFloat32s(y, v); err != nil {
			t.Fatal(err)
		}
		tr := ctx.Cpy(ctx.Transpose(x), x)
		sh := ctx.Cpy(ctx.View1D(y, 12, 4), ctx.View1D(y, 12, 0))
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(tr)
		g.BuildForwardExpand(sh)
		if err := cpu.Compute(g, threads); err != nil {
			t.Fatal(err)
		}
		got := x.Float32s()
		for i := range 4 {
			for j := range 4 {
				if want := float32(j*4 + i); got[i*4+j] != want {
					t.Fatalf("threads %d: transposed in place: x[%d,%d] = %v, want %v", threads, j, i, got[i*4+j], want)
				}
			}
		}
		gy := y.Float32s()
		for i := range 16 {
			want := float32(i + 1)
			if i >= 12 {
				want = float32(i)
			}
			if gy[i] != want {
				t.Fatalf("threads %d: shifted in place: y[%d] = %v, want %v", threads, i, gy[i], want)
			}
		}
	}
}
