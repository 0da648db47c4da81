package rpc

import "github.com/tandem-ml/tandem/core"

// ggmlCPUAccepts reports whether ggml's CPU backend (behind llama.cpp's or ggml's rpc-server) runs
// t without tripping one of its assertions, which abort the whole server process. tandem's kernels
// accept more layouts than ggml's; these rules were found by running every case of the tests/
// harness against ggml's server (TestInteropGGMLServer).
func ggmlCPUAccepts(t *core.Tensor) bool {
	s0 := t.Src[0]
	contig := func(x *core.Tensor) bool { return x == nil || x.IsContiguous() }
	// Q8_K is only MUL_MAT's activation format in ggml: its CPU type traits have from_float but
	// no to_float and no vec_dot, so a node that reads Q8_K into another type (GET_ROWS, CPY to
	// f32, MUL_MAT of Q8_K weights) calls a null function and kills the server. Writing Q8_K
	// (CPY or SET_ROWS into it) quantizes with from_float and works.
	for _, s := range t.Src {
		if s != nil && s.Type == core.TypeQ8_K && t.Type != core.TypeQ8_K {
			return false
		}
	}
	// F64 has no row conversion in ggml's CPU type traits: only the byte copies (DUP, CONT, CPY
	// into F64: dup_bytes), CONCAT (concat_any) and the views run on it; every other kernel
	// aborts on an F64 operand.
	if ggmlHasF64(t) {
		switch t.Op {
		case core.OpDup, core.OpCont, core.OpCpy, core.OpConcat:
			if s0 == nil || s0.Type != t.Type {
				return false
			}
		case core.OpView, core.OpReshape, core.OpPermute, core.OpTranspose, core.OpNone:
		default:
			return false
		}
	}
	switch t.Op {
	case core.OpAdd, core.OpSub, core.OpMul, core.OpDiv, core.OpAdd1, core.OpSqr, core.OpSqrt, core.OpLog,
		core.OpSin, core.OpCos, core.OpScale, core.OpClamp, core.OpLeakyRelu, core.OpUnary, core.OpGLU,
		core.OpSumRows, core.OpRMSNorm, core.OpNorm, core.OpRepeat:
		if !contig(s0) || t.Op == core.OpGLU && !contig(t.Src[1]) {
			return false
		}
		switch t.Op {
		case core.OpClamp, core.OpLeakyRelu, core.OpUnary, core.OpGLU:
			if s0.Type == core.TypeBF16 {
				return false
			}
		}
		if t.Op == core.OpGLU && core.GLUParamsOf(t).Op == core.GLUSwigluOAI && s0.Type != core.TypeF32 {
			return false // ggml_compute_forward_swiglu_oai has an f32 kernel only
		}
		switch t.Op {
		case core.OpAdd, core.OpSub, core.OpMul, core.OpDiv:
			if !s0.Type.IsQuantized() && !ggmlBinaryTypes(s0.Type, t.Src[1].Type, t.Type) {
				return false
			}
		}
	case core.OpDiagMaskInf:
		return contig(s0) && t.Params[0] >= 0
	case core.OpCpy:
		if d := t.Src[1]; (s0.Type.IsQuantized() || t.Type.IsQuantized()) && (!contig(s0) || !contig(d) || t.ViewSrc != nil && !t.IsContiguous()) {
			return false
		}
		if t.Type.IsQuantized() && s0.Ne[0] != t.Ne[0] {
			return false // ggml quantizes source rows as they are
		}
		if s0.Type.IsQuantized() && t.Type != core.TypeF32 && t.Type != s0.Type {
			return false // ggml_compute_forward_dup dequantizes into f32 only and aborts otherwise
		}
	case core.OpConcat:
		// ggml-cpu's concat has element kernels for f32, i32, f16, bf16, i16 and i8 that follow
		// the strides; every other type (i64, the quantized ones) goes through concat_any, which
		// asserts that both sources' rows are contiguous (ggml_is_contiguous_rows).
		switch s0.Type {
		case core.TypeF32, core.TypeI32, core.TypeF16, core.TypeBF16, core.TypeI16, core.TypeI8:
			return true
		}
		rows := func(x *core.Tensor) bool { return x.Ne[0] == x.Type.BlockSize() || x.Nb[0] == x.Type.Size() }
		return rows(s0) && rows(t.Src[1])
	case core.OpSum, core.OpArgmax, core.OpArgsort, core.OpPool1D, core.OpPool2D:
		return contig(s0) // ggml indexes these as dense rows (POOL_2D writes out of bounds otherwise)
	case core.OpIm2Col:
		return contig(t.Src[1])
	case core.OpRope:
		return t.Ne[0]%2 == 0 // ggml's rope walks pairs past an odd row end
	case core.OpFlashAttnExt:
		return t.Src[3] == nil || t.Src[3].Type == core.TypeF16 // ggml reads the mask as f16 whatever its type
	case core.OpGroupNorm, core.OpUpscale, core.OpWinPart, core.OpWinUnpart, core.OpGetRelPos, core.OpAddRelPos:
		// tandem's constructors already demand what ggml's kernels assume (f32 unit-stride rows for
		// GROUP_NORM, dense sources for the window and relative-position ops); UPSCALE follows
		// every stride in both. Every harness case of these ops matches ggml d99724f2's server
		// bit for bit. (The custom ops never get here: they have no wire id, see ops.go.)
		return true
	case core.OpTopK, core.OpTimestepEmbedding:
		return contig(s0) // ggml reads these as dense rows (src row i at i·nb01)
	case core.OpCountEqual:
		// ggml_compute_forward_count_equal_i32 unravels rows right for matrices only.
		return s0.Ne[2] == 1 && s0.Ne[3] == 1
	case core.OpOutProd:
		if s0.Type != core.TypeF32 && (s0.Ne[2] != t.Src[1].Ne[2] || s0.Ne[3] != t.Src[1].Ne[3]) {
			return false
		}
	case core.OpSSMConv, core.OpSSMScan, core.OpRWKVWKV7:
		return ggmlCPUAcceptsSSM(t)
	case core.OpConvTranspose1D, core.OpIm2Col3D, core.OpCol2Im1D, core.OpConv2D, core.OpConv3D, core.OpConv2DDw, core.OpConvTranspose2D:
		return ggmlCPUAcceptsConv(t)
	case core.OpDsv4HcComb, core.OpDsv4HcPre, core.OpDsv4HcPost, core.OpLightningIndexer:
		// ggml's kernels read every source at its strides (LIGHTNING_INDEXER's unit-stride rows are
		// the constructor's rule too); Q8_K keys are refused above.
		return true
	default:
		return ggmlCPUAcceptsTrain(t)
	}
	return true
}

