package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// faCase is one FLASH_ATTN_EXT shape: q [dk, nq, nh, ne3], k [dk, nkv, nhkv, ne3] of type kt,
// v [dv, nkv, nhkv, ne3] of type vt, an optional mask of type mt (TypeCount: none) with m2 × m3
// broadcast planes, and the op's parameters.
type faCase struct {
	kt, vt, mt               core.Type
	dk, dv, nq, nkv, nh      int64
	nhkv, ne3, m2, m3        int64
	scale, maxBias, softcap  float32
	sinks, cache, maskedRows bool  // sinks; k and v as permuted views of a cache; all-masked query rows
	causal, garbage          bool  // causal mask; the last faGarbage keys masked for every row and NaN
	mid                      bool  // with garbage: also 3 keys in the middle
	garbageV                 bool  // with garbage: the NaN in the values only (finite keys)
	tail                     int64 // with garbage: this many keys at the end instead of faGarbage
	head0Tail                int64 // the mask rows of head 0 (of m2) also mask this many keys more
}

// faGarbageKey reports whether key j of c is masked for every row and filled with NaN.
func (c faCase) faGarbageKey(j int64) bool {
	n := int64(faGarbage)
	if c.tail > 0 {
		n = c.tail
	}
	return c.garbage && (j >= c.nkv-n || c.mid && j >= c.nkv/2 && j < c.nkv/2+3)
}

// faGarbage is how many keys a garbage case masks everywhere and fills with NaN (unused cells).
const faGarbage = 5

const noMask = core.Type(-1)

func (c faCase) String() string {
	m := "nomask"
	if c.mt != noMask {
		m = fmt.Sprintf("mask%v_%dx%d", c.mt, c.m2, c.m3)
	}
	return fmt.Sprintf("k%v_v%v_dk%d_dv%d_q%d_kv%d_h%d_%d_b%d_%s_s%g_ab%g_sc%g_sink%v_cache%v_masked%v_causal%v_garbage%v_mid%v_v%v_tail%d_%d",
		c.kt, c.vt, c.dk, c.dv, c.nq, c.nkv, c.nh, c.nhkv, c.ne3, m, c.scale, c.maxBias, c.softcap, c.sinks, c.cache, c.maskedRows,
		c.causal, c.garbage, c.mid, c.garbageV, c.tail, c.head0Tail)
}

