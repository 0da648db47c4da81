package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// Every weight type MUL_MAT (and so MUL_MAT_ID) accepts.
var mmidTypes = []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ4_1,
	core.TypeQ5_0, core.TypeQ5_1, core.TypeQ8_0, core.TypeQ2_K, core.TypeQ3_K, core.TypeQ4_K, core.TypeQ5_K,
	core.TypeQ6_K, core.TypeIQ4_NL, core.TypeIQ4_XS, core.TypeMXFP4, core.TypeNVFP4, core.TypeQ1_0,
	core.TypeTQ1_0, core.TypeTQ2_0, core.TypeIQ2_XXS, core.TypeIQ2_XS, core.TypeIQ2_S, core.TypeIQ1_S,
	core.TypeIQ1_M}

// mmidShape is a MUL_MAT_ID problem: nExp experts of [k, m], nUsed experts per token, nB
// activation rows per token (1 or nUsed), nTok tokens.
type mmidShape struct{ k, m, nExp, nUsed, nB, nTok int64 }

func (s mmidShape) String() string {
	return fmt.Sprintf("k%d_m%d_e%d_u%d_b%d_t%d", s.k, s.m, s.nExp, s.nUsed, s.nB, s.nTok)
}

// mmidIDs draws nUsed distinct experts per token (as a top-k does); with skew most tokens pick
// from the first experts, so some experts get many rows and others none.
func mmidIDs(s mmidShape, seed uint64, skew bool) []int32 {
	r := rand.New(rand.NewPCG(seed, 3))
	ids := make([]int32, 0, s.nUsed*s.nTok)
	for t := int64(0); t < s.nTok; t++ {
		perm := r.Perm(int(s.nExp))
		if skew && t%4 != 3 {
			for i := range perm {
				perm[i] = (i + int(t)%2) % int(s.nExp)
			}
		}
		for e := int64(0); e < s.nUsed; e++ {
			ids = append(ids, int32(perm[e]))
		}
	}
	return ids
}

// mmidGraph builds MulMatID over random weights of typ, random activations and the given ids in
// a host context.
func mmidGraph(t *testing.T, typ core.Type, s mmidShape, ids []int32) (ctx *core.Context, as, b, idt, r *core.Tensor) {
	t.Helper()
	size := typ.RowSize(s.k)*s.m*s.nExp + 4*(s.k*s.nB*s.nTok+s.m*s.nUsed*s.nTok+s.nUsed*s.nTok) + 1<<16
	ctx = core.NewContext(core.ContextParams{MemSize: size})
	as = ctx.NewTensor3D(typ, s.k, s.m, s.nExp)
	b = ctx.NewTensor3D(core.TypeF32, s.k, s.nB, s.nTok)
	idt = ctx.NewTensor2D(core.TypeI32, s.nUsed, s.nTok)
	fillRandom(t, as, uint64(s.k*s.m+s.nExp))
	fillRandom(t, b, uint64(s.nTok+7))
	copy(idt.Int32s(), ids)
	r = ctx.MulMatID(as, b, idt)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	return ctx, as, b, idt, r
}

func computeOn(t *testing.T, be core.Backend, out *core.Tensor) []float32 {
	t.Helper()
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), mustF32(t, out)...)
}

// mmidNaive is MUL_MAT_ID by definition in float64: dequantized weights times f32 activations.
func mmidNaive(t *testing.T, as, b *core.Tensor, ids []int32, s mmidShape) []float64 {
	t.Helper()
	w, err := core.GetFloat32s(as)
	if err != nil {
		t.Fatal(err)
	}
	x := mustF32(t, b)
	out := make([]float64, s.m*s.nUsed*s.nTok)
	for tok := int64(0); tok < s.nTok; tok++ {
		for e := int64(0); e < s.nUsed; e++ {
			id := int64(ids[e+tok*s.nUsed])
			xr := x[((e%s.nB)+tok*s.nB)*s.k:][:s.k]
			for i := int64(0); i < s.m; i++ {
				wr := w[(i+id*s.m)*s.k:][:s.k]
				var acc float64
				for j := range wr {
					acc += float64(wr[j]) * float64(xr[j])
				}
				out[i+(e+tok*s.nUsed)*s.m] = acc
			}
		}
	}
	return out
}

