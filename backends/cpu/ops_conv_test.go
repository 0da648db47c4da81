package cpu_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

func TestNNIm2ColHand(t *testing.T) {
	// 1-D: input (1, 2, 3), kernel of 2, stride 1: patches (1, 2), (2, 3).
	got := nnRun(t, "im2col 1d hand", 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		k := ctx.NewTensor3D(core.TypeF32, 2, 1, 1)
		nnSet(t, k, []float32{0, 0})
		b := ctx.NewTensor3D(core.TypeF32, 3, 1, 1)
		nnSet(t, b, []float32{1, 2, 3})
		return ctx.Im2Col(k, b, core.Im2ColParams{S0: 1, D0: 1}, core.TypeF32), []float64{1, 2, 2, 3}
	})
	nnClose(t, "im2col 1d hand", got, []float64{1, 2, 2, 3}, 0)

	// 2-D: 2x2 input (1 2 / 3 4), 2x2 kernel, padding 1, stride 2: OW = OH = 2; the four patches
	// each hold one input element (at the far corner of the window).
	got = nnRun(t, "im2col 2d hand", 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		k := ctx.NewTensor4D(core.TypeF32, 2, 2, 1, 1)
		nnSet(t, k, make([]float32, 4))
		b := ctx.NewTensor4D(core.TypeF32, 2, 2, 1, 1)
		nnSet(t, b, []float32{1, 2, 3, 4})
		p := core.Im2ColParams{S0: 2, S1: 2, P0: 1, P1: 1, D0: 1, D1: 1, Is2D: true}
		return ctx.Im2Col(k, b, p, core.TypeF32), []float64{0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0, 0, 0}
	})
	nnClose(t, "im2col 2d hand", got, []float64{0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0, 0, 0}, 0)
}

// nnIm2ColRef unfolds b as IM2COL does. 2-D: kernel [KW, KH, IC, ·], b [IW, IH, IC, N]; 1-D: kernel
// [K, IC, ·], b [L, IC, N].
func nnIm2ColRef(b []float64, bne, kne [4]int64, p core.Im2ColParams) ([]float64, [4]int64) {
	kw, kh, ic, n, iw, ih := kne[0], int64(1), bne[1], bne[2], bne[0], int64(1)
	if p.Is2D {
		kh, ic, n, ih = kne[1], bne[2], bne[3], bne[1]
	}
	ow := core.ConvOutputSize(iw, kw, int64(p.S0), int64(p.P0), int64(p.D0))
	oh := int64(1)
	if p.Is2D {
		oh = core.ConvOutputSize(ih, kh, int64(p.S1), int64(p.P1), int64(p.D1))
	}
	var out []float64
	for in := int64(0); in < n; in++ {
		for y := int64(0); y < oh; y++ {
			for x := int64(0); x < ow; x++ {
				for c := int64(0); c < ic; c++ {
					for ky := int64(0); ky < kh; ky++ {
						for kx := int64(0); kx < kw; kx++ {
							sx := x*int64(p.S0) + kx*int64(p.D0) - int64(p.P0)
							sy := y*int64(p.S1) + ky*int64(p.D1) - int64(p.P1)
							v := 0.0
							if sx >= 0 && sx < iw && sy >= 0 && sy < ih {
								if p.Is2D {
									v = b[nnIdx(bne, sx, sy, c, in)]
								} else {
									v = b[nnIdx(bne, sx, c, in, 0)]
								}
							}
							out = append(out, v)
						}
					}
				}
			}
		}
	}
	if p.Is2D {
		return out, [4]int64{ic * kh * kw, ow, oh, n}
	}
	return out, [4]int64{ic * kw, ow, n, 1}
}

