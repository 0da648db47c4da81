package tests

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// The norm family beyond the base table: NORM/RMS_NORM on long rows (workgroup reductions) and
// strided inputs, SOFT_MAX with f32/f16 masks broadcast over dims 2 and 3, masks with extra rows,
// ALiBi with head counts that are not powers of two, fully masked (-inf) rows and large logits,
// DIAG_MASK_INF with every sign of n_past, and ROPE in both modes for f32/f16 with n_dims < ne0,
// odd ne0, 4-D inputs, strided sources, frequency factors, YaRN and positions up to 500000
// (negative ones too).

func init() {
	extraCases = append(extraCases, normCases)
}

// normInit fills tensors by name: "pos" positions in [lo, hi), "ff" frequency factors in [1, 4),
// "mask" a softmax mask in [-1, 1) with some -inf entries and every third row entirely -inf,
// "big" values in [-60, 60); everything else uniformly in [-1, 1).
func normInit(lo, hi float32) func(t *core.Tensor, r *rand.Rand) error {
	return func(t *core.Tensor, r *rand.Rand) error {
		switch t.Name {
		case "pos":
			return Uniform(t, r, lo, hi)
		case "ff":
			return Uniform(t, r, 1, 4)
		case "big":
			return Uniform(t, r, -60, 60)
		case "mask":
			v := make([]float32, t.NElements())
			ninf := float32(math.Inf(-1))
			for i := range v {
				row := int64(i) / t.Ne[0]
				switch {
				case row%3 == 0:
					v[i] = ninf
				case r.IntN(4) == 0:
					v[i] = ninf
				default:
					v[i] = 2*r.Float32() - 1
				}
			}
			return core.SetFloat32s(t, v)
		}
		return Uniform(t, r, -1, 1)
	}
}

