//go:build !amd64 || purego

package kern

// q4kStdKernel and q6kStdKernel: no assembly in this build (the GEMMs run the Go twins).
func q4kStdKernel() kstdKernelFunc { return nil }

func q6kStdKernel() kstdKernelFunc { return nil }

func q4kStd16Kernel() kstd16KernelFunc { return nil }

func q6kStd16Kernel() kstd16KernelFunc { return nil }

// q4kRep1Kernel: no assembly in this build (the one-row products run the Go twin).
func q4kRep1Kernel() func(nb int, w, y *byte, ys int, p *byte, ps int, c *float32, accum int) {
	return nil
}
