package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// Hand-computed values for SSM_CONV, SSM_SCAN (Mamba-1, Mamba-2, ids, snapshot slots),
// RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7, SOLVE_TRI and GATED_DELTA_NET, then the SIMD kernels
// against the reference ones on odd sizes at several thread counts.

// ssmRun computes build's output on the fast and the reference kernels at 1 and 3 threads and
// checks every value against want within a relative 1e-6.
func ssmRun(t *testing.T, name string, want []float32, build func(t *testing.T, ctx *core.Context) *core.Tensor) {
	t.Helper()
	for _, ref := range []bool{false, true} {
		for _, th := range []int{1, 3} {
			ctx := eltCtx()
			out := build(t, ctx)
			if err := ctx.Err(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			be, err := cpu.New(cpu.Options{Threads: th, Reference: ref})
			if err != nil {
				t.Fatal(err)
			}
			got := computeOn(t, be, out)
			be.Close()
			if len(got) != len(want) {
				t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
			}
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-6*max(1, math.Abs(float64(want[i]))) {
					t.Errorf("%s (ref %v, %d threads): value %d = %v, want %v (all %v)", name, ref, th, i, got[i], want[i], got)
					break
				}
			}
		}
	}
}

func TestSSMConvValues(t *testing.T) {
	// channel 0: inputs 1 2 3, taps 1 10; channel 1: inputs 4 5 6, taps 2 3 (d_conv 2, 2 tokens)
	ssmRun(t, "SSM_CONV", []float32{21, 23, 32, 28}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.SSMConv(ixF32(t, ctx, []float32{1, 2, 3, 4, 5, 6}, 3, 2, 1), ixF32(t, ctx, []float32{1, 10, 2, 3}, 2, 2))
	})
}

func TestSSMScanValues(t *testing.T) {
	// d_state 2, head_dim 1, one head, 2 tokens, one sequence starting from state 1 of 2 (ids).
	// dt 32 gives Δ = 32 (softplus passes x > 20 through); x·Δ = 8 then 16.
	build := func(a []float32, k int) func(t *testing.T, ctx *core.Context) *core.Tensor {
		return func(t *testing.T, ctx *core.Context) *core.Tensor {
			s := ixF32(t, ctx, []float32{7, 7, 1, 2}, 2, 1, 1, 2)
			x := ixF32(t, ctx, []float32{0.25, 0.5}, 1, 1, 2, 1)
			dt := ixF32(t, ctx, []float32{32, 32}, 1, 2, 1)
			A := ixF32(t, ctx, a, int64(len(a)), 1)
			B := ixF32(t, ctx, []float32{1, 0, 0, 1}, 2, 1, 2, 1)
			C := ixF32(t, ctx, []float32{1, 1, 2, 1}, 2, 1, 2, 1)
			return ctx.SSMScan(s, x, dt, A, B, C, ixI32(t, ctx, []int32{1}, 1), k)
		}
	}
	// Mamba-2, A = 0 (dA = 1): state [1 2] → [9 2] (y 11) → [9 18] (y 36).
	ssmRun(t, "SSM_SCAN(Mamba-2)", []float32{11, 36, 9, 18}, build([]float32{0}, 1))
	// K = 2: slot 1 holds the state after the first token.
	ssmRun(t, "SSM_SCAN(Mamba-2, K=2)", []float32{11, 36, 9, 18, 9, 2}, build([]float32{0}, 2))
	// Mamba-1, A = [0, -ln2/32]: the second element decays by ½ per token: [9 1] (y 10), [9 16.5] (y 34.5).
	ssmRun(t, "SSM_SCAN(Mamba-1)", []float32{10, 34.5, 9, 16.5}, build([]float32{0, -math.Ln2 / 32}, 1))
}

func TestSSMScanBadID(t *testing.T) {
	ctx := eltCtx()
	f := func(ne ...int64) *core.Tensor {
		n := int64(1)
		for _, d := range ne {
			n *= d
		}
		return ixF32(t, ctx, make([]float32, n), ne...)
	}
	out := ctx.SSMScan(f(2, 1, 1, 1), f(1, 1, 1, 1), f(1, 1, 1), f(1, 1), f(2, 1, 1, 1), f(2, 1, 1, 1), ixI32(t, ctx, []int32{3}, 1), 1)
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	if err := cpu.Compute(g, 2); err == nil {
		t.Fatal("SSM_SCAN with an id outside the states: no error")
	}
}

