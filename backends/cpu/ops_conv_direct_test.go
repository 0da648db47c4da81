package cpu_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// Hand-computed small cases, then random ones against float64 references written from ggml's
// definitions (ggml/src/ggml-cpu/ops.cpp), over thread counts (nnRun checks they agree bit for
// bit), f32 and f16 kernels and strided inputs.

func TestConvTranspose1DHand(t *testing.T) {
	// Input (1, 2, 3) one channel, kernel (1, 10) one channel, stride 2: outputs at 2l + k:
	// [1, 10, 2, 20, 3, 30].
	want := []float64{1, 10, 2, 20, 3, 30}
	got := nnRun(t, "conv_transpose_1d hand", 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		k := ctx.NewTensor3D(core.TypeF32, 2, 1, 1)
		nnSet(t, k, []float32{1, 10})
		b := ctx.NewTensor2D(core.TypeF32, 3, 1)
		nnSet(t, b, []float32{1, 2, 3})
		return ctx.ConvTranspose1D(k, b, 2, 0, 1), want
	})
	nnClose(t, "conv_transpose_1d hand", got, want, 0)
	// Stride 1 overlaps: (1, 2, 3) by (1, 1) gives (1, 3, 5, 3).
	want = []float64{1, 3, 5, 3}
	got = nnRun(t, "conv_transpose_1d overlap", 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		k := ctx.NewTensor3D(core.TypeF32, 2, 1, 1)
		nnSet(t, k, []float32{1, 1})
		b := ctx.NewTensor2D(core.TypeF32, 3, 1)
		nnSet(t, b, []float32{1, 2, 3})
		return ctx.ConvTranspose1D(k, b, 1, 0, 1), want
	})
	nnClose(t, "conv_transpose_1d overlap", got, want, 0)
}

func TestCol2Im1DHand(t *testing.T) {
	// K = 2, OC = 1, three columns (1, 2), (3, 4), (5, 6), stride 1, no padding:
	// t0 = 1, t1 = 2 + 3, t2 = 4 + 5, t3 = 6. With padding 1: (5, 9).
	for _, tc := range []struct {
		p0   int
		want []float64
	}{{0, []float64{1, 5, 9, 6}}, {1, []float64{5, 9}}} {
		got := nnRun(t, "col2im_1d hand", 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
			a := ctx.NewTensor2D(core.TypeF32, 2, 3)
			nnSet(t, a, []float32{1, 2, 3, 4, 5, 6})
			return ctx.Col2Im1D(a, 1, 1, tc.p0), tc.want
		})
		nnClose(t, "col2im_1d hand", got, tc.want, 0)
	}
}

func TestConv2DDirectHand(t *testing.T) {
	// 3x3 input 1..9, 2x2 kernel of ones, stride 1: window sums 12, 16, 24, 28.
	want := []float64{12, 16, 24, 28}
	for _, f := range []func(ctx *core.Context, k, b *core.Tensor) *core.Tensor{
		func(ctx *core.Context, k, b *core.Tensor) *core.Tensor {
			return ctx.Conv2DDirect(k, b, 1, 1, 0, 0, 1, 1)
		},
		func(ctx *core.Context, k, b *core.Tensor) *core.Tensor {
			return ctx.Conv2DDwDirect(k, b, 1, 1, 0, 0, 1, 1)
		},
		func(ctx *core.Context, k, b *core.Tensor) *core.Tensor {
			return ctx.Conv3DDirect(k, b, core.Conv3DParams{S0: 1, S1: 1, S2: 1, D0: 1, D1: 1, D2: 1}, 1, 1, 1)
		},
	} {
		got := nnRun(t, "conv hand", 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
			k := ctx.NewTensor4D(core.TypeF32, 2, 2, 1, 1)
			nnSet(t, k, []float32{1, 1, 1, 1})
			b := ctx.NewTensor4D(core.TypeF32, 3, 3, 1, 1)
			nnSet(t, b, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9})
			return f(ctx, k, b), want
		})
		nnClose(t, "conv hand", got, want, 0)
	}
}

