package tests

import (
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// FLASH_ATTN_EXT with keys and values of the types the GPU decodes with kquants.glsl's loaders
// (shaders/fa_kv.glsl): Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS, MXFP4, NVFP4 and the IQ3/IQ2/IQ1
// types, each in a one-pass shape and the split shape of a decode step (1 query row over 300 keys,
// attnSplitInit's chunked mask); a Q4_K case with two batches, per-head f32 mask planes, sinks,
// soft cap and a KV cache view; 8 query heads over one K/V head; and MXFP4 in K/V rows of an odd number of bytes
// (3 and 1 blocks of 17), dense and as a view of a KV cache, one-pass and split (the shaders
// address MXFP4's K and V in bytes). K and V hold different data, so a value read from the keys'
// buffer fails the comparison. The CPU quantizes the query to K's vec-dot type (q8_K for most of
// these), the GPU keeps it f32; here the query is one the CPU's conversion keeps exactly
// (attnExactQuery), so the two differ by the order of f32 sums only and the cases are held to
// 1e-8, as the float keys' (a wrong sub-block scale anywhere shows).

func init() {
	extraCases = append(extraCases, attnKQCases)
}

func attnKQCases() []Case {
	f16, f32 := core.TypeF16, core.TypeF32
	var cs []Case
	add := func(s attnShape, split bool) {
		name, init := s.name(), normInit(0, 0)
		if split {
			name, init = name+"/split", attnSplitInit
		}
		build := func(c *core.Context) *core.Tensor {
			out := s.build(c)
			out.Src[0].SetName("qexact")
			return out
		}
		cs = append(cs, Case{Name: "attnkq/" + name, Build: build, MaxNMSE: 1e-8, Init: func(t *core.Tensor, r *rand.Rand) error {
			if t.Name == "qexact" {
				return attnExactQuery(t, r)
			}
			return init(t, r)
		}})
	}
	one := func(t core.Type, dk, dv int64) attnShape {
		return attnShape{kt: t, vt: t, dk: dk, dv: dv, nq: 3, nkv: 19, nh: 4, nhk: 2, ne3: 1, mt: f16, m2: 1, m3: 1, scale: 0.06}
	}
	split := func(t core.Type, dk, dv int64) attnShape {
		return attnShape{kt: t, vt: t, dk: dk, dv: dv, nq: 1, nkv: 300, nh: 8, nhk: 2, ne3: 1, mt: f16, m2: 1, m3: 1,
			scale: 0.06, maskName: "chunkmask"}
	}
	for _, t := range []core.Type{core.TypeQ2_K, core.TypeQ3_K, core.TypeQ4_K, core.TypeQ5_K, core.TypeQ6_K, core.TypeIQ4_XS} {
		add(one(t, 256, 256), false)
		add(split(t, 256, 256), true)
	}
	// A second shape for one K-quant: two batches, an f32 mask per head, sinks, soft cap, a cache view.
	s := one(core.TypeQ4_K, 256, 256)
	s.ne3, s.mt, s.m2, s.m3, s.sinks, s.softcap, s.cache = 2, f32, 4, 2, true, 20, true
	add(s, false)
	for _, t := range []core.Type{core.TypeMXFP4, core.TypeNVFP4} {
		add(one(t, 128, 64), false)
		add(split(t, 128, 64), true)
	}
	for _, t := range []core.Type{core.TypeIQ3_XXS, core.TypeIQ3_S, core.TypeIQ2_XXS, core.TypeIQ2_XS, core.TypeIQ2_S,
		core.TypeIQ1_S, core.TypeIQ1_M} {
		add(one(t, 256, 256), false)
		add(split(t, 256, 256), true)
	}
	// MXFP4 rows of 51 and 17 bytes: every other row starts at an odd byte.
	mx := one(core.TypeMXFP4, 96, 32)
	add(mx, false)
	mx.cache = true
	add(mx, false)
	mxs := split(core.TypeMXFP4, 96, 32)
	add(mxs, true)
	mxs.cache = true
	add(mxs, true)
	// Grouped heads over one K/V head (the split's G = 8 query rows in shared memory at dk = 256).
	g := split(core.TypeIQ2_XS, 256, 256)
	g.nhk = 1
	add(g, true)
	return cs
}

// attnExactQuery fills the f32 query t with multiples of 1/64 in [-127/64, 127/64], the first
// element of every 32 one of ±127/64: q8_0, q8_1 and q8_K (the vec-dot types the CPU converts the
// query to) then hold it exactly (scale 1/64, codes the multiples).
func attnExactQuery(t *core.Tensor, r *rand.Rand) error {
	v := make([]float32, t.NElements())
	for i := range v {
		q := r.IntN(255) - 127
		if i%32 == 0 {
			q = 127
			if r.IntN(2) == 0 {
				q = -127
			}
		}
		v[i] = float32(q) / 64
	}
	return core.SetFloat32s(t, v)
}