// faCases covers odd sizes, GQA, masks (f16/f32, broadcast, -inf entries, fully masked rows),
// ALiBi, soft cap, sinks, KV-cache views and every K/V type family.
func faCases() []faCase {
	base := faCase{kt: core.TypeF16, vt: core.TypeF16, mt: core.TypeF16, dk: 40, dv: 24, nq: 5, nkv: 77, nh: 4,
		nhkv: 2, ne3: 1, m2: 1, m3: 1, scale: 0.3}
	with := func(f func(c *faCase)) faCase { c := base; f(&c); return c }
	return []faCase{
		base,
		with(func(c *faCase) { c.kt, c.vt = core.TypeF32, core.TypeF32; c.mt = noMask }),
		with(func(c *faCase) { c.kt, c.vt, c.mt = core.TypeF32, core.TypeF32, core.TypeF32; c.nhkv = 4 }),
		with(func(c *faCase) { c.kt, c.vt, c.dk, c.dv = core.TypeQ8_0, core.TypeQ8_0, 64, 32 }),
		with(func(c *faCase) { c.kt, c.vt, c.dk, c.dv = core.TypeQ4_0, core.TypeF16, 64, 64; c.nhkv = 1 }),
		with(func(c *faCase) { c.kt, c.vt = core.TypeBF16, core.TypeF32 }),
		with(func(c *faCase) { c.maskedRows, c.sinks = true, true }),
		with(func(c *faCase) { c.maskedRows = true; c.nkv = 150 }),
		with(func(c *faCase) { c.maxBias, c.nh, c.nhkv, c.m2 = 8, 6, 3, 6 }),
		with(func(c *faCase) { c.softcap, c.scale = 2.5, 1 }),
		with(func(c *faCase) { c.ne3, c.m3, c.nq = 2, 2, 1 }),
		with(func(c *faCase) { c.ne3, c.nkv, c.sinks = 3, 200, true; c.mt = noMask }),
		with(func(c *faCase) { c.cache = true; c.nkv = 70; c.nq = 3; c.sinks = true }),
		with(func(c *faCase) { c.cache = true; c.kt, c.vt, c.dk, c.dv = core.TypeQ8_0, core.TypeQ8_0, 32, 32 }),
		with(func(c *faCase) { c.nh, c.nhkv, c.nq, c.nkv, c.dk, c.dv, c.mt = 8, 1, 1, 1, 16, 8, noMask }),
		// prompts (the tiled kernel): GQA tiles, causal masks skipping whole key blocks, unused
		// NaN cells, a cache view, f32 keys with f16 values, ALiBi and sinks
		with(func(c *faCase) { c.nq, c.nkv, c.nh, c.nhkv, c.dk, c.dv, c.causal = 70, 200, 8, 2, 64, 64, true }),
		// three key blocks of faTileKeys, tiles of 8 heads x 12 positions, blocks skipped
		with(func(c *faCase) { c.nq, c.nkv, c.nh, c.nhkv, c.dk, c.dv, c.causal = 100, 300, 8, 1, 64, 64, true }),
		with(func(c *faCase) { c.nq, c.nkv, c.causal, c.garbage, c.sinks = 40, 130, true, true, true }),
		with(func(c *faCase) { c.nq, c.nkv, c.causal, c.garbage, c.garbageV, c.mid = 40, 130, true, true, true, true }),
		with(func(c *faCase) { c.nq, c.nkv, c.nh, c.nhkv, c.cache, c.causal = 33, 100, 6, 3, true, true }),
		with(func(c *faCase) {
			c.nq, c.nkv, c.kt, c.vt, c.mt, c.causal = 9, 65, core.TypeF32, core.TypeF16, core.TypeF32, true
		}),
		with(func(c *faCase) { c.nq, c.nkv, c.maxBias, c.nh, c.nhkv, c.m2, c.garbage = 17, 90, 8, 4, 4, 4, true }),
		with(func(c *faCase) { c.nq, c.nkv, c.softcap, c.scale, c.mt = 12, 64, 2.5, 1, noMask }),
		// generation (the row kernel, four keys per dot): NaN in unused cells, f32 keys
		with(func(c *faCase) { c.nq, c.nkv, c.garbage, c.nh, c.nhkv = 1, 131, true, 8, 2 }),
		with(func(c *faCase) { c.nq, c.nkv, c.kt, c.vt, c.garbage = 2, 70, core.TypeF32, core.TypeF32, true }),
		with(func(c *faCase) { c.nq, c.nkv, c.dk, c.dv, c.garbage, c.mid = 1, 100, 64, 64, true, true }),
		with(func(c *faCase) { c.nq, c.nkv, c.dk, c.dv, c.garbage = 1, 100, 64, 64, true }),
		with(func(c *faCase) {
			c.nq, c.nkv, c.dk, c.dv, c.garbage, c.garbageV, c.mid = 1, 100, 64, 64, true, true, true
		}),
		// generation over a cache view mostly past the token's position: whole key blocks that
		// every head masks (skipped), a block masked from its middle on, per-head mask rows
		with(func(c *faCase) {
			c.nq, c.nkv, c.nh, c.nhkv, c.dk, c.dv, c.garbage, c.tail = 1, 300, 16, 4, 64, 64, true, 200
		}),
		with(func(c *faCase) {
			c.nq, c.nkv, c.mt, c.maxBias, c.nh, c.nhkv, c.m2 = 1, 300, core.TypeF32, 8, 8, 2, 8
			c.garbage, c.tail, c.head0Tail = true, 170, 70
		}),
		// generation over grouped heads
		with(func(c *faCase) {
			c.nq, c.nkv, c.nh, c.nhkv, c.dk, c.dv, c.garbage, c.mid = 1, 300, 16, 4, 64, 64, true, true
		}),
		with(func(c *faCase) {
			c.nq, c.nkv, c.nh, c.nhkv, c.kt, c.vt, c.mt = 2, 200, 12, 3, core.TypeF32, core.TypeF32, core.TypeF32
		}),
	}
}