// refConv3D is the direct convolution: input in[x, y, z, c, n], kernel k[x, y, z, c, o], output
// [OW, OH, OD, OC, N] row-major.
func refConv3D(in func(x, y, z, c, n int64) float64, k func(x, y, z, c, o int64) float64,
	iw, ih, id, ic, n, kw, kh, kd, oc int64, s, p, d [3]int64) ([]float64, [3]int64) {
	ow := core.ConvOutputSize(iw, kw, s[0], p[0], d[0])
	oh := core.ConvOutputSize(ih, kh, s[1], p[1], d[1])
	od := core.ConvOutputSize(id, kd, s[2], p[2], d[2])
	var out []float64
	for b := int64(0); b < n; b++ {
		for o := int64(0); o < oc; o++ {
			for z := int64(0); z < od; z++ {
				for y := int64(0); y < oh; y++ {
					for x := int64(0); x < ow; x++ {
						sum := 0.0
						for c := int64(0); c < ic; c++ {
							for kz := int64(0); kz < kd; kz++ {
								for ky := int64(0); ky < kh; ky++ {
									for kx := int64(0); kx < kw; kx++ {
										sx, sy, sz := x*s[0]+kx*d[0]-p[0], y*s[1]+ky*d[1]-p[1], z*s[2]+kz*d[2]-p[2]
										if sx < 0 || sx >= iw || sy < 0 || sy >= ih || sz < 0 || sz >= id {
											continue
										}
										sum += in(sx, sy, sz, c, b) * k(kx, ky, kz, c, o)
									}
								}
							}
						}
						out = append(out, sum)
					}
				}
			}
		}
	}
	return out, [3]int64{ow, oh, od}
}

func maybeF16(v []float64, f16 bool) []float64 {
	if f16 {
		return nnRoundF16(v)
	}
	return v
}

func TestConv2DDirectRandom(t *testing.T) {
	type tc struct {
		in, k          [4]int64
		s0, s1, p0, p1 int
		d0, d1         int
	}
	cases := []tc{
		{[4]int64{9, 7, 3, 2}, [4]int64{3, 3, 3, 5}, 1, 1, 1, 1, 1, 1},
		{[4]int64{13, 11, 4, 1}, [4]int64{3, 2, 4, 12}, 2, 1, 1, 2, 2, 1},
		{[4]int64{5, 17, 1, 2}, [4]int64{1, 4, 1, 1}, 3, 5, 5, 2, 2, 4},
		{[4]int64{20, 9, 25, 1}, [4]int64{2, 3, 25, 12}, 1, 2, 0, 1, 1, 2}, // K = 150
	}
	for i, c := range cases {
		for _, kt := range []core.Type{core.TypeF32, core.TypeF16} {
			for _, layout := range nnLayouts {
				name := fmt.Sprintf("conv_2d case %d %v %s", i, kt, layout)
				nnRun(t, name, 1e-10, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
					rng := rand.New(rand.NewSource(int64(i)))
					b := nnSource(ctx, core.TypeF32, c.in, layout)
					bv := maybeF16(nnFill(t, b, rng, -1, 1), kt == core.TypeF16)
					k := ctx.NewTensor4D(kt, c.k[0], c.k[1], c.k[2], c.k[3])
					kv := nnFill(t, k, rng, -1, 1)
					want, _ := refConv3D(
						func(x, y, z, ch, n int64) float64 { return bv[nnIdx(c.in, x, y, ch, n)] },
						func(x, y, z, ch, o int64) float64 { return kv[nnIdx(c.k, x, y, ch, o)] },
						c.in[0], c.in[1], 1, c.in[2], c.in[3], c.k[0], c.k[1], 1, c.k[3],
						[3]int64{int64(c.s0), int64(c.s1), 1}, [3]int64{int64(c.p0), int64(c.p1), 0}, [3]int64{int64(c.d0), int64(c.d1), 1})
					return ctx.Conv2DDirect(k, b, c.s0, c.s1, c.p0, c.p1, c.d0, c.d1), want
				})
			}
		}
	}
	// A permuted (CWHN) kernel is packed before the GEMM.
	nnRun(t, "conv_2d permuted kernel", 1e-10, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		rng := rand.New(rand.NewSource(9))
		in, kne := [4]int64{8, 6, 3, 2}, [4]int64{3, 2, 3, 4}
		b := ctx.NewTensor4D(core.TypeF32, in[0], in[1], in[2], in[3])
		bv := nnFill(t, b, rng, -1, 1)
		kbase := ctx.NewTensor4D(core.TypeF32, kne[2], kne[0], kne[1], kne[3]) // [IC, KW, KH, OC]
		k := ctx.Permute(kbase, 2, 0, 1, 3)                                    // viewed [KW, KH, IC, OC]
		kv := nnFill(t, k, rng, -1, 1)
		want, _ := refConv3D(
			func(x, y, z, ch, n int64) float64 { return bv[nnIdx(in, x, y, ch, n)] },
			func(x, y, z, ch, o int64) float64 { return kv[nnIdx(kne, x, y, ch, o)] },
			in[0], in[1], 1, in[2], in[3], kne[0], kne[1], 1, kne[3], [3]int64{1, 1, 1}, [3]int64{1, 0, 0}, [3]int64{1, 1, 1})
		return ctx.Conv2DDirect(k, b, 1, 1, 1, 0, 1, 1), want
	})
}

