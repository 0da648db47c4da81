package cpu_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

func nnRopeDefaults(nDims, mode int) core.RopeParams {
	return core.RopeParams{NDims: nDims, Mode: mode, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
}

func TestNNRopeHand(t *testing.T) {
	// (1, 0) at position 1 with n_dims 2: θ = 1, result (cos 1, sin 1).
	got := nnRun(t, "rope (1,0) pos 1", 1e-12, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor3D(core.TypeF32, 2, 1, 1)
		nnSet(t, a, []float32{1, 0})
		pos := ctx.NewTensor1D(core.TypeI32, 1)
		if err := core.SetInt32s(pos, []int32{1}); err != nil {
			t.Fatal(err)
		}
		return ctx.Rope(a, pos, 2, core.RopeNormal), []float64{math.Cos(1), math.Sin(1)}
	})
	nnClose(t, "rope (1,0) pos 1", got, []float64{0.5403023, 0.84147098}, 1e-7)

	// ne0 = 6, n_dims = 4 at position 2, base 100: θ0 = 2, θ1 = 2·100^(-1/2) = 0.2.
	// NORMAL rotates (x0,x1) by θ0 and (x2,x3) by θ1; NEOX rotates (x0,x2) by θ0 and (x1,x3) by θ1;
	// x4, x5 are copied.
	x := []float32{1, 2, 3, 4, 5, 6}
	rot := func(a, b, th float64) (float64, float64) {
		return a*math.Cos(th) - b*math.Sin(th), a*math.Sin(th) + b*math.Cos(th)
	}
	n0, n1 := rot(1, 2, 2)
	n2, n3 := rot(3, 4, 0.2)
	x0, x2 := rot(1, 3, 2)
	x1, x3 := rot(2, 4, 0.2)
	for _, c := range []struct {
		mode int
		want []float64
	}{{core.RopeNormal, []float64{n0, n1, n2, n3, 5, 6}}, {core.RopeNeox, []float64{x0, x1, x2, x3, 5, 6}}} {
		name := fmt.Sprintf("rope hand mode %d", c.mode)
		got := nnRun(t, name, 1e-13, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
			a := ctx.NewTensor3D(core.TypeF32, 6, 1, 1)
			nnSet(t, a, x)
			pos := ctx.NewTensor1D(core.TypeI32, 1)
			if err := core.SetInt32s(pos, []int32{2}); err != nil {
				t.Fatal(err)
			}
			rp := nnRopeDefaults(4, c.mode)
			rp.FreqBase = 100
			return ctx.RopeExt(a, pos, nil, rp), c.want
		})
		nnClose(t, name, got, c.want, 1e-6)
		if got[4] != 5 || got[5] != 6 {
			t.Fatalf("%s: pass-through dims changed: %v", name, got)
		}
	}
}

// nnRopeRef rotates x (shape ne) as ROPE does, in float64, straight from the definition.
func nnRopeRef(x []float64, ne [4]int64, pos []int32, ff []float64, rp core.RopeParams) []float64 {
	out := append([]float64(nil), x...)
	nd := int64(rp.NDims)
	base, fs, ext := float64(rp.FreqBase), float64(rp.FreqScale), float64(rp.ExtFactor)
	corr := func(beta float64) float64 {
		return float64(nd) * math.Log(float64(rp.NCtxOrig)/(beta*2*math.Pi)) / (2 * math.Log(base))
	}
	lo := math.Max(0, math.Floor(corr(float64(rp.BetaFast))))
	hi := math.Min(float64(nd-1), math.Ceil(corr(float64(rp.BetaSlow))))
	mscale := float64(rp.AttnFactor)
	if ext != 0 {
		mscale *= 1 + 0.1*math.Log(1/fs)
	}
	for i3 := int64(0); i3 < ne[3]; i3++ {
		for i2 := int64(0); i2 < ne[2]; i2++ {
			p := float64(pos[i2])
			for i1 := int64(0); i1 < ne[1]; i1++ {
				for k := int64(0); k < nd/2; k++ {
					extrap := p * math.Pow(base, -2*float64(k)/float64(nd))
					if ff != nil {
						extrap /= ff[k]
					}
					th := fs * extrap
					if ext != 0 {
						y := (float64(k) - lo) / math.Max(0.001, hi-lo)
						mix := (1 - math.Min(1, math.Max(0, y))) * ext
						th = th*(1-mix) + extrap*mix
					}
					j0, j1 := 2*k, 2*k+1
					if rp.Mode == core.RopeNeox {
						j0, j1 = k, k+nd/2
					}
					a, b := x[nnIdx(ne, j0, i1, i2, i3)], x[nnIdx(ne, j1, i1, i2, i3)]
					out[nnIdx(ne, j0, i1, i2, i3)] = (a*math.Cos(th) - b*math.Sin(th)) * mscale
					out[nnIdx(ne, j1, i1, i2, i3)] = (a*math.Sin(th) + b*math.Cos(th)) * mscale
				}
			}
		}
	}
	return out
}

