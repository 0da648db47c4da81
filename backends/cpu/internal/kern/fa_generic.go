//go:build !amd64 || purego

package kern

func faVAccF16(nk int, v []uint16, ldv int, w, acc []float32) { faVAccF16Go(nk, v, ldv, w, acc) }

func faVAccF16Heads4(nk int, v []uint16, ldv int, w []float32, ldw int, acc []float32, dv, nh int) int {
	return 0
}

func scoresF32(dst, d, m []float32, scale float32) { scoresF32Go(dst, d, m, scale) }