func TestRWKVWKV6Values(t *testing.T) {
	// S 2, one head, 2 tokens; state identity. Token 0: k [1 2], v [3 4], r [1 1], td ½:
	// out = [0.5·3+1 + 0.5·6, 0.5·4 + 0.5·8+1] = [5.5 7], state [[3.5 4] [6 8.5]].
	// Token 1: k [1 0], v [1 1], r [0 1], td 1: out = state row 1 = [6 8.5], state [[4.5 5] [6 8.5]].
	ssmRun(t, "RWKV_WKV6", []float32{5.5, 7, 6, 8.5, 4.5, 5, 6, 8.5}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		k := ixF32(t, ctx, []float32{1, 2, 1, 0}, 2, 1, 2)
		v := ixF32(t, ctx, []float32{3, 4, 1, 1}, 2, 1, 2)
		r := ixF32(t, ctx, []float32{1, 1, 0, 1}, 2, 1, 2)
		tf := ixF32(t, ctx, []float32{0.5, 0.5}, 2, 1)
		td := ixF32(t, ctx, []float32{0.5, 0.5, 1, 1}, 2, 1, 2)
		return ctx.RWKVWKV6(k, v, r, tf, td, ixF32(t, ctx, []float32{1, 0, 0, 1}, 4, 1))
	})
}

func TestGatedLinearAttnValues(t *testing.T) {
	// state [[1 2] [3 4]], g [½ 2], k [1 0], v [2 4], q [2 2], scale ½:
	// state [[2.5 5] [6 8]], out = ½·(2·[2.5 5] + 2·[6 8]) = [8.5 13].
	ssmRun(t, "GATED_LINEAR_ATTN", []float32{8.5, 13, 2.5, 5, 6, 8}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		k := ixF32(t, ctx, []float32{1, 0}, 2, 1, 1)
		v := ixF32(t, ctx, []float32{2, 4}, 2, 1, 1)
		q := ixF32(t, ctx, []float32{2, 2}, 2, 1, 1)
		g := ixF32(t, ctx, []float32{0.5, 2}, 2, 1, 1)
		return ctx.GatedLinearAttn(k, v, q, g, ixF32(t, ctx, []float32{1, 2, 3, 4}, 4, 1), 0.5)
	})
}

func TestRWKVWKV7Values(t *testing.T) {
	// state [[1 2] [3 4]] (row = value index), r [1 1], w ½, k [1 0], v [1 2], a [1 0], b [0 1]:
	// row 0: sa 1, [0.5 1] + [1 0] + [0 1] = [1.5 2], out 3.5; row 1: sa 3, [1.5 2] + [2 0] + [0 3] = [3.5 5], out 8.5.
	ssmRun(t, "RWKV_WKV7", []float32{3.5, 8.5, 1.5, 2, 3.5, 5}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		f := func(v ...float32) *core.Tensor { return ixF32(t, ctx, v, 2, 1, 1) }
		return ctx.RWKVWKV7(f(1, 1), f(0.5, 0.5), f(1, 0), f(1, 2), f(1, 0), f(0, 1), ixF32(t, ctx, []float32{1, 2, 3, 4}, 4, 1))
	})
}

func TestSolveTriValues(t *testing.T) {
	// A = [[2 ·] [1 4]] (99 above the diagonal is not read), B = [[4 2] [9 5]]:
	// column 0: x = [2, (9-2)/4]; column 1: x = [1, (5-1)/4].
	ssmRun(t, "SOLVE_TRI", []float32{2, 1, 1.75, 1}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.SolveTri(ixF32(t, ctx, []float32{2, 99, 1, 4}, 2, 2), ixF32(t, ctx, []float32{4, 2, 9, 5}, 2, 2), true, true, false)
	})
}

