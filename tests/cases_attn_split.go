package tests

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// FLASH_ATTN_EXT in the shapes of a decode step: few query rows (1 to 4) over 300 to 2000 keys,
// which GPU backends split over workgroups (chunks of 64 keys on lavapipe's sizes, 128 for the
// case of 64 rows) and combine:
// GQA ratios 1, 2, 4 and 8, head sizes 40, 64, 80 and 128 (dv != dk too), f32, f16 and q8_0 K/V
// (and bf16, q4_0, q4_1, q5_0, q5_1, iq4_nl, q1_0 and q2_0 in ggml's pairs: attnSplitTypeShapes),
// masks in f16 and f32 with whole 64-key chunks of -inf (splits that see no key) and fully
// masked query rows, per-head mask planes, ALiBi, soft cap, sinks, a KV cache view, a row with
// every key masked; and a graph of two such attentions that share the GPU's scratch memory. The
// cases of float keys are held to 1e-8 (they reach 1e-13 on lavapipe), far below what a split
// combined without its rescaling gives.

func init() {
	extraCases = append(extraCases, attnSplitCases)
}

// attnSplitInit fills "chunkmask" (every third query row entirely -inf; keys of every third
// 64-key chunk -inf; in odd planes the first chunk -inf too; a quarter of the rest -inf at random,
// else [-1, 1)) and "deadmask" (all -inf); everything else as normInit.
func attnSplitInit(t *core.Tensor, r *rand.Rand) error {
	ninf := float32(math.Inf(-1))
	switch t.Name {
	case "chunkmask":
		v := make([]float32, t.NElements())
		for i := range v {
			j := int64(i) % t.Ne[0]
			row := int64(i) / t.Ne[0] % t.Ne[1]
			plane := int64(i) / (t.Ne[0] * t.Ne[1])
			switch {
			case row%3 == 2, (j/64)%3 == 1, plane%2 == 1 && j < 64, r.IntN(4) == 0:
				v[i] = ninf
			default:
				v[i] = 2*r.Float32() - 1
			}
		}
		return core.SetFloat32s(t, v)
	case "deadmask":
		v := make([]float32, t.NElements())
		for i := range v {
			v[i] = ninf
		}
		return core.SetFloat32s(t, v)
	}
	return normInit(0, 0)(t, r)
}

func attnSplitCases() []Case {
	f32, f16, q8 := core.TypeF32, core.TypeF16, core.TypeQ8_0
	base := attnShape{kt: f16, vt: f16, dk: 64, dv: 64, nq: 1, nkv: 300, nh: 8, nhk: 2, ne3: 1, mt: f16, m2: 1, m3: 1,
		scale: 0.125, maskName: "chunkmask"}
	with := func(f func(s *attnShape)) attnShape { s := base; f(&s); return s }
	shapes := []attnShape{
		base,
		with(func(s *attnShape) {
			s.nq, s.nkv, s.nh, s.nhk, s.kt, s.vt, s.dk, s.dv, s.mt = 3, 1000, 4, 4, f32, f32, 80, 80, f32
		}),
		with(func(s *attnShape) {
			s.nkv, s.nh, s.nhk, s.kt, s.vt, s.dk, s.dv, s.sinks = 2000, 16, 2, q8, q8, 128, 128, true
		}),
		with(func(s *attnShape) {
			s.nq, s.nkv, s.dk, s.dv, s.vt, s.mt, s.softcap = 2, 777, 40, 24, f32, noAttnMask, 30
		}),
		with(func(s *attnShape) {
			s.nq, s.nkv, s.nh, s.nhk, s.kt, s.maxBias, s.softcap, s.scale = 4, 513, 6, 3, q8, 8, 10, 1
		}),
		with(func(s *attnShape) { s.kt, s.vt, s.mt, s.maskName, s.sinks = f32, q8, f32, "deadmask", true }),
		with(func(s *attnShape) { s.nkv, s.nh, s.nhk, s.cache, s.sinks = 600, 32, 4, true, true }),
		with(func(s *attnShape) { s.nq, s.nkv, s.nh, s.nhk, s.ne3, s.mt, s.m2, s.m3 = 2, 400, 4, 2, 2, f32, 4, 2 }),
		with(func(s *attnShape) { s.nq, s.nkv, s.nh, s.nhk, s.dk, s.dv, s.kt, s.vt = 1, 1500, 8, 1, 128, 64, f16, q8 }),
		// 64 query rows: 16 splits of two tiles each (the in-workgroup rescaling between tiles)
		with(func(s *attnShape) { s.nq, s.nkv, s.nh, s.nhk, s.mt, s.maxBias = 4, 2000, 16, 16, f32, 4 }),
	}
	shapes = append(shapes, attnSplitTypeShapes(with)...)
	var cs []Case
	for _, s := range shapes {
		limit := 1e-8
		if s.kt.IsQuantized() {
			limit = nmseMatMul // the CPU quantizes q to q8_0 (q8_1) for the block types' keys
		}
		cs = append(cs, Case{Name: s.name() + "/split", Build: s.build, MaxNMSE: limit, Init: attnSplitInit})
	}
	// Two layers' attentions in one graph, independent but for the GPU's scratch memory.
	a := with(func(s *attnShape) { s.nkv = 700 })
	b := with(func(s *attnShape) { s.nkv = 300; s.mt = f32 })
	cs = append(cs, Case{
		Name: fmt.Sprintf("FLASH_ATTN_EXT+FLASH_ATTN_EXT(nkv=%d,%d,heads=%d/%d)/split", a.nkv, b.nkv, a.nh, a.nhk),
		Build: func(c *core.Context) *core.Tensor {
			return c.Add(a.build(c), b.build(c))
		},
		MaxNMSE: 1e-8, Init: attnSplitInit,
	})
	// K and V with different head counts (8 query heads over 2 k heads and 4 v heads): the
	// workgroups take the query heads that share both (2).
	cs = append(cs, Case{
		Name: "FLASH_ATTN_EXT(k=f16,v=f16,heads=8/2k/4v,nq=2,nkv=450)/split",
		Build: func(c *core.Context) *core.Tensor {
			q := c.NewTensor(f32, 64, 2, 8, 1)
			k := c.NewTensor(f16, 64, 450, 2, 1)
			v := c.NewTensor(f16, 48, 450, 4, 1)
			m := c.NewTensor(f16, 450, 3, 1, 1).SetName("chunkmask")
			return c.FlashAttnExt(q, k, v, m, 0.125, 0, 0)
		},
		MaxNMSE: 1e-8, Init: attnSplitInit,
	})
	return cs
}

