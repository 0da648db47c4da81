package cpu_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
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

// TestNNRopeMultiHand checks ggml_rope_multi's modes, the offset and in-place rope on a strided view
// by hand. rot(a, b, θ) is the rotation of the pair (a, b) by θ.
func TestNNRopeMultiHand(t *testing.T) {
	rot := func(a, b, th float64) (float64, float64) {
		return a*math.Cos(th) - b*math.Sin(th), a*math.Sin(th) + b*math.Cos(th)
	}
	setPos := func(t *testing.T, ctx *core.Context, v ...int32) *core.Tensor {
		pos := ctx.NewTensor1D(core.TypeI32, int64(len(v)))
		if err := core.SetInt32s(pos, v); err != nil {
			t.Fatal(err)
		}
		return pos
	}
	x := []float32{1, 2, 3, 4, 5, 6, 7, 8}

	// One token with positions t = 1, h = 2, w = 3, e = 4; ne0 = 6, n_dims = 6, sections [2, 1, 0, 0],
	// base 10000: θ scale s = 10000^(-1/3). MROPE: pairs 0, 1 in t's section, pair 2 in h's, θ index k
	// kept: θ = 1, s, 2s². IMROPE: sector 0 → t, 1 → h (1 < 3·1), 2 → e (2 ≥ 3·0): θ = 1, 2s, 4s².
	// Both pair NEOX-style: (x0, x3), (x1, x4), (x2, x5).
	s := math.Pow(10000, -1.0/3)
	for _, c := range []struct {
		mode int
		th   [3]float64
	}{{core.RopeMrope, [3]float64{1, s, 2 * s * s}}, {core.RopeImrope, [3]float64{1, 2 * s, 4 * s * s}}} {
		want := make([]float64, 6)
		for k := 0; k < 3; k++ {
			want[k], want[k+3] = rot(float64(x[k]), float64(x[k+3]), c.th[k])
		}
		name := fmt.Sprintf("rope multi mode %d", c.mode)
		got := nnRun(t, name, 1e-12, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
			a := ctx.NewTensor3D(core.TypeF32, 6, 1, 1)
			nnSet(t, a, x[:6])
			p := nnRopeDefaults(6, c.mode)
			p.Sections = [4]int{2, 1, 0, 0}
			return ctx.RopeMulti(a, setPos(t, ctx, 1, 2, 3, 4), nil, p), want
		})
		nnClose(t, name, got, want, 1e-6)

		// ROPE_BACK undoes the rotation (attn_factor 1): back(rope(x)) = x.
		name += " back"
		got = nnRun(t, name, 1e-12, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
			a := ctx.NewTensor3D(core.TypeF32, 6, 1, 1)
			nnSet(t, a, x[:6])
			p := nnRopeDefaults(6, c.mode)
			p.Sections = [4]int{2, 1, 0, 0}
			pos := setPos(t, ctx, 1, 2, 3, 4)
			return ctx.RopeExtBack(ctx.RopeMulti(a, pos, nil, p), pos, nil, p), []float64{1, 2, 3, 4, 5, 6}
		})
		nnClose(t, name, got, []float64{1, 2, 3, 4, 5, 6}, 1e-6)
	}

	// VISION: ne0 = 8, n_dims = 4, sections [2, 2, 0, 0], positions t = 3, h = 5: s = 10000^(-1/2) =
	// 0.01; pairs (x_k, x_{k+4}), k < 4; pairs 0, 1 in t's section (θ = 3, 0.03), pairs 2, 3 in h's
	// with its index restarted (θ = 5, 0.05).
	th := []float64{3, 0.03, 5, 0.05}
	want := make([]float64, 8)
	for k := 0; k < 4; k++ {
		want[k], want[k+4] = rot(float64(x[k]), float64(x[k+4]), th[k])
	}
	got := nnRun(t, "rope vision", 1e-12, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor3D(core.TypeF32, 8, 1, 1)
		nnSet(t, a, x)
		p := nnRopeDefaults(4, core.RopeVision)
		p.Sections = [4]int{2, 2, 0, 0}
		return ctx.RopeMulti(a, setPos(t, ctx, 3, 5, 0, 0), nil, p), want
	})
	nnClose(t, "rope vision", got, want, 1e-6)

	// Offset 2 (ggml_rope_set_offset), NEOX, ne0 = 8, n_dims = 4, position 2: (x2, x4) by θ = 2,
	// (x3, x5) by 0.02; x0, x1, x6, x7 copied.
	want = []float64{1, 2, 0, 0, 0, 0, 7, 8}
	want[2], want[4] = rot(3, 5, 2)
	want[3], want[5] = rot(4, 6, 0.02)
	got = nnRun(t, "rope offset", 1e-12, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor3D(core.TypeF32, 8, 1, 1)
		nnSet(t, a, x)
		return ctx.RopeSetOffset(ctx.Rope(a, setPos(t, ctx, 2), 4, core.RopeNeox), 2), want
	})
	nnClose(t, "rope offset", got, want, 1e-6)

	// In place on a strided view: rows of 2 elements taken from every other 4-element row of a
	// [4, 4, 1] tensor at column 1 (NORMAL, position 1 for the single token): viewed pairs
	// (a[1], a[2]) of rows 0 and 2 rotate by θ = 1; every other element keeps its value.
	ctx := nnCtx()
	a := ctx.NewTensor3D(core.TypeF32, 4, 4, 1)
	vals := make([]float32, 16)
	for i := range vals {
		vals[i] = float32(i + 1)
	}
	nnSet(t, a, vals)
	v := ctx.View3D(a, 2, 2, 1, 2*a.Nb[1], 4*a.Nb[1], a.Nb[0])
	r := ctx.RopeExtInplace(v, setPos(t, ctx, 1), nil, nnRopeDefaults(2, core.RopeNormal))
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(r)
	if err := cpu.Compute(g, 2); err != nil {
		t.Fatal(err)
	}
	wantA := make([]float64, 16)
	for i := range wantA {
		wantA[i] = float64(i + 1)
	}
	wantA[1], wantA[2] = rot(2, 3, 1)
	wantA[9], wantA[10] = rot(10, 11, 1)
	nnClose(t, "rope in place strided", a.Float32s(), wantA, 1e-5)
}