func TestGatedDeltaNetValues(t *testing.T) {
	// S 2, one head, 2 tokens, state 0. Token 0: g 0, beta ½, k [1 0], v [2 4], q [1 1]:
	// delta [1 2], S row 0 = [1 2], out [1 2]/√2. Token 1: g -ln2 (S halves), beta 1, k [0 1],
	// v [1 1], q [1 0]: delta [1 1], S = [[0.5 1] [1 1]], out [0.5 1]/√2. States are stored
	// transposed (element (j, i) = S[i][j]).
	r2 := float32(1 / math.Sqrt(2))
	build := func(K int) func(t *testing.T, ctx *core.Context) *core.Tensor {
		return func(t *testing.T, ctx *core.Context) *core.Tensor {
			q := ixF32(t, ctx, []float32{1, 1, 1, 0}, 2, 1, 2, 1)
			k := ixF32(t, ctx, []float32{1, 0, 0, 1}, 2, 1, 2, 1)
			v := ixF32(t, ctx, []float32{2, 4, 1, 1}, 2, 1, 2, 1)
			g := ixF32(t, ctx, []float32{0, -math.Ln2}, 1, 1, 2, 1)
			beta := ixF32(t, ctx, []float32{0.5, 1}, 1, 1, 2, 1)
			return ctx.GatedDeltaNet(q, k, v, g, beta, ixF32(t, ctx, make([]float32, 4), 2, 2, 1, 1), K)
		}
	}
	out := []float32{r2, 2 * r2, 0.5 * r2, r2}
	ssmRun(t, "GATED_DELTA_NET", append(append([]float32{}, out...), 0.5, 1, 1, 1), build(1))
	ssmRun(t, "GATED_DELTA_NET(K=2)", append(append([]float32{}, out...), 0.5, 1, 1, 1, 1, 0, 2, 0), build(2))
	// KDA: the same gate per key element gives the same values.
	ssmRun(t, "GATED_DELTA_NET(KDA)", append(append([]float32{}, out...), 0.5, 1, 1, 1), func(t *testing.T, ctx *core.Context) *core.Tensor {
		q := ixF32(t, ctx, []float32{1, 1, 1, 0}, 2, 1, 2, 1)
		k := ixF32(t, ctx, []float32{1, 0, 0, 1}, 2, 1, 2, 1)
		v := ixF32(t, ctx, []float32{2, 4, 1, 1}, 2, 1, 2, 1)
		g := ixF32(t, ctx, []float32{0, 0, -math.Ln2, -math.Ln2}, 2, 1, 2, 1)
		beta := ixF32(t, ctx, []float32{0.5, 1}, 1, 1, 2, 1)
		return ctx.GatedDeltaNet(q, k, v, g, beta, ixF32(t, ctx, make([]float32, 4), 2, 2, 1, 1), 1)
	})
}