// attnSplitTypeShapes are split cases of the K/V types beyond f32, f16 and q8_0 (ggml's pairs, as
// attnTypeShapes): bf16 (held to 1e-8 like f16: the GPU rounds the query to bf16 as the CPU
// does), q4_0, q4_1, q5_0, q5_1, iq4_nl, q1_0 and q2_0 with themselves, and the mixed pairs with
// q4_0, q8_0 and f16 (f16 keys over q4_0 values held to 1e-8: the values decode exactly).
func attnSplitTypeShapes(with func(func(s *attnShape)) attnShape) []attnShape {
	f16, f32, q40, q80 := core.TypeF16, core.TypeF32, core.TypeQ4_0, core.TypeQ8_0
	q41, q50, q51, iq4 := core.TypeQ4_1, core.TypeQ5_0, core.TypeQ5_1, core.TypeIQ4_NL
	q10, q20 := core.TypeQ1_0, core.TypeQ2_0
	return []attnShape{
		with(func(s *attnShape) { s.kt, s.vt = core.TypeBF16, core.TypeBF16 }),
		with(func(s *attnShape) { s.kt, s.vt, s.nq, s.nkv, s.sinks = q40, q40, 2, 777, true }),
		with(func(s *attnShape) {
			s.kt, s.vt, s.nq, s.nkv, s.nh, s.nhk, s.dk, s.dv, s.mt = q41, q41, 3, 400, 4, 4, 96, 96, f32
		}),
		with(func(s *attnShape) {
			s.kt, s.vt, s.nq, s.nkv, s.nh, s.nhk, s.maxBias, s.softcap, s.scale = q50, q50, 4, 513, 6, 3, 8, 10, 1
		}),
		with(func(s *attnShape) { s.kt, s.vt, s.nkv, s.nh, s.nhk, s.cache = q51, q51, 600, 16, 4, true }),
		with(func(s *attnShape) { s.kt, s.vt, s.nkv, s.dk, s.dv = iq4, iq4, 1000, 128, 128 }),
		with(func(s *attnShape) { s.kt, s.vt, s.dk, s.dv = q10, q10, 128, 128 }),
		with(func(s *attnShape) { s.kt, s.vt, s.nq, s.nkv, s.dk, s.dv = q20, q20, 2, 450, 128, 128 }),
		with(func(s *attnShape) { s.kt, s.vt, s.nkv = q80, q40, 500 }),
		with(func(s *attnShape) { s.kt, s.vt, s.nq, s.nh, s.nhk = q40, q80, 2, 4, 4 }),
		with(func(s *attnShape) { s.kt, s.vt, s.cache, s.sinks = q40, f16, true, true }),
		with(func(s *attnShape) { s.kt, s.vt, s.nkv, s.nh, s.nhk, s.dk, s.dv = f16, q40, 1000, 8, 8, 128, 128 }),
		with(func(s *attnShape) { s.kt, s.vt, s.dk, s.dv, s.nkv = q10, q40, 128, 64, 350 }),
		with(func(s *attnShape) { s.kt, s.vt, s.dk, s.dv, s.nkv, s.mt = q40, q20, 64, 128, 350, f32 }),
	}
}