func TestConv3DDirectRandom(t *testing.T) {
	type tc struct {
		n, ic, id, ih, iw, oc, kd, kh, kw int64
		s, p, d                           [3]int64
	}
	cases := []tc{
		{2, 3, 6, 7, 5, 4, 3, 3, 3, [3]int64{1, 1, 1}, [3]int64{1, 1, 1}, [3]int64{1, 1, 1}},
		{1, 2, 7, 5, 9, 3, 3, 1, 5, [3]int64{2, 1, 1}, [3]int64{2, 0, 1}, [3]int64{1, 1, 2}},
		{1, 4, 4, 4, 4, 8, 1, 1, 1, [3]int64{1, 1, 1}, [3]int64{0, 0, 0}, [3]int64{1, 1, 1}},
	}
	for i, c := range cases {
		for _, kt := range []core.Type{core.TypeF32, core.TypeF16} {
			name := fmt.Sprintf("conv_3d case %d %v", i, kt)
			nnRun(t, name, 1e-10, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
				rng := rand.New(rand.NewSource(int64(i)))
				bne := [4]int64{c.iw, c.ih, c.id, c.ic * c.n}
				kne := [4]int64{c.kw, c.kh, c.kd, c.ic * c.oc}
				b := ctx.NewTensor4D(core.TypeF32, bne[0], bne[1], bne[2], bne[3])
				bv := maybeF16(nnFill(t, b, rng, -1, 1), kt == core.TypeF16)
				k := ctx.NewTensor4D(kt, kne[0], kne[1], kne[2], kne[3])
				kv := nnFill(t, k, rng, -1, 1)
				want, _ := refConv3D(
					func(x, y, z, ch, n int64) float64 { return bv[nnIdx(bne, x, y, z, n*c.ic+ch)] },
					func(x, y, z, ch, o int64) float64 { return kv[nnIdx(kne, x, y, z, o*c.ic+ch)] },
					c.iw, c.ih, c.id, c.ic, c.n, c.kw, c.kh, c.kd, c.oc, c.s, c.p, c.d)
				p := core.Conv3DParams{S0: int(c.s[0]), S1: int(c.s[1]), S2: int(c.s[2]), P0: int(c.p[0]), P1: int(c.p[1]),
					P2: int(c.p[2]), D0: int(c.d[0]), D1: int(c.d[1]), D2: int(c.d[2])}
				return ctx.Conv3DDirect(k, b, p, int(c.ic), int(c.n), int(c.oc)), want
			})
		}
	}
}

