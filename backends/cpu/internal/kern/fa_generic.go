//go:build !amd64 || purego

package kern

func faVAccF16(nk int, v []uint16, ldv int, w, acc []float32) { faVAccF16Go(nk, v, ldv, w, acc) }
