package tests

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// FLASH_ATTN_EXT over the K/V types (f32, f16, q8_0, and mixed; bf16, q4_0, q4_1, q5_0, q5_1,
// iq4_nl, q1_0 and q2_0 in ggml's pairs: attnTypeShapes), odd head sizes and kv lengths,
// GQA, masks in f16 and f32 broadcast over dims 2 and 3 with -inf entries and fully masked query
// rows (normInit's "mask"), ALiBi with a head count that is not a power of two, logit soft cap,
// sinks, batches in dim 3, and k/v as permuted views of a KV cache. Shapes stay small: lavapipe
// runs them too. ggml's bound for the op is 5e-4.

func init() {
	extraCases = append(extraCases, attnCases)
}

type attnShape struct {
	kt, vt                   core.Type
	dk, dv, nq, nkv, nh, nhk int64
	ne3                      int64
	mt                       core.Type // mask type; noAttnMask: none
	m2, m3                   int64
	scale, maxBias, softcap  float32
	sinks, cache             bool
	maskName                 string // the mask's name for Init; "": "mask" (normInit's)
}

const noAttnMask = core.Type(-1)

func (s attnShape) name() string {
	m := "none"
	if s.mt != noAttnMask {
		m = fmt.Sprintf("%v[%d,%d]", s.mt, s.m2, s.m3)
	}
	return fmt.Sprintf("FLASH_ATTN_EXT(k=%v,v=%v,dk=%d,dv=%d,nq=%d,nkv=%d,heads=%d/%d,ne3=%d,mask=%s,scale=%g,max_bias=%g,softcap=%g,sinks=%v,cache=%v)",
		s.kt, s.vt, s.dk, s.dv, s.nq, s.nkv, s.nh, s.nhk, s.ne3, m, s.scale, s.maxBias, s.softcap, s.sinks, s.cache)
}

func (s attnShape) build(c *core.Context) *core.Tensor {
	q := c.NewTensor(core.TypeF32, s.dk, s.nq, s.nh, s.ne3)
	var k, v *core.Tensor
	if s.cache {
		// cache [d, n_head_kv, n_ctx, ne3]: the first nkv cells, heads moved to dim 2
		nctx := s.nkv + 5
		kc := c.NewTensor(s.kt, s.dk, s.nhk, nctx, s.ne3)
		vc := c.NewTensor(s.vt, s.dv, s.nhk, nctx, s.ne3)
		k = c.Permute(c.View4D(kc, s.dk, s.nhk, s.nkv, s.ne3, kc.Nb[1], kc.Nb[2], kc.Nb[3], kc.Nb[2]), 0, 2, 1, 3)
		v = c.Permute(c.View4D(vc, s.dv, s.nhk, s.nkv, s.ne3, vc.Nb[1], vc.Nb[2], vc.Nb[3], 0), 0, 2, 1, 3)
	} else {
		k = c.NewTensor(s.kt, s.dk, s.nkv, s.nhk, s.ne3)
		v = c.NewTensor(s.vt, s.dv, s.nkv, s.nhk, s.ne3)
	}
	var mask *core.Tensor
	if s.mt != noAttnMask {
		name := s.maskName
		if name == "" {
			name = "mask"
		}
		mask = c.NewTensor(s.mt, s.nkv, s.nq+1, s.m2, s.m3).SetName(name)
	}
	out := c.FlashAttnExt(q, k, v, mask, s.scale, s.maxBias, s.softcap)
	if s.sinks {
		c.FlashAttnExtAddSinks(out, c.NewTensor1D(core.TypeF32, s.nh).SetName("sinks"))
	}
	return out
}

