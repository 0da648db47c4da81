//go:build !amd64 || purego

package kern

func faVAccF16(nk int, v []uint16, ldv int, w, acc []float32) { faVAccF16Go(nk, v, ldv, w, acc) }

func faVAccF16Heads(nk int, v []uint16, ldv int, w []float32, ldw int, acc []float32, dv, nh int) {
	for h := range nh {
		faVAccF16Go(nk, v, ldv, w[h*ldw:h*ldw+nk], acc[h*dv:(h+1)*dv])
	}
}

func scoresF32(dst, d, m []float32, scale float32) { scoresF32Go(dst, d, m, scale) }
