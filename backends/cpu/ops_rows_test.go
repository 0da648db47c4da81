package cpu_test

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// eltSetIndices writes row-major indices into an I32 or I64 tensor of any layout.
func eltSetIndices(t *testing.T, x *core.Tensor, vals []int64) {
	t.Helper()
	data := x.Data()
	k := 0
	for i2 := int64(0); i2 < x.Ne[2]; i2++ {
		for i1 := int64(0); i1 < x.Ne[1]; i1++ {
			for i0 := int64(0); i0 < x.Ne[0]; i0++ {
				off := i0*x.Nb[0] + i1*x.Nb[1] + i2*x.Nb[2]
				switch x.Type {
				case core.TypeI32:
					binary.LittleEndian.PutUint32(data[off:], uint32(int32(vals[k])))
				case core.TypeI64:
					binary.LittleEndian.PutUint64(data[off:], uint64(vals[k]))
				default:
					t.Fatalf("index type %v", x.Type)
				}
				k++
			}
		}
	}
}

// eltIndices makes an index tensor of type typ, shape ne (dense, or permuted when perm), filled
// with random indices in [0, n) (repeats included), and returns it with its values row-major.
func eltIndices(t *testing.T, ctx *core.Context, rng *rand.Rand, typ core.Type, ne [3]int64, perm bool, n int64) (*core.Tensor, []int64) {
	t.Helper()
	var x *core.Tensor
	if perm {
		x = ctx.Permute(ctx.NewTensor(typ, ne[1], ne[0], ne[2]), 1, 0, 2, 3)
	} else {
		x = ctx.NewTensor(typ, ne[0], ne[1], ne[2])
	}
	vals := make([]int64, ne[0]*ne[1]*ne[2])
	for i := range vals {
		vals[i] = rng.Int64N(n)
	}
	eltSetIndices(t, x, vals)
	return x, vals
}

// TestEltGetRows gathers rows of every convertible type (dequantizing) from dense, permuted and
// strided sources with dense and permuted indices; the result is exact.
func TestEltGetRows(t *testing.T) {
	for _, typ := range eltCopyTypes {
		for _, layout := range eltLayoutsFor(typ) {
			for _, perm := range []bool{false, true} {
				typ, layout, perm := typ, layout, perm
				eltCheck(t, eltName("GET_ROWS", typ, layout, "perm-idx", perm), 0, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
					ne := [4]int64{eltRowLen(typ), 9, 3, 2}
					a, x := eltSourceAny(t, ctx, rng, typ, ne, layout)
					b, idx := eltIndices(t, ctx, rng, core.TypeI32, [3]int64{4, 3, 2}, perm, ne[1])
					want := make([]float64, 0, 4*3*2*ne[0])
					k := 0
					for i12 := int64(0); i12 < 2; i12++ {
						for i11 := int64(0); i11 < 3; i11++ {
							for i10 := 0; i10 < 4; i10++ {
								r := idx[k]
								k++
								row := eltAt(ne, 0, r, i11, i12)
								want = append(want, x[row:row+ne[0]]...)
							}
						}
					}
					out := ctx.GetRows(a, b)
					if want, got := map[bool]core.Type{true: core.TypeI32, false: core.TypeF32}[typ == core.TypeI32], out.Type; got != want {
						t.Fatalf("GET_ROWS of %v gives %v, want %v", typ, got, want)
					}
					return out, want
				})
			}
		}
	}
	eltCheck(t, "GET_ROWS/large", 0, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
		ne := [4]int64{5, 7, 11, 13}
		a, x := eltSource(t, ctx, rng, core.TypeF32, ne, "perm", -1, 1)
		b, idx := eltIndices(t, ctx, rng, core.TypeI32, [3]int64{9, 11, 13}, false, ne[1])
		want := make([]float64, 0, 9*11*13*5)
		k := 0
		for i12 := int64(0); i12 < 13; i12++ {
			for i11 := int64(0); i11 < 11; i11++ {
				for i10 := 0; i10 < 9; i10++ {
					row := eltAt(ne, 0, idx[k], i11, i12)
					k++
					want = append(want, x[row:row+5]...)
				}
			}
		}
		return ctx.GetRows(a, b), want
	})
}

