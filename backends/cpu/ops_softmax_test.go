package cpu_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

func TestNNSoftMaxHand(t *testing.T) {
	got := nnRun(t, "softmax [0, ln 3]", 1e-12, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor1D(core.TypeF32, 2)
		nnSet(t, a, []float32{0, float32(math.Log(3))})
		return ctx.SoftMax(a), []float64{0.25, 0.75}
	})
	nnClose(t, "softmax [0, ln 3]", got, []float64{0.25, 0.75}, 1e-7)

	// ALiBi with 3 heads and max_bias 8: n_head_log2 = 2, m0 = 2^-4, m1 = 2^-2, slopes 1/16, 1/256, 1/4.
	// a = 0 and mask row [0, 1]: head h gives softmax([0, slope_h]).
	got = nnRun(t, "softmax alibi hand", 1e-12, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor4D(core.TypeF32, 2, 1, 3, 1)
		nnSet(t, a, make([]float32, 6))
		m := ctx.NewTensor2D(core.TypeF32, 2, 1)
		nnSet(t, m, []float32{0, 1})
		var want []float64
		for _, s := range []float64{1.0 / 16, 1.0 / 256, 1.0 / 4} {
			want = append(want, 1/(1+math.Exp(s)), math.Exp(s)/(1+math.Exp(s)))
		}
		return ctx.SoftMaxExt(a, m, 1, 8), want
	})
	nnClose(t, "softmax alibi hand", got, []float64{
		0.484380084, 0.515619916, 0.499023439, 0.500976561, 0.437823499, 0.562176501}, 1e-7)

	// A fully masked row gives zeros (not NaN); a partly masked row ignores the -inf entries. f16 mask.
	got = nnRun(t, "softmax -inf rows", 1e-12, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor2D(core.TypeF32, 3, 3)
		nnSet(t, a, []float32{1, 2, 3, 0, 5, 0, 7, 8, 9})
		m := ctx.NewTensor2D(core.TypeF16, 3, 3)
		inf := float32(math.Inf(-1))
		nnSet(t, m, []float32{inf, inf, inf, 0, inf, 0, 0, 0, inf})
		e := math.Exp(1)
		return ctx.SoftMaxExt(a, m, 1, 0), []float64{0, 0, 0, 0.5, 0, 0.5, 1 / (1 + e), e / (1 + e), 0}
	})
	for i, v := range got {
		if math.IsNaN(float64(v)) {
			t.Fatalf("softmax -inf rows: NaN at %d: %v", i, got)
		}
	}
}

func TestNNSoftMaxNaN(t *testing.T) {
	// A NaN anywhere in a row makes the whole row NaN (as in ggml, whose sum becomes NaN), also when
	// everything else in the row is -inf; other rows are unaffected.
	nan, inf := float32(math.NaN()), float32(math.Inf(-1))
	got := nnRunExact(t, "softmax NaN rows", func(t *testing.T, ctx *core.Context) *core.Tensor {
		a := ctx.NewTensor2D(core.TypeF32, 3, 3)
		nnSet(t, a, []float32{nan, 1, 2, nan, inf, inf, 0, 0, 0})
		return ctx.SoftMax(a)
	})
	for i, v := range got[:6] {
		if !math.IsNaN(float64(v)) {
			t.Fatalf("softmax NaN rows: element %d = %v, want NaN (%v)", i, v, got)
		}
	}
	nnClose(t, "softmax NaN rows", got[6:], []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, 1e-7)
}

// nnAlibiSlope is the ALiBi slope of head h (ggml_compute_forward_soft_max_f32's formula).
func nnAlibiSlope(h, nHead int64, maxBias float64) float64 {
	if maxBias <= 0 {
		return 1
	}
	nLog2 := int64(1)
	for nLog2*2 <= nHead {
		nLog2 *= 2
	}
	m0 := math.Pow(2, -maxBias/float64(nLog2))
	m1 := math.Pow(2, -maxBias/2/float64(nLog2))
	if h < nLog2 {
		return math.Pow(m0, float64(h+1))
	}
	return math.Pow(m1, float64(2*(h-nLog2)+1))
}

