package cpu_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// Helpers for the elementwise, reduction, copy and row-gather tests (ops_unary, ops_reduce,
// ops_copy, ops_rows, ops_misc). References are float64, computed from the values the inputs hold
// after filling (read back with core.GetFloat32s), so f16/bf16 rounding and quantization of the
// inputs are part of the reference, not of the error.

// eltThreads are the thread counts each case runs with; the results must be bit-identical.
var eltThreads = []int{1, 3}

// eltLayouts are the ways a test source is laid out: dense, a permuted view (dim 0 not unit
// stride), and a view with gaps between rows and an offset into a larger tensor.
var eltLayouts = []string{"contig", "perm", "view"}

// eltBuild builds one case in a fresh context with a fresh, identically seeded rng, and returns the
// output tensor (not yet computed) and its expected row-major values.
type eltBuild func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64)

// eltRawBuild is eltBuild for cases checked bit for bit: it returns the expected bytes of the
// output in row-major element (block) order, as eltRaw reads them.
type eltRawBuild func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []byte)

func eltCtx() *core.Context { return core.NewContext(core.ContextParams{MemSize: 4 << 20}) }

func eltRng() *rand.Rand { return rand.New(rand.NewPCG(0x5eed, 0x7a4de)) }

// eltCompute runs the graph of out with the given thread count.
func eltCompute(t *testing.T, ctx *core.Context, out *core.Tensor, threads int) {
	t.Helper()
	if err := ctx.Err(); err != nil {
		t.Fatalf("building the graph: %v", err)
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	if err := cpu.Compute(g, threads); err != nil {
		t.Fatalf("threads %d: %v", threads, err)
	}
}

// eltCheck computes build's output at every thread count and compares it with the reference by
// NMSE ≤ tol (tol 0: exact float equality), and the outputs of all thread counts byte for byte.
func eltCheck(t *testing.T, name string, tol float64, build eltBuild) {
	t.Helper()
	var first []byte
	for _, th := range eltThreads {
		ctx := eltCtx()
		out, want := build(t, ctx, eltRng())
		eltCompute(t, ctx, out, th)
		got := eltGet(t, out)
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
		}
		if tol == 0 {
			for i := range want {
				if float64(got[i]) != want[i] {
					t.Fatalf("%s threads %d: element %d = %v, want %v", name, th, i, got[i], want[i])
				}
			}
		} else if e := eltNMSE(got, want); !(e <= tol) {
			i := eltWorst(got, want)
			t.Fatalf("%s threads %d: NMSE %.3g > %.3g (worst element %d: %v, want %v)", name, th, e, tol, i, got[i], want[i])
		}
		raw := eltRaw(t, out)
		if first == nil {
			first = raw
		} else if !bytes.Equal(first, raw) {
			t.Fatalf("%s: results differ between %d and %d threads", name, eltThreads[0], th)
		}
	}
}

// eltCheckRaw computes build's output at every thread count and compares its bytes (row-major
// element or block order) with the expected bytes exactly.
func eltCheckRaw(t *testing.T, name string, build eltRawBuild) {
	t.Helper()
	for _, th := range eltThreads {
		ctx := eltCtx()
		out, want := build(t, ctx, eltRng())
		eltCompute(t, ctx, out, th)
		got := eltRaw(t, out)
		if !bytes.Equal(got, want) {
			i := 0
			for i < len(got) && i < len(want) && got[i] == want[i] {
				i++
			}
			t.Fatalf("%s threads %d: bytes differ from byte %d of %d (got %d bytes, want %d)", name, th, i, len(want), len(got), len(want))
		}
	}
}

// eltRaw returns t's bytes in row-major order of its elements (blocks for quantized types),
// walking its strides.
func eltRaw(t *testing.T, x *core.Tensor) []byte {
	t.Helper()
	data := x.Data()
	if data == nil && x.NBytes() > 0 {
		t.Fatalf("tensor %v has no host data", x)
	}
	bs, es := x.Type.BlockSize(), x.Type.Size()
	out := make([]byte, 0, x.NElements()/bs*es)
	for i3 := int64(0); i3 < x.Ne[3]; i3++ {
		for i2 := int64(0); i2 < x.Ne[2]; i2++ {
			for i1 := int64(0); i1 < x.Ne[1]; i1++ {
				off := i1*x.Nb[1] + i2*x.Nb[2] + i3*x.Nb[3]
				for j := int64(0); j < x.Ne[0]/bs; j++ {
					p := off + j*x.Nb[0]
					out = append(out, data[p:p+es]...)
				}
			}
		}
	}
	return out
}

