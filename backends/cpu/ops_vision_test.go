package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// GROUP_NORM, UPSCALE, WIN_PART, WIN_UNPART, GET_REL_POS, ADD_REL_POS and the custom ops: hand
// values, and the kernels against literal transcriptions of ggml-cpu's loops (vision*Naive
// below), bit for bit, at one and three threads.

func TestGroupNormHand(t *testing.T) {
	// [2, 1, 3]: 3 channels in 2 groups of 2 (the second one channel): {1, 2, 3, 4} and {5, 7}.
	s := float32(1 / math.Sqrt(1.25+0))
	ixRun(t, "GROUP_NORM", []float32{-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s, -1, 1},
		func(t *testing.T, ctx *core.Context) *core.Tensor {
			return ctx.GroupNorm(ixF32(t, ctx, []float32{1, 2, 3, 4, 5, 7}, 2, 1, 3), 2, 0)
		})
	// 4 groups of 3 channels: the fourth group is empty, channels 0..2 one group.
	ixRun(t, "GROUP_NORM(empty group)", []float32{-1, 1, -1, 1}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.GroupNorm(ixF32(t, ctx, []float32{1, 3, 5, 7}, 1, 1, 4), 3, 0)
	})
}

func TestUpscaleHand(t *testing.T) {
	ixRun(t, "UPSCALE(nearest x2)", []float32{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4},
		func(t *testing.T, ctx *core.Context) *core.Tensor {
			return ctx.Upscale(ixF32(t, ctx, []float32{1, 2, 3, 4}, 2, 2), 2, core.ScaleNearest)
		})
	// bilinear 2 → 4 columns with pixel centres: x = (i + 0.5)/2 - 0.5 = -0.25, 0.25, 0.75, 1.25.
	ixRun(t, "UPSCALE(bilinear 2→4)", []float32{0, 2.5, 7.5, 10}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Interpolate(ixF32(t, ctx, []float32{0, 10}, 2, 1), 4, 1, 1, 1, core.ScaleBilinear)
	})
	// align corners 2 → 3: x = 0, 0.5, 1.
	ixRun(t, "UPSCALE(bilinear, align corners)", []float32{0, 5, 10}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Interpolate(ixF32(t, ctx, []float32{0, 10}, 2, 1), 3, 1, 1, 1, core.ScaleBilinear|core.ScaleAlignCorners)
	})
	// dims 2 and 3 by nearest index: 3 planes → 2 take planes 0 and 1 (i·1.5 truncated).
	ixRun(t, "UPSCALE(planes)", []float32{1, 2}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Interpolate(ixF32(t, ctx, []float32{1, 2, 3}, 1, 1, 3), 1, 1, 2, 1, core.ScaleNearest)
	})
}

func TestWinPartHand(t *testing.T) {
	// C=1, W=3, H=2, w=2: npx=2, npy=1; window 0 = cols 0,1; window 1 = col 2 and padding.
	ixRun(t, "WIN_PART", []float32{1, 2, 4, 5, 3, 0, 6, 0}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.WinPart(ixF32(t, ctx, ixSeq(6), 1, 3, 2), 2)
	})
	ixRun(t, "WIN_UNPART", []float32{1, 2, 5, 4, 3, 7}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.WinUnpart(ixF32(t, ctx, []float32{1, 2, 4, 3, 5, 0, 7, 0}, 1, 2, 2, 2), 3, 2, 2)
	})
	ixRun(t, "WIN_UNPART(WIN_PART)", ixSeq(2*5*3), func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.WinUnpart(ctx.WinPart(ixF32(t, ctx, ixSeq(2*5*3), 2, 5, 3), 2), 5, 3, 2)
	})
}