// TestEltSetRows writes f32 rows (dense, permuted, strided) into every destination type
// (quantizing with the reference quantizer, bit-exact) through I32 and I64 indices broadcast over
// dims 2 and 3; repeated indices resolve as a sequential loop does (the last row wins) at every
// thread count.
func TestEltSetRows(t *testing.T) {
	dstTypes := []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0}
	idxShapes := [][3]int64{{4, 3, 2}, {4, 1, 2}, {4, 3, 1}, {4, 1, 1}}
	for _, typ := range dstTypes {
		for _, ityp := range []core.Type{core.TypeI32, core.TypeI64} {
			for si, ishape := range idxShapes {
				bLayout := eltLayouts[si%len(eltLayouts)]
				aLayout := eltLayoutsFor(typ)[si%len(eltLayoutsFor(typ))]
				typ, ityp, ishape := typ, ityp, ishape
				name := eltName("SET_ROWS", typ, ityp, ishape, aLayout, bLayout)
				eltCheckRaw(t, name, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []byte) {
					ne := [4]int64{eltRowLen(typ), 10, 3, 2}
					a, _ := eltSourceAny(t, ctx, rng, typ, ne, aLayout)
					nb := [4]int64{ne[0], 4, 3, 2}
					b, xb := eltSource(t, ctx, rng, core.TypeF32, nb, bLayout, -3, 3)
					idx, iv := eltIndices(t, ctx, rng, ityp, ishape, false, ne[1])
					want := eltRaw(t, a)
					rowBytes := typ.RowSize(ne[0])
					for i3 := int64(0); i3 < nb[3]; i3++ {
						for i2 := int64(0); i2 < nb[2]; i2++ {
							for i1 := int64(0); i1 < nb[1]; i1++ {
								r := iv[(i3%ishape[2]*ishape[1]+i2%ishape[1])*ishape[0]+i1]
								src := eltAt(nb, 0, i1, i2, i3)
								dst := eltAt(ne, 0, r, i2, i3) / ne[0] * rowBytes
								copy(want[dst:dst+rowBytes], eltFromFloat(t, typ, xb[src:src+ne[0]]))
							}
						}
					}
					return ctx.SetRows(a, b, idx), want
				})
			}
		}
	}
}

// TestEltRowsBadIndex: an index outside the source (GET_ROWS) or destination (SET_ROWS) rows is an
// error from Compute naming the op, never a panic.
func TestEltRowsBadIndex(t *testing.T) {
	for _, th := range eltThreads {
		for _, bad := range []int64{9, -1} {
			ctx := eltCtx()
			b := ctx.NewTensor1D(core.TypeI32, 6)
			eltSetIndices(t, b, []int64{0, 3, 8, bad, 2, 1})
			g := core.NewGraph(core.DefaultGraphSize)
			g.BuildForwardExpand(ctx.GetRows(ctx.NewTensor2D(core.TypeQ4_0, 32, 9), b))
			err := cpu.Compute(g, th)
			if err == nil || !strings.Contains(err.Error(), "GET_ROWS") || !strings.Contains(err.Error(), "out of range") {
				t.Fatalf("GET_ROWS index %d, threads %d: want an out-of-range error, got %v", bad, th, err)
			}
		}
		for _, c := range []struct {
			typ core.Type
			bad int64
		}{{core.TypeI32, 9}, {core.TypeI32, -1}, {core.TypeI64, 1 << 40}, {core.TypeI64, -5}} {
			ctx := eltCtx()
			idx := ctx.NewTensor1D(c.typ, 6)
			eltSetIndices(t, idx, []int64{0, 3, 8, c.bad, 2, 1})
			g := core.NewGraph(core.DefaultGraphSize)
			g.BuildForwardExpand(ctx.SetRows(ctx.NewTensor2D(core.TypeQ8_0, 32, 9), ctx.NewTensor2D(core.TypeF32, 32, 6), idx))
			err := cpu.Compute(g, th)
			if err == nil || !strings.Contains(err.Error(), "SET_ROWS") || !strings.Contains(err.Error(), "out of range") {
				t.Fatalf("SET_ROWS %v index %d, threads %d: want an out-of-range error, got %v", c.typ, c.bad, th, err)
			}
		}
	}
}

func TestEltRowsBadInput(t *testing.T) {
	eltWantErr(t, "GET_ROWS", func(ctx *core.Context) {
		ctx.GetRows(ctx.NewTensor2D(core.TypeF32, 5, 9), ctx.NewTensor1D(core.TypeF32, 3))
	})
	eltWantErr(t, "GET_ROWS", func(ctx *core.Context) {
		ctx.GetRows(ctx.NewTensor3D(core.TypeF32, 5, 9, 2), ctx.NewTensor2D(core.TypeI32, 3, 3))
	})
	eltWantErr(t, "SET_ROWS", func(ctx *core.Context) {
		// source rows are f32 or f16 (ggml_set_rows); quantized ones are refused
		ctx.SetRows(ctx.NewTensor2D(core.TypeF32, 64, 9), ctx.NewTensor2D(core.TypeQ8_0, 64, 3), ctx.NewTensor1D(core.TypeI32, 3))
	})
	eltWantErr(t, "SET_ROWS", func(ctx *core.Context) {
		ctx.SetRows(ctx.NewTensor2D(core.TypeF32, 5, 9), ctx.NewTensor2D(core.TypeF32, 5, 3), ctx.NewTensor1D(core.TypeF32, 3))
	})
	eltWantErr(t, "SET_ROWS", func(ctx *core.Context) {
		ctx.SetRows(ctx.NewTensor2D(core.TypeF32, 5, 9), ctx.NewTensor2D(core.TypeF32, 4, 3), ctx.NewTensor1D(core.TypeI32, 3))
	})
	eltWantErr(t, "SET_ROWS", func(ctx *core.Context) {
		ctx.SetRows(ctx.NewTensor3D(core.TypeF32, 5, 9, 4), ctx.NewTensor3D(core.TypeF32, 5, 3, 4), ctx.NewTensor2D(core.TypeI32, 3, 3))
	})
}

