package tests

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// GROUP_NORM, UPSCALE (every mode and flag of ggml_interpolate), WIN_PART, WIN_UNPART,
// GET_REL_POS, ADD_REL_POS and a MAP_CUSTOM1 node: test-backend-ops' cases for these ops at small
// sizes (its 512×512 upscales become 7×5, its 320- and 1280-channel group norms 40 channels in
// 32 groups, so some groups are short or empty), plus strided and in-place forms.

func init() {
	extraCases = append(extraCases, visionCases)
}

// customCaseName is the harness's custom-op case: GPU backends cannot run a Go function.
const customCaseName = "MAP_CUSTOM1(x·3+1, 2 tasks)"

func visionCases() []Case {
	var cs []Case
	f32 := core.TypeF32
	add := func(name string, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: name, Build: build})
	}
	// GROUP_NORM: test_group_norm {64,64,320,1} and {9,9,1280,1}, 32 groups, eps 1e-6.
	for _, g := range []struct {
		ne     [4]int64
		groups int
		eps    float32
	}{{[4]int64{8, 8, 40, 1}, 32, 1e-6}, {[4]int64{9, 9, 40, 1}, 32, 1e-6}, {[4]int64{5, 3, 12, 2}, 4, 1e-5},
		{[4]int64{33, 1, 7, 3}, 3, 1e-3}} {
		g := g
		add(fmt.Sprintf("GROUP_NORM(%v,groups=%d,eps=%g)", g.ne, g.groups, g.eps), func(c *core.Context) *core.Tensor {
			return c.GroupNorm(c.NewTensor(f32, g.ne[:]...), g.groups, g.eps)
		})
	}
	add("GROUP_NORM(permuted dims 1 and 2)", func(c *core.Context) *core.Tensor {
		return c.GroupNorm(c.Permute(c.NewTensor(f32, 7, 6, 5, 2), 0, 2, 1, 3), 2, 1e-6)
	})
	add("GROUP_NORM(inplace)", func(c *core.Context) *core.Tensor {
		return c.GroupNormInplace(c.NewTensor(f32, 6, 5, 8), 3, 1e-6)
	})
	// test_group_norm_mul_add {128,1,1,1}, 4 groups, and at the 320-channel shape.
	for _, ne := range [][4]int64{{128, 1, 1, 1}, {8, 8, 40, 1}} {
		ne := ne
		add(fmt.Sprintf("GROUP_NORM_MUL_ADD(%v)", ne), func(c *core.Context) *core.Tensor {
			n := c.GroupNorm(c.NewTensor(f32, ne[:]...), 4, 1e-5)
			return c.Add(c.Mul(n, c.NewTensor(f32, ne[:]...)), c.NewTensor(f32, ne[:]...))
		})
	}

	// UPSCALE: test_upscale (×2, plain and transposed) and test_interpolate (up and down) per
	// mode, then align corners for bilinear and bicubic (and nearest, which takes its factor).
	modes := []core.ScaleMode{core.ScaleNearest, core.ScaleBilinear, core.ScaleBicubic, core.ScaleBilinear | core.ScaleAntialias}
	for _, m := range modes {
		m := m
		add(fmt.Sprintf("UPSCALE([7,5,3,2],x2,mode=%#x)", uint32(m)), func(c *core.Context) *core.Tensor {
			return c.Upscale(c.NewTensor(f32, 7, 5, 3, 2), 2, m)
		})
		add(fmt.Sprintf("UPSCALE([7,5,3,2],x2,mode=%#x,transposed)", uint32(m)), func(c *core.Context) *core.Tensor {
			return c.Upscale(c.Transpose(c.NewTensor(f32, 7, 5, 3, 2)), 2, m)
		})
		add(fmt.Sprintf("INTERPOLATE([2,5,7,11]->[5,7,11,13],mode=%#x)", uint32(m)), func(c *core.Context) *core.Tensor {
			return c.Interpolate(c.NewTensor(f32, 2, 5, 7, 11), 5, 7, 11, 13, m)
		})
		add(fmt.Sprintf("INTERPOLATE([5,7,11,13]->[2,5,7,11],mode=%#x)", uint32(m)), func(c *core.Context) *core.Tensor {
			return c.Interpolate(c.NewTensor(f32, 5, 7, 11, 13), 2, 5, 7, 11, m)
		})
	}
	for _, m := range []core.ScaleMode{core.ScaleBilinear, core.ScaleBicubic, core.ScaleNearest} {
		m := m | core.ScaleAlignCorners
		for _, s := range [][2][4]int64{{{2, 5, 7, 11}, {5, 7, 11, 13}}, {{1, 4, 3, 2}, {2, 8, 3, 2}}, {{4, 1, 3, 2}, {1, 1, 3, 2}}} {
			s := s
			add(fmt.Sprintf("INTERPOLATE(%v->%v,mode=%#x)", s[0], s[1], uint32(m)), func(c *core.Context) *core.Tensor {
				return c.Interpolate(c.NewTensor(f32, s[0][:]...), s[1][0], s[1][1], s[1][2], s[1][3], m)
			})
		}
	}
	add("UPSCALE_EXT(strided view,[9,4,3,2]->[5,11,2,3],bilinear)", func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 12, 4, 3, 2)
		v := c.View4D(a, 9, 4, 3, 2, a.Nb[1], a.Nb[2], a.Nb[3], 8)
		return c.UpscaleExt(v, 5, 11, 2, 3, core.ScaleBilinear)
	})

	// SAM's window partition (14×14 windows of a 64×64 image in SAM; small here).
	for _, w := range []struct{ c, wd, h, win int64 }{{5, 7, 6, 3}, {4, 8, 8, 4}, {3, 5, 9, 2}} {
		w := w
		add(fmt.Sprintf("WIN_PART([%d,%d,%d],w=%d)", w.c, w.wd, w.h, w.win), func(c *core.Context) *core.Tensor {
			return c.WinPart(c.NewTensor(f32, w.c, w.wd, w.h), int(w.win))
		})
		npx, npy := (w.wd+w.win-1)/w.win, (w.h+w.win-1)/w.win
		add(fmt.Sprintf("WIN_UNPART([%d,%d,%d],w=%d)", w.c, w.wd, w.h, w.win), func(c *core.Context) *core.Tensor {
			return c.WinUnpart(c.NewTensor(f32, w.c, w.win, w.win, npx*npy+1), int(w.wd), int(w.h), int(w.win))
		})
	}
	add("WIN_UNPART(WIN_PART([6,7,5],w=3))", func(c *core.Context) *core.Tensor {
		return c.WinUnpart(c.WinPart(c.NewTensor(f32, 6, 7, 5), 3), 7, 5, 3)
	})
	for _, q := range []int{1, 4, 7} {
		q := q
		add(fmt.Sprintf("GET_REL_POS(f16,[6,%d],q=k=%d)", 2*q-1, q), func(c *core.Context) *core.Tensor {
			return c.GetRelPos(c.NewTensor(core.TypeF16, 6, int64(2*q-1)), q, q)
		})
	}
	for _, r := range []struct{ k, h, w, heads int64 }{{3, 2, 3, 2}, {4, 4, 4, 1}, {2, 5, 1, 3}} {
		r := r
		for _, inplace := range []bool{false, true} {
			inplace := inplace
			add(fmt.Sprintf("ADD_REL_POS(k=%d,q=%dx%d,heads=%d,inplace=%v)", r.k, r.h, r.w, r.heads, inplace), func(c *core.Context) *core.Tensor {
				a := c.NewTensor(f32, r.k*r.k, r.h*r.w, r.heads)
				pw, ph := c.NewTensor(f32, r.k, r.h, r.w, r.heads), c.NewTensor(f32, r.k, r.h, r.w, r.heads)
				if inplace {
					return c.AddRelPosInplace(a, pw, ph)
				}
				return c.AddRelPos(a, pw, ph)
			})
		}
	}
	add(customCaseName, func(c *core.Context) *core.Tensor {
		return c.MapCustom1(c.NewTensor(f32, 13, 3), func(dst, a *core.Tensor, ith, nth int) {
			x, y := a.Float32s(), dst.Float32s()
			for i := ith; i < len(y); i += nth {
				y[i] = x[i]*3 + 1
			}
		}, 2)
	})
	return cs
}