// The reference kernel against the definition (float64) for every weight type, and bit for bit
// against the reference MUL_MAT of the selected expert row by row.
func TestMulMatIDReferenceVsNaive(t *testing.T) {
	ref, _ := cpu.New(cpu.Options{Threads: 2, Reference: true})
	defer ref.Close()
	shapes := []mmidShape{{256, 7, 4, 2, 1, 5}, {256, 3, 5, 3, 3, 4}}
	for _, typ := range mmidTypes {
		for _, s := range shapes {
			t.Run(fmt.Sprintf("%v_%v", typ, s), func(t *testing.T) {
				ids := mmidIDs(s, 9, false)
				ctx, as, b, _, r := mmidGraph(t, typ, s, ids)
				got := computeOn(t, ref, r)
				want := mmidNaive(t, as, b, ids, s)
				limit := 5e-4 // ggml's matmul bound: the activations are quantized to the vec-dot type
				if typ == core.TypeF32 {
					limit = 1e-12
				}
				if e := nmse(got, want); e > limit || math.IsNaN(e) {
					t.Fatalf("NMSE %g > %g", e, limit)
				}
				// Row by row through the reference MUL_MAT of the selected expert.
				var outs []*core.Tensor
				for tok := int64(0); tok < s.nTok; tok++ {
					for e := int64(0); e < s.nUsed; e++ {
						id := int64(ids[e+tok*s.nUsed])
						w := ctx.View2D(as, s.k, s.m, as.Nb[1], id*as.Nb[2])
						x := ctx.View2D(b, s.k, 1, b.Nb[1], (e%s.nB)*b.Nb[1]+tok*b.Nb[2])
						outs = append(outs, ctx.MulMat(w, x))
					}
				}
				g := core.NewGraph(core.DefaultGraphSize)
				for _, o := range outs {
					g.BuildForwardExpand(o)
				}
				if err := ref.GraphCompute(g); err != nil {
					t.Fatal(err)
				}
				for i, o := range outs {
					row := mustF32(t, o)
					for j, v := range row {
						if got[int64(i)*s.m+int64(j)] != v {
							t.Fatalf("row %d element %d: MUL_MAT_ID %g, MUL_MAT %g", i, j, got[int64(i)*s.m+int64(j)], v)
						}
					}
				}
			})
		}
	}
}

// The grouped fast kernel against the reference for every weight type: experts with no rows,
// one row, many rows, more rows than one pass takes, and broadcast or per-slot activations. Where
// an expert fits one pass, its rows must also equal, bit for bit, the fast MUL_MAT of that expert
// over its gathered activation rows (the same machinery on the same operands).
func TestMulMatIDFastVsReference(t *testing.T) {
	ref, _ := cpu.New(cpu.Options{Threads: 2, Reference: true})
	defer ref.Close()
	fast, _ := cpu.New(cpu.Options{Threads: 3})
	defer fast.Close()
	shapes := []mmidShape{{256, 9, 6, 2, 1, 1}, {256, 33, 8, 4, 1, 40}, {512, 20, 4, 2, 2, 19}, {256, 5, 3, 2, 1, 300}}
	for _, typ := range mmidTypes {
		for si, s := range shapes {
			t.Run(fmt.Sprintf("%v_%v", typ, s), func(t *testing.T) {
				ids := mmidIDs(s, uint64(si), si == 1)
				ctx, as, b, _, r := mmidGraph(t, typ, s, ids)
				want := computeOn(t, ref, r)
				got := computeOn(t, fast, r)
				w64 := make([]float64, len(want))
				for i, v := range want {
					w64[i] = float64(v)
				}
				limit := 1e-10
				if typ == core.TypeF16 || typ == core.TypeBF16 {
					limit = 1e-6 // the GEMMs keep f32 activations; the reference rounds them
				}
				if e := nmse(got, w64); e > limit || math.IsNaN(e) {
					t.Fatalf("NMSE %g > %g", e, limit)
				}
				if s.nTok*s.nUsed > 256 {
					return
				}
				mmidCheckPerExpert(t, fast, ctx, as, b, ids, s, got)
			})
		}
	}
}