func TestConv2DDwRandom(t *testing.T) {
	type tc struct {
		in        [4]int64
		kw, kh    int64
		s, p, d   int
		cwhn      bool
		layoutIdx int
	}
	cases := []tc{
		{[4]int64{17, 34, 9, 1}, 3, 3, 1, 0, 1, false, 0},
		{[4]int64{17, 34, 9, 1}, 3, 3, 1, 0, 1, true, 0},
		{[4]int64{32, 8, 12, 2}, 3, 3, 2, 1, 1, false, 1},
		{[4]int64{32, 8, 12, 2}, 3, 3, 2, 1, 1, true, 0},
		{[4]int64{11, 10, 3, 2}, 2, 4, 1, 3, 2, false, 2},
	}
	for i, c := range cases {
		for _, kt := range []core.Type{core.TypeF32, core.TypeF16} {
			name := fmt.Sprintf("conv_2d_dw case %d %v", i, kt)
			nnRun(t, name, 1e-10, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
				rng := rand.New(rand.NewSource(int64(i)))
				var b *core.Tensor
				if c.cwhn {
					base := ctx.NewTensor4D(core.TypeF32, c.in[2], c.in[0], c.in[1], c.in[3])
					b = ctx.Permute(base, 2, 0, 1, 3)
				} else {
					b = nnSource(ctx, core.TypeF32, c.in, nnLayouts[c.layoutIdx])
				}
				bv := nnFill(t, b, rng, -1, 1)
				kne := [4]int64{c.kw, c.kh, 1, c.in[2]}
				k := ctx.NewTensor4D(kt, kne[0], kne[1], kne[2], kne[3])
				kv := nnFill(t, k, rng, -1, 1)
				var want []float64
				for n := int64(0); n < c.in[3]; n++ {
					for ch := int64(0); ch < c.in[2]; ch++ {
						w, _ := refConv3D(
							func(x, y, _, _, _ int64) float64 { return bv[nnIdx(c.in, x, y, ch, n)] },
							func(x, y, _, _, _ int64) float64 { return kv[nnIdx(kne, x, y, 0, ch)] },
							c.in[0], c.in[1], 1, 1, 1, c.kw, c.kh, 1, 1,
							[3]int64{int64(c.s), int64(c.s), 1}, [3]int64{int64(c.p), int64(c.p), 0}, [3]int64{int64(c.d), int64(c.d), 1})
						want = append(want, w...)
					}
				}
				r := ctx.Conv2DDwDirect(k, b, c.s, c.s, c.p, c.p, c.d, c.d)
				if c.cwhn && r.Nb[2] != 4 {
					t.Fatalf("CWHN input gave result strides %v", r.Nb)
				}
				return r, want
			})
		}
	}
}

// refConvTranspose2D: in[x, y, ci, n], k[kx, ky, co, ci], out [(W-1)s+KW, (H-1)s+KH, Cout, N].
func refConvTranspose2D(in func(x, y, c, n int64) float64, k func(x, y, co, ci int64) float64,
	w, h, cin, n, kw, kh, cout, s int64) []float64 {
	ow, oh := (w-1)*s+kw, (h-1)*s+kh
	out := make([]float64, ow*oh*cout*n)
	for b := int64(0); b < n; b++ {
		for co := int64(0); co < cout; co++ {
			for y := int64(0); y < h; y++ {
				for x := int64(0); x < w; x++ {
					for ky := int64(0); ky < kh; ky++ {
						for kx := int64(0); kx < kw; kx++ {
							sum := 0.0
							for ci := int64(0); ci < cin; ci++ {
								sum += in(x, y, ci, b) * k(kx, ky, co, ci)
							}
							out[((b*cout+co)*oh+y*s+ky)*ow+x*s+kx] += sum
						}
					}
				}
			}
		}
	}
	return out
}

