package kern

import (
	"math"
	"testing"
)

// The assembly against the Go loop: bit for bit (each column's additions run in key order with
// one fused multiply-add each, as math.FMA does), widths of one and several 32-column chunks (the
// AVX2 kernel) and 64-column chunks (the AVX-512 one), and an odd width taking the Go path.
func TestWeightedSumF16Rows(t *testing.T) {
	r := newRand(3)
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, c := range []struct{ nk, dv, ldv int }{{1, 32, 32}, {5, 64, 160}, {64, 128, 256}, {3, 96, 96}, {9, 192, 200}, {7, 40, 40}} {
				v := make([]uint16, (c.nk-1)*c.ldv+c.dv)
				for i := range v {
					v[i] = f32ToF16Go(float32(r.NormFloat64()))
				}
				w := make([]float32, c.nk)
				for i := range w {
					w[i] = float32(r.Float64())
				}
				acc := make([]float32, c.dv)
				want := make([]float32, c.dv)
				for i := range acc {
					acc[i] = float32(r.NormFloat64())
					want[i] = acc[i]
				}
				for k := 0; k < c.nk; k++ {
					for d := range want {
						x := f16ToF32Go(v[k*c.ldv+d])
						if useASM && c.dv%32 == 0 {
							want[d] = float32(math.FMA(float64(w[k]), float64(x), float64(want[d])))
						} else {
							want[d] += w[k] * x
						}
					}
				}
				WeightedSumF16Rows(c.nk, v, c.ldv, w, acc)
				for d := range acc {
					if acc[d] != want[d] {
						t.Fatalf("%v %+v: acc[%d] = %v, want %v", s, c, d, acc[d], want[d])
					}
				}
			}
		})
	}
}