func TestNNIm2ColRandom(t *testing.T) {
	type tc struct {
		kne, bne [4]int64
		p        core.Im2ColParams
		layout   string
	}
	cases := []tc{
		{kne: [4]int64{3, 4, 5, 1}, bne: [4]int64{17, 4, 2, 1}, p: core.Im2ColParams{S0: 1, D0: 1}},
		{kne: [4]int64{3, 4, 5, 1}, bne: [4]int64{17, 4, 2, 1}, p: core.Im2ColParams{S0: 2, P0: 1, D0: 2}},
		{kne: [4]int64{4, 3, 2, 1}, bne: [4]int64{13, 3, 3, 1}, p: core.Im2ColParams{S0: 3, P0: 2, D0: 1}, layout: "row-gaps"},
		{kne: [4]int64{3, 3, 2, 4}, bne: [4]int64{9, 7, 2, 2}, p: core.Im2ColParams{S0: 1, S1: 1, D0: 1, D1: 1, Is2D: true}},
		{kne: [4]int64{3, 2, 3, 2}, bne: [4]int64{11, 8, 3, 2}, p: core.Im2ColParams{S0: 2, S1: 1, P0: 1, P1: 2, D0: 1, D1: 2, Is2D: true}},
		{kne: [4]int64{2, 3, 2, 1}, bne: [4]int64{7, 9, 2, 1}, p: core.Im2ColParams{S0: 1, S1: 3, P0: 1, P1: 1, D0: 3, D1: 1, Is2D: true}, layout: "permuted"},
	}
	for ci, c := range cases {
		for _, dt := range []core.Type{core.TypeF32, core.TypeF16} {
			name := fmt.Sprintf("im2col %v × %v %+v %s → %v", c.kne, c.bne, c.p, c.layout, dt)
			nnRun(t, name, 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
				rng := rand.New(rand.NewSource(int64(400 + ci)))
				k := ctx.NewTensor4D(core.TypeF32, c.kne[0], c.kne[1], c.kne[2], c.kne[3])
				nnFill(t, k, rng, -1, 1)
				b := nnSource(ctx, core.TypeF32, c.bne, c.layout)
				bv := nnFill(t, b, rng, -1, 1)
				r := ctx.Im2Col(k, b, c.p, dt)
				want, ne := nnIm2ColRef(bv, c.bne, c.kne, c.p)
				if r.Ne != ne {
					t.Fatalf("%s: result shape %v, want %v", name, r.Ne, ne)
				}
				if dt == core.TypeF16 {
					want = nnRoundF16(want)
				}
				return r, want
			})
		}
	}
}