// nnSoftMaxRef is softmax(x·scale + slope_h·mask) per row; mask (shape mne) may be nil.
func nnSoftMaxRef(x []float64, ne [4]int64, mask []float64, mne [4]int64, scale, maxBias float64) []float64 {
	out := make([]float64, len(x))
	w := make([]float64, ne[0])
	for i3 := int64(0); i3 < ne[3]; i3++ {
		for i2 := int64(0); i2 < ne[2]; i2++ {
			slope := nnAlibiSlope(i2, ne[2], maxBias)
			for i1 := int64(0); i1 < ne[1]; i1++ {
				mx := math.Inf(-1)
				for i0 := int64(0); i0 < ne[0]; i0++ {
					v := x[nnIdx(ne, i0, i1, i2, i3)] * scale
					if mask != nil {
						v += slope * mask[nnIdx(mne, i0, i1, i2%mne[2], i3%mne[3])]
					}
					w[i0] = v
					mx = math.Max(mx, v)
				}
				var sum float64
				for i0 := range w {
					if math.IsInf(mx, -1) {
						w[i0] = 0
						continue
					}
					w[i0] = math.Exp(w[i0] - mx)
					sum += w[i0]
				}
				for i0 := int64(0); i0 < ne[0]; i0++ {
					if sum > 0 {
						out[nnIdx(ne, i0, i1, i2, i3)] = w[i0] / sum
					}
				}
			}
		}
	}
	return out
}

func TestNNSoftMaxRandom(t *testing.T) {
	type tc struct {
		ne       [4]int64
		maskType core.Type // 0 = no mask
		mne      [4]int64
		scale    float32
		maxBias  float32
		causal   bool   // mask entries above the diagonal are -inf
		layout   string // of the mask
	}
	noMask := core.Type(-1)
	cases := []tc{
		{ne: [4]int64{33, 7, 3, 2}, maskType: noMask, scale: 1},
		{ne: [4]int64{33, 7, 3, 2}, maskType: noMask, scale: 0.7},
		{ne: [4]int64{130, 5, 1, 1}, maskType: noMask, scale: 2},
		{ne: [4]int64{33, 7, 3, 2}, maskType: core.TypeF32, mne: [4]int64{33, 9, 1, 2}, scale: 0.7},
		{ne: [4]int64{130, 5, 3, 2}, maskType: core.TypeF16, mne: [4]int64{130, 5, 3, 1}, scale: 0.125},
		{ne: [4]int64{17, 17, 2, 1}, maskType: core.TypeF16, mne: [4]int64{17, 20, 1, 1}, scale: 1, causal: true},
		{ne: [4]int64{16, 4, 3, 1}, maskType: core.TypeF32, mne: [4]int64{16, 4, 1, 1}, scale: 1, maxBias: 8},
		{ne: [4]int64{16, 4, 8, 2}, maskType: core.TypeF16, mne: [4]int64{16, 6, 1, 1}, scale: 0.5, maxBias: 8},
		{ne: [4]int64{16, 4, 5, 1}, maskType: core.TypeF32, mne: [4]int64{16, 4, 5, 1}, scale: 1, maxBias: 8, causal: true},
		{ne: [4]int64{9, 5, 8, 1}, maskType: core.TypeF32, mne: [4]int64{9, 5, 1, 1}, scale: 1, maxBias: 8, layout: "row-gaps"},
		{ne: [4]int64{9, 5, 3, 2}, maskType: core.TypeF16, mne: [4]int64{9, 5, 3, 2}, scale: 1, layout: "row-gaps"},
		{ne: [4]int64{9, 3, 4, 2}, maskType: core.TypeF32, mne: [4]int64{9, 3, 2, 1}, scale: 1}, // tiled over heads (i2 % ne12)
	}
	for ci, c := range cases {
		for _, inplace := range []bool{false, true} {
			name := fmt.Sprintf("softmax %v mask %v %v scale %g max_bias %g causal %v %s inplace=%v",
				c.ne, c.maskType, c.mne, c.scale, c.maxBias, c.causal, c.layout, inplace)
			nnRun(t, name, 1e-6, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
				rng := rand.New(rand.NewSource(int64(100 + ci)))
				a := ctx.NewTensor4D(core.TypeF32, c.ne[0], c.ne[1], c.ne[2], c.ne[3])
				x := nnFill(t, a, rng, -4, 4)
				var m *core.Tensor
				var mv []float64
				if c.maskType != noMask {
					m = nnSource(ctx, c.maskType, c.mne, c.layout)
					vals := nnRandVals(rng, m.NElements(), -2, 2)
					if c.causal {
						for i := range vals {
							i0, i1 := int64(i)%c.mne[0], int64(i)/c.mne[0]%c.mne[1]
							if i0 > i1 {
								vals[i] = float32(math.Inf(-1))
							}
						}
					}
					mv = nnSet(t, m, vals)
				}
				r := ctx.SoftMaxExt(a, m, c.scale, c.maxBias)
				if inplace {
					nnInPlace(r, a)
				}
				return r, nnSoftMaxRef(x, c.ne, mv, c.mne, float64(c.scale), float64(c.maxBias))
			})
		}
	}
}

