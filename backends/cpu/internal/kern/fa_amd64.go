//go:build amd64 && !purego

package kern

//go:noescape
func faVAccF16AVX2(nk int, v *uint16, ldv int, w *float32, acc *float32, dv int)

//go:noescape
func faVAccF16AVX512(nk int, v *uint16, ldv int, w *float32, acc *float32, dv int)

//go:noescape
func scoresF32AVX2(dst, d, m []float32, scale float32)

func scoresF32(dst, d, m []float32, scale float32) {
	if useASM {
		scoresF32AVX2(dst, d, m, scale)
		return
	}
	scoresF32Go(dst, d, m, scale)
}

//go:noescape
func faVAccF16H4AVX512(nk int, v *uint16, ldv int, w *float32, ldw int, acc *float32, dv int)

// faVAccF16Heads4 runs the 512-bit four-head kernel over the first heads it can take and returns
// how many it took (a multiple of four; none on other sets or for dv not a multiple of 64).
func faVAccF16Heads4(nk int, v []uint16, ldv int, w []float32, ldw int, acc []float32, dv, nh int) int {
	h := 0
	if use512 && dv%64 == 0 {
		for ; h+4 <= nh; h += 4 {
			faVAccF16H4AVX512(nk, &v[0], ldv, &w[h*ldw], ldw, &acc[h*dv], dv)
		}
	}
	return h
}

func faVAccF16(nk int, v []uint16, ldv int, w, acc []float32) {
	if use512 && len(acc)%64 == 0 {
		faVAccF16AVX512(nk, &v[0], ldv, &w[0], &acc[0], len(acc))
		return
	}
	if useASM && len(acc)%32 == 0 {
		faVAccF16AVX2(nk, &v[0], ldv, &w[0], &acc[0], len(acc))
		return
	}
	faVAccF16Go(nk, v, ldv, w, acc)
}
