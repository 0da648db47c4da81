//go:build !amd64 || purego

package kern

// hasStdMatVec is false: no mat-vec kernels on standard weights in this build.
func hasStdMatVec() bool { return false }

// stdMV4 is never called here (hasStdMatVec is false); it keeps stdMatVec portable.
func stdMV4(rt RepackType, ng int, x []byte, lda int, prep []byte, ps, nj int, out *[4 * stdMatVecMaxN]float32) {
	mv4Go(rt, ng, x, lda, prep, ps, nj, out)
}