func TestGetRelPosHand(t *testing.T) {
	// a [1, 3] (rows 0..2 hold 1, 2, 3), qh = kh = 2: row (k, q) = a's row 1 - k + q.
	ctx := eltCtx()
	a := ctx.NewTensor(core.TypeF16, 1, 3)
	if err := core.SetFloat32s(a, []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	out := ctx.GetRelPos(a, 2, 2)
	eltCompute(t, ctx, out, 2)
	got, err := core.GetFloat32s(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{2, 1, 3, 2}; !slices.Equal(got, want) {
		t.Errorf("GET_REL_POS: got %v, want %v", got, want)
	}
}

func TestAddRelPosHand(t *testing.T) {
	// k = 2, one row: a [4, 1, 1] zeros; pw [2, 1, 1, 1] = {10, 20}, ph = {1, 2}:
	// column kh·2 + kw gets ph[kh] + pw[kw].
	for _, inplace := range []bool{false, true} {
		ixRun(t, fmt.Sprintf("ADD_REL_POS(inplace=%v)", inplace), []float32{11, 21, 12, 22}, func(t *testing.T, ctx *core.Context) *core.Tensor {
			a := ixF32(t, ctx, make([]float32, 4), 4, 1, 1)
			pw, ph := ixF32(t, ctx, []float32{10, 20}, 2, 1, 1, 1), ixF32(t, ctx, []float32{1, 2}, 2, 1, 1, 1)
			if inplace {
				return ctx.AddRelPosInplace(a, pw, ph)
			}
			return ctx.AddRelPos(a, pw, ph)
		})
	}
}

// visionRand fills an f32 tensor with uniform values in [-2, 2).
func visionRand(t *testing.T, ctx *core.Context, r *rand.Rand, ne ...int64) *core.Tensor {
	t.Helper()
	x := ctx.NewTensor(core.TypeF32, ne...)
	v := make([]float32, x.NElements())
	for i := range v {
		v[i] = r.Float32()*4 - 2
	}
	if err := core.SetFloat32s(x, v); err != nil {
		t.Fatal(err)
	}
	return x
}

// TestVisionAgainstGGMLLoops checks every UPSCALE mode, GROUP_NORM, WIN_PART, WIN_UNPART and
// ADD_REL_POS against the naive transcriptions, bit for bit.
func TestVisionAgainstGGMLLoops(t *testing.T) {
	type tc struct {
		name  string
		build func(ctx *core.Context, r *rand.Rand) *core.Tensor
		naive func(out *core.Tensor) []float32
	}
	var cases []tc
	shapes := [][2][4]int64{
		{{2, 5, 7, 3}, {5, 7, 3, 4}}, {{5, 7, 3, 4}, {2, 5, 2, 3}}, {{1, 4, 3, 2}, {2, 8, 3, 2}},
		{{4, 1, 3, 2}, {1, 1, 3, 2}}, {{6, 6, 2, 1}, {12, 12, 2, 1}}, {{9, 7, 1, 1}, {4, 3, 1, 1}},
	}
	modes := []core.ScaleMode{core.ScaleNearest, core.ScaleBilinear, core.ScaleBicubic,
		core.ScaleBilinear | core.ScaleAntialias, core.ScaleNearest | core.ScaleAlignCorners,
		core.ScaleBilinear | core.ScaleAlignCorners, core.ScaleBicubic | core.ScaleAlignCorners}
	for _, sh := range shapes {
		for _, m := range modes {
			sh, m := sh, m
			cases = append(cases, tc{fmt.Sprintf("UPSCALE(%v→%v,mode=%#x)", sh[0], sh[1], uint32(m)),
				func(ctx *core.Context, r *rand.Rand) *core.Tensor {
					a := visionRand(t, ctx, r, sh[0][:]...)
					return ctx.Interpolate(a, sh[1][0], sh[1][1], sh[1][2], sh[1][3], m)
				}, upscaleNaive})
		}
	}
	cases = append(cases, tc{"UPSCALE(transposed, bicubic x2)", func(ctx *core.Context, r *rand.Rand) *core.Tensor {
		return ctx.Upscale(ctx.Transpose(visionRand(t, ctx, r, 5, 3, 2)), 2, core.ScaleBicubic)
	}, upscaleNaive})
	for _, g := range [][5]int64{{7, 5, 12, 2, 4}, {9, 9, 10, 1, 3}, {3, 2, 5, 1, 5}, {33, 3, 4, 2, 1}} {
		g := g
		cases = append(cases, tc{fmt.Sprintf("GROUP_NORM(%v)", g), func(ctx *core.Context, r *rand.Rand) *core.Tensor {
			return ctx.GroupNorm(visionRand(t, ctx, r, g[0], g[1], g[2], g[3]), int(g[4]), 1e-6)
		}, groupNormNaive})
	}
	for _, w := range [][4]int64{{3, 5, 7, 2}, {2, 4, 4, 4}, {1, 9, 2, 3}} {
		w := w
		cases = append(cases, tc{fmt.Sprintf("WIN_PART(%v)", w), func(ctx *core.Context, r *rand.Rand) *core.Tensor {
			return ctx.WinPart(visionRand(t, ctx, r, w[0], w[1], w[2]), int(w[3]))
		}, winPartNaive})
		cases = append(cases, tc{fmt.Sprintf("WIN_UNPART(%v)", w), func(ctx *core.Context, r *rand.Rand) *core.Tensor {
			npx, npy := (w[1]+w[3]-1)/w[3], (w[2]+w[3]-1)/w[3]
			return ctx.WinUnpart(visionRand(t, ctx, r, w[0], w[3], w[3], npx*npy), int(w[1]), int(w[2]), int(w[3]))
		}, winUnpartNaive})
	}
	for _, k := range [][3]int64{{3, 2, 2}, {4, 3, 1}, {2, 5, 3}} {
		k := k
		cases = append(cases, tc{fmt.Sprintf("ADD_REL_POS(%v)", k), func(ctx *core.Context, r *rand.Rand) *core.Tensor {
			a := visionRand(t, ctx, r, k[0]*k[0], k[1]*2, k[2])
			return ctx.AddRelPos(a, visionRand(t, ctx, r, k[0], k[1], 2, k[2]), visionRand(t, ctx, r, k[0], k[1], 2, k[2]))
		}, addRelPosNaive})
	}
	for i, c := range cases {
		for _, th := range []int{1, 3} {
			ctx := eltCtx()
			out := c.build(ctx, rand.New(rand.NewPCG(uint64(i), 7)))
			if err := ctx.Err(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			eltCompute(t, ctx, out, th)
			got, err := core.GetFloat32s(out)
			if err != nil {
				t.Fatal(err)
			}
			want := c.naive(out)
			for j := range want {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Errorf("%s, %d threads: element %d = %v, ggml's loop gives %v", c.name, th, j, got[j], want[j])
					break
				}
			}
		}
	}
}

// at reads a's f32 element (i0, i1, i2, i3) through its strides.
func at(a *core.Tensor, i0, i1, i2, i3 int64) float32 {
	off := i0*a.Nb[0] + i1*a.Nb[1] + i2*a.Nb[2] + i3*a.Nb[3]
	return math.Float32frombits(uint32(a.Data()[off]) | uint32(a.Data()[off+1])<<8 | uint32(a.Data()[off+2])<<16 | uint32(a.Data()[off+3])<<24)
}

// upscaleNaive is ggml_compute_forward_upscale_f32's loops, one thread.
func upscaleNaive(dst *core.Tensor) []float32 {
	a := dst.Src[0]
	ne0, ne1, ne2, ne3 := dst.Ne[0], dst.Ne[1], dst.Ne[2], dst.Ne[3]
	ne00, ne01 := a.Ne[0], a.Ne[1]
	sf0, sf1 := float32(ne0)/float32(ne00), float32(ne1)/float32(ne01)
	sf2, sf3 := float32(ne2)/float32(a.Ne[2]), float32(ne3)/float32(a.Ne[3])
	po := float32(0.5)
	m := core.ScaleModeOf(dst)
	if m&core.ScaleAlignCorners != 0 {
		po = 0
		if ne0 > 1 && ne00 > 1 {
			sf0 = float32(ne0-1) / float32(ne00-1)
		}
		if ne1 > 1 && ne01 > 1 {
			sf1 = float32(ne1-1) / float32(ne01-1)
		}
	}
	out := make([]float32, 0, dst.NElements())
	cl := func(v, n int64) int64 { return max(0, min(v, n-1)) }
	for i3 := int64(0); i3 < ne3; i3++ {
		i03 := int64(float32(i3) / sf3)
		for i2 := int64(0); i2 < ne2; i2++ {
			i02 := int64(float32(i2) / sf2)
			for i1 := int64(0); i1 < ne1; i1++ {
				for i0 := int64(0); i0 < ne0; i0++ {
					var v float32
					switch {
					case m.Mode() == core.ScaleNearest:
						v = at(a, int64(float32(i0)/sf0), int64(float32(i1)/sf1), i02, i03)
					case m&core.ScaleAntialias != 0:
						tri := func(x float32) float32 { return max(1-float32(math.Abs(float64(x))), 0) }
						s1, s0 := max(1, 1/sf1), max(1, 1/sf0)
						inv1, inv0 := 1/s1, 1/s0
						y := (float32(i1) + po) / sf1
						x := (float32(i0) + po) / sf0
						xmin, xmax := max(int64(x-s0+po), 0), min(int64(x+s0+po), ne00)
						ymin, ymax := max(int64(y-s1+po), 0), min(int64(y+s1+po), ne01)
						var tot float32
						for sy := ymin; sy < ymax; sy++ {
							wy := tri((float32(sy) - y + po) * inv1)
							for sx := xmin; sx < xmax; sx++ {
								w := tri((float32(sx)-x+po)*inv0) * wy
								if w <= 0 {
									continue
								}
								v += at(a, sx, sy, i02, i03) * w
								tot += w
							}
						}
						if tot > 0 {
							v /= tot
						}
					case m.Mode() == core.ScaleBilinear:
						y := (float32(i1)+po)/sf1 - po
						y0 := int64(math.Floor(float64(y)))
						y1 := cl(y0+1, ne01)
						y0 = cl(y0, ne01)
						dy := min(max(y-float32(y0), 0), 1)
						x := (float32(i0)+po)/sf0 - po
						x0 := int64(math.Floor(float64(x)))
						x1 := cl(x0+1, ne00)
						x0 = cl(x0, ne00)
						dx := min(max(x-float32(x0), 0), 1)
						pa, pb := at(a, x0, y0, i02, i03), at(a, x1, y0, i02, i03)
						pc, pd := at(a, x0, y1, i02, i03), at(a, x1, y1, i02, i03)
						v = pa*(1-dx)*(1-dy) + pb*dx*(1-dy) + pc*(1-dx)*dy + pd*dx*dy
					default:
						const al = float32(-0.75)
						w1 := func(x float32) float32 { return ((al+2)*x-(al+3))*x*x + 1 }
						w2 := func(x float32) float32 { return ((al*x-5*al)*x+8*al)*x - 4*al }
						bc := func(p0, p1, p2, p3, x float32) float32 {
							return p0*w2(x+1) + p1*w1(x+0) + p2*w1(1-x) + p3*w2(2-x)
						}
						y := (float32(i1)+po)/sf1 - po
						y0 := int64(math.Floor(float64(y)))
						dy := y - float32(y0)
						x := (float32(i0)+po)/sf0 - po
						x0 := int64(math.Floor(float64(x)))
						dx := x - float32(x0)
						p := func(xo, yo int64) float32 { return at(a, cl(x0+xo, ne00), cl(y0+yo, ne01), i02, i03) }
						v = bc(bc(p(-1, -1), p(0, -1), p(1, -1), p(2, -1), dx), bc(p(-1, 0), p(0, 0), p(1, 0), p(2, 0), dx),
							bc(p(-1, 1), p(0, 1), p(1, 1), p(2, 1), dx), bc(p(-1, 2), p(0, 2), p(1, 2), p(2, 2), dx), dy)
					}
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// groupNormNaive is ggml_compute_forward_group_norm_f32's loops (its row sums in float64).
func groupNormNaive(dst *core.Tensor) []float32 {
	a := dst.Src[0]
	ng, eps := core.GroupNormParamsOf(dst)
	y := make([]float32, dst.NElements())
	idx := func(i0, i1, i2, i3 int64) int64 { return ((i3*a.Ne[2]+i2)*a.Ne[1]+i1)*a.Ne[0] + i0 }
	nc := a.Ne[2]
	per := (nc + int64(ng) - 1) / int64(ng)
	for g := int64(0); g < int64(ng); g++ {
		start, end := g*per, min(g*per+per, nc)
		for i3 := int64(0); i3 < a.Ne[3]; i3++ {
			var sum float64
			for i2 := start; i2 < end; i2++ {
				for i1 := int64(0); i1 < a.Ne[1]; i1++ {
					var s float64
					for i0 := int64(0); i0 < a.Ne[0]; i0++ {
						s += float64(at(a, i0, i1, i2, i3))
					}
					sum += s
				}
			}
			mean := float32(sum / float64(a.Ne[0]*a.Ne[1]*(end-start)))
			var sum2 float64
			for i2 := start; i2 < end; i2++ {
				for i1 := int64(0); i1 < a.Ne[1]; i1++ {
					var s float64
					for i0 := int64(0); i0 < a.Ne[0]; i0++ {
						v := at(a, i0, i1, i2, i3) - mean
						y[idx(i0, i1, i2, i3)] = v
						s += float64(v * v)
					}
					sum2 += s
				}
			}
			scale := 1 / float32(math.Sqrt(float64(float32(sum2/float64(a.Ne[0]*a.Ne[1]*(end-start)))+eps)))
			for i2 := start; i2 < end; i2++ {
				for i1 := int64(0); i1 < a.Ne[1]; i1++ {
					for i0 := int64(0); i0 < a.Ne[0]; i0++ {
						y[idx(i0, i1, i2, i3)] *= scale
					}
				}
			}
		}
	}
	return y
}

func winPartNaive(dst *core.Tensor) []float32 {
	a := dst.Src[0]
	npx, npy, w := core.WinParams(dst)
	src := a.Float32s()
	y := make([]float32, dst.NElements())
	ne0, ne1, ne2 := dst.Ne[0], dst.Ne[1], dst.Ne[2]
	for py := 0; py < npy; py++ {
		for px := 0; px < npx; px++ {
			i3 := int64(py*npx + px)
			for i2 := int64(0); i2 < ne2; i2++ {
				for i1 := int64(0); i1 < ne1; i1++ {
					for i0 := int64(0); i0 < ne0; i0++ {
						i02, i01 := int64(py*w)+i2, int64(px*w)+i1
						i := i3*ne2*ne1*ne0 + i2*ne1*ne0 + i1*ne0 + i0
						if i02 < a.Ne[2] && i01 < a.Ne[1] {
							y[i] = src[i02*a.Ne[1]*a.Ne[0]+i01*a.Ne[0]+i0]
						}
					}
				}
			}
		}
	}
	return y
}

func winUnpartNaive(dst *core.Tensor) []float32 {
	a := dst.Src[0]
	_, _, w := core.WinParams(dst)
	src := a.Float32s()
	ne0, ne1, ne2 := dst.Ne[0], dst.Ne[1], dst.Ne[2]
	px := (int64(w) - ne1%int64(w)) % int64(w)
	npx := (px + ne1) / int64(w)
	y := make([]float32, dst.NElements())
	for i2 := int64(0); i2 < ne2; i2++ {
		for i1 := int64(0); i1 < ne1; i1++ {
			for i0 := int64(0); i0 < ne0; i0++ {
				ip2, ip1 := i2/int64(w), i1/int64(w)
				i := (ip2*npx+ip1)*a.Ne[2]*a.Ne[1]*a.Ne[0] + (i2%int64(w))*a.Ne[1]*a.Ne[0] + (i1%int64(w))*a.Ne[0] + i0
				y[i2*ne1*ne0+i1*ne0+i0] = src[i]
			}
		}
	}
	return y
}

func addRelPosNaive(dst *core.Tensor) []float32 {
	a, pw, ph := dst.Src[0], dst.Src[1], dst.Src[2]
	y := slices.Clone(a.Float32s())
	s1, s2 := pw.Float32s(), ph.Float32s()
	ne10, ne11, ne12, ne13 := pw.Ne[0], pw.Ne[1], pw.Ne[2], pw.Ne[3]
	for i13 := int64(0); i13 < ne13; i13++ {
		for i12 := int64(0); i12 < ne12; i12++ {
			for i11 := int64(0); i11 < ne11; i11++ {
				jp1 := i13*ne12*ne11*ne10 + i12*ne11*ne10 + i11*ne10
				for i10 := int64(0); i10 < ne10; i10++ {
					jp0 := jp1 + i10
					e1, e2 := s1[jp0], s2[jp0]
					jdh := jp0 * ne10
					jdw := jdh - (ne10-1)*i10
					for j := int64(0); j < ne10; j++ {
						y[jdh+j] += e2
						y[jdw+j*ne10] += e1
					}
				}
			}
		}
	}
	return y
}

// TestCustomOps runs MAP_CUSTOM1..3 and CUSTOM (new and in place) on the CPU: each task writes its
// share of the elements, every task index of the count runs once, and the count is the node's,
// at most the threads.
func TestCustomOps(t *testing.T) {
	for _, th := range []int{1, 3} {
		for _, nTasks := range []int{core.NTasksMax, 1, 2, 5} {
			ctx := eltCtx()
			a := ixF32(t, ctx, ixSeq(7), 7)
			b := ixF32(t, ctx, ixSeq(7), 7)
			c := ixF32(t, ctx, []float32{1}, 1)
			var calls atomic.Int32
			want := min(th, nTasks)
			if nTasks == core.NTasksMax {
				want = th
			}
			check := func(ith, nth int) {
				calls.Add(1)
				if nth != want || ith < 0 || ith >= nth {
					t.Errorf("%d threads, %d tasks: called with task %d of %d, want of %d", th, nTasks, ith, nth, want)
				}
			}
			split := func(n, ith, nth int) (int, int) { return n * ith / nth, n * (ith + 1) / nth }
			m1 := ctx.MapCustom1(a, func(dst, a *core.Tensor, ith, nth int) {
				check(ith, nth)
				lo, hi := split(7, ith, nth)
				for i := lo; i < hi; i++ {
					dst.Float32s()[i] = 2 * a.Float32s()[i]
				}
			}, nTasks)
			m2 := ctx.MapCustom2(m1, b, func(dst, a, b *core.Tensor, ith, nth int) {
				check(ith, nth)
				lo, hi := split(7, ith, nth)
				for i := lo; i < hi; i++ {
					dst.Float32s()[i] = a.Float32s()[i] + b.Float32s()[i]
				}
			}, nTasks)
			m3 := ctx.MapCustom3Inplace(m2, b, c, func(dst, a, b, c *core.Tensor, ith, nth int) {
				check(ith, nth)
				lo, hi := split(7, ith, nth)
				for i := lo; i < hi; i++ {
					dst.Float32s()[i] = a.Float32s()[i] * c.Float32s()[0] * 10
				}
			}, nTasks)
			cu := ctx.Custom4D(core.TypeF32, 7, 1, 1, 1, []*core.Tensor{m3, a}, func(dst *core.Tensor, ith, nth int) {
				check(ith, nth)
				lo, hi := split(7, ith, nth)
				for i := lo; i < hi; i++ {
					dst.Float32s()[i] = dst.Src[0].Float32s()[i] - dst.Src[1].Float32s()[i]
				}
			}, nTasks)
			eltCompute(t, ctx, cu, th)
			got, _ := core.GetFloat32s(cu)
			for i, v := range got {
				x := float32(i + 1)
				if v != (2*x+x)*10-x {
					t.Fatalf("%d threads, %d tasks: element %d = %v, want %v", th, nTasks, i, v, (2*x+x)*10-x)
				}
			}
			if int(calls.Load()) != 4*want {
				t.Errorf("%d threads, %d tasks: %d calls, want %d", th, nTasks, calls.Load(), 4*want)
			}
		}
	}
}

// TestCustomPanicIsAnError: a panic in a custom function fails the compute with an error naming
// the node instead of crashing.
func TestCustomPanicIsAnError(t *testing.T) {
	ctx := eltCtx()
	a := ixF32(t, ctx, ixSeq(4), 4)
	out := ctx.MapCustom1(a, func(dst, a *core.Tensor, ith, nth int) { panic("boom") }, 1).SetName("boomer")
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	if err := cpu.Compute(g, 2); err == nil || !strings.Contains(err.Error(), "MAP_CUSTOM1") {
		t.Errorf("panicking custom function: err %v, want an error naming MAP_CUSTOM1", err)
	}
}
