package gputest

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// QuantizeK23 runs CPY from f32, f16 and bf16 into Q2_K and Q3_K and SET_ROWS of f32 rows into
// them on be, and checks every byte against core/quant's quantizer (Type.FromFloat) of the same
// values: K23Values' super-blocks, which take every branch of the two quantizers.
func QuantizeK23(t *testing.T, be core.Backend) {
	t.Helper()
	vals := K23Values(rand.New(rand.NewPCG(23, 3)))
	n := int64(len(vals))
	for _, typ := range []core.Type{core.TypeQ2_K, core.TypeQ3_K} {
		for _, from := range []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16} {
			ctx := core.NewContext(core.ContextParams{NoAlloc: true})
			src := ctx.NewTensor2D(from, 512, n/512)
			dst := ctx.NewTensor2D(typ, 512, n/512)
			out := ctx.Cpy(src, dst)
			AllocCtx(t, ctx, be.DefaultBufferType())
			if err := core.SetFloat32s(src, vals); err != nil {
				t.Fatal(err)
			}
			in, err := core.GetFloat32s(src) // the values as src holds them (rounded to f16/bf16)
			if err != nil {
				t.Fatal(err)
			}
			compareK23(t, be, out, dst, in, "CPY("+from.String()+"->"+typ.String()+")")
		}
		// SET_ROWS: the rows in reverse order into a tensor of one more row (left as zeros).
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		rows := n / 512
		src := ctx.NewTensor2D(core.TypeF32, 512, rows)
		idx := ctx.NewTensor1D(core.TypeI64, rows)
		dst := ctx.NewTensor2D(typ, 512, rows+1)
		out := ctx.SetRows(dst, src, idx)
		AllocCtx(t, ctx, be.DefaultBufferType())
		if err := core.SetFloat32s(src, vals); err != nil {
			t.Fatal(err)
		}
		raw := make([]byte, 8*rows)
		for i := range rows {
			v := uint64(rows - i)
			for k := range 8 {
				raw[8*i+int64(k)] = byte(v >> (8 * k))
			}
		}
		if err := core.TensorSet(idx, raw, 0); err != nil {
			t.Fatal(err)
		}
		if err := core.TensorMemset(dst, 0, 0, dst.NBytes()); err != nil {
			t.Fatal(err)
		}
		want := make([]float32, 512*(rows+1))
		for i := range rows {
			copy(want[512*(rows-i):512*(rows-i+1)], vals[512*i:512*(i+1)])
		}
		compareK23(t, be, out, dst, want, "SET_ROWS("+typ.String()+")")
	}
}

// compareK23 computes out (which writes dst) on be and compares dst's bytes with the quantization
// of want.
func compareK23(t *testing.T, be core.Backend, out, dst *core.Tensor, want []float32, what string) {
	t.Helper()
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	if !be.Device().SupportsOp(out) {
		t.Fatalf("%s: not supported", what)
	}
	if err := be.GraphCompute(g); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	got := make([]byte, dst.NBytes())
	if err := core.TensorGet(dst, got, 0); err != nil {
		t.Fatal(err)
	}
	ref := make([]byte, dst.NBytes())
	if err := dst.Type.FromFloat(want, ref); err != nil {
		t.Fatal(err)
	}
	es := dst.Type.Size()
	bad := 0
	for b := int64(0); b < int64(len(got))/es; b++ {
		g, w := got[b*es:(b+1)*es], ref[b*es:(b+1)*es]
		if !bytes.Equal(g, w) {
			if bad < 3 {
				t.Errorf("%s: block %d (%s) differs:\ngot  % x\nwant % x", what, b, K23Kind(int(b%k23Kinds)), g, w)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d blocks differ", what, bad, int64(len(got))/es)
	}
}

// k23Kinds is the number of super-block kinds K23Values cycles through.
const k23Kinds = 12

// K23Kind names kind k of K23Values' super-blocks.
func K23Kind(k int) string {
	return [...]string{"uniform", "gaussian-like", "all positive", "all negative", "constant sub-blocks",
		"zero and tiny sub-blocks", "one dominant sub-block", "large magnitudes", "ties", "few levels",
		"outliers", "small"}[k]
}

// K23Values returns 48 super-blocks of 256 values (24 rows of 512), cycling through k23Kinds kinds
// that reach the quantizers' branches: sub-blocks whose minimum is positive (the min clamped to
// 0), constant sub-blocks (vmax == vmin), all-zero and near-zero sub-blocks (below 1e-15: Q3_K's
// zero codes), a dominant sub-block (the other sub-blocks' stored scales round to 0 and keep the
// search's codes), values on rounding ties, few distinct levels (the search's candidates tie in
// error) and outliers.
func K23Values(r *rand.Rand) []float32 {
	const nb = 48
	v := make([]float32, 256*nb)
	for b := range nb {
		x := v[256*b : 256*(b+1)]
		switch b % k23Kinds {
		case 0:
			for i := range x {
				x[i] = 2*r.Float32() - 1
			}
		case 1:
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
		case 2:
			for i := range x {
				x[i] = 0.5 + r.Float32()
			}
		case 3:
			for i := range x {
				x[i] = -0.25 - 3*r.Float32()
			}
		case 4:
			for j := range 16 {
				c := float32(r.IntN(7)-3) * 0.37
				for i := range 16 {
					x[16*j+i] = c
				}
			}
		case 5:
			for j := range 16 {
				for i := range 16 {
					switch j % 4 {
					case 0:
						x[16*j+i] = 0
					case 1:
						x[16*j+i] = (2*r.Float32() - 1) * 1e-16
					case 2:
						x[16*j+i] = (2*r.Float32() - 1) * 1e-6
					default:
						x[16*j+i] = 2*r.Float32() - 1
					}
				}
			}
		case 6:
			for i := range x {
				x[i] = (2*r.Float32() - 1) * 1e-3
			}
			for i := 16 * 5; i < 16*6; i++ {
				x[i] = (2*r.Float32() - 1) * 100
			}
		case 7:
			for i := range x {
				x[i] = (2*r.Float32() - 1) * 3e4
			}
		case 8:
			// Multiples of 1/8 in [-2, 2]: products with the power-of-two-ish scales land on .5.
			for i := range x {
				x[i] = float32(r.IntN(33)-16) / 8
			}
		case 9:
			levels := []float32{-1, -0.5, 0, 0.5, 1}
			for i := range x {
				x[i] = levels[r.IntN(len(levels))]
			}
		case 10:
			for i := range x {
				x[i] = (2*r.Float32() - 1) * 0.1
			}
			for k := 0; k < 6; k++ {
				x[r.IntN(256)] = float32(r.IntN(2)*2-1) * (5 + 5*r.Float32())
			}
		case 11:
			for i := range x {
				x[i] = float32(float64(2*r.Float32()-1) * math.Ldexp(1, -20-r.IntN(10)))
			}
		}
	}
	return v
}
