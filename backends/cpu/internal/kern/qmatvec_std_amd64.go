//go:build amd64 && !purego

package kern

//go:noescape
func mvQ40x4VNNI(ng int, x *byte, lda int, prep *byte, ps, nj int, out *float32)

//go:noescape
func mvQ41x4VNNI(ng int, x *byte, lda int, prep *byte, ps, nj int, out *float32)

//go:noescape
func mvQ80x4VNNI(ng int, x *byte, lda int, prep *byte, ps, nj int, out *float32)

// hasStdMatVec reports whether the active set has a four-row mat-vec kernel on standard weights
// (avx512vnni with VBMI): stdMV4.
func hasStdMatVec() bool { return useVNNI && hasVBMI }

// stdMV4 is the active set's four-row mat-vec kernel (hasStdMatVec). A direct call, not a
// function value: the caller's out stays on its stack.
func stdMV4(rt RepackType, ng int, x []byte, lda int, prep []byte, ps, nj int, out *[4 * stdMatVecMaxN]float32) {
	mv4VNNI(rt, ng, x, lda, prep, ps, nj, out)
}

// mv4VNNI runs the AVX-512 VNNI four-row kernel of rt.
func mv4VNNI(rt RepackType, ng int, x []byte, lda int, prep []byte, ps, nj int, out *[4 * stdMatVecMaxN]float32) {
	f := rt.format("mv4")
	// Bounds checks standing in for the assembly's unchecked reads (the kernels read each
	// group's 4*block bytes exactly, and mvGroup bytes of prep per group and activation row;
	// the prefetches ahead of the rows never fault).
	if nj < 1 || nj > stdMatVecMaxN || ps < ng*mvGroup(rt) {
		panic("kern.mv4: bad activation rows")
	}
	_ = x[3*lda+4*ng*f.block-1]
	_ = prep[(nj-1)*ps+ng*mvGroup(rt)-1]
	switch rt {
	case RepackQ4_0:
		mvQ40x4VNNI(ng, &x[0], lda, &prep[0], ps, nj, &out[0])
	case RepackQ4_1:
		mvQ41x4VNNI(ng, &x[0], lda, &prep[0], ps, nj, &out[0])
	default:
		mvQ80x4VNNI(ng, &x[0], lda, &prep[0], ps, nj, &out[0])
	}
}
