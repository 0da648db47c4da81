//go:build !amd64 || purego

package kern

// q4kStdKernelFunc is the micro-kernel's signature (kstd_amd64.s).
type q4kStdKernelFunc func(nb int, w *byte, h int, y *byte, ldy int, p *byte, ldp int, c *float32, ldc, accum int)

// q4kStdKernel: no assembly in this build (GemmQ4_KStd runs the Go twin).
func q4kStdKernel() q4kStdKernelFunc { return nil }
