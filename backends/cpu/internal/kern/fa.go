package kern

import "math"

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

// ScoresF32 writes dst[i] = d[i]*scale + m[i] for i < len(dst), the product and the sum each
// rounded to float32 (as Go computes the expression), and -Inf where m[i] is -Inf whatever d[i]:
// attention scores from a block's dots and mask values, a masked key's -Inf even where its dot is
// Inf or NaN. dst may alias d or m exactly. It panics when d or m is shorter than dst.
func ScoresF32(dst, d, m []float32, scale float32) {
	checkLen("ScoresF32", len(dst), len(d))
	checkLen("ScoresF32", len(dst), len(m))
	if len(dst) == 0 {
		return
	}
	scoresF32(dst, d[:len(dst)], m[:len(dst)], scale)
}

// scoresF32Go is ScoresF32 in Go.
func scoresF32Go(dst, d, m []float32, scale float32) {
	negInf := float32(math.Inf(-1))
	for i := range dst {
		if m[i] == negInf {
			dst[i] = negInf
		} else {
			dst[i] = float32(d[i]*scale) + m[i] // the conversion keeps the two roundings (no FMA)
		}
	}
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
	for h := faVAccF16Heads4(nk, v, ldv, w, ldw, acc, dv, nh); h < nh; h++ {
		faVAccF16(nk, v, ldv, w[h*ldw:h*ldw+nk], acc[h*dv:(h+1)*dv])
	}
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
