package kern

import (
	"math"
	"sync/atomic"
	"testing"
)

// TestGemmQuant checks GemmQ4_0Q8_0 and GemmQ8_0Q8_0 with 1..3 workers against the exact
// per-pair results, with TestQuantDots' criterion |got - exact| <= (nb+4)*2^-24*Σ|dx*dy|Σ|qx*qy|.
func TestGemmQuant(t *testing.T) {
	var shapes []qshape
	for _, m := range []int{1, 3, 4, 5, 9, 17} {
		for _, n := range []int{1, 2, 3, 4, 7, 13} {
			for _, k := range []int{32, 64, 320} {
				shapes = append(shapes, qshape{m, n, k, m % 3, n % 2 * 5, m % 2})
			}
		}
	}
	shapes = append(shapes, qshape{37, 50, 1024, 1, 3, 2}, qshape{130, 100, 96, 0, 0, 0}, qshape{3, 2, 0, 0, 0, 0})
	if raceEnabled {
		shapes = shapes[len(shapes)-20:]
	}
	defer func(m, n int) { qgemmTaskM, qgemmTaskN = m, n }(qgemmTaskM, qgemmTaskN)
	for _, ts := range [][2]int{{qgemmTaskM, qgemmTaskN}, {4, 3}, {8, 6}} {
		qgemmTaskM, qgemmTaskN = ts[0], ts[1]
		testGemmQuant(t, shapes)
	}
}

type qshape struct{ m, n, k, padA, padB, padC int }

func testGemmQuant(t *testing.T, shapes []qshape) {
	r := newRand(42)
	scale := func() uint16 { return f32ToF16Go(float32(math.Ldexp(0.5+r.Float64(), r.IntN(12)-8))) }
	for _, q4 := range []bool{true, false} {
		q := qdots[0]
		gemm := GemmQ8_0Q8_0
		if q4 {
			q = qdots[1]
			gemm = GemmQ4_0Q8_0
		}
		for _, s := range shapes {
			nb := s.k / QK
			lda, ldb, ldc := nb*q.xs+s.padA, nb*BlockQ8_0Size+s.padB, s.m+s.padC
			a := make([]byte, s.m*lda)
			for i := 0; i < s.m; i++ {
				copy(a[i*lda:], q.genX(r, nb, scale))
			}
			b := make([]byte, s.n*ldb)
			for j := 0; j < s.n; j++ {
				copy(b[j*ldb:], q.genY(r, nb, scale))
			}
			for _, nth := range []int{1, 2, 3} {
				c := make([]float32, s.n*ldc)
				for i := range c {
					c[i] = float32(math.NaN())
				}
				for j := 0; j < s.n; j++ {
					for i := s.m; i < ldc; i++ {
						c[j*ldc+i] = 777
					}
				}
				work := make([]float32, QgemmWorkSize(s.m, s.n, s.k, nth)+1)
				runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
					gemm(ith, nth, barrier, counter, work[1:], s.m, s.n, s.k, a, lda, b, ldb, c, ldc)
				})
				for j := 0; j < s.n; j++ {
					for i := 0; i < ldc; i++ {
						got := c[j*ldc+i]
						if i >= s.m {
							if got != 777 {
								t.Fatalf("%s %+v: padding overwritten", q.name, s)
							}
							continue
						}
						x, y := a[i*lda:i*lda+nb*q.xs], b[j*ldb:j*ldb+nb*BlockQ8_0Size]
						exact, abs := q.terms(nb, x, y)
						bound := float64(nb+4) * 0x1p-24 * abs
						if !(math.Abs(float64(got)-exact) <= bound) {
							t.Fatalf("%s gemm %+v nth=%d C[%d,%d] = %v, exact %v (bound %g)", q.name, s, nth, j, i, got, exact, bound)
						}
					}
				}
			}
		}
	}
}

func TestGemmQuantGoPath(t *testing.T) {
	withASM(false, func() {
		r := newRand(41)
		one := func() uint16 { return 0x3c00 }
		m, n, k := 9, 7, 96
		nb := k / QK
		for _, q := range qdots[:2] {
			a := make([]byte, m*nb*q.xs)
			for i := 0; i < m; i++ {
				copy(a[i*nb*q.xs:], q.genX(r, nb, one))
			}
			b := make([]byte, n*nb*BlockQ8_0Size)
			for j := 0; j < n; j++ {
				copy(b[j*nb*BlockQ8_0Size:], q.genY(r, nb, one))
			}
			c := make([]float32, m*n)
			gemm := GemmQ8_0Q8_0
			if q.xs == BlockQ4_0Size {
				gemm = GemmQ4_0Q8_0
			}
			work := make([]float32, QgemmWorkSize(m, n, k, 2))
			runTeam(2, func(ith int, barrier func(), counter *atomic.Int64) {
				gemm(ith, 2, barrier, counter, work, m, n, k, a, nb*q.xs, b, nb*BlockQ8_0Size, c, m)
			})
			for j := 0; j < n; j++ {
				for i := 0; i < m; i++ {
					exact, _ := q.terms(nb, a[i*nb*q.xs:(i+1)*nb*q.xs], b[j*nb*34:(j+1)*nb*34])
					if float64(c[j*m+i]) != exact {
						t.Fatalf("%s go path C[%d,%d] = %v, want %v", q.name, j, i, c[j*m+i], exact)
					}
				}
			}
		}
	})
}