func TestNNDiagMaskInf(t *testing.T) {
	inf := math.Inf(-1)
	got := nnRunExact(t, "diag_mask_inf hand", func(t *testing.T, ctx *core.Context) *core.Tensor {
		a := ctx.NewTensor2D(core.TypeF32, 3, 3)
		nnSet(t, a, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9})
		return ctx.DiagMaskInf(a, 0)
	})
	nnDiagCheck(t, "diag_mask_inf hand", got, []float64{1, inf, inf, 4, 5, inf, 7, 8, 9})

	for _, ne := range [][4]int64{{7, 5, 3, 2}, {5, 7, 1, 2}, {33, 4, 2, 1}} {
		for _, nPast := range []int{0, 2, -1} {
			for _, layout := range nnLayouts {
				for _, inplace := range []bool{false, true} {
					name := fmt.Sprintf("diag_mask_inf %v n_past %d %s inplace=%v", ne, nPast, layout, inplace)
					var want []float64
					got := nnRunExact(t, name, func(t *testing.T, ctx *core.Context) *core.Tensor {
						rng := rand.New(rand.NewSource(ne[0] + int64(nPast)))
						a := nnSource(ctx, core.TypeF32, ne, layout)
						x := nnFill(t, a, rng, -1, 1)
						want = make([]float64, len(x))
						for i := range x {
							i0, i1 := int64(i)%ne[0], int64(i)/ne[0]%ne[1]
							want[i] = x[i]
							if i0 > int64(nPast)+i1 {
								want[i] = inf
							}
						}
						r := ctx.DiagMaskInf(a, nPast)
						if inplace {
							nnInPlace(r, a)
						}
						return r
					})
					nnDiagCheck(t, name, got, want)
				}
			}
		}
	}
}

// nnRunExact is nnRun without a tolerance check (for results holding infinities); callers compare
// the values themselves.
func nnRunExact(t *testing.T, name string, build func(t *testing.T, ctx *core.Context) *core.Tensor) []float32 {
	t.Helper()
	return nnRun(t, name, math.Inf(1), func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		r := build(t, ctx)
		return r, make([]float64, r.NElements())
	})
}

func nnDiagCheck(t *testing.T, what string, got []float32, want []float64) {
	t.Helper()
	for i := range want {
		if float64(got[i]) != want[i] {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestNNSoftMaxSinksHand(t *testing.T) {
	// Head 0: row [0, ln 3] with sink ln 4: exp values 1, 3 and 4 → [1/8, 3/8] (the sink's 4/8 is
	// not output). Head 1: row [ln 2, ln 2] with sink 0 → [2/5, 2/5]; its second row is fully masked
	// → zeros; head 2: sink 1000 dominates (the maximum includes the sink) → zeros, not NaN.
	inf := float32(math.Inf(-1))
	got := nnRun(t, "softmax sinks", 1e-12, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor3D(core.TypeF32, 2, 2, 3)
		l2, l3 := float32(math.Log(2)), float32(math.Log(3))
		nnSet(t, a, []float32{0, l3, 0, l3, l2, l2, 1, 1, 0, 0, 0, 0})
		m := ctx.NewTensor2D(core.TypeF32, 2, 2)
		nnSet(t, m, []float32{0, 0, inf, inf})
		s := ctx.NewTensor1D(core.TypeF32, 3)
		nnSet(t, s, []float32{float32(math.Log(4)), 0, 1000})
		return ctx.SoftMaxAddSinks(ctx.SoftMaxExt(a, m, 1, 0), s), []float64{
			0.125, 0.375, 0, 0,
			0.4, 0.4, 0, 0,
			0, 0, 0, 0}
	})
	nnClose(t, "softmax sinks", got, []float64{0.125, 0.375, 0, 0, 0.4, 0.4, 0, 0, 0, 0, 0, 0}, 1e-7)

	ctx := nnCtx()
	sm := ctx.SoftMax(ctx.NewTensor3D(core.TypeF32, 4, 2, 3))
	if ctx.SoftMaxAddSinks(sm, ctx.NewTensor1D(core.TypeF32, 2)); ctx.Err() == nil {
		t.Fatal("sinks of the wrong length were accepted")
	}
	ctx = nnCtx()
	if ctx.SoftMaxAddSinks(ctx.Silu(ctx.NewTensor1D(core.TypeF32, 2)), ctx.NewTensor1D(core.TypeF32, 1)); ctx.Err() == nil {
		t.Fatal("sinks on a non-SOFT_MAX node were accepted")
	}
}
