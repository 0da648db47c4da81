//go:build amd64 && !purego

package kern

// withoutVNNI runs f with the AVX-512 VNNI kernels switched off (the AVX2 forms run).
func withoutVNNI(f func() float32) float32 {
	old := useVNNI
	useVNNI = false
	defer func() { useVNNI = old }()
	return f()
}

func kqVNNI() bool { return useASM && useVNNI }
