//go:build !amd64 || purego

package kern

// q4kStdKernel and q6kStdKernel: no assembly in this build (the GEMMs run the Go twins).
func q4kStdKernel() kstdKernelFunc { return nil }

func q6kStdKernel() kstdKernelFunc { return nil }
