//go:build !amd64 || purego

package kern

// Pause marks one turn of a spin loop on a shared variable; without a pause instruction (or with
// the purego tag) it does nothing.
func Pause() {}
