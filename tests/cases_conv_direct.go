package tests

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// CONV_TRANSPOSE_1D, IM2COL_3D, COL2IM_1D, CONV_2D (direct), CONV_3D, CONV_2D_DW and
// CONV_TRANSPOSE_2D: test-backend-ops' cases for these ops (llama.cpp tests/test-backend-ops.cpp)
// at small sizes, f32 and f16 kernels, CWHN (channels densest) inputs and kernels, views.
func init() {
	extraCases = append(extraCases, convDirectCases)
}

// convOut is ggml_calc_conv_output_size.
func convOut(ins, ks int64, s, p, d int) int64 {
	return (ins+2*int64(p)-int64(d)*(ks-1)-1)/int64(s) + 1
}

// cwhn returns x stored channels-first in memory ([C, W, H, N]) and viewed back as [W, H, C, N],
// as test-backend-ops' cwhn cases build it (a CONT of a permutation, permuted back).
func cwhn(c *core.Context, x *core.Tensor) *core.Tensor {
	return c.Permute(c.Cont(c.Permute(x, 1, 2, 0, 3)), 2, 0, 1, 3)
}

// cwhnKernel is test-backend-ops' CWHN kernel: [KW, KH, IC, OC] stored as [IC, OC, KW, KH]…
// permuted back.
func cwhnKernel(c *core.Context, k *core.Tensor) *core.Tensor {
	return c.Permute(c.Cont(c.Permute(k, 2, 3, 1, 0)), 3, 2, 0, 1)
}

