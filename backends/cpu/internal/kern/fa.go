package kern

// WeightedSumF16Rows adds Σ_{c<nk} w[c]·v_c to acc, where v_c is the half-precision row
// v[c*ldv : c*ldv+len(acc)] (attention's values weighted by the softmax of one head, a block of
// keys per call). Zero weights are multiplied like any other, so a row holding Inf or NaN
// reaches acc even where its weight is 0: callers leave such rows out. It panics when a row or w
// is too short.
func WeightedSumF16Rows(nk int, v []uint16, ldv int, w, acc []float32) {
	if nk <= 0 || len(acc) == 0 {
		return
	}
	if len(w) < nk || ldv < len(acc) || len(v) < (nk-1)*ldv+len(acc) {
		panic("kern.WeightedSumF16Rows: operand too short")
	}
	faVAccF16(nk, v, ldv, w, acc)
}

// faVAccF16Go is WeightedSumF16Rows in Go, a row at a time in key order as the assembly.
func faVAccF16Go(nk int, v []uint16, ldv int, w, acc []float32) {
	for c := 0; c < nk; c++ {
		row := v[c*ldv : c*ldv+len(acc)]
		for d, h := range row {
			acc[d] += w[c] * f16ToF32Go(h)
		}
	}
}
