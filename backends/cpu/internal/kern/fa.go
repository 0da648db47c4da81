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

// WeightedSumF16RowsHeads is WeightedSumF16Rows for nh heads over the same value rows (the query
// heads of one K/V head): head h adds its weights w[h*ldw : h*ldw+nk] times the rows into
// acc[h*dv : (h+1)*dv]. Each head's sums are WeightedSumF16Rows's bit for bit; on AVX-512 each
// row is converted once per four heads instead of once per head. It panics when an operand is
// too short.
func WeightedSumF16RowsHeads(nk int, v []uint16, ldv int, w []float32, ldw int, acc []float32, dv, nh int) {
	if nk <= 0 || dv <= 0 || nh <= 0 {
		return
	}
	if ldw < nk || len(w) < (nh-1)*ldw+nk || len(acc) < nh*dv || ldv < dv || len(v) < (nk-1)*ldv+dv {
		panic("kern.WeightedSumF16RowsHeads: operand too short")
	}
	faVAccF16Heads(nk, v, ldv, w, ldw, acc, dv, nh)
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
