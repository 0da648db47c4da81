//go:build !amd64 || purego

package kern

// stdMatVecKernel returns nil: no mat-vec kernels on standard weights in this build.
func stdMatVecKernel() mvKernel { return nil }