func TestConvTransposeRandom(t *testing.T) {
	// 1-D: input [L, Cin], kernel [K, Cout, Cin].
	for i, c := range []struct{ l, cin, k, cout, s int64 }{
		{13, 7, 3, 9, 2}, {2, 1, 3, 1, 1}, {3, 2, 2, 3, 3}, {1, 7, 40, 9, 2}, {13, 1, 1, 9, 3},
	} {
		for _, kt := range []core.Type{core.TypeF32, core.TypeF16} {
			for _, layout := range []string{"contiguous", "row-gaps"} {
				name := fmt.Sprintf("conv_transpose_1d case %d %v %s", i, kt, layout)
				nnRun(t, name, 1e-10, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
					rng := rand.New(rand.NewSource(int64(i)))
					bne := [4]int64{c.l, c.cin, 1, 1}
					b := nnSource(ctx, core.TypeF32, bne, layout)
					bv := maybeF16(nnFill(t, b, rng, -1, 1), kt == core.TypeF16)
					kne := [4]int64{c.k, c.cout, c.cin, 1}
					k := ctx.NewTensor3D(kt, kne[0], kne[1], kne[2])
					kv := nnFill(t, k, rng, -1, 1)
					want := refConvTranspose2D(
						func(x, y, ci, n int64) float64 { return bv[nnIdx(bne, x, ci, 0, 0)] },
						func(x, y, co, ci int64) float64 { return kv[nnIdx(kne, x, co, ci, 0)] },
						c.l, 1, c.cin, 1, c.k, 1, c.cout, c.s)
					return ctx.ConvTranspose1D(k, b, int(c.s), 0, 1), want
				})
			}
		}
	}
	// 2-D: input [W, H, Cin, N], kernel [KW, KH, Cout, Cin].
	for i, c := range []struct{ in, k [4]int64 }{
		{[4]int64{3, 2, 3, 1}, [4]int64{2, 2, 1, 3}}, {[4]int64{10, 7, 9, 2}, [4]int64{3, 3, 4, 9}}, {[4]int64{5, 4, 2, 1}, [4]int64{3, 2, 5, 2}},
	} {
		for _, s := range []int64{1, 2, 3} {
			for _, kt := range []core.Type{core.TypeF32, core.TypeF16} {
				name := fmt.Sprintf("conv_transpose_2d case %d s=%d %v", i, s, kt)
				nnRun(t, name, 1e-10, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
					rng := rand.New(rand.NewSource(int64(i)))
					b := nnSource(ctx, core.TypeF32, c.in, "permuted")
					bv := maybeF16(nnFill(t, b, rng, -1, 1), kt == core.TypeF16)
					k := ctx.NewTensor4D(kt, c.k[0], c.k[1], c.k[2], c.k[3])
					kv := nnFill(t, k, rng, -1, 1)
					want := refConvTranspose2D(
						func(x, y, ci, n int64) float64 { return bv[nnIdx(c.in, x, y, ci, n)] },
						func(x, y, co, ci int64) float64 { return kv[nnIdx(c.k, x, y, co, ci)] },
						c.in[0], c.in[1], c.in[2], c.in[3], c.k[0], c.k[1], c.k[2], s)
					return ctx.ConvTranspose2DP0(k, b, int(s)), want
				})
			}
		}
	}
}