// eltGet reads any tensor as row-major float32.
func eltGet(t *testing.T, x *core.Tensor) []float32 {
	t.Helper()
	v, err := core.GetFloat32s(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func eltGet64(t *testing.T, x *core.Tensor) []float64 {
	t.Helper()
	v := eltGet(t, x)
	out := make([]float64, len(v))
	for i, f := range v {
		out[i] = float64(f)
	}
	return out
}

// eltNMSE is Σ(got−want)²/Σwant²; a NaN anywhere makes it NaN (which fails every check).
func eltNMSE(got []float32, want []float64) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	if num == 0 {
		return 0
	}
	return num / den
}

func eltWorst(got []float32, want []float64) int {
	w, wi := -1.0, 0
	for i := range want {
		d := math.Abs(float64(got[i]) - want[i])
		if d > w || math.IsNaN(d) {
			w, wi = d, i
			if math.IsNaN(d) {
				break
			}
		}
	}
	return wi
}

// eltRandVals returns n values uniform in [lo, hi) (integers for integer types).
func eltRandVals(rng *rand.Rand, typ core.Type, n int64, lo, hi float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		x := lo + (hi-lo)*rng.Float64()
		if typ == core.TypeI32 {
			x = math.Floor(x)
		}
		v[i] = float32(x)
	}
	return v
}

// eltSource creates a tensor of type typ and shape ne in the given layout (see eltLayouts), fills
// its memory (gaps included) with random values in [lo, hi), and returns it with the values it
// holds, row-major.
func eltSource(t *testing.T, ctx *core.Context, rng *rand.Rand, typ core.Type, ne [4]int64, layout string, lo, hi float64) (*core.Tensor, []float64) {
	t.Helper()
	var x, base *core.Tensor
	switch layout {
	case "contig":
		x = ctx.NewTensor(typ, ne[:]...)
		base = x
	case "perm":
		// base's axes (ne1, ne0, ne3, ne2) go to positions 1, 0, 3, 2: dim 0 strides by a row.
		base = ctx.NewTensor(typ, ne[1], ne[0], ne[3], ne[2])
		x = ctx.Permute(base, 1, 0, 3, 2)
	case "view":
		bs := typ.BlockSize()
		base = ctx.NewTensor(typ, ne[0]+bs, ne[1]+1, ne[2], ne[3])
		x = ctx.View4D(base, ne[0], ne[1], ne[2], ne[3], base.Nb[1], base.Nb[2], base.Nb[3], base.Nb[1]+typ.Size())
	default:
		t.Fatalf("unknown layout %q", layout)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("source %v %v %s: %v", typ, ne, layout, err)
	}
	if x.Ne != ne {
		t.Fatalf("source layout %s has shape %v, want %v", layout, x.Ne, ne)
	}
	if err := core.SetFloat32s(base, eltRandVals(rng, typ, base.NElements(), lo, hi)); err != nil {
		t.Fatal(err)
	}
	return x, eltGet64(t, x)
}

// eltRound rounds float64 reference values the way a result of type typ stores them.
func eltRound(t *testing.T, typ core.Type, v []float64) []float64 {
	t.Helper()
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	if typ != core.TypeF32 {
		b := make([]byte, typ.RowSize(int64(len(f))))
		if err := typ.FromFloat(f, b); err != nil {
			t.Fatal(err)
		}
		if err := typ.ToFloat(b, f); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]float64, len(v))
	for i, x := range f {
		out[i] = float64(x)
	}
	return out
}

// eltFromFloat converts row-major values to the bytes of type typ (the reference conversion).
func eltFromFloat(t *testing.T, typ core.Type, v []float64) []byte {
	t.Helper()
	f := make([]float32, len(v))
	for i, x := range v {
		f[i] = float32(x)
	}
	b := make([]byte, typ.RowSize(int64(len(f))))
	if err := typ.FromFloat(f, b); err != nil {
		t.Fatal(err)
	}
	return b
}

// eltWantErr checks that building with f leaves an error on the context that names op.
func eltWantErr(t *testing.T, op string, f func(ctx *core.Context)) {
	t.Helper()
	ctx := eltCtx()
	f(ctx)
	err := ctx.Err()
	if err == nil {
		t.Fatalf("%s: bad input accepted", op)
	}
	if !strings.Contains(err.Error(), op) {
		t.Fatalf("%s: error %q does not name the op", op, err)
	}
}

func eltName(parts ...any) string {
	s := make([]string, len(parts))
	for i, p := range parts {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, "/")
}