func TestNNPoolHand(t *testing.T) {
	in := []float32{1, 3, 2, 5}
	for _, c := range []struct {
		op   core.PoolOp
		want []float64
	}{{core.PoolMax, []float64{3, 5}}, {core.PoolAvg, []float64{2, 3.5}}} {
		name := fmt.Sprintf("pool_1d hand op %d", c.op)
		got := nnRun(t, name, 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
			a := ctx.NewTensor1D(core.TypeF32, 4)
			nnSet(t, a, in)
			return ctx.Pool1D(a, c.op, 2, 2, 0), c.want
		})
		nnClose(t, name, got, c.want, 0)
	}
	// avg over a 2x2 plane of ones, kernel 2, stride 1, padding 1: padding counts as zero and the
	// divisor is always 4, so corners give 1/4, edges 1/2, the centre 1. Max skips the padding: all 1.
	got := nnRun(t, "pool_2d avg hand", 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor2D(core.TypeF32, 2, 2)
		nnSet(t, a, []float32{1, 1, 1, 1})
		return ctx.Pool2D(a, core.PoolAvg, 2, 2, 1, 1, 1, 1), []float64{0.25, 0.5, 0.25, 0.5, 1, 0.5, 0.25, 0.5, 0.25}
	})
	nnClose(t, "pool_2d avg hand", got, []float64{0.25, 0.5, 0.25, 0.5, 1, 0.5, 0.25, 0.5, 0.25}, 0)
	// POOL_1D avg divides by the in-bounds positions (ggml_compute_forward_pool_1d_ksp): kernel 3,
	// stride 2, padding 1 over [1 3 2 5] gives (1+3)/2, (3+2+5)/3.
	got = nnRun(t, "pool_1d avg padded hand", 1e-12, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor1D(core.TypeF32, 4)
		nnSet(t, a, in)
		return ctx.Pool1D(a, core.PoolAvg, 3, 2, 1), []float64{2, 10.0 / 3}
	})
	nnClose(t, "pool_1d avg padded hand", got, []float64{2, 10.0 / 3}, 1e-7)
	got = nnRun(t, "pool_2d max hand", 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor2D(core.TypeF32, 2, 2)
		nnSet(t, a, []float32{-1, -2, -3, -4})
		return ctx.Pool2D(a, core.PoolMax, 2, 2, 1, 1, 1, 1), []float64{-1, -1, -2, -1, -1, -2, -3, -3, -4}
	})
	nnClose(t, "pool_2d max hand", got, []float64{-1, -1, -2, -1, -1, -2, -3, -3, -4}, 0)

	// Padding at and past the kernel (ggml allows it). POOL_1D kernel 2, stride 1, padding 3 over
	// [1 3 2 5]: output size (4 + 6 - 2)/1 + 1 = 9 windows starting at -3 … 5; windows [-3,-2],
	// [-2,-1], [4,5], [5,6] are wholly padding: avg 0 (ggml's count 0), max -FLT_MAX; [-1,0] and
	// [3,4] hold one value each; avg divides by the in-bounds count.
	lo := -float64(math.MaxFloat32)
	for _, c := range []struct {
		op   core.PoolOp
		want []float64
	}{
		{core.PoolMax, []float64{lo, lo, 1, 3, 3, 5, 5, lo, lo}},
		{core.PoolAvg, []float64{0, 0, 1, 2, 2.5, 3.5, 5, 0, 0}},
	} {
		name := fmt.Sprintf("pool_1d p>=k hand op %d", c.op)
		got := nnRun(t, name, 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
			a := ctx.NewTensor1D(core.TypeF32, 4)
			nnSet(t, a, in)
			return ctx.Pool1D(a, c.op, 2, 1, 3), c.want
		})
		nnClose(t, name, got, c.want, 0)
	}
	// POOL_2D kernel 1x1, stride 2x2, padding 1x1 over the 2x2 plane [1 2; 3 4]: output 2x2 with
	// windows at (-1,-1), (1,-1), (-1,1), (1,1): only (1,1) = 4 is inside. avg divides by k0·k1 = 1.
	for _, c := range []struct {
		op   core.PoolOp
		want []float64
	}{{core.PoolMax, []float64{lo, lo, lo, 4}}, {core.PoolAvg, []float64{0, 0, 0, 4}}} {
		name := fmt.Sprintf("pool_2d p>=k hand op %d", c.op)
		got := nnRun(t, name, 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
			a := ctx.NewTensor2D(core.TypeF32, 2, 2)
			nnSet(t, a, []float32{1, 2, 3, 4})
			return ctx.Pool2D(a, c.op, 1, 1, 2, 2, 1, 1), c.want
		})
		nnClose(t, name, got, c.want, 0)
	}
	// POOL_2D avg kernel 2x2, stride 1, padding 2x2 over [1 2; 3 4]: 5x5 outputs, the divisor is
	// always 4; window (ox, oy) covers columns ox-2, ox-1 and rows oy-2, oy-1. Its centre (2, 2)
	// sums all four: 10/4.
	got = nnRun(t, "pool_2d avg p=k hand", 1e-12, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor2D(core.TypeF32, 2, 2)
		nnSet(t, a, []float32{1, 2, 3, 4})
		return ctx.Pool2D(a, core.PoolAvg, 2, 2, 1, 1, 2, 2), []float64{
			0, 0, 0, 0, 0,
			0, 0.25, 0.75, 0.5, 0,
			0, 1, 2.5, 1.5, 0,
			0, 0.75, 1.75, 1, 0,
			0, 0, 0, 0, 0}
	})
	nnClose(t, "pool_2d avg p=k hand", got, []float64{0, 0, 0, 0, 0, 0, 0.25, 0.75, 0.5, 0, 0, 1, 2.5, 1.5, 0,
		0, 0.75, 1.75, 1, 0, 0, 0, 0, 0, 0}, 1e-7)
}

