package tests

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// SSM_CONV, SSM_SCAN, RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7, SOLVE_TRI and GATED_DELTA_NET:
// test-backend-ops' cases at small sizes (fewer heads and channels, the same parameter
// combinations and initializations), plus strided and permuted inputs where ggml accepts them.

func init() {
	extraCases = append(extraCases, ssmCases)
}

// ssmInit fills the inputs as test-backend-ops does for these ops, by name: ids a permutation of
// the sequences, A in [-1, -0.5), the delta net's gate in [-20, -1e-4), beta in [0, 1), v in
// [-0.3, 5), a lower triangle with its diagonal in [0.1, 1) (zeros above), the rest in [-1, 1).
func ssmInit(t *core.Tensor, r *rand.Rand) error {
	switch t.Name {
	case "ids":
		ids := make([]int32, t.Ne[0])
		for i, p := range r.Perm(len(ids)) {
			ids[i] = int32(p)
		}
		return core.SetInt32s(t, ids)
	case "A":
		return Uniform(t, r, -1, -0.5)
	case "g":
		return Uniform(t, r, -20, -1e-4)
	case "beta":
		return Uniform(t, r, 0, 1)
	case "v":
		return Uniform(t, r, -0.3, 5)
	case "tril":
		v := make([]float32, t.NElements())
		for i := range v {
			if i0, i1 := int64(i)%t.Ne[0], int64(i)/t.Ne[0]%t.Ne[1]; i0 <= i1 {
				v[i] = 0.1 + 0.9*r.Float32()
			}
		}
		return core.SetFloat32s(t, v)
	}
	return Uniform(t, r, -1, 1)
}