func normCases() []Case {
	var cs []Case
	f32, f16 := core.TypeF32, core.TypeF16
	add := func(name string, limit float64, lo, hi float32, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: "norm/" + name, Build: build, MaxNMSE: limit, Init: normInit(lo, hi)})
	}

	// NORM and RMS_NORM.
	norms := []struct {
		name string
		f    func(c *core.Context, a *core.Tensor) *core.Tensor
	}{
		{"NORM", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Norm(a, 1e-5) }},
		{"RMS_NORM", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.RMSNorm(a, 1e-6) }},
	}
	for _, n := range norms {
		n := n
		add(n.name+"(4099x3)", 0, 0, 0, func(c *core.Context) *core.Tensor { return n.f(c, c.NewTensor(f32, 4099, 3)) })
		add(n.name+"(ne0=1)", 0, 0, 0, func(c *core.Context) *core.Tensor { return n.f(c, c.NewTensor(f32, 1, 5)) })
		add(n.name+"(4d)", 0, 0, 0, func(c *core.Context) *core.Tensor { return n.f(c, c.NewTensor(f32, 70, 3, 2, 2)) })
		add(n.name+"(transposed)", 0, 0, 0, func(c *core.Context) *core.Tensor {
			return n.f(c, c.Transpose(c.NewTensor(f32, 9, 300)))
		})
		add(n.name+"(view)", 0, 0, 0, func(c *core.Context) *core.Tensor {
			a := c.NewTensor(f32, 600, 5, 2)
			return n.f(c, c.View3D(a, 513, 4, 2, a.Nb[1], a.Nb[2], a.Nb[1]+7*4))
		})
		add(n.name+"(large values)", 0, 0, 0, func(c *core.Context) *core.Tensor {
			return n.f(c, c.NewTensor(f32, 1000, 4).SetName("big"))
		})
	}

	// SOFT_MAX.
	add("SOFT_MAX(3000x3,scale)", nmseSoftMax, 0, 0, func(c *core.Context) *core.Tensor {
		return c.SoftMaxExt(c.NewTensor(f32, 3000, 3), nil, 0.125, 0)
	})
	add("SOFT_MAX(ne0=1)", nmseSoftMax, 0, 0, func(c *core.Context) *core.Tensor {
		return c.SoftMax(c.NewTensor(f32, 1, 6))
	})
	add("SOFT_MAX(large logits)", nmseSoftMax, 0, 0, func(c *core.Context) *core.Tensor {
		return c.SoftMax(c.NewTensor(f32, 77, 5, 2).SetName("big"))
	})
	for _, mt := range []core.Type{f32, f16} {
		mt := mt
		add(fmt.Sprintf("SOFT_MAX(%v mask,broadcast 2/3,extra rows)", mt), nmseSoftMax, 0, 0, func(c *core.Context) *core.Tensor {
			return c.SoftMaxExt(c.NewTensor(f32, 37, 5, 4, 2), c.NewTensor(mt, 37, 8, 2, 1).SetName("mask"), 0.7, 0)
		})
		for _, heads := range []int64{5, 12} {
			heads := heads
			add(fmt.Sprintf("SOFT_MAX(%v mask,alibi,heads=%d)", mt, heads), nmseSoftMax, 0, 0, func(c *core.Context) *core.Tensor {
				return c.SoftMaxExt(c.NewTensor(f32, 40, 6, heads, 2), c.NewTensor(mt, 40, 6, 1, 2).SetName("mask"), 0.5, 8)
			})
		}
		add(fmt.Sprintf("SOFT_MAX(%v mask,long rows)", mt), nmseSoftMax, 0, 0, func(c *core.Context) *core.Tensor {
			return c.SoftMaxExt(c.NewTensor(f32, 2500, 4), c.NewTensor(mt, 2500, 4).SetName("mask"), 1, 0)
		})
	}

	// SOFT_MAX with attention sinks (ggml_soft_max_add_sinks): one logit per head in the
	// denominator, with and without masks (fully masked rows give zeros), ALiBi and long rows.
	add("SOFT_MAX(sinks)", nmseSoftMax, 0, 0, func(c *core.Context) *core.Tensor {
		return c.SoftMaxAddSinks(c.SoftMax(c.NewTensor(f32, 29, 5, 4)), c.NewTensor1D(f32, 4).SetName("big"))
	})
	for _, mt := range []core.Type{f32, f16} {
		mt := mt
		add(fmt.Sprintf("SOFT_MAX(%v mask,sinks,alibi)", mt), nmseSoftMax, 0, 0, func(c *core.Context) *core.Tensor {
			sm := c.SoftMaxExt(c.NewTensor(f32, 40, 6, 5, 2), c.NewTensor(mt, 40, 7, 1, 2).SetName("mask"), 0.5, 8)
			return c.SoftMaxAddSinks(sm, c.NewTensor1D(f32, 5))
		})
	}
	add("SOFT_MAX(sinks,long rows)", nmseSoftMax, 0, 0, func(c *core.Context) *core.Tensor {
		sm := c.SoftMaxExt(c.NewTensor(f32, 2500, 3, 2), c.NewTensor(f32, 2500, 3).SetName("mask"), 1, 0)
		return c.SoftMaxAddSinks(sm, c.NewTensor1D(f32, 2))
	})

	// DIAG_MASK_INF.
	for _, nPast := range []int{0, 3, -2} {
		nPast := nPast
		add(fmt.Sprintf("DIAG_MASK_INF(n_past=%d,4d)", nPast), 0, 0, 0, func(c *core.Context) *core.Tensor {
			return c.DiagMaskInf(c.NewTensor(f32, 11, 7, 3, 2), nPast)
		})
	}
	add("DIAG_MASK_INF(view)", 0, 0, 0, func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 12, 9, 2)
		return c.DiagMaskInf(c.View3D(a, 8, 6, 2, a.Nb[1], a.Nb[2], a.Nb[1]+4), 1)
	})

	// ROPE.
	rope := func(c *core.Context, a *core.Tensor, ff bool, p core.RopeParams) *core.Tensor {
		var f *core.Tensor
		if ff {
			f = c.NewTensor1D(f32, int64(p.NDims/2)).SetName("ff")
		}
		return c.RopeExt(a, c.NewTensor1D(core.TypeI32, a.Ne[2]).SetName("pos"), f, p)
	}
	plain := func(nDims, mode int) core.RopeParams {
		return core.RopeParams{NDims: nDims, Mode: mode, FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
	}
	yarn := func(nDims, mode int) core.RopeParams {
		return core.RopeParams{NDims: nDims, Mode: mode, NCtxOrig: 4096, FreqBase: 500000, FreqScale: 0.25,
			ExtFactor: 1, AttnFactor: 0.9, BetaFast: 32, BetaSlow: 1}
	}
	for _, typ := range []core.Type{f32, f16} {
		for _, mode := range []int{core.RopeNormal, core.RopeNeox} {
			typ, mode := typ, mode
			name := func(s string) string { return fmt.Sprintf("ROPE(%v,mode=%d,%s)", typ, mode, s) }
			add(name("head 128"), 0, 0, 200, func(c *core.Context) *core.Tensor {
				return rope(c, c.NewTensor(typ, 128, 4, 6), false, plain(128, mode))
			})
			add(name("odd ne0,n_dims=16,4d"), 0, 0, 200, func(c *core.Context) *core.Tensor {
				return rope(c, c.NewTensor(typ, 33, 3, 5, 2), false, plain(16, mode))
			})
			add(name("yarn,freq factors"), 0, 0, 200, func(c *core.Context) *core.Tensor {
				return rope(c, c.NewTensor(typ, 128, 2, 5), true, yarn(96, mode))
			})
			add(name("strided src"), 0, 0, 200, func(c *core.Context) *core.Tensor {
				a := c.NewTensor(typ, 80, 5, 4)
				return rope(c, c.View3D(a, 64, 3, 4, 2*a.Nb[1], a.Nb[2], 8*typ.Size()), false, plain(64, mode))
			})
			add(name("positions to 4000"), 0, -100, 4000, func(c *core.Context) *core.Tensor {
				return rope(c, c.NewTensor(typ, 128, 2, 16), false, plain(128, mode))
			})
			add(name("positions to 500000,yarn"), 0, 0, 500000, func(c *core.Context) *core.Tensor {
				return rope(c, c.NewTensor(typ, 128, 2, 16), true, yarn(128, mode))
			})
		}
	}
	// ggml_rope_multi's modes (positions 4 per token), the offset (ggml_rope_set_offset), their
	// ROPE_BACK, and in-place rope on a strided view.
	multi := func(c *core.Context, a *core.Tensor, ff bool, p core.RopeParams) (*core.Tensor, *core.Tensor, *core.Tensor) {
		var f *core.Tensor
		if ff {
			n := int64(p.NDims / 2)
			if p.Mode == core.RopeVision {
				n = int64(p.NDims)
			}
			f = c.NewTensor1D(f32, n).SetName("ff")
		}
		pos := c.NewTensor1D(core.TypeI32, 4*a.Ne[2]).SetName("pos")
		return c.RopeMulti(a, pos, f, p), pos, f
	}
	for _, typ := range []core.Type{f32, f16} {
		for _, m := range []struct {
			mode      int
			ne0, dims int
			sections  [4]int
		}{
			{core.RopeMrope, 128, 128, [4]int{16, 24, 24, 0}},
			{core.RopeMrope, 36, 32, [4]int{8, 4, 4, 0}},
			{core.RopeImrope, 128, 128, [4]int{24, 20, 20, 0}},
			{core.RopeImrope, 40, 32, [4]int{6, 5, 5, 0}},
			{core.RopeVision, 64, 32, [4]int{16, 16, 0, 0}},
		} {
			typ, m := typ, m
			name := fmt.Sprintf("ROPE(%v,mode=%d,ne0=%d,n_dims=%d,sections=%v)", typ, m.mode, m.ne0, m.dims, m.sections)
			p := plain(m.dims, m.mode)
			p.Sections = m.sections
			add(name, 0, 0, 3000, func(c *core.Context) *core.Tensor {
				r, _, _ := multi(c, c.NewTensor(typ, int64(m.ne0), 3, 5), false, p)
				return r
			})
			yp := yarn(m.dims, m.mode)
			yp.Sections = m.sections
			add(name+",yarn,freq factors", 0, 0, 3000, func(c *core.Context) *core.Tensor {
				r, _, _ := multi(c, c.NewTensor(typ, int64(m.ne0), 2, 4), true, yp)
				return r
			})
			add("ROPE_BACK"+name[4:], 0, 0, 3000, func(c *core.Context) *core.Tensor {
				_, pos, _ := multi(c, c.NewTensor(typ, int64(m.ne0), 2, 4), false, p)
				return c.RopeExtBack(c.NewTensor(typ, int64(m.ne0), 2, 4), pos, nil, p)
			})
		}
		for _, mode := range []int{core.RopeNormal, core.RopeNeox} {
			typ, mode := typ, mode
			add(fmt.Sprintf("ROPE(%v,mode=%d,offset 4)", typ, mode), 0, 0, 200, func(c *core.Context) *core.Tensor {
				return c.RopeSetOffset(rope(c, c.NewTensor(typ, 40, 3, 5), false, plain(32, mode)), 4)
			})
			add(fmt.Sprintf("ROPE_BACK(%v,mode=%d,offset 6)", typ, mode), 0, 0, 200, func(c *core.Context) *core.Tensor {
				g := c.NewTensor(typ, 42, 3, 5)
				return c.RopeSetOffset(c.RopeExtBack(g, c.NewTensor1D(core.TypeI32, 5).SetName("pos"), nil, plain(32, mode)), 6)
			})
			add(fmt.Sprintf("ROPE(%v,mode=%d,in place,strided view)", typ, mode), 0, 0, 200, func(c *core.Context) *core.Tensor {
				a := c.NewTensor(typ, 80, 6, 4)
				v := c.View3D(a, 64, 3, 4, 2*a.Nb[1], a.Nb[2], 8*typ.Size())
				return c.RopeExtInplace(v, c.NewTensor1D(core.TypeI32, 4).SetName("pos"), nil, plain(48, mode))
			})
		}
		typ := typ
		p := plain(32, core.RopeMrope)
		p.Sections = [4]int{8, 4, 4, 0}
		add(fmt.Sprintf("ROPE(%v,mode=40,ne0=40,n_dims=32,offset 8)", typ), 0, 0, 3000, func(c *core.Context) *core.Tensor {
			ip := plain(32, core.RopeImrope)
			ip.Sections = [4]int{6, 5, 5, 0}
			r, _, _ := multi(c, c.NewTensor(typ, 40, 3, 2), false, ip)
			return c.RopeSetOffset(r, 8)
		})
		add(fmt.Sprintf("ROPE(%v,mode=8,in place,strided view)", typ), 0, 0, 3000, func(c *core.Context) *core.Tensor {
			a := c.NewTensor(typ, 48, 6, 3)
			v := c.View3D(a, 40, 3, 3, 2*a.Nb[1], a.Nb[2], 4*typ.Size())
			return c.RopeExtInplace(v, c.NewTensor1D(core.TypeI32, 12).SetName("pos"), nil, p)
		})
	}
	return cs
}