// faBuild makes the operands of c in ctx, fills them with random values (seed) and returns the node.
func faBuild(t testing.TB, ctx *core.Context, c faCase, seed uint64) (out, q, k, v, mask, sinks *core.Tensor) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 11))
	q = ctx.NewTensor4D(core.TypeF32, c.dk, c.nq, c.nh, c.ne3)
	if c.cache {
		// a KV cache [d, n_head_kv, n_ctx, ne3] viewed as its first nkv cells, heads in dim 2
		nctx := c.nkv + 9
		kc := ctx.NewTensor4D(c.kt, c.dk, c.nhkv, nctx, c.ne3)
		vc := ctx.NewTensor4D(c.vt, c.dv, c.nhkv, nctx, c.ne3)
		faFill(t, kc, r, 1)
		faFill(t, vc, r, 1)
		k = ctx.Permute(ctx.View4D(kc, c.dk, c.nhkv, c.nkv, c.ne3, kc.Nb[1], kc.Nb[2], kc.Nb[3], kc.Nb[2]), 0, 2, 1, 3)
		v = ctx.Permute(ctx.View4D(vc, c.dv, c.nhkv, c.nkv, c.ne3, vc.Nb[1], vc.Nb[2], vc.Nb[3], 0), 0, 2, 1, 3)
	} else {
		k = ctx.NewTensor4D(c.kt, c.dk, c.nkv, c.nhkv, c.ne3)
		v = ctx.NewTensor4D(c.vt, c.dv, c.nkv, c.nhkv, c.ne3)
		faFill(t, k, r, 1)
		faFill(t, v, r, 1)
		if c.garbage {
			xs := []*core.Tensor{k, v}
			if c.garbageV {
				xs = xs[1:]
			}
			for _, x := range xs {
				vals, err := core.GetFloat32s(x)
				if err != nil {
					t.Fatal(err)
				}
				for row := int64(0); row < x.Ne[1]*x.Ne[2]*x.Ne[3]; row++ {
					if c.faGarbageKey(row % x.Ne[1]) {
						for d := int64(0); d < x.Ne[0]; d++ {
							vals[row*x.Ne[0]+d] = float32(math.NaN())
						}
					}
				}
				if err := core.SetFloat32s(x, vals); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	faFill(t, q, r, 1)
	if c.mt != noMask {
		mask = ctx.NewTensor4D(c.mt, c.nkv+3, c.nq+2, c.m2, c.m3)
		vals := make([]float32, mask.NElements())
		ninf := float32(math.Inf(-1))
		for i := range vals {
			vals[i] = r.Float32()*2 - 1
			if r.IntN(4) == 0 {
				vals[i] = ninf
			}
			if c.maskedRows && (i/int(mask.Ne[0]))%int(mask.Ne[1]) == 1 {
				vals[i] = ninf // query row 1 sees nothing
			}
			j, iq1 := int64(i)%mask.Ne[0], int64(i)/mask.Ne[0]%mask.Ne[1]
			if c.causal {
				if j > iq1+c.nkv-c.nq {
					vals[i] = ninf
				} else if vals[i] == ninf {
					vals[i] = 0 // every row keeps at least its diagonal
				}
			}
			if c.faGarbageKey(j) {
				vals[i] = ninf
			}
			if h := int64(i) / (mask.Ne[0] * mask.Ne[1]) % c.m2; h == 0 && j >= c.nkv-c.tail-c.head0Tail {
				vals[i] = ninf
			}
		}
		if err := core.SetFloat32s(mask, vals); err != nil {
			t.Fatal(err)
		}
	}
	out = ctx.FlashAttnExt(q, k, v, mask, c.scale, c.maxBias, c.softcap)
	if c.sinks {
		sinks = ctx.NewTensor1D(core.TypeF32, c.nh)
		faFill(t, sinks, r, 3)
		ctx.FlashAttnExtAddSinks(out, sinks)
	}
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	return out, q, k, v, mask, sinks
}

func faFill(t testing.TB, x *core.Tensor, r *rand.Rand, amp float32) {
	t.Helper()
	vals := make([]float32, x.NElements())
	for i := range vals {
		vals[i] = (r.Float32()*2 - 1) * amp
	}
	if err := core.SetFloat32s(x, vals); err != nil {
		t.Fatal(err)
	}
}

// faLogical reads x (any type, rows contiguous, any strides above) as float64 in logical order.
// With roundTo set, each row goes through that type first (the kernel's query conversion).
func faLogical(t testing.TB, x *core.Tensor, roundTo core.Type) []float64 {
	t.Helper()
	d := x.Data()
	ne0 := x.Ne[0]
	row := make([]float32, ne0)
	out := make([]float64, 0, x.NElements())
	for i3 := int64(0); i3 < x.Ne[3]; i3++ {
		for i2 := int64(0); i2 < x.Ne[2]; i2++ {
			for i1 := int64(0); i1 < x.Ne[1]; i1++ {
				off := i1*x.Nb[1] + i2*x.Nb[2] + i3*x.Nb[3]
				if err := x.Type.ToFloat(d[off:off+x.Type.RowSize(ne0)], row); err != nil {
					t.Fatal(err)
				}
				if roundTo != x.Type {
					b := make([]byte, roundTo.RowSize(ne0))
					if err := roundTo.FromFloat(row, b); err != nil {
						t.Fatal(err)
					}
					if err := roundTo.ToFloat(b, row); err != nil {
						t.Fatal(err)
					}
				}
				for _, f := range row {
					out = append(out, float64(f))
				}
			}
		}
	}
	return out
}

// faNaive is attention written out in float64: out[:, h, iq1, iq3] = Σ_j softmax(s)_j v_j with
// s_j = scale·q·k_j (soft-capped), plus slope_h·mask, -inf entries dropped, the sink in the
// denominator; rows with nothing left give 0. q is taken rounded to K's vec-dot type, as the
// kernels use it.
func faNaive(t testing.TB, c faCase, out, q, k, v, mask, sinks *core.Tensor) []float64 {
	qv := faLogical(t, q, k.Type.VecDotType())
	kv, vv := faLogical(t, k, k.Type), faLogical(t, v, v.Type)
	var mv, sv []float64
	if mask != nil {
		mv = faLogical(t, mask, mask.Type)
	}
	if sinks != nil {
		sv = faLogical(t, sinks, sinks.Type)
	}
	res := make([]float64, out.NElements())
	s := make([]float64, c.nkv)
	for iq3 := int64(0); iq3 < c.ne3; iq3++ {
		for h := int64(0); h < c.nh; h++ {
			slope := float64(core.AlibiSlope(h, c.nh, c.maxBias))
			hk := h / (c.nh / c.nhkv)
			for iq1 := int64(0); iq1 < c.nq; iq1++ {
				qo := ((iq3*c.nh+h)*c.nq + iq1) * c.dk
				mx := math.Inf(-1)
				for j := int64(0); j < c.nkv; j++ {
					var mterm float64
					if mask != nil {
						mo := (((iq3%c.m3)*c.m2+h%c.m2)*mask.Ne[1]+iq1)*mask.Ne[0] + j
						mterm = slope * mv[mo]
					}
					if math.IsInf(mterm, -1) {
						s[j] = mterm // a masked key is skipped, whatever it holds
						continue
					}
					ko := ((iq3*c.nhkv+hk)*c.nkv + j) * c.dk
					var dot float64
					for d := int64(0); d < c.dk; d++ {
						dot += qv[qo+d] * kv[ko+d]
					}
					x := float64(c.scale) * dot
					if c.softcap != 0 {
						x = float64(c.softcap) * math.Tanh(x/float64(c.softcap))
					}
					x += mterm
					s[j] = x
					mx = math.Max(mx, x)
				}
				if sinks != nil {
					mx = math.Max(mx, sv[h])
				}
				if math.IsInf(mx, -1) {
					continue // nothing to attend to: zeros
				}
				var sum float64
				ro := ((iq3*c.nq+iq1)*c.nh + h) * c.dv
				for j := int64(0); j < c.nkv; j++ {
					if math.IsInf(s[j], -1) {
						continue
					}
					w := math.Exp(s[j] - mx)
					sum += w
					vo := ((iq3*c.nhkv+hk)*c.nkv + j) * c.dv
					for d := int64(0); d < c.dv; d++ {
						res[ro+d] += w * vv[vo+d]
					}
				}
				if sinks != nil {
					sum += math.Exp(sv[h] - mx)
				}
				for d := int64(0); d < c.dv; d++ {
					res[ro+d] /= sum
				}
			}
		}
	}
	return res
}

func faCompute(t *testing.T, be interface {
	GraphCompute(*core.Graph) error
}, out *core.Tensor) []float32 {
	t.Helper()
	g := core.NewGraph(16)
	g.BuildForwardExpand(out)
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), mustF32(t, out)...)
}