// TestSetRowsAliasedSource swaps two rows of x with SET_ROWS reading its rows from x itself: the
// source rows must be read as they were before the node.
func TestSetRowsAliasedSource(t *testing.T) {
	for _, threads := range []int{1, 3} {
		ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
		x := ctx.NewTensor2D(core.TypeF32, 4, 4)
		idx := ctx.NewTensor1D(core.TypeI32, 2)
		v := make([]float32, 16)
		for i := range v {
			v[i] = float32(i)
		}
		if err := core.SetFloat32s(x, v); err != nil {
			t.Fatal(err)
		}
		if err := core.SetInt32s(idx, []int32{1, 0}); err != nil {
			t.Fatal(err)
		}
		r := ctx.SetRows(x, ctx.View2D(x, 4, 2, x.Nb[1], 0), idx)
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(r)
		if err := cpu.Compute(g, threads); err != nil {
			t.Fatal(err)
		}
		want := []float32{4, 5, 6, 7, 0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15}
		if got := x.Float32s(); !slices.Equal(got, want) {
			t.Fatalf("threads %d: got %v, want %v", threads, got, want)
		}
	}
}

// TestSetRowsF16SourceHand: f16 source rows (ggml_set_rows accepts F32 or F16) into f32, bf16 and
// f16 destinations, by hand: f16 bits 0x3e00 = 1.5, 0xc080 = -2.25, 0x4201 = 3 + 2⁻⁹, 0x7bff = 65504
// and the quiet NaN 0x7e01. Into f32 every value widens exactly; into bf16 3 + 2⁻⁹ rounds to 3
// (0x4040) and 65504 to 65536 (0x4780); into f16 the bits are copied, NaN payload included. Rows go
// to index 1 and 0 (swapped); an empty view and zero source rows write nothing and are no error.
func TestSetRowsF16SourceHand(t *testing.T) {
	src := []uint16{0x3e00, 0xc080, 0x4201, 0x7bff, 0x7e01, 0x3c00}
	for _, tc := range []struct {
		typ  core.Type
		want []uint32 // per element, dst bits (row 0 = source row 1, row 1 = source row 0)
	}{
		{core.TypeF32, []uint32{0x477fe000, 0x7fc02000, 0x3f800000, 0x3fc00000, 0xc0100000, 0x40402000}},
		{core.TypeBF16, []uint32{0x4780, 0x7fc0, 0x3f80, 0x3fc0, 0xc010, 0x4040}},
		{core.TypeF16, []uint32{0x7bff, 0x7e01, 0x3c00, 0x3e00, 0xc080, 0x4201}},
	} {
		ctx := nnCtx()
		a := ctx.NewTensor2D(tc.typ, 3, 2)
		b := ctx.NewTensor2D(core.TypeF16, 3, 2)
		for i, v := range src {
			binary.LittleEndian.PutUint16(b.Data()[2*i:], v)
		}
		idx := ctx.NewTensor1D(core.TypeI32, 2)
		eltSetIndices(t, idx, []int64{1, 0})
		out := ctx.SetRows(a, b, idx)
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(out)
		if err := cpu.Compute(g, 2); err != nil {
			t.Fatalf("%v: %v", tc.typ, err)
		}
		for i, w := range tc.want {
			var got uint32
			if tc.typ == core.TypeF32 {
				got = binary.LittleEndian.Uint32(a.Data()[4*i:])
			} else {
				got = uint32(binary.LittleEndian.Uint16(a.Data()[2*i:]))
			}
			if got != w {
				t.Errorf("%v: element %d = %#x, want %#x", tc.typ, i, got, w)
			}
		}
	}

	for _, rows := range []int64{0, 4} {
		ctx := nnCtx()
		a := ctx.NewTensor3D(core.TypeQ8_0, 32, 4, 2)
		for i := range a.Data() {
			a.Data()[i] = 0x5a
		}
		v := ctx.View3D(a, 32, rows, 2, a.Nb[1], a.Nb[2], 0)
		out := ctx.SetRows(v, ctx.NewTensor3D(core.TypeF16, 32, 0, 2), ctx.NewTensor2D(core.TypeI64, 0, 2))
		if err := ctx.Err(); err != nil {
			t.Fatalf("%d rows: %v", rows, err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(out)
		if err := cpu.Compute(g, 2); err != nil {
			t.Fatalf("%d rows: %v", rows, err)
		}
		for i, x := range a.Data() {
			if x != 0x5a {
				t.Fatalf("%d rows: byte %d changed to %#x", rows, i, x)
			}
		}
	}
}
