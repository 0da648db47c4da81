//go:build amd64 && !purego

package kern

//go:noescape
func faVAccF16AVX2(nk int, v *uint16, ldv int, w *float32, acc *float32, dv int)

//go:noescape
func faVAccF16AVX512(nk int, v *uint16, ldv int, w *float32, acc *float32, dv int)

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