func convDirectCases() []Case {
	var cs []Case
	add := func(name string, limit float64, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: "conv/" + name, Build: build, MaxNMSE: limit})
	}
	f32, f16, bf16 := core.TypeF32, core.TypeF16, core.TypeBF16
	kinds := []core.Type{f32, f16}

	// CONV_TRANSPOSE_1D: input [L, Cin], kernel [K, Cout, Cin], p0 = 0, d0 = 1.
	ct1 := func(l, cin, k, cout int64, s int) {
		add(fmt.Sprintf("CONV_TRANSPOSE_1D(L=%d,Cin=%d,K=%d,Cout=%d,s=%d)", l, cin, k, cout, s), nmseMatMul, func(c *core.Context) *core.Tensor {
			return c.ConvTranspose1D(c.NewTensor(f32, k, cout, cin), c.NewTensor(f32, l, cin), s, 0, 1)
		})
	}
	for _, ch := range [][2]int64{{1, 1}, {9, 7}} {
		for _, k := range []int64{1, 3, 37} {
			for _, l := range []int64{1, 13} {
				for _, s := range []int{1, 2, 3} {
					ct1(l, ch[1], k, ch[0], s)
				}
			}
		}
	}
	ct1(37, 8, 16, 8, 1) // test-backend-ops' default (197, 32, 16, 32) scaled down
	ct1(3, 2, 2, 3, 3)
	ct1(3, 2, 3, 2, 2)
	ct1(3, 2, 3, 1, 1)
	ct1(2, 1, 3, 1, 1)
	add("CONV_TRANSPOSE_1D(f16 kernel)", nmseMatMul, func(c *core.Context) *core.Tensor {
		return c.ConvTranspose1D(c.NewTensor(f16, 5, 6, 7), c.NewTensor(f32, 11, 7), 2, 0, 1)
	})
	add("CONV_TRANSPOSE_1D(strided input view)", nmseMatMul, func(c *core.Context) *core.Tensor {
		in := c.NewTensor(f32, 15, 4)
		return c.ConvTranspose1D(c.NewTensor(f32, 3, 5, 4), c.View2D(in, 12, 4, in.Nb[1], 4), 2, 0, 1)
	})

	// COL2IM_1D: columns [K·OC, T_in] of every float type.
	for _, typ := range []core.Type{f32, f16, bf16} {
		limit := 0.0
		if typ != f32 {
			limit = 5e-4
		}
		for _, q := range [][5]int{
			{16, 8, 37, 8, 0}, {4, 3, 7, 2, 0}, {1, 5, 13, 1, 0}, {6, 4, 11, 3, 1}, {2, 3, 9, 3, 0}, {5, 4, 11, 2, 0},
			{8, 4, 13, 4, 2}, {4, 3, 1, 2, 0}, {16, 1, 37, 8, 0}, {1, 5, 13, 3, 0}, {8, 2, 3, 2, 5},
		} {
			k, oc, tin, s, p := q[0], q[1], q[2], q[3], q[4]
			add(fmt.Sprintf("COL2IM_1D(%v,K=%d,OC=%d,T=%d,s=%d,p=%d)", typ, k, oc, tin, s, p), limit, func(c *core.Context) *core.Tensor {
				return c.Col2Im1D(c.NewTensor(typ, int64(k*oc), int64(tin)), s, oc, p)
			})
		}
	}

	// CONV_TRANSPOSE_2D: input [W, H, Cin, N], kernel [KW, KH, Cout, Cin].
	for _, kt := range kinds {
		for _, q := range []struct {
			in, k [4]int64
			s     int
		}{
			{[4]int64{3, 2, 3, 1}, [4]int64{2, 2, 1, 3}, 1},
			{[4]int64{10, 10, 9, 1}, [4]int64{3, 3, 1, 9}, 2},
			{[4]int64{29, 13, 7, 1}, [4]int64{3, 3, 8, 7}, 1},
			{[4]int64{6, 5, 4, 2}, [4]int64{2, 3, 3, 4}, 3}, // two batches (ggml's CPU does batch 0 only)
		} {
			add(fmt.Sprintf("CONV_TRANSPOSE_2D(%v,in=%v,k=%v,s=%d)", kt, q.in, q.k, q.s), nmseMatMul, func(c *core.Context) *core.Tensor {
				return c.ConvTranspose2DP0(c.NewTensor(kt, q.k[:]...), c.NewTensor(f32, q.in[:]...), q.s)
			})
		}
	}
	add("CONV_TRANSPOSE_2D(permuted input)", nmseMatMul, func(c *core.Context) *core.Tensor {
		return c.ConvTranspose2DP0(c.NewTensor(f32, 3, 2, 4, 3), cwhn(c, c.NewTensor(f32, 7, 5, 3, 1)), 2)
	})

	// IM2COL_3D: kernel [KW, KH, KD, OC·IC] (its shape only), input [IW, IH, ID, N·IC].
	im3 := func(dst core.Type, in, k [4]int64, ic int64, p core.Conv3DParams, view bool) {
		add(fmt.Sprintf("IM2COL_3D(%v,in=%v,k=%v,IC=%d,%+v,view=%v)", dst, in, k, ic, p, view), 0, func(c *core.Context) *core.Tensor {
			b := c.NewTensor(f32, in[:]...)
			if view {
				b = c.View4D(b, in[0]-2, in[1]-2, in[2]-2, in[3]-2, b.Nb[1], b.Nb[2], b.Nb[3], 0)
			}
			return c.Im2Col3D(c.NewTensor(f16, k[:]...), b, ic, p, dst)
		})
	}
	one := core.Conv3DParams{S0: 1, S1: 1, S2: 1, P0: 1, P1: 1, P2: 1, D0: 1, D1: 1, D2: 1}
	// test-backend-ops' IC=3, v=1 cases: a view of ne3 = 1 holds no batch of 3 channels, so N = 0
	// and the result is empty (ggml's too).
	im3(f32, [4]int64{8, 8, 6, 3}, [4]int64{3, 3, 3, 3}, 3, core.Conv3DParams{S0: 1, S1: 1, S2: 1, D0: 1, D1: 1, D2: 1}, true)
	im3(f32, [4]int64{10, 10, 10, 9}, [4]int64{3, 3, 3, 1}, 3, one, false)
	im3(f16, [4]int64{10, 10, 10, 9}, [4]int64{3, 3, 3, 1}, 3, one, false)
	for i, q := range []struct {
		s, p, d [3]int
		ic      int64
		view    bool
	}{
		{[3]int{1, 1, 1}, [3]int{0, 0, 0}, [3]int{1, 1, 1}, 1, false},
		{[3]int{3, 1, 3}, [3]int{0, 3, 0}, [3]int{1, 3, 1}, 3, false},
		{[3]int{1, 3, 1}, [3]int{3, 0, 3}, [3]int{3, 1, 1}, 1, true},
		{[3]int{3, 3, 3}, [3]int{3, 3, 3}, [3]int{3, 3, 3}, 3, false},
		{[3]int{1, 1, 3}, [3]int{3, 0, 0}, [3]int{1, 3, 3}, 1, true},
	} {
		p := core.Conv3DParams{S0: q.s[0], S1: q.s[1], S2: q.s[2], P0: q.p[0], P1: q.p[1], P2: q.p[2], D0: q.d[0], D1: q.d[1], D2: q.d[2]}
		in := [4]int64{13, 12, 10, 6}
		if q.view {
			in = [4]int64{13, 12, 10, 5}
		}
		if i%2 == 1 {
			in[3] = 3
		}
		im3(f32, in, [4]int64{3, 3, 3, 3}, q.ic, p, q.view)
	}

	// CONV_2D (direct): ggml's loop (s1 = 5, p0 = 5, d0 = 2, d1 = 4) at small sizes, both kernel
	// types, WHCN and CWHN operands; then a 3x3 padded convolution of more channels.
	conv2 := func(kt core.Type, in, k [4]int64, s0, s1, p0, p1, d0, d1 int, cw bool) {
		add(fmt.Sprintf("CONV_2D(%v,in=%v,k=%v,s=%d,%d,p=%d,%d,d=%d,%d,cwhn=%v)", kt, in, k, s0, s1, p0, p1, d0, d1, cw), nmseMatMul,
			func(c *core.Context) *core.Tensor {
				b, a := c.NewTensor(f32, in[:]...), c.NewTensor(kt, k[:]...)
				if cw {
					b, a = cwhn(c, b), cwhnKernel(c, a)
				}
				return c.Conv2DDirect(a, b, s0, s1, p0, p1, d0, d1)
			})
	}
	n := 0
	for _, s0 := range []int{1, 3} {
		for _, p1 := range []int{2, 5} {
			for _, ch := range [][2]int64{{1, 1}, {5, 12}} {
				for _, kk := range [][2]int64{{1, 1}, {3, 2}, {2, 11}} {
					for _, wh := range [][2]int64{{1, 1}, {23, 17}} {
						if convOut(wh[0], kk[0], s0, 5, 2) <= 0 || convOut(wh[1], kk[1], 5, p1, 4) <= 0 {
							continue
						}
						n++
						if n%3 != 0 { // a third of the grid keeps the table small
							continue
						}
						for _, kt := range kinds {
							conv2(kt, [4]int64{wh[0], wh[1], ch[0], 2}, [4]int64{kk[0], kk[1], ch[0], ch[1]}, s0, 5, 5, p1, 2, 4, n%2 == 0)
						}
					}
				}
			}
		}
	}
	for _, kt := range kinds {
		for _, cw := range []bool{false, true} {
			conv2(kt, [4]int64{19, 17, 24, 1}, [4]int64{3, 3, 24, 20}, 1, 1, 1, 1, 1, 1, cw)
		}
	}

	// CONV_2D_DW: input [W, H, C, N], kernel [KW, KH, 1, C].
	for _, kt := range kinds {
		for _, q := range []struct {
			in      [4]int64
			s, p, d int
		}{{[4]int64{17, 34, 9, 1}, 1, 0, 1}, {[4]int64{32, 8, 64, 1}, 2, 1, 1}, {[4]int64{11, 9, 5, 2}, 1, 2, 2}} {
			for _, cw := range []bool{false, true} {
				add(fmt.Sprintf("CONV_2D_DW(%v,in=%v,s=%d,p=%d,d=%d,cwhn=%v)", kt, q.in, q.s, q.p, q.d, cw), 0, func(c *core.Context) *core.Tensor {
					b, a := c.NewTensor(f32, q.in[:]...), c.NewTensor(kt, 3, 3, 1, q.in[2])
					if cw {
						b, a = cwhn(c, b), cwhnKernel(c, a)
					}
					return c.Conv2DDwDirect(a, b, q.s, q.s, q.p, q.p, q.d, q.d)
				})
			}
		}
	}

	// CONV_3D: input [W, H, D, IC·N], kernel [KW, KH, KD, IC·OC].
	conv3 := func(kt core.Type, nb, ic, oc int, k [3]int64, p core.Conv3DParams) {
		add(fmt.Sprintf("CONV_3D(%v,N=%d,IC=%d,OC=%d,k=%v,%+v)", kt, nb, ic, oc, k, p), nmseMatMul, func(c *core.Context) *core.Tensor {
			b := c.NewTensor(f32, 9, 10, 8, int64(ic*nb))
			a := c.NewTensor(kt, k[0], k[1], k[2], int64(ic*oc))
			return c.Conv3DDirect(a, b, p, ic, nb, oc)
		})
	}
	for _, kt := range kinds {
		for _, q := range []struct{ n, ic, oc, s, p, d int }{
			{1, 1, 1, 1, 0, 1}, {2, 3, 4, 1, 1, 2}, {1, 3, 1, 2, 1, 1}, {2, 1, 4, 2, 0, 2},
		} {
			conv3(kt, q.n, q.ic, q.oc, [3]int64{3, 3, 3}, core.Conv3DParams{S0: q.s, S1: q.s, S2: q.s, P0: q.p, P1: q.p, P2: q.p, D0: q.d, D1: q.d, D2: q.d})
			// asymmetric kernel and parameters
			conv3(kt, q.n, q.ic, q.oc, [3]int64{5, 1, 3}, core.Conv3DParams{S0: 2, S1: 1, S2: 1, P0: 2, P1: 0, P2: 1, D0: 1, D1: 1, D2: 2})
		}
		conv3(kt, 1, 4, 8, [3]int64{1, 1, 1}, core.Conv3DParams{S0: 1, S1: 1, S2: 1, D0: 1, D1: 1, D2: 1})
	}
	return cs
}
