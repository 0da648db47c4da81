package rpc

import "github.com/tandem-ml/tandem/core"

// ggmlCPUAcceptsSSM holds the rules for the state-space ops whose ggml-cpu kernels assert more
// than ggml's constructors (ops.cpp of the protocol's commit); the constructors' own checks, which
// tandem's mirror, cover RWKV_WKV6, GATED_LINEAR_ATTN, SOLVE_TRI and GATED_DELTA_NET.
func ggmlCPUAcceptsSSM(t *core.Tensor) bool {
	switch t.Op {
	case core.OpSSMConv:
		// ssm_conv_f32 asserts unit element strides and dense rows of sx.
		sx, c := t.Src[0], t.Src[1]
		return sx.Nb[0] == 4 && sx.Nb[1] == sx.Ne[0]*4 && c.Nb[0] == 4
	case core.OpSSMScan:
		// ssm_scan_f32 asserts a unit stride for the ids and reads them unchecked.
		return t.Src[6].Nb[0] == 4 || t.Src[6].Ne[0] <= 1
	case core.OpRWKVWKV7:
		// rwkv_wkv7_f32's SIMD loops step GGML_F32_STEP floats (32 with AVX, 64 with AVX-512)
		// over a head with no tail: other head sizes read and write past the rows.
		return t.Src[0].Ne[0]%64 == 0
	}
	return true
}