func ssmCases() []Case {
	var cs []Case
	f32 := core.TypeF32
	add := func(name string, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: name, Build: build, Init: ssmInit})
	}
	named := func(t *core.Tensor, name string) *core.Tensor { t.SetName(name); return t }

	// SSM_CONV: test-backend-ops' d_conv 3, 4, 9 with 1, 2·d_conv and d_conv-1+64 columns, 1 or
	// 4 sequences; 37 channels instead of 1024+.
	for _, dConv := range []int64{3, 4, 9} {
		for _, sh := range [][2]int64{{dConv, 1}, {2 * dConv, 1}, {dConv, 4}, {dConv - 1 + 64, 1}, {dConv - 1 + 64, 4}} {
			add(fmt.Sprintf("SSM_CONV(d_conv=%d,sx=[%d,37,%d])", dConv, sh[0], sh[1]), func(c *core.Context) *core.Tensor {
				return c.SSMConv(c.NewTensor(f32, sh[0], 37, sh[1]), c.NewTensor(f32, dConv, 37))
			})
		}
	}
	add("SSM_CONV(strided sx and filters)", func(c *core.Context) *core.Tensor {
		sx := c.NewTensor(f32, 12, 7, 3)
		w := c.NewTensor(f32, 6, 7)
		return c.SSMConv(c.View3D(sx, 9, 7, 3, sx.Nb[1], sx.Nb[2], 8), c.View2D(w, 4, 7, w.Nb[1], 4))
	})

	// SSM_SCAN: Mamba-1 (head_dim 1, A per state), Mamba-2 and Falcon-H1 (scalar A, groups),
	// x/B/C as views of one tensor, longer scans, and K snapshot slots.
	type scan struct {
		dState, headDim, nHead, nGroup, nTok, nSeqs int64
		overlap                                     bool
		K                                           int
	}
	for _, s := range []scan{
		{16, 1, 37, 1, 5, 3, false, 1},   // Mamba-1
		{32, 8, 6, 2, 6, 3, false, 1},    // Mamba-2
		{48, 8, 4, 2, 5, 2, false, 1},    // Falcon-H1
		{16, 16, 4, 4, 3, 2, true, 1},    // x/B/C overlap
		{32, 4, 5, 1, 40, 1, false, 1},   // a longer scan
		{32, 8, 6, 2, 4, 2, false, 4},    // rollback snapshots
		{32, 8, 6, 2, 8, 2, false, 3},    // more tokens than slots
		{17, 3, 3, 3, 7, 2, false, 2},    // odd sizes
		{128, 2, 2, 1, 512, 1, false, 1}, // 65,536 state steps per row (test-backend-ops' longest)
	} {
		name := fmt.Sprintf("SSM_SCAN(d_state=%d,head_dim=%d,n_head=%d,n_group=%d,tokens=%d,seqs=%d,overlap=%v,K=%d)",
			s.dState, s.headDim, s.nHead, s.nGroup, s.nTok, s.nSeqs, s.overlap, s.K)
		add(name, func(c *core.Context) *core.Tensor {
			st := c.NewTensor(f32, s.dState, s.headDim, s.nHead, s.nSeqs)
			dt := c.NewTensor(f32, s.nHead, s.nTok, s.nSeqs)
			aNe0 := int64(1)
			if s.headDim == 1 {
				aNe0 = s.dState
			}
			A := named(c.NewTensor(f32, aNe0, s.nHead), "A")
			var x, B, C *core.Tensor
			if s.overlap {
				xbc := c.NewTensor(f32, s.dState, s.nHead, s.nTok, 2*s.nSeqs)
				x = c.View4D(xbc, s.headDim, s.nHead, s.nTok, s.nSeqs, xbc.Nb[1], xbc.Nb[2], xbc.Nb[3], xbc.Nb[3])
				B = c.View4D(xbc, s.dState, s.nGroup, s.nTok, s.nSeqs, xbc.Nb[1], xbc.Nb[2], xbc.Nb[3], 0)
				C = c.View4D(xbc, s.dState, s.nGroup, s.nTok, s.nSeqs, xbc.Nb[1], xbc.Nb[2], xbc.Nb[3], 2*xbc.Nb[3])
			} else {
				x = c.NewTensor(f32, s.headDim, s.nHead, s.nTok, s.nSeqs)
				B = c.NewTensor(f32, s.dState, s.nGroup, s.nTok, s.nSeqs)
				C = c.NewTensor(f32, s.dState, s.nGroup, s.nTok, s.nSeqs)
			}
			ids := named(c.NewTensor(core.TypeI32, s.nSeqs), "ids")
			return c.SSMScan(st, x, dt, A, B, C, ids, s.K)
		})
	}
	add("SSM_SCAN(ids pick 2 of 5 states)", func(c *core.Context) *core.Tensor {
		st := c.NewTensor(f32, 8, 4, 3, 5)
		ids := named(c.NewTensor(core.TypeI32, 2), "ids") // a permutation of 0, 1: states 0 and 1 of 5
		return c.SSMScan(st, c.NewTensor(f32, 4, 3, 3, 2), c.NewTensor(f32, 3, 3, 2), named(c.NewTensor(f32, 1, 3), "A"),
			c.NewTensor(f32, 8, 1, 3, 2), c.NewTensor(f32, 8, 1, 3, 2), ids, 1)
	})

	// RWKV_WKV6, RWKV_WKV7 and GATED_LINEAR_ATTN: test-backend-ops' tokens per sequence and
	// sequence counts, 3 heads of 16 instead of 32 of 64.
	const heads, hs = 3, 16
	for _, ts := range [][2]int64{{1, 1}, {1, 4}, {7, 1}, {7, 4}, {20, 2}} {
		nst, ns := ts[0], ts[1]
		n := nst * ns
		tok := func(c *core.Context) *core.Tensor { return c.NewTensor(f32, hs, heads, n) }
		state := func(c *core.Context) *core.Tensor { return c.NewTensor(f32, hs*hs*heads, ns) }
		if nst != 1 || ns != 4 { // test-backend-ops has (1, 4) for WKV7 only
			add(fmt.Sprintf("RWKV_WKV6(heads=%d,S=%d,tokens=%d,seqs=%d)", heads, hs, nst, ns), func(c *core.Context) *core.Tensor {
				return c.RWKVWKV6(tok(c), tok(c), tok(c), c.NewTensor(f32, hs, heads), tok(c), state(c))
			})
			add(fmt.Sprintf("GATED_LINEAR_ATTN(heads=%d,S=%d,tokens=%d,seqs=%d)", heads, hs, nst, ns), func(c *core.Context) *core.Tensor {
				return c.GatedLinearAttn(tok(c), tok(c), tok(c), tok(c), state(c), float32(math.Pow(hs, -0.5)))
			})
		}
		add(fmt.Sprintf("RWKV_WKV7(heads=%d,S=%d,tokens=%d,seqs=%d)", heads, hs, nst, ns), func(c *core.Context) *core.Tensor {
			a, b := c.L2Norm(tok(c), 1e-7), c.L2Norm(tok(c), 1e-7) // as test-backend-ops: keeps long scans finite
			return c.RWKVWKV7(tok(c), tok(c), tok(c), tok(c), a, b, state(c))
		})
	}
	add("RWKV_WKV7(S=64,one head,2 sequences)", func(c *core.Context) *core.Tensor {
		t := func() *core.Tensor { return c.NewTensor(f32, 64, 1, 6) }
		return c.RWKVWKV7(t(), t(), t(), t(), c.L2Norm(t(), 1e-7), c.L2Norm(t(), 1e-7), c.NewTensor(f32, 64*64, 2))
	})
	add("RWKV_WKV6(S=64,one head)", func(c *core.Context) *core.Tensor {
		t := func() *core.Tensor { return c.NewTensor(f32, 64, 1, 6) }
		return c.RWKVWKV6(t(), t(), t(), c.NewTensor(f32, 64, 1), t(), c.NewTensor(f32, 64*64, 2))
	})

	// SOLVE_TRI: test-backend-ops' shapes, the largest batches trimmed.
	for _, sh := range [][2][4]int64{
		{{10, 10, 4, 3}, {3, 10, 4, 3}},
		{{11, 11, 1, 1}, {5, 11, 1, 1}},
		{{17, 17, 2, 4}, {9, 17, 2, 4}},
		{{30, 30, 7, 1}, {8, 30, 7, 1}},
		{{42, 42, 5, 2}, {10, 42, 5, 2}},
		{{64, 64, 2, 2}, {64, 64, 2, 2}},
		{{79, 79, 2, 1}, {417, 79, 2, 1}},
		{{80, 80, 2, 2}, {81, 80, 2, 2}},
		{{128, 128, 1, 2}, {32, 128, 1, 2}},
	} {
		add(fmt.Sprintf("SOLVE_TRI(a=%v,b=%v)", sh[0], sh[1]), func(c *core.Context) *core.Tensor {
			a := named(c.NewTensor(f32, sh[0][:]...), "tril")
			return c.SolveTri(a, c.NewTensor(f32, sh[1][:]...), true, true, false)
		})
	}

	// GATED_DELTA_NET: test-backend-ops' head counts, head sizes, tokens, sequences, v_repeat,
	// permuted q/k/v, KDA and K (q and k L2-normalized as the models do), at small sizes.
	type gdn struct {
		heads, S, nTok, nSeqs, vRepeat int64
		permuted, kda                  bool
		K                              int
	}
	for _, g := range []gdn{
		{4, 32, 1, 1, 1, false, false, 1},
		{4, 16, 1, 1, 1, false, false, 1},
		{4, 16, 1, 1, 1, true, true, 1},
		{4, 16, 1, 1, 1, false, true, 1},
		{2, 32, 1, 2, 1, false, false, 1},
		{2, 32, 4, 1, 1, false, false, 1},
		{2, 32, 4, 2, 1, false, false, 1},
		{4, 16, 4, 2, 2, false, false, 1},
		{2, 32, 4, 2, 1, true, false, 1},
		{2, 32, 3, 2, 1, false, true, 1},
		{4, 16, 4, 2, 2, false, true, 1},
		{2, 16, 4, 2, 1, true, true, 1},
		{2, 32, 65, 1, 1, false, false, 1},
		{2, 16, 33, 1, 1, false, true, 1},
		{2, 16, 2, 1, 1, false, false, 2},
		{2, 32, 4, 2, 1, false, false, 4},
		{2, 32, 4, 2, 1, false, true, 4},
		{4, 16, 4, 2, 2, false, true, 4},
		{2, 16, 6, 2, 1, false, false, 3},
	} {
		name := fmt.Sprintf("GATED_DELTA_NET(heads=%d,S=%d,tokens=%d,seqs=%d,v_repeat=%d,permuted=%v,kda=%v,K=%d)",
			g.heads, g.S, g.nTok, g.nSeqs, g.vRepeat, g.permuted, g.kda, g.K)
		add(name, func(c *core.Context) *core.Tensor {
			hv := g.heads * g.vRepeat
			mk := func(h int64) *core.Tensor {
				if g.permuted {
					return c.Permute(c.NewTensor(f32, g.S, g.nTok, h, g.nSeqs), 0, 2, 1, 3)
				}
				return c.NewTensor(f32, g.S, h, g.nTok, g.nSeqs)
			}
			q, k, v := mk(g.heads), mk(g.heads), mk(hv)
			if v.ViewSrc != nil {
				v.ViewSrc.SetName("v")
			}
			v.SetName("v")
			gNe0 := int64(1)
			if g.kda {
				gNe0 = g.S
			}
			gate := named(c.NewTensor(f32, gNe0, hv, g.nTok, g.nSeqs), "g")
			beta := named(c.NewTensor(f32, 1, hv, g.nTok, g.nSeqs), "beta")
			state := c.NewTensor(f32, g.S, g.S, hv, g.nSeqs)
			return c.GatedDeltaNet(c.L2Norm(q, 1e-6), c.L2Norm(k, 1e-6), v, gate, beta, state, g.K)
		})
	}
	add("GATED_DELTA_NET(permuted q/k/v read directly, q/k broadcast over sequences)", func(c *core.Context) *core.Tensor {
		q := c.Permute(c.NewTensor(f32, 16, 5, 2, 1), 0, 2, 1, 3)
		k := c.Permute(c.NewTensor(f32, 16, 5, 2, 1), 0, 2, 1, 3)
		v := c.Permute(c.NewTensor(f32, 16, 5, 4, 2), 0, 2, 1, 3)
		gate := named(c.NewTensor(f32, 1, 4, 5, 2), "g")
		beta := named(c.NewTensor(f32, 1, 4, 5, 2), "beta")
		return c.GatedDeltaNet(q, k, v, gate, beta, c.NewTensor(f32, 16, 16, 4, 2), 2)
	})
	return cs
}