// mmidCheckPerExpert compares got with the fast MUL_MAT of each expert over its gathered rows.
func mmidCheckPerExpert(t *testing.T, fast core.Backend, ctx *core.Context, as, b *core.Tensor, ids []int32, s mmidShape, got []float32) {
	t.Helper()
	x := mustF32(t, b)
	for ex := int64(0); ex < s.nExp; ex++ {
		var rows []int64 // flat (slot + token*nUsed)
		for r, id := range ids {
			if int64(id) == ex {
				rows = append(rows, int64(r))
			}
		}
		if len(rows) == 0 {
			continue
		}
		gctx := core.NewContext(core.ContextParams{MemSize: 4*s.k*int64(len(rows)) + 4*s.m*int64(len(rows)) + 1<<12})
		gx := gctx.NewTensor2D(core.TypeF32, s.k, int64(len(rows)))
		gv := gx.Float32s()
		for j, r := range rows {
			slot, tok := r%s.nUsed, r/s.nUsed
			copy(gv[int64(j)*s.k:], x[((slot%s.nB)+tok*s.nB)*s.k:][:s.k])
		}
		out := gctx.MulMat(ctx.View2D(as, s.k, s.m, as.Nb[1], ex*as.Nb[2]), gx)
		want := computeOn(t, fast, out)
		for j, r := range rows {
			for i := int64(0); i < s.m; i++ {
				if g, w := got[r*s.m+i], want[int64(j)*s.m+i]; g != w {
					t.Fatalf("expert %d row %d (slot %d token %d) element %d: MUL_MAT_ID %g, MUL_MAT %g",
						ex, j, r%s.nUsed, r/s.nUsed, i, g, w)
				}
			}
		}
	}
}

// Strided operands: b a view with padded rows, ids a top-k view of an argsort result (rows
// n_expert apart), as llama.cpp's graph hands them over.
func TestMulMatIDStridedOperands(t *testing.T) {
	ref, _ := cpu.New(cpu.Options{Threads: 2, Reference: true})
	defer ref.Close()
	fast, _ := cpu.New(cpu.Options{Threads: 2})
	defer fast.Close()
	for _, typ := range []core.Type{core.TypeF32, core.TypeQ4_0, core.TypeQ6_K} {
		s := mmidShape{256, 6, 5, 2, 1, 7}
		ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
		as := ctx.NewTensor3D(typ, s.k, s.m, s.nExp)
		fillRandom(t, as, 1)
		bb := ctx.NewTensor3D(core.TypeF32, s.k+32, 2, s.nTok) // padded rows, row 0 used
		fillRandom(t, bb, 2)
		b := ctx.View3D(bb, s.k, 1, s.nTok, bb.Nb[1], bb.Nb[2], 16*4)
		full := ctx.NewTensor2D(core.TypeI32, s.nExp, s.nTok)
		iv := full.Int32s()
		ids := make([]int32, 0, s.nUsed*s.nTok)
		for tok := int64(0); tok < s.nTok; tok++ {
			for e := int64(0); e < s.nExp; e++ {
				iv[tok*s.nExp+e] = int32((e + tok) % s.nExp)
			}
			ids = append(ids, iv[tok*s.nExp:tok*s.nExp+s.nUsed]...)
		}
		idv := ctx.View2D(full, s.nUsed, s.nTok, full.Nb[1], 0)
		r := ctx.MulMatID(as, b, idv)
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		want := computeOn(t, ref, r)
		got := computeOn(t, fast, r)
		n := mmidNaive(t, as, b, ids, s) // GetFloat32s reads b through its strides
		limit := 5e-4
		if typ == core.TypeF32 {
			limit = 1e-12
		}
		if e := nmse(want, n); e > limit {
			t.Fatalf("%v: reference NMSE %g vs naive", typ, e)
		}
		if e := nmse(got, n); e > limit {
			t.Fatalf("%v: fast NMSE %g vs naive", typ, e)
		}
	}
}

// An expert id outside [0, n_expert) is a compute error on both kernels, never a crash.
func TestMulMatIDBadIDs(t *testing.T) {
	for _, reference := range []bool{false, true} {
		be, _ := cpu.New(cpu.Options{Threads: 2, Reference: reference})
		for _, bad := range []int32{-1, 4, math.MaxInt32} {
			s := mmidShape{32, 3, 4, 2, 1, 3}
			ids := mmidIDs(s, 1, false)
			ids[3] = bad
			_, _, _, _, r := mmidGraph(t, core.TypeQ8_0, s, ids)
			g := core.NewGraph(core.DefaultGraphSize)
			g.BuildForwardExpand(r)
			err := be.GraphCompute(g)
			if err == nil || !strings.Contains(err.Error(), "out of range") || !strings.Contains(err.Error(), fmt.Sprint(bad)) {
				t.Errorf("reference %v, id %d: error %v, want one naming the id out of range", reference, bad, err)
			}
		}
		be.Close()
	}
}

