package kern

import (
	"math"
	"sync/atomic"
	"testing"
)

// TestGemmPacked: on every kernel set, the product of PackA/PackAF16 and PackB operands is bit
// for bit Sgemm's single-worker product (edges of both panel sizes, one and two panels, k from 1
// to a MLA head's 576, strided rows), and with accum it adds the product to C within f32 rounding
// of the float64 sum; elements of C past m in each row are left alone.
func TestGemmPacked(t *testing.T) {
	r := newRand(31)
	shapes := [][3]int{{1, 1, 1}, {16, 6, 64}, {17, 7, 64}, {32, 12, 64}, {33, 13, 40}, {128, 96, 64}, {100, 50, 128}, {64, 96, 128}, {5, 3, 576}, {48, 12, 8}}
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, sh := range shapes {
				m, n, k := sh[0], sh[1], sh[2]
				lda, ldb, ldc := k+3, k+5, m+2
				a := randF32(r, (m-1)*lda+k, -1, 1)
				af := append([]float32(nil), a...)
				a16 := toF16(af) // af: a16 widened
				b := randF32(r, (n-1)*ldb+k, -1, 1)
				bp := make([]float32, PackedBSize(n, k))
				PackB(bp, b, ldb, n, k)
				for _, f16 := range []bool{false, true} {
					ap := make([]float32, PackedASize(m, k))
					want := make([]float32, n*ldc)
					work := make([]float32, SgemmWorkSize(m, n, k, 1))
					if f16 {
						PackAF16(ap, a16, lda, m, k)
						SgemmF16A(0, 1, nil, new(atomic.Int64), work, m, n, k, a16, lda, b, ldb, want, ldc)
					} else {
						PackA(ap, a, lda, m, k)
						Sgemm(0, 1, nil, new(atomic.Int64), work, m, n, k, a, lda, b, ldb, want, ldc)
					}
					got := make([]float32, n*ldc)
					for i := range got {
						got[i] = 7
					}
					GemmPacked(m, n, k, ap, bp, got, ldc, false)
					for j := 0; j < n; j++ {
						for i := 0; i < ldc; i++ {
							g, w := got[j*ldc+i], want[j*ldc+i]
							if i >= m {
								w = 7
							}
							// Sgemm takes dot products below its packing threshold: exact only
							// where it packs too.
							exact := n > gemmDotMaxN(aSource{f32: a})
							if exact && math.Float32bits(g) != math.Float32bits(w) || !exact && math.Abs(float64(g-w)) > 1e-5*float64(k) {
								t.Fatalf("%v %dx%dx%d f16=%v: C[%d][%d] = %v, Sgemm %v", s, m, n, k, f16, j, i, g, w)
							}
						}
					}
					// accumulate onto 0.5 + the product
					src := af
					if !f16 {
						src = a
					}
					for i := range got {
						got[i] = 0.5
					}
					GemmPacked(m, n, k, ap, bp, got, ldc, true)
					for j := 0; j < n; j++ {
						for i := 0; i < m; i++ {
							sum, abs := 0.5, 0.5
							for p := 0; p < k; p++ {
								v := float64(src[i*lda+p]) * float64(b[j*ldb+p])
								sum += v
								abs += math.Abs(v)
							}
							if d := math.Abs(float64(got[j*ldc+i]) - sum); d > float64(k+2)*0x1p-24*abs {
								t.Fatalf("%v %dx%dx%d f16=%v accum: C[%d][%d] = %v, want %v", s, m, n, k, f16, j, i, got[j*ldc+i], sum)
							}
						}
						if got[j*ldc+m] != 0.5 {
							t.Fatalf("%v %dx%dx%d: C past m written", s, m, n, k)
						}
					}
				}
			}
		})
	}
}

// TestPackAT: PackAT and PackATF16 of k rows of m values give PackA's bytes for the transposed
// matrix (odd m, one panel and several, strided rows), and ZeroPackedACol zeroes exactly one
// column of the product's A: GemmPacked then gives the sums without that column's terms.
func TestPackAT(t *testing.T) {
	r := newRand(33)
	for _, sh := range [][2]int{{1, 1}, {16, 5}, {17, 128}, {64, 3}, {40, 77}} {
		m, k := sh[0], sh[1]
		ldv := m + 3
		v := randF32(r, (k-1)*ldv+m, -1, 1)
		vw := append([]float32(nil), v...)
		v16 := toF16(vw) // vw: v16 widened
		for _, f16 := range []bool{false, true} {
			src := v
			if f16 {
				src = vw
			}
			a := make([]float32, m*k) // the transpose, row-major
			for i := 0; i < m; i++ {
				for p := 0; p < k; p++ {
					a[i*k+p] = src[p*ldv+i]
				}
			}
			want := make([]float32, PackedASize(m, k))
			PackA(want, a, k, m, k)
			got := make([]float32, PackedASize(m, k))
			for i := range got {
				got[i] = 9
			}
			if f16 {
				PackATF16(got, v16, ldv, m, k)
			} else {
				PackAT(got, v, ldv, m, k)
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%dx%d f16=%v: packed float %d = %v, PackA of the transpose %v", m, k, f16, i, got[i], want[i])
				}
			}
			// a B row of ones: C[0][i] = Σ_p A[i][p]; without column z, less A[i][z]
			z := k / 2
			ZeroPackedACol(got, m, k, z)
			ones := make([]float32, k)
			for p := range ones {
				ones[p] = 1
			}
			bp := make([]float32, PackedBSize(1, k))
			PackB(bp, ones, k, 1, k)
			c := make([]float32, m)
			GemmPacked(m, 1, k, got, bp, c, m, false)
			for i := 0; i < m; i++ {
				var sum float64
				for p := 0; p < k; p++ {
					if p != z {
						sum += float64(a[i*k+p])
					}
				}
				if math.Abs(float64(c[i])-sum) > 1e-5*float64(k) {
					t.Fatalf("%dx%d f16=%v: row %d without column %d sums to %v, want %v", m, k, f16, i, z, c[i], sum)
				}
			}
		}
	}
}
