//go:build !amd64 || purego

package kern

func withoutVNNI(f func() float32) float32 { return f() }

func kqVNNI() bool { return false }