// Expert weights in a CPU_REPACK buffer (Q4_0, Q4_1, Q8_0, Q4_K) run the repacked GEMM per expert,
// or for one token the repacked mat-vec set (one activation row shared by the slots, or one per
// slot; m not a multiple of 16; k past one kernel block step; an infinite activation), and agree
// with the same weights in standard memory.
func TestMulMatIDRepacked(t *testing.T) {
	be, _ := cpu.New(cpu.Options{Threads: 2})
	defer be.Close()
	shapes := []struct {
		mmidShape
		inf bool
	}{
		{mmidShape{256, 32, 4, 2, 1, 24}, false},
		{mmidShape{256, 40, 4, 2, 1, 1}, false},
		{mmidShape{320, 33, 8, 2, 2, 1}, false},
		{mmidShape{2560, 17, 3, 3, 3, 1}, false},
		{mmidShape{256, 48, 6, 2, 1, 1}, true},
		{mmidShape{256, 48, 6, 2, 1, 3}, true},
	}
	for _, typ := range repackTypes {
		if repackPlaced(typ) != cpu.RepackBufferTypeName {
			continue // Q4_K stays in standard memory where the kernel set lacks its repacked kernels
		}
		for _, sh := range shapes {
			s := sh.mmidShape
			s.k = repackK(typ, s.k)
			ids := mmidIDs(s, 5, true)
			run := func(extra bool) ([]float32, string) {
				ctx := core.NewContext(core.ContextParams{NoAlloc: true})
				as := ctx.NewTensor3D(typ, s.k, s.m, s.nExp)
				b := ctx.NewTensor3D(core.TypeF32, s.k, s.nB, s.nTok)
				idt := ctx.NewTensor2D(core.TypeI32, s.nUsed, s.nTok)
				r := ctx.MulMatID(as, b, idt)
				buf, err := alloc.AllocCtxTensorsWithOptions(ctx, be.DefaultBufferType(), alloc.CtxAllocOptions{NoExtraBufferTypes: !extra})
				if err != nil {
					t.Fatal(err)
				}
				defer buf.Free()
				if err := core.TensorSet(as, quantBytes(t, typ, as.NElements(), 77), 0); err != nil {
					t.Fatal(err)
				}
				bv := randF32(b.NElements(), 78)
				if sh.inf {
					bv[5] = float32(math.Inf(1))
				}
				if err := core.SetFloat32s(b, bv); err != nil {
					t.Fatal(err)
				}
				raw := make([]byte, 4*len(ids))
				for i, v := range ids {
					raw[4*i], raw[4*i+1], raw[4*i+2], raw[4*i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
				}
				if err := core.TensorSet(idt, raw, 0); err != nil {
					t.Fatal(err)
				}
				return computeOn(t, be, r), as.Buffer.Type().Name()
			}
			plain, pbt := run(false)
			packed, rbt := run(true)
			if rbt != cpu.RepackBufferTypeName || pbt == rbt {
				t.Fatalf("%v: weights in %s and %s, want one CPU_REPACK", typ, pbt, rbt)
			}
			w64 := make([]float64, len(plain))
			nonFinite := 0
			for i, v := range plain {
				w64[i] = float64(v)
				if v-v != 0 {
					nonFinite++
					if !(packed[i] == v || (v != v && packed[i] != packed[i])) {
						t.Fatalf("%v %v: output %d is %v repacked, %v plain", typ, s, i, packed[i], v)
					}
					w64[i], packed[i] = 0, 0
				}
			}
			if sh.inf != (nonFinite > 0) {
				t.Fatalf("%v %v: %d non-finite outputs with inf=%v", typ, s, nonFinite, sh.inf)
			}
			if e := nmse(packed, w64); e > 1e-10 {
				t.Fatalf("%v %v: repacked vs plain NMSE %g", typ, s, e)
			}
		}
	}
}

// The routing part of llama.cpp's MoE FFN (build_moe_ffn, softmax gating, norm_w): softmax over
// the expert logits, the top-k of a descending argsort (a view), GET_ROWS of the selected
// probabilities from [1, n_expert, n_tokens], SUM_ROWS, CLAMP and DIV to renormalize, then the
// experts' MUL_MAT_ID with the selected ids, weighted. Checked against a hand computation.
func TestMoERoutingSubgraph(t *testing.T) {
	const nExp, nUsed, nTok, nEmbd, nFF = 6, 2, 3, 32, 4
	logitsV := []float32{
		0.1, 2.0, -1.0, 0.5, 1.5, 0.0, // token 0: experts 1, 4
		3.0, -2.0, 0.2, 2.5, 0.1, 0.3, // token 1: experts 0, 3
		-0.5, -0.4, 1.0, 0.0, 0.9, 4.0, // token 2: experts 5, 2
	}
	wantIDs := [][]int32{{1, 4}, {0, 3}, {5, 2}}
	for _, be := range []core.Backend{mmidBackend(t, false), mmidBackend(t, true)} {
		ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
		logits := ctx.NewTensor2D(core.TypeF32, nExp, nTok)
		copy(logits.Float32s(), logitsV)
		probs := ctx.SoftMax(logits)                                            // [n_expert, n_tokens]
		sorted := ctx.Argsort(probs, core.SortDesc)                             // [n_expert, n_tokens]
		sel := ctx.View2D(sorted, nUsed, nTok, sorted.Nb[1], 0)                 // [n_expert_used, n_tokens]
		w := ctx.GetRows(ctx.Reshape3D(probs, 1, nExp, nTok), sel)              // [1, n_expert_used, n_tokens]
		w2 := ctx.Reshape2D(w, nUsed, nTok)                                     // [n_expert_used, n_tokens]
		sum := ctx.Clamp(ctx.SumRows(w2), 6.103515625e-5, float32(math.Inf(1))) // [1, n_tokens]
		wn := ctx.Reshape3D(ctx.Div(w2, sum), 1, nUsed, nTok)                   // [1, n_expert_used, n_tokens]

		up := ctx.NewTensor3D(core.TypeF32, nEmbd, nFF, nExp)
		upV := up.Float32s()
		for i := range upV {
			upV[i] = float32((i*7)%13-6) / 8
		}
		cur := ctx.NewTensor2D(core.TypeF32, nEmbd, nTok)
		curV := cur.Float32s()
		for i := range curV {
			curV[i] = float32((i*5)%11-5) / 4
		}
		h := ctx.MulMatID(up, ctx.Reshape3D(cur, nEmbd, 1, nTok), sel) // [n_ff, n_expert_used, n_tokens]
		out := ctx.Mul(h, wn)                                          // weighted experts
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(out)
		g.BuildForwardExpand(wn)
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		wnV, outV, sortedV := mustF32(t, wn), mustF32(t, out), sorted.Int32s()
		// Hand computation.
		for tok := 0; tok < nTok; tok++ {
			row := logitsV[tok*nExp : (tok+1)*nExp]
			mx := row[0]
			for _, v := range row {
				mx = max(mx, v)
			}
			p := make([]float64, nExp)
			var z float64
			for i, v := range row {
				p[i] = math.Exp(float64(v - mx))
				z += p[i]
			}
			order := make([]int, nExp)
			for i := range order {
				order[i] = i
			}
			sort.SliceStable(order, func(a, b int) bool { return p[order[a]] > p[order[b]] })
			var ws float64
			for e := 0; e < nUsed; e++ {
				if got := sortedV[tok*nExp+e]; int32(order[e]) != wantIDs[tok][e] || got != wantIDs[tok][e] {
					t.Fatalf("token %d slot %d: argsort gives %d, hand %d, want %d", tok, e, got, order[e], wantIDs[tok][e])
				}
				ws += p[order[e]] / z
			}
			for e := 0; e < nUsed; e++ {
				wantW := p[order[e]] / z / ws
				if g := wnV[tok*nUsed+e]; math.Abs(float64(g)-wantW) > 1e-6 {
					t.Fatalf("token %d slot %d: weight %g, want %g", tok, e, g, wantW)
				}
				for i := 0; i < nFF; i++ {
					var acc float64
					for j := 0; j < nEmbd; j++ {
						acc += float64(upV[(order[e]*nFF+i)*nEmbd+j]) * float64(curV[tok*nEmbd+j])
					}
					if g := outV[(tok*nUsed+e)*nFF+i]; math.Abs(float64(g)-acc*wantW) > 1e-5 {
						t.Fatalf("token %d slot %d row %d: %g, want %g", tok, e, i, g, acc*wantW)
					}
				}
			}
		}
		be.Close()
	}
}

func mmidBackend(t *testing.T, reference bool) core.Backend {
	t.Helper()
	be, err := cpu.New(cpu.Options{Threads: 2, Reference: reference})
	if err != nil {
		t.Fatal(err)
	}
	return be
}