// ggmlCPUAcceptsTrain holds the rules for the training ops (ggml-cpu's ops.cpp of the protocol's
// commit): ggml's kernels index these as dense rows where tandem's follow every stride.
// ggmlBinaryTypes reports whether ggml-cpu's binary ops (binary-ops.cpp) have a kernel for these
// source and result types; any other mix aborts the server. tandem's kernels take every mix of
// f32, f16 and bf16.
func ggmlBinaryTypes(a, b, d core.Type) bool {
	switch {
	case a == b && b == d:
		return a == core.TypeF32 || a == core.TypeF16 || a == core.TypeBF16
	case (a == core.TypeF16 || a == core.TypeBF16) && b == core.TypeF32:
		return d == a || d == core.TypeF32
	}
	return false
}

func ggmlCPUAcceptsTrain(t *core.Tensor) bool {
	s0, s1 := t.Src[0], t.Src[1]
	rows := func(x *core.Tensor) bool { return x == nil || ggmlContiguousN(x, 1) }
	contig := func(x *core.Tensor) bool { return x == nil || x.IsContiguous() }
	switch t.Op {
	case core.OpAcc:
		// acc_f32 asserts nb10 == 4 and offset + extent < nbytes, the extent 0 for an empty b.
		if s1.Nb[0] != 4 || s1.NElements() == 0 && int64(t.Params[3]) >= t.NBytes() {
			return false
		}
		return contig(s0)
	case core.OpRepeatBack:
		return s0.Nb[0] == 4 // asserted; other strides are followed
	case core.OpSiluBack, core.OpCrossEntropyLoss:
		return rows(s0) && rows(s1) // row i at i·nb[1]
	case core.OpRMSNormBack:
		return s0.Nb[0] == 4 && s1.Nb[0] == 4
	case core.OpSoftMaxBack:
		return contig(s0) && contig(s1) && core.SoftMaxParamsOf(t).MaxBias == 0
	case core.OpCrossEntropyLossBack, core.OpPool2DBack, core.OpIm2ColBack:
		if t.Op == core.OpIm2ColBack && s1.Type != core.TypeF32 && s1.Type != core.TypeF16 {
			return false // im2col_back_f32 asserts an f32 or f16 kernel
		}
		for _, s := range t.Src {
			if !contig(s) {
				return false
			}
		}
	case core.OpGetRowsBack:
		// ggml scatters the rows of a matrix by a flat index vector (ggml_get_rows_back asserts both).
		return s0.Nb[0] == s0.Type.Size() && s0.Ne[2] == 1 && s0.Ne[3] == 1 && contig(s1)
	case core.OpDiagMaskZero:
		return contig(s0) && t.Params[0] >= 0
	case core.OpRopeBack:
		f := *t // ggml runs ROPE_BACK with ROPE's kernel: ROPE's rules hold
		f.Op = core.OpRope
		return ggmlCPUAccepts(&f)
	case core.OpOptStepAdamW, core.OpOptStepSGD:
		// Rows of a at a's strides; grad, m and v are read at a's offsets.
		n := 1
		if t.Op == core.OpOptStepAdamW {
			n = 3
		}
		for _, s := range t.Src[1 : 1+n] {
			if s.Nb != s0.Nb {
				return false
			}
		}
		return s0.Nb[0] == 4
	}
	return true
}

// ggmlContiguousN is ggml_is_contiguous_n: dimensions above n are packed, the first n (after
// dimension 0, which is always packed) may have any stride.
func ggmlContiguousN(t *core.Tensor, n int) bool {
	next := t.Type.Size()
	if t.Ne[0] != t.Type.BlockSize() && t.Nb[0] != next {
		return false
	}
	next *= t.Ne[0] / t.Type.BlockSize()
	for i := 1; i < 4; i++ {
		if t.Ne[i] == 1 {
			continue
		}
		if i > n {
			if t.Nb[i] != next {
				return false
			}
			next *= t.Ne[i]
		} else {
			next = t.Ne[i] * t.Nb[i]
		}
	}
	return true
}

// ggmlHasF64 reports whether t or one of its sources is F64.
func ggmlHasF64(t *core.Tensor) bool {
	if t.Type == core.TypeF64 {
		return true
	}
	for _, s := range t.Src {
		if s != nil && s.Type == core.TypeF64 {
			return true
		}
	}
	return false
}