func TestIm2Col3DRandom(t *testing.T) {
	for i, c := range []struct {
		in, k   [4]int64
		ic      int64
		s, p, d [3]int64
		view    bool
	}{
		{[4]int64{10, 10, 10, 9}, [4]int64{3, 3, 3, 1}, 3, [3]int64{1, 1, 1}, [3]int64{1, 1, 1}, [3]int64{1, 1, 1}, false},
		{[4]int64{9, 8, 7, 6}, [4]int64{3, 2, 3, 3}, 3, [3]int64{3, 1, 2}, [3]int64{0, 3, 1}, [3]int64{1, 3, 1}, true},
		{[4]int64{7, 9, 10, 2}, [4]int64{2, 3, 3, 3}, 1, [3]int64{1, 3, 1}, [3]int64{3, 0, 0}, [3]int64{3, 1, 3}, false},
	} {
		for _, dt := range []core.Type{core.TypeF32, core.TypeF16} {
			name := fmt.Sprintf("im2col_3d case %d %v", i, dt)
			nnRun(t, name, 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
				rng := rand.New(rand.NewSource(int64(i)))
				bne := c.in
				b := ctx.NewTensor4D(core.TypeF32, bne[0], bne[1], bne[2], bne[3])
				if c.view {
					bne = [4]int64{bne[0] - 2, bne[1] - 2, bne[2] - 2, bne[3] - 2}
					b = ctx.View4D(b, bne[0], bne[1], bne[2], bne[3], b.Nb[1], b.Nb[2], b.Nb[3], 0)
				}
				bv := nnFill(t, b, rng, -1, 1)
				k := ctx.NewTensor4D(core.TypeF16, c.k[0], c.k[1], c.k[2], c.k[3])
				n := bne[3] / c.ic
				ow := core.ConvOutputSize(bne[0], c.k[0], c.s[0], c.p[0], c.d[0])
				oh := core.ConvOutputSize(bne[1], c.k[1], c.s[1], c.p[1], c.d[1])
				od := core.ConvOutputSize(bne[2], c.k[2], c.s[2], c.p[2], c.d[2])
				var want []float64
				for in := int64(0); in < n; in++ {
					for z := int64(0); z < od; z++ {
						for y := int64(0); y < oh; y++ {
							for x := int64(0); x < ow; x++ {
								for ch := int64(0); ch < c.ic; ch++ {
									for kz := int64(0); kz < c.k[2]; kz++ {
										for ky := int64(0); ky < c.k[1]; ky++ {
											for kx := int64(0); kx < c.k[0]; kx++ {
												sx, sy, sz := x*c.s[0]+kx*c.d[0]-c.p[0], y*c.s[1]+ky*c.d[1]-c.p[1], z*c.s[2]+kz*c.d[2]-c.p[2]
												v := 0.0
												if sx >= 0 && sx < bne[0] && sy >= 0 && sy < bne[1] && sz >= 0 && sz < bne[2] {
													v = bv[nnIdx(bne, sx, sy, sz, in*c.ic+ch)]
												}
												want = append(want, v)
											}
										}
									}
								}
							}
						}
					}
				}
				p := core.Conv3DParams{S0: int(c.s[0]), S1: int(c.s[1]), S2: int(c.s[2]), P0: int(c.p[0]), P1: int(c.p[1]),
					P2: int(c.p[2]), D0: int(c.d[0]), D1: int(c.d[1]), D2: int(c.d[2])}
				return ctx.Im2Col3D(k, b, c.ic, p, dt), maybeF16(want, dt == core.TypeF16)
			})
		}
	}
}

func TestCol2Im1DRandom(t *testing.T) {
	for i, c := range []struct {
		k, oc, tin int64
		s, p       int
	}{{16, 32, 197, 8, 0}, {4, 3, 7, 2, 0}, {6, 4, 11, 3, 1}, {2, 3, 9, 3, 0}, {5, 4, 11, 2, 0}, {8, 2, 3, 2, 5}, {1, 5, 13, 3, 0}} {
		for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16} {
			name := fmt.Sprintf("col2im_1d case %d %v", i, typ)
			tol := 1e-10
			if typ != core.TypeF32 {
				tol = 1e-4
			}
			nnRun(t, name, tol, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
				rng := rand.New(rand.NewSource(int64(i)))
				a := ctx.NewTensor2D(typ, c.k*c.oc, c.tin)
				av := nnFill(t, a, rng, -1, 1)
				tout := (c.tin-1)*int64(c.s) + c.k - 2*int64(c.p)
				want := make([]float64, tout*c.oc)
				for ti := int64(0); ti < c.tin; ti++ {
					for o := int64(0); o < c.oc; o++ {
						for kk := int64(0); kk < c.k; kk++ {
							if tt := ti*int64(c.s) + kk - int64(c.p); tt >= 0 && tt < tout {
								want[o*tout+tt] += av[ti*c.k*c.oc+o*c.k+kk]
							}
						}
					}
				}
				return ctx.Col2Im1D(a, c.s, int(c.oc), c.p), want
			})
		}
	}
}