// The reference kernel against float64 attention, and the fast kernel against the reference.
func TestFlashAttnKernels(t *testing.T) {
	ref, _ := cpu.New(cpu.Options{Threads: 2, Reference: true})
	defer ref.Close()
	fast, _ := cpu.New(cpu.Options{Threads: 3})
	defer fast.Close()
	for i, c := range faCases() {
		t.Run(c.String(), func(t *testing.T) {
			ctx := core.NewContext(core.ContextParams{MemSize: 16 << 20})
			out, q, k, v, mask, sinks := faBuild(t, ctx, c, uint64(100+i))
			want := faNaive(t, c, out, q, k, v, mask, sinks)
			got := faCompute(t, ref, out)
			if e := nmse(got, want); e > 1e-10 || math.IsNaN(e) {
				t.Fatalf("reference vs float64: NMSE %g > 1e-10", e)
			}
			fastGot := faCompute(t, fast, out)
			w64 := make([]float64, len(got))
			for i, x := range got {
				w64[i] = float64(x)
			}
			if e := nmse(fastGot, w64); e > 1e-10 || math.IsNaN(e) {
				t.Fatalf("fast vs reference: NMSE %g > 1e-10", e)
			}
			var sum float64
			for _, x := range want {
				sum += math.Abs(x)
			}
			if sum == 0 {
				t.Fatal("all-zero output: the case tests nothing")
			}
			if c.maskedRows {
				// query row 1 has every key masked: ggml gives zeros, also with sinks
				for h := int64(0); h < c.nh; h++ {
					o := (1*c.nh + h) * c.dv
					for d := int64(0); d < c.dv; d++ {
						if got[o+d] != 0 || fastGot[o+d] != 0 {
							t.Fatalf("masked row 1, head %d: ref %g fast %g, want 0", h, got[o+d], fastGot[o+d])
						}
					}
				}
			}
		})
	}
}