// nnPoolRef pools the [W, H] planes of x (shape ne); 1-D pools rows (k1 = s1 = 1, p1 = 0, H = 1).
func nnPoolRef(xs []float64, ne [4]int64, op core.PoolOp, k0, k1, s0, s1, p0, p1 int64, is2D bool) []float64 {
	var out []float64
	planes, w, h := ne[1]*ne[2]*ne[3], ne[0], int64(1)
	if is2D {
		planes, h = ne[2]*ne[3], ne[1]
	}
	ow, oh := core.PoolOutputSize(w, k0, s0, p0), int64(1)
	if is2D {
		oh = core.PoolOutputSize(h, k1, s1, p1)
	}
	for pl := int64(0); pl < planes; pl++ {
		for y := int64(0); y < oh; y++ {
			for x := int64(0); x < ow; x++ {
				mx, sum, count := -float64(math.MaxFloat32), 0.0, 0
				for ky := int64(0); ky < k1; ky++ {
					for kx := int64(0); kx < k0; kx++ {
						sx, sy := x*s0-p0+kx, y*s1-p1+ky
						if sx < 0 || sx >= w || sy < 0 || sy >= h {
							continue
						}
						v := xs[pl*w*h+sy*w+sx]
						sum += v
						count++
						mx = math.Max(mx, v)
					}
				}
				switch {
				case op == core.PoolAvg && is2D:
					out = append(out, sum/float64(k0*k1)) // ggml's POOL_2D: padding counts
				case op == core.PoolAvg && count == 0:
					out = append(out, 0) // a window wholly in the padding
				case op == core.PoolAvg:
					out = append(out, sum/float64(count)) // ggml's POOL_1D: in-bounds only
				default:
					out = append(out, mx)
				}
			}
		}
	}
	return out
}

func TestNNPoolRandom(t *testing.T) {
	type tc struct {
		ne                     [4]int64
		k0, k1, s0, s1, p0, p1 int
		is2D                   bool
	}
	cases := []tc{
		{ne: [4]int64{13, 5, 3, 2}, k0: 3, s0: 3},
		{ne: [4]int64{13, 5, 3, 2}, k0: 4, s0: 2, p0: 2},
		{ne: [4]int64{8, 3, 1, 1}, k0: 1, s0: 1},
		{ne: [4]int64{13, 9, 3, 2}, k0: 2, k1: 2, s0: 2, s1: 2, is2D: true},
		{ne: [4]int64{13, 9, 3, 2}, k0: 3, k1: 2, s0: 2, s1: 1, p0: 1, p1: 1, is2D: true},
		{ne: [4]int64{7, 11, 2, 1}, k0: 5, k1: 3, s0: 1, s1: 3, p0: 2, p1: 0, is2D: true},
		{ne: [4]int64{9, 3, 2, 1}, k0: 2, s0: 3, p0: 4},                                  // p0 > k0
		{ne: [4]int64{6, 7, 2, 1}, k0: 2, k1: 3, s0: 1, s1: 2, p0: 2, p1: 5, is2D: true}, // p ≥ k
	}
	for ci, c := range cases {
		for _, op := range []core.PoolOp{core.PoolMax, core.PoolAvg} {
			for _, typ := range []core.Type{core.TypeF32, core.TypeF16} {
				for _, layout := range nnLayouts {
					name := fmt.Sprintf("pool %+v op %d %v %s", c, op, typ, layout)
					nnRun(t, name, 1e-12, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
						rng := rand.New(rand.NewSource(int64(500 + ci)))
						a := nnSource(ctx, typ, c.ne, layout)
						x := nnFill(t, a, rng, -3, 1) // mostly negative: max must not start from 0
						k1, s1, p1 := int64(1), int64(1), int64(0)
						var r *core.Tensor
						if c.is2D {
							k1, s1, p1 = int64(c.k1), int64(c.s1), int64(c.p1)
							r = ctx.Pool2D(a, op, c.k0, c.k1, c.s0, c.s1, c.p0, c.p1)
						} else {
							r = ctx.Pool1D(a, op, c.k0, c.s0, c.p0)
						}
						return r, nnPoolRef(x, c.ne, op, int64(c.k0), k1, int64(c.s0), s1, int64(c.p0), p1, c.is2D)
					})
				}
			}
		}
	}
}