// TestRopeSharedTables: the ROPE nodes of a generated token share the rotation table a worker
// computed for the first of them (ropeMemo); a node with other parameters or positions, and the
// next run with new positions, must get their own.
func TestRopeSharedTables(t *testing.T) {
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	rng := rand.New(rand.NewSource(5))
	base := nnRopeDefaults(64, core.RopeNeox)
	other := base
	other.FreqBase = 500
	yarn := base
	yarn.ExtFactor, yarn.NCtxOrig, yarn.FreqScale = 1, 2048, 0.5
	posA := ctx.NewTensor1D(core.TypeI32, 1)
	posB := ctx.NewTensor1D(core.TypeI32, 1)
	posC := ctx.NewTensor1D(core.TypeI32, 3)
	type node struct {
		ne  [4]int64
		pos *core.Tensor
		rp  core.RopeParams
	}
	nodes := []node{
		{[4]int64{64, 4, 1, 1}, posA, base},  // Q
		{[4]int64{64, 2, 1, 1}, posA, base},  // K: the same table
		{[4]int64{64, 2, 1, 1}, posA, other}, // another base
		{[4]int64{64, 2, 1, 1}, posA, yarn},  // YaRN
		{[4]int64{64, 2, 1, 1}, posB, base},  // another position
		{[4]int64{64, 2, 3, 1}, posC, base},  // three positions, the first posA's
		{[4]int64{64, 4, 1, 1}, posA, base},  // back to the first table
	}
	xs := make([][]float64, len(nodes))
	outs := make([]*core.Tensor, len(nodes))
	g := core.NewGraph(64)
	for i, n := range nodes {
		a := ctx.NewTensor4D(core.TypeF32, n.ne[0], n.ne[1], n.ne[2], n.ne[3])
		xs[i] = nnFill(t, a, rng, -2, 2)
		outs[i] = ctx.RopeExt(a, n.pos, nil, n.rp)
		g.BuildForwardExpand(outs[i])
	}
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	for run, ps := range [][3][]int32{{{5}, {6}, {5, 17, 0}}, {{9}, {6}, {9, 2, 40}}, {{9}, {9}, {9, 9, 9}}} {
		for i, p := range []*core.Tensor{posA, posB, posC} {
			if err := core.SetInt32s(p, ps[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		for i, n := range nodes {
			pos := map[*core.Tensor][]int32{posA: ps[0], posB: ps[1], posC: ps[2]}[n.pos]
			want := nnRopeRef(xs[i], n.ne, pos, nil, n.rp)
			got := outs[i].Float32s()
			for j := range want {
				if d := math.Abs(float64(got[j]) - want[j]); d > 1e-5*math.Max(1, math.Abs(want[j])) {
					t.Fatalf("run %d node %d (%v, positions %v): element %d = %v, want %v", run, i, n.rp, pos, j, got[j], want[j])
				}
			}
		}
	}
}