// TestSSMFastVsReference runs every op on odd sizes with the SIMD kernels at 1, 2 and 3 threads
// against the reference kernels at 2: NMSE ≤ 1e-10, and the thread counts agree exactly.
func TestSSMFastVsReference(t *testing.T) {
	type build func(ctx *core.Context) *core.Tensor
	f := func(ctx *core.Context, ne ...int64) *core.Tensor { return ctx.NewTensor(core.TypeF32, ne...) }
	cases := map[string]build{
		"SSM_CONV": func(c *core.Context) *core.Tensor { return c.SSMConv(f(c, 4+9, 37, 3), f(c, 4, 37)) },
		"SSM_SCAN(Mamba-1)": func(c *core.Context) *core.Tensor {
			return c.SSMScan(f(c, 16, 1, 5, 3), f(c, 1, 5, 7, 3), f(c, 5, 7, 3), f(c, 16, 5), f(c, 16, 1, 7, 3), f(c, 16, 1, 7, 3), c.NewTensor(core.TypeI32, 3), 1)
		},
		"SSM_SCAN(Mamba-2, K=3)": func(c *core.Context) *core.Tensor {
			return c.SSMScan(f(c, 19, 9, 6, 2), f(c, 9, 6, 5, 2), f(c, 6, 5, 2), f(c, 1, 6), f(c, 19, 3, 5, 2), f(c, 19, 3, 5, 2), c.NewTensor(core.TypeI32, 2), 3)
		},
		"RWKV_WKV6": func(c *core.Context) *core.Tensor {
			return c.RWKVWKV6(f(c, 19, 3, 6), f(c, 19, 3, 6), f(c, 19, 3, 6), f(c, 19, 3), f(c, 19, 3, 6), f(c, 19*19*3, 2))
		},
		"GATED_LINEAR_ATTN": func(c *core.Context) *core.Tensor {
			return c.GatedLinearAttn(f(c, 19, 3, 6), f(c, 19, 3, 6), f(c, 19, 3, 6), f(c, 19, 3, 6), f(c, 19*19*3, 3), 0.25)
		},
		"RWKV_WKV7": func(c *core.Context) *core.Tensor {
			return c.RWKVWKV7(f(c, 19, 3, 6), f(c, 19, 3, 6), f(c, 19, 3, 6), f(c, 19, 3, 6), f(c, 19, 3, 6), f(c, 19, 3, 6), f(c, 19*19*3, 2))
		},
		"SOLVE_TRI": func(c *core.Context) *core.Tensor {
			return c.SolveTri(f(c, 23, 23, 2, 3), f(c, 70, 23, 2, 3), true, true, false)
		},
		"GATED_DELTA_NET(K=2, kda, broadcast q/k)": func(c *core.Context) *core.Tensor {
			return c.GatedDeltaNet(f(c, 19, 2, 5, 1), f(c, 19, 2, 5, 1), f(c, 19, 4, 5, 2), f(c, 19, 4, 5, 2), f(c, 1, 4, 5, 2), f(c, 19, 19, 4, 2), 2)
		},
		"GATED_DELTA_NET(permuted q)": func(c *core.Context) *core.Tensor {
			q := c.Permute(f(c, 17, 5, 3, 2), 0, 2, 1, 3)
			return c.GatedDeltaNet(q, f(c, 17, 3, 5, 2), f(c, 17, 3, 5, 2), f(c, 1, 3, 5, 2), f(c, 1, 3, 5, 2), f(c, 17, 17, 3, 2), 1)
		},
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := core.NewContext(core.ContextParams{MemSize: 16 << 20})
			out := b(ctx)
			if err := ctx.Err(); err != nil {
				t.Fatal(err)
			}
			for i, l := range ctx.Tensors() {
				if l.Op != core.OpNone {
					continue
				}
				if l.Type == core.TypeI32 {
					ids := make([]int32, l.Ne[0])
					for j := range ids {
						ids[j] = int32(len(ids) - 1 - j)
					}
					_ = core.SetInt32s(l, ids)
					continue
				}
				fillRandom(t, l, uint64(i+1))
				if l.Ne[0] == l.Ne[1] && name == "SOLVE_TRI" { // a well-conditioned triangle
					v, _ := core.GetFloat32s(l)
					for j := range v {
						if r := int64(j) / l.Ne[0] % l.Ne[1]; int64(j)%l.Ne[0] == r {
							v[j] = 2 + v[j]
						} else {
							v[j] *= 0.2
						}
					}
					_ = core.SetFloat32s(l, v)
				}
			}
			ref, _ := cpu.New(cpu.Options{Threads: 2, Reference: true})
			want := computeOn(t, ref, out)
			ref.Close()
			var first []float32
			for _, th := range []int{1, 2, 3} {
				be, _ := cpu.New(cpu.Options{Threads: th})
				got := computeOn(t, be, out)
				be.Close()
				w64 := make([]float64, len(want))
				for j, x := range want {
					w64[j] = float64(x)
				}
				if e := nmse(got, w64); e > 1e-10 || math.IsNaN(e) {
					t.Errorf("%d threads: NMSE %g against the reference", th, e)
				}
				if first == nil {
					first = got
				} else if fmt.Sprint(first) != fmt.Sprint(got) {
					t.Errorf("%d threads differ from 1 thread", th)
				}
			}
		})
	}
}

// TestSSMHandMadeNodes: nodes whose sources were swapped after construction for tensors of other
// shapes are refused (an error, no panic), for every op of the family.
func TestSSMHandMadeNodes(t *testing.T) {
	ctx := eltCtx()
	f := func(ne ...int64) *core.Tensor { return ctx.NewTensor(core.TypeF32, ne...) }
	ids := ctx.NewTensor(core.TypeI32, 2)
	tok := func() *core.Tensor { return f(4, 2, 6) }
	nodes := []*core.Tensor{
		ctx.SSMConv(f(5, 3, 2), f(3, 3)),
		ctx.SSMScan(f(4, 3, 2, 2), f(3, 2, 5, 2), f(2, 5, 2), f(1, 2), f(4, 1, 5, 2), f(4, 1, 5, 2), ids, 2),
		ctx.RWKVWKV6(tok(), tok(), tok(), f(4, 2), tok(), f(32, 2)),
		ctx.GatedLinearAttn(tok(), tok(), tok(), tok(), f(32, 2), 0.5),
		ctx.RWKVWKV7(tok(), tok(), tok(), tok(), tok(), tok(), f(32, 2)),
		ctx.SolveTri(f(3, 3), f(2, 3), true, true, false),
		ctx.GatedDeltaNet(f(4, 2, 3, 1), f(4, 2, 3, 1), f(4, 2, 3, 1), f(1, 2, 3, 1), f(1, 2, 3, 1), f(4, 4, 2, 1), 1),
	}
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		n.Src[1] = f(7, 1, 1)
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(n)
		if err := cpu.Compute(g, 2); err == nil {
			t.Errorf("%v with a source of the wrong shape: no error", n.Op)
		}
	}
}