func attnCases() []Case {
	f32, f16, q8 := core.TypeF32, core.TypeF16, core.TypeQ8_0
	base := attnShape{kt: f16, vt: f16, dk: 64, dv: 64, nq: 5, nkv: 37, nh: 4, nhk: 2, ne3: 1, mt: f16, m2: 1, m3: 1, scale: 0.125}
	with := func(f func(s *attnShape)) attnShape { s := base; f(&s); return s }
	shapes := []attnShape{
		base,
		with(func(s *attnShape) { s.kt, s.vt, s.dk, s.dv, s.mt, s.ne3 = f32, f32, 40, 24, noAttnMask, 2 }),
		with(func(s *attnShape) { s.kt, s.vt, s.nh, s.nhk = q8, q8, 8, 2 }),
		with(func(s *attnShape) { s.kt, s.vt, s.dv = f16, f32, 32 }),
		with(func(s *attnShape) { s.kt, s.vt = q8, f16 }),
		with(func(s *attnShape) { s.nh, s.nhk, s.maxBias, s.softcap, s.scale = 6, 3, 8, 10, 1 }),
		with(func(s *attnShape) { s.sinks, s.mt, s.m2, s.ne3, s.m3 = true, f32, 4, 2, 1 }),
		with(func(s *attnShape) {
			s.cache, s.nq, s.nkv, s.nh, s.nhk, s.sinks, s.mt = true, 1, 70, 8, 1, true, noAttnMask
		}),
		with(func(s *attnShape) { s.cache, s.kt, s.vt, s.dk, s.dv, s.ne3, s.m3 = true, q8, q8, 32, 32, 2, 2 }),
		with(func(s *attnShape) { s.dk, s.dv, s.nkv, s.nq, s.nh, s.nhk = 128, 128, 300, 2, 2, 1 }),
		// DeepSeek's MLA: key heads of 576 (past the value heads' 512), one k/v head; one
		// workgroup per row, then the key split of a decode step
		with(func(s *attnShape) { s.dk, s.dv, s.nq, s.nkv, s.nh, s.nhk = 576, 512, 3, 70, 4, 1 }),
		with(func(s *attnShape) { s.kt, s.vt, s.dk, s.dv, s.nq, s.nkv, s.nh, s.nhk = q8, q8, 576, 512, 1, 300, 2, 1 }),
	}
	shapes = append(shapes, attnTypeShapes(base)...)
	var cs []Case
	for _, s := range shapes {
		cs = append(cs, Case{Name: s.name(), Build: s.build, MaxNMSE: nmseMatMul, Init: normInit(0, 0)})
	}
	return cs
}

// attnTypeShapes are base with the K/V types beyond f32, f16 and q8_0, as ggml's test-backend-ops
// runs them: bf16, q4_0, q4_1, q5_0, q5_1 and iq4_nl each with itself (its head sizes 64 and 72,
// the latter padded to 96 for the block types), some with ALiBi and soft cap, sinks, batches
// and cache views; and its mixed pairs (4 k heads of 4 query heads, 2 query rows): q8_0/q4_0,
// q4_0 with f16 and q8_0, q1_0 (128-element blocks) and q2_0 (64) with themselves, q4_0 and f16.
func attnTypeShapes(base attnShape) []attnShape {
	with := func(f func(s *attnShape)) attnShape { s := base; f(&s); return s }
	f16, f32, q40, q80 := core.TypeF16, core.TypeF32, core.TypeQ4_0, core.TypeQ8_0
	var shapes []attnShape
	for _, t := range []core.Type{core.TypeBF16, q40, core.TypeQ4_1, core.TypeQ5_0, core.TypeQ5_1, core.TypeIQ4_NL} {
		shapes = append(shapes, with(func(s *attnShape) { s.kt, s.vt = t, t }))
	}
	bf16, q41, q50, q51, iq4 := core.TypeBF16, core.TypeQ4_1, core.TypeQ5_0, core.TypeQ5_1, core.TypeIQ4_NL
	shapes = append(shapes,
		with(func(s *attnShape) { s.kt, s.vt, s.dk, s.dv, s.nq, s.ne3, s.m3 = q41, q41, 96, 96, 3, 2, 2 }),
		with(func(s *attnShape) { s.kt, s.vt, s.nh, s.nhk, s.maxBias, s.softcap, s.scale = q51, q51, 6, 3, 8, 10, 1 }),
		with(func(s *attnShape) { s.kt, s.vt, s.sinks, s.mt, s.m2, s.ne3 = q50, q50, true, f32, 4, 2 }),
		with(func(s *attnShape) { s.kt, s.vt, s.cache, s.sinks, s.nh, s.nhk = bf16, bf16, true, true, 8, 1 }),
		with(func(s *attnShape) { s.kt, s.vt, s.cache, s.dk, s.dv, s.mt = iq4, iq4, true, 32, 32, noAttnMask }),
	)
	q10, q20 := core.TypeQ1_0, core.TypeQ2_0
	for _, p := range []struct {
		k, v   core.Type
		dk, dv int64
	}{
		{q80, q40, 64, 64}, {q40, f16, 64, 64}, {q40, q80, 96, 96}, {f16, q40, 128, 128},
		{q10, q10, 128, 128}, {q10, q40, 128, 64}, {q40, q10, 64, 128}, {q10, f16, 128, 64},
		{q20, q20, 128, 128}, {q20, q40, 128, 64}, {q40, q20, 64, 128}, {q20, f16, 128, 64},
	} {
		shapes = append(shapes, with(func(s *attnShape) {
			s.kt, s.vt, s.dk, s.dv, s.nh, s.nhk, s.nq, s.nkv = p.k, p.v, p.dk, p.dv, 4, 4, 2, 96
		}))
	}
	return shapes
}