// nnConvRef is a direct convolution. 2-D: kernel [KW, KH, IC, OC], input [W, H, IC, N] → [OW, OH, OC, N].
// 1-D: kernel [K, IC, OC], input [L, IC, N] → [OL, OC, N].
func nnConvRef(k []float64, kne [4]int64, b []float64, bne [4]int64, p core.Im2ColParams) []float64 {
	kw, kh, ic, oc := kne[0], int64(1), kne[1], kne[2]
	w, h, n := bne[0], int64(1), bne[2]
	if p.Is2D {
		kh, ic, oc, h, n = kne[1], kne[2], kne[3], bne[1], bne[3]
	}
	ow, oh := core.ConvOutputSize(w, kw, int64(p.S0), int64(p.P0), int64(p.D0)), int64(1)
	if p.Is2D {
		oh = core.ConvOutputSize(h, kh, int64(p.S1), int64(p.P1), int64(p.D1))
	}
	var out []float64
	for in := int64(0); in < n; in++ {
		for o := int64(0); o < oc; o++ {
			for y := int64(0); y < oh; y++ {
				for x := int64(0); x < ow; x++ {
					var s float64
					for c := int64(0); c < ic; c++ {
						for ky := int64(0); ky < kh; ky++ {
							for kx := int64(0); kx < kw; kx++ {
								sx := x*int64(p.S0) + kx*int64(p.D0) - int64(p.P0)
								sy := y*int64(p.S1) + ky*int64(p.D1) - int64(p.P1)
								if sx < 0 || sx >= w || sy < 0 || sy >= h {
									continue
								}
								if p.Is2D {
									s += k[nnIdx(kne, kx, ky, c, o)] * b[nnIdx(bne, sx, sy, c, in)]
								} else {
									s += k[nnIdx(kne, kx, c, o, 0)] * b[nnIdx(bne, sx, c, in, 0)]
								}
							}
						}
					}
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// TestNNConv checks CONV_1D / CONV_2D (IM2COL + MUL_MAT (+ PERMUTE + CONT)) against a direct
// convolution. It skips a case whose nodes the CPU backend does not support yet.
func TestNNConv(t *testing.T) {
	type tc struct {
		kt       core.Type
		kne, bne [4]int64
		p        core.Im2ColParams
	}
	cases := []tc{
		// 1-D with one batch element (see TestNNConv1DBatch for N > 1)
		{kt: core.TypeF32, kne: [4]int64{3, 4, 5, 1}, bne: [4]int64{17, 4, 1, 1}, p: core.Im2ColParams{S0: 2, P0: 1, D0: 2}},
		{kt: core.TypeF16, kne: [4]int64{3, 4, 5, 1}, bne: [4]int64{17, 4, 1, 1}, p: core.Im2ColParams{S0: 1, P0: 1, D0: 1}},
		{kt: core.TypeF32, kne: [4]int64{3, 3, 2, 4}, bne: [4]int64{9, 7, 2, 2}, p: core.Im2ColParams{S0: 1, S1: 2, P0: 1, P1: 1, D0: 1, D1: 1, Is2D: true}},
		{kt: core.TypeF16, kne: [4]int64{2, 3, 3, 2}, bne: [4]int64{8, 9, 3, 1}, p: core.Im2ColParams{S0: 2, S1: 1, P0: 0, P1: 2, D0: 2, D1: 1, Is2D: true}},
	}
	dev := cpu.NewDevice()
	for ci, c := range cases {
		name := fmt.Sprintf("conv %v %v × %v %+v", c.kt, c.kne, c.bne, c.p)
		// probe support with a metadata-only graph
		probe := core.NewContext(core.ContextParams{NoAlloc: true})
		pk := probe.NewTensor4D(c.kt, c.kne[0], c.kne[1], c.kne[2], c.kne[3])
		pb := probe.NewTensor4D(core.TypeF32, c.bne[0], c.bne[1], c.bne[2], c.bne[3])
		var pr *core.Tensor
		if c.p.Is2D {
			pr = probe.Conv2D(pk, pb, c.p.S0, c.p.S1, c.p.P0, c.p.P1, c.p.D0, c.p.D1)
		} else {
			pr = probe.Conv1D(pk, pb, c.p.S0, c.p.P0, c.p.D0)
		}
		if err := probe.Err(); err != nil {
			t.Fatalf("%s: building: %v", name, err)
		}
		pg := core.NewGraph(core.DefaultGraphSize)
		pg.BuildForwardExpand(pr)
		skip := ""
		for _, n := range pg.Nodes() {
			if !dev.SupportsOp(n) {
				skip = n.String()
			}
		}
		if skip != "" {
			t.Fatalf("%s: the CPU backend does not support %s", name, skip)
		}
		nnRun(t, name, 5e-4, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
			rng := rand.New(rand.NewSource(int64(600 + ci)))
			k := ctx.NewTensor4D(c.kt, c.kne[0], c.kne[1], c.kne[2], c.kne[3])
			kv := nnFill(t, k, rng, -1, 1)
			b := ctx.NewTensor4D(core.TypeF32, c.bne[0], c.bne[1], c.bne[2], c.bne[3])
			bv := nnFill(t, b, rng, -1, 1)
			var r *core.Tensor
			if c.p.Is2D {
				r = ctx.Conv2D(k, b, c.p.S0, c.p.S1, c.p.P0, c.p.P1, c.p.D0, c.p.D1)
			} else {
				r = ctx.Conv1D(k, b, c.p.S0, c.p.P0, c.p.D0)
			}
			return r, nnConvRef(kv, c.kne, bv, c.bne, c.p)
		})
	}
}

// TestNNConv1DBatch checks CONV_1D with a batch of 2 against the direct convolution in the
// [OL, OC, N] layout. ggml_conv_1d reshapes the [OL·N, OC] product straight to [OL, OC, N], which
// mislabels memory when N > 1; core.Conv1D must not, and this test fails if it does.
func TestNNConv1DBatch(t *testing.T) {
	kne, bne := [4]int64{3, 4, 5, 1}, [4]int64{17, 4, 2, 1}
	p := core.Im2ColParams{S0: 2, P0: 1, D0: 2}
	ctx := nnCtx()
	rng := rand.New(rand.NewSource(650))
	k := ctx.NewTensor3D(core.TypeF32, kne[0], kne[1], kne[2])
	kv := nnFill(t, k, rng, -1, 1)
	b := ctx.NewTensor3D(core.TypeF32, bne[0], bne[1], bne[2])
	bv := nnFill(t, b, rng, -1, 1)
	r := ctx.Conv1D(k, b, p.S0, p.P0, p.D0)
	if err := ctx.Err(); err != nil {
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
	want := nnConvRef(kv, kne, bv, bne, p) // [OL, OC, N]
	if e := nnNMSE(got, want); e > 5e-4 {
		t.Fatalf("conv_1d batch 2: NMSE %.3g against the direct convolution ([OL, OC, N] layout)", e)
	}
}
