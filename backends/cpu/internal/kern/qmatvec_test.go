package kern

import (
	"math"
	"sync/atomic"
	"testing"
)

// The avx512vnni Q4_0 mat-vec row dot equals the exact block sums within float32 rounding, for
// block counts around the groups of four (the rest goes through the AVX2 dot), with extreme
// quants and scales; the prepared layout is checked through the results.
func TestDotQ4_0MatVec(t *testing.T) {
	if !useVNNI || !hasVBMI {
		t.Skipf("kernel set %v: no AVX-512 VNNI kernels to test", ActiveKernelSet())
	}
	r := newRand(41)
	scale := func() uint16 { return f32ToF16Go(float32(r.Float64()*2 - 0.5)) }
	for _, nb := range []int{1, 3, 4, 5, 7, 8, 9, 16, 31, 448} {
		for rep := 0; rep < 20; rep++ {
			x := randQ4(r, nb, 18, 2, scale)
			y := randQ8(r, nb, 34, 2, scale)
			if rep == 0 { // extremes: every nibble 0 or 15, every y -127 or 127
				for b := 0; b < nb; b++ {
					for j := 0; j < 16; j++ {
						x[b*18+2+j] = 0xF0
						y[b*34+2+j], y[b*34+18+j] = 0x81, 0x7F
					}
				}
			}
			prep := make([]byte, prepQ4x4Size(nb)+1)[1:] // misaligned on purpose
			prepQ4x4(nb, y, prep)
			got := dotQ4_0MatVec(nb, x, y, prep)
			want, abs := q40terms(nb, x, y)
			if d := math.Abs(float64(got) - want); !(d <= 1e-6*abs+1e-30) {
				t.Fatalf("nb=%d rep=%d: got %v, want %v (|diff| %g, scale %g)", nb, rep, got, want, d, abs)
			}
		}
	}
}

// GemmQ4_0Q8_0 with one activation row takes the VNNI path with the avx512vnni set and the tile
// path below it; both agree with the exact sums, with 1 to 3 workers.
func TestGemmQ4MatVecSets(t *testing.T) {
	r := newRand(42)
	scale := func() uint16 { return f32ToF16Go(float32(r.Float64() - 0.5)) }
	const m, nb = 77, 45
	lda := nb*18 + 5
	a := make([]byte, m*lda)
	for i := 0; i < m; i++ {
		copy(a[i*lda:], randQ4(r, nb, 18, 2, scale))
	}
	y := randQ8(r, nb, 34, 2, scale)
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, nth := range []int{1, 2, 3} {
				c := make([]float32, m)
				work := make([]float32, QgemmWorkSize(m, 1, nb*QK, nth))
				runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
					GemmQ4_0Q8_0(ith, nth, barrier, counter, work, m, 1, nb*QK, a, lda, y, len(y), c, m)
				})
				for i := 0; i < m; i++ {
					want, abs := q40terms(nb, a[i*lda:], y)
					if d := math.Abs(float64(c[i]) - want); !(d <= 1e-6*abs+1e-30) {
						t.Fatalf("set %v nth %d row %d: got %v want %v", s, nth, i, c[i], want)
					}
				}
			}
		})
	}
}