func TestNNRopeRandom(t *testing.T) {
	type tc struct {
		ne    [4]int64
		rp    core.RopeParams
		ff    bool
		label string
	}
	yarn := func(nDims, mode int) core.RopeParams {
		rp := nnRopeDefaults(nDims, mode)
		rp.FreqBase, rp.FreqScale, rp.ExtFactor, rp.AttnFactor, rp.NCtxOrig = 500, 0.25, 1, 1.3, 4096
		return rp
	}
	var cases []tc
	for _, mode := range []int{core.RopeNormal, core.RopeNeox} {
		scaled := nnRopeDefaults(6, mode)
		scaled.FreqScale, scaled.AttnFactor = 0.5, 0.8
		halfExt := yarn(16, mode)
		halfExt.ExtFactor, halfExt.BetaFast, halfExt.BetaSlow = 0.5, 16, 2
		cases = append(cases,
			tc{ne: [4]int64{10, 3, 5, 2}, rp: nnRopeDefaults(10, mode), label: "full"},
			tc{ne: [4]int64{10, 3, 5, 2}, rp: nnRopeDefaults(6, mode), label: "n_dims<ne0"},
			tc{ne: [4]int64{9, 2, 5, 1}, rp: nnRopeDefaults(4, mode), label: "odd ne0"},
			tc{ne: [4]int64{10, 3, 5, 1}, rp: scaled, label: "freq_scale"},
			tc{ne: [4]int64{20, 3, 5, 2}, rp: yarn(16, mode), label: "yarn"},
			tc{ne: [4]int64{20, 2, 5, 1}, rp: halfExt, label: "yarn ext 0.5"},
			tc{ne: [4]int64{16, 3, 5, 1}, rp: yarn(16, mode), ff: true, label: "yarn+freq factors"},
			tc{ne: [4]int64{12, 3, 5, 1}, rp: nnRopeDefaults(8, mode), ff: true, label: "freq factors"},
		)
	}
	positions := []int32{7, 0, 3, 123, 3} // out of order, repeated, one large
	for ci, c := range cases {
		for _, typ := range []core.Type{core.TypeF32, core.TypeF16} {
			for _, layout := range nnLayouts {
				for _, inplace := range []bool{false, true} {
					name := fmt.Sprintf("rope %s %v mode %d n_dims %d %v %s inplace=%v", c.label, c.ne, c.rp.Mode,
						c.rp.NDims, typ, layout, inplace)
					nnRun(t, name, 1e-7, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
						rng := rand.New(rand.NewSource(int64(200 + ci)))
						a := nnSource(ctx, typ, c.ne, layout)
						x := nnFill(t, a, rng, -2, 2)
						pos := ctx.NewTensor1D(core.TypeI32, c.ne[2])
						if err := core.SetInt32s(pos, positions[:c.ne[2]]); err != nil {
							t.Fatal(err)
						}
						var fft *core.Tensor
						var ffv []float64
						if c.ff {
							fft = ctx.NewTensor1D(core.TypeF32, int64(c.rp.NDims/2))
							ffv = nnFill(t, fft, rng, 0.5, 4)
						}
						r := ctx.RopeExt(a, pos, fft, c.rp)
						if inplace {
							nnInPlace(r, a)
						}
						want := nnRopeRef(x, c.ne, positions, ffv, c.rp)
						if typ == core.TypeF16 {
							want = nnRoundF16(want)
						}
						return r, want
					})
				}
			}
		}
	}
}

// TestNNRopeYarnRamp pins YaRN's correction range for the "yarn" cases: with n_dims 16, base 500,
// n_ctx_orig 4096, beta 32/1 the range is [3, 9], so pairs 0..3 extrapolate, 9.. interpolate, and
// the ones between mix; a kernel that ignored ext_factor would differ from the reference.
func TestNNRopeYarnRamp(t *testing.T) {
	rp := nnRopeDefaults(16, core.RopeNormal)
	rp.FreqBase, rp.FreqScale, rp.ExtFactor, rp.NCtxOrig = 500, 0.25, 1, 4096
	d := func(beta float64) float64 { return 16 * math.Log(4096/(beta*2*math.Pi)) / (2 * math.Log(500)) }
	if lo, hi := math.Floor(d(32)), math.Ceil(d(1)); lo != 3 || hi != 9 {
		t.Fatalf("corr dims = [%v, %v], want [3, 9]", lo, hi)
	}
	x := []float64{1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0}
	withYarn := nnRopeRef(x, [4]int64{16, 1, 1, 1}, []int32{100}, nil, rp)
	rp.ExtFactor = 0
	without := nnRopeRef(x, [4]int64{16, 1, 1, 1}, []int32{100}, nil, rp)
	if nnNMSE(nnToF32s(withYarn), without) < 1e-3 {
		t.Fatal("YaRN reference does not differ from plain scaling")
	}
}

func nnToF32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, f := range v {
		out[i] = float32(f)
	}
	return out
}
