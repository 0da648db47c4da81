package rpc

import "github.com/tandem-ml/tandem/core"

// The convolution nodes over RPC: the server rebuilds them from ggml's op_params (ops.go lists the
// layouts), and GGMLCompat keeps off ggml's server what its CPU kernels assert on.

// constructConv rebuilds a convolution node (op one of the convolution ops) of result type typ
// from its sources s (kernel, input) and op_params p.
func constructConv(c *core.Context, op core.Op, typ core.Type, s [maxSrc]*core.Tensor, p [maxOpParams]int32) *core.Tensor {
	i := func(k int) int { return int(p[k]) }
	p3 := core.Conv3DParams{S0: i(0), S1: i(1), S2: i(2), P0: i(3), P1: i(4), P2: i(5), D0: i(6), D1: i(7), D2: i(8)}
	switch op {
	case core.OpConvTranspose1D:
		return c.ConvTranspose1D(s[0], s[1], i(0), i(1), i(2))
	case core.OpIm2Col3D:
		return c.Im2Col3D(s[0], s[1], int64(p[9]), p3, typ)
	case core.OpCol2Im1D:
		return c.Col2Im1D(s[0], i(0), i(1), i(2))
	case core.OpConv2D:
		return c.Conv2DDirect(s[0], s[1], i(0), i(1), i(2), i(3), i(4), i(5))
	case core.OpConv3D:
		return c.Conv3DDirect(s[0], s[1], p3, i(9), i(10), i(11))
	case core.OpConv2DDw:
		return c.Conv2DDwDirect(s[0], s[1], i(0), i(1), i(2), i(3), i(4), i(5))
	default: // CONV_TRANSPOSE_2D
		return c.ConvTranspose2DP0(s[0], s[1], i(0))
	}
}

// ggmlCPUAcceptsConv holds ggml-cpu's rules for the convolution nodes (ops.cpp and
// ggml_backend_cpu_device_supports_op at the protocol's commit); tandem's kernels follow every
// stride.
func ggmlCPUAcceptsConv(t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	switch t.Op {
	case core.OpConvTranspose1D:
		// Kernel and input rows dense (nb00, nb10 asserted); dst written as dense rows.
		return a.Nb[0] == a.Type.Size() && b.Nb[0] == 4
	case core.OpConvTranspose2D:
		// As 1-D; and ggml computes batch 0 only, leaving the others zero.
		return a.Nb[0] == a.Type.Size() && b.Nb[0] == 4 && b.Ne[3] == 1
	case core.OpIm2Col3D:
		return b.Nb[0] == 4
	case core.OpCol2Im1D:
		return a.IsContiguous()
	case core.OpConv2D, core.OpConv3D:
		return a.IsContiguous() // the GEMM reads the kernel in place (CONV_2D: supports_op says so)
	case core.OpConv2DDw:
		// WHCN contiguous or CWHN (channels densest) inputs only, the latter with a kernel whose
		// channels are densest too (read as [KH][KW][C]).
		if b.IsContiguous() {
			return a.IsContiguous() // channel c's kernel read at c·KW·KH
		}
		return b.Nb[0] > b.Nb[2] && b.Nb[1] > b.Nb[0] && b.Nb[2] == 4 &&
			b.Nb[1] == b.Ne[0]*b.Nb[0] && b.Nb[0] == b.Ne[2]*4 && b.Nb[3] == b.Ne[1]*b.Nb[1] &&
			a.Nb[3] == a.Type.Size() && a.Nb[0] == a.Ne[3]*a.Nb[3] && a.Nb[1] == a.Ne[0]*a.Nb[0]
	}
	return true
}