// The tiled kernel with each key block packed where a tile meets it (past the packed-key bound;
// here always) gives what it gives with the keys kept packed: TestFlashAttnKernels again.
func TestFlashAttnKeysPackedPerTile(t *testing.T) {
	defer cpu.SetFAKeyCacheBytes(0)()
	TestFlashAttnKernels(t)
}

// A hand-checked case: two keys, one query, scale 1: weights e^1/(e^1+e^0) and e^0/(…).
func TestFlashAttnSmallKnown(t *testing.T) {
	for _, refOpt := range []bool{true, false} {
		be, _ := cpu.New(cpu.Options{Threads: 1, Reference: refOpt})
		ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
		q := ctx.NewTensor4D(core.TypeF32, 2, 1, 1, 1)
		k := ctx.NewTensor4D(core.TypeF32, 2, 2, 1, 1)
		v := ctx.NewTensor4D(core.TypeF32, 3, 2, 1, 1)
		copy(q.Float32s(), []float32{1, 0})
		copy(k.Float32s(), []float32{1, 0, 0, 1})
		copy(v.Float32s(), []float32{1, 2, 3, -1, 0, 5})
		out := ctx.FlashAttnExt(q, k, v, nil, 1, 0, 0)
		got := faCompute(t, be, out)
		w0 := math.E / (math.E + 1)
		want := []float64{w0*1 + (1-w0)*-1, w0 * 2, w0*3 + (1-w0)*5}
		for i := range want {
			if math.Abs(float64(got[i])-want[i]) > 1e-6 {
				t.Fatalf("ref=%v: got %v, want %v", refOpt, got, want)
			}
		}
		be.Close()
	}
}

// BenchmarkFlashAttn: decode (one query row) and a prefill chunk over an f16 KV cache with GQA,
// and TinyLlama's shapes (32 heads of 64 over 4 K/V heads): a causal 512-token prompt, one after
// 2048 cached tokens, and one generated token over 256, 1024 and 4096. GFLOPS counts the attended
// (query, key) pairs only.
func BenchmarkFlashAttn(b *testing.B) {
	for _, s := range []struct {
		nq, nkv, d, nh, nhkv int64
		causal               bool
	}{{1, 4096, 128, 32, 8, false}, {64, 1024, 128, 32, 8, false}, {512, 512, 64, 32, 4, true}, {512, 2560, 64, 32, 4, true},
		{1, 256, 64, 32, 4, false}, {1, 1024, 64, 32, 4, false}, {1, 4096, 64, 32, 4, false}} {
		for _, ref := range []bool{false, true} {
			if ref && s.nq*s.nkv > 1<<16 {
				continue // the reference takes seconds per run here
			}
			b.Run(fmt.Sprintf("q%d_kv%d_d%d_h%d_%d_ref%v", s.nq, s.nkv, s.d, s.nh, s.nhkv, ref), func(b *testing.B) {
				be, _ := cpu.New(cpu.Options{Threads: 2, Reference: ref})
				defer be.Close()
				c := faCase{kt: core.TypeF16, vt: core.TypeF16, mt: core.TypeF16, dk: s.d, dv: s.d, nq: s.nq, nkv: s.nkv,
					nh: s.nh, nhkv: s.nhkv, ne3: 1, m2: 1, m3: 1, scale: 0.088, causal: s.causal}
				ctx := core.NewContext(core.ContextParams{MemSize: 64 << 20})
				out, _, _, _, _, _ := faBuild(b, ctx, c, 1)
				g := core.NewGraph(16)
				g.BuildForwardExpand(out)
				b.ResetTimer()
				for range b.N {
					if err := be.GraphCompute(g); err != nil {
						b.Fatal(err)
					}
				}
				pairs := c.nq * c.nkv
				if s.causal {
					pairs = c.nq * (c.nkv - c.nq + (c.nq+1)/2)
				}
				flops := float64(4 * pairs * c.nh * c.dk)
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
			})
		}
	}
}
