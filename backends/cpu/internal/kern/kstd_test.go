package kern

import (
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/tandem-ml/tandem/core/quant"
)

// TestGemmQ4_KStd: GemmQ4_KStd under every kernel set this CPU runs (the AVX2 micro-kernel, the
// Go twin elsewhere) against DotQ4_KQ8_K per entry, within 2e-6 of Σ|x·y|: partial groups of
// weight rows and partial quads of activation rows, k across the chunking (kstdKC), padded row
// strides, odd addresses, teams of 1 to 3 workers, and activations at -128 (Q8_K's extreme).
func TestGemmQ4_KStd(t *testing.T) {
	type shape struct{ m, n, nb, nth int }
	shapes := []shape{{16, 4, 1, 1}, {32, 8, 2, 2}, {53, 9, 3, 2}, {16, 1, kstdKC + 3, 1}, {48, 13, 2*kstdKC + 1, 3}, {7, 6, 1, 2}, {160, 17, 4, 2}}
	for _, s := range supportedSets() {
		withSet(s, func() {
			for si, sh := range shapes {
				t.Run(fmt.Sprintf("%v/m%d_n%d_nb%d_th%d", s, sh.m, sh.n, sh.nb, sh.nth), func(t *testing.T) {
					checkGemmQ4_KStd(t, uint64(si), sh.m, sh.n, sh.nb, sh.nth)
				})
			}
		})
	}
}

func checkGemmQ4_KStd(t *testing.T, seed uint64, m, n, nb, nth int) {
	r := newRand(seed + 90)
	k := nb * qkK
	xs, ys := nb*blockQ4_K, nb*blockQ8_K
	lda, ldb, ldc := xs+int(seed%3), ys+5, m+int(seed%2)
	a := make([]byte, 1+(m-1)*lda+xs)[1:]
	b := make([]byte, 3+(n-1)*ldb+ys)[3:]
	xd, yd := make([][]float32, m), make([][]float32, n)
	for i := range m {
		quant.QuantizeRowQ4_K(kqRow(r, k, i), a[i*lda:i*lda+xs])
		xd[i] = make([]float32, k)
		quant.DequantizeRowQ4_K(a[i*lda:i*lda+xs], xd[i])
	}
	for j := range n {
		v := kqRow(r, k, j+1)
		if j == 1 { // the largest magnitude negative: quants of -128
			for e := range v {
				v[e] = -float32(1 + e%3)
			}
		}
		quant.QuantizeRowQ8_K(v, b[j*ldb:j*ldb+ys])
		yd[j] = make([]float32, k)
		quant.DequantizeRowQ8_K(b[j*ldb:j*ldb+ys], yd[j])
	}
	c := make([]float32, (n-1)*ldc+m)
	for i := range c {
		c[i] = float32(math.NaN()) // every entry must be written
	}
	work := make([]float32, GemmQ4_KStdWorkSize(m, n, k, nth))
	runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
		GemmQ4_KStd(ith, nth, barrier, counter, work, m, n, k, a, lda, b, ldb, c, ldc)
	})
	for j := range n {
		for i := range m {
			got := c[j*ldc+i]
			want := DotQ4_KQ8_K(k, a[i*lda:], b[j*ldb:])
			var mag float64
			for e := range k {
				mag += math.Abs(float64(xd[i][e]) * float64(yd[j][e]))
			}
			if d := math.Abs(float64(got) - float64(want)); !(d <= 2e-6*mag+1e-30) {
				t.Fatalf("C[%d,%d] = %g, DotQ4_KQ8_K %g (|Σ|x·y|| %g)", j, i, got, want, mag)
			}
		}
	}
}

// The Go twin of the micro-kernel agrees with the assembly one to float rounding (the assembly
// fuses two multiply-adds).
func TestQ4KStdKernelTwin(t *testing.T) {
	if q4kStdKernel() == nil {
		t.Skip("no Q4_K std micro-kernel in the active kernel set")
	}
	r := newRand(3)
	nb := 5
	w := make([]byte, nb*kstdSuper)
	std := make([]byte, RepackRows*nb*blockQ4_K)
	for i := range RepackRows {
		quant.QuantizeRowQ4_K(kqRow(r, nb*qkK, i), std[i*nb*blockQ4_K:(i+1)*nb*blockQ4_K])
	}
	repackQ4KGroup(w, std, nb*blockQ4_K, RepackRows, 0, nb)
	y := make([]byte, 4*nb*blockQ8_K)
	p := make([]byte, 4*nb*kstdPairs)
	for j := range 4 {
		quant.QuantizeRowQ8_K(kqRow(r, nb*qkK, j+2), y[j*nb*blockQ8_K:(j+1)*nb*blockQ8_K])
		kstdPrepPairs(nb, y[j*nb*blockQ8_K:], p[j*nb*kstdPairs:])
	}
	for h := range 2 {
		got, want := make([]float32, 4*8), make([]float32, 4*8)
		for i := range got {
			got[i], want[i] = float32(i), float32(i) // accumulate onto these
		}
		q4kStdKernel()(nb, &w[0], h, &y[0], nb*blockQ8_K, &p[0], nb*kstdPairs, &got[0], 8, 1)
		q4kStdR4Go(nb, w, h, y, nb*blockQ8_K, p, nb*kstdPairs, want, 8, true)
		for i := range got {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
				t.Fatalf("half %d entry %d: asm %g, Go twin %g", h, i, got[i], want[i])
			}
		}
	}
}

// BenchmarkGemmQ4_KStd: the TinyLlama FFN up shape over a 512-token prompt, 2 workers, beside
// the K-quant tile path (TileQ4_KQ8_K in 64x64 tasks, as BenchmarkKQuantTile).
func BenchmarkGemmQ4_KStd(b *testing.B) {
	m, n, k := 5632, 512, 2048
	if testing.Short() {
		m, n, k = 256, 64, 1024
	}
	const nth = 2
	r := newRand(8)
	nb := k / qkK
	a := make([]byte, m*nb*blockQ4_K)
	for i := range m {
		quant.QuantizeRowQ4_K(kqRow(r, k, i), a[i*nb*blockQ4_K:(i+1)*nb*blockQ4_K])
	}
	y := make([]byte, n*nb*blockQ8_K)
	for j := range n {
		quant.QuantizeRowQ8_K(kqRow(r, k, j), y[j*nb*blockQ8_K:(j+1)*nb*blockQ8_K])
	}
	c := make([]float32, m*n)
	b.Run("kstd", func(b *testing.B) {
		work := make([]float32, GemmQ4_KStdWorkSize(m, n, k, nth))
		for b.Loop() {
			runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
				GemmQ4_KStd(ith, nth, barrier, counter, work, m, n, k, a, nb*blockQ4_K, y, nb*blockQ8_K, c, m)
			})
		}
		reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k))
	})
	b.Run("tile", func(b *testing.B) {
		const bm, bn = 64, 64
		mt, nt := (m+bm-1)/bm, (n+bn-1)/bn
		xs, ys := nb*blockQ4_K, nb*blockQ8_K
		for b.Loop() {
			runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
				for {
					t := int(counter.Add(1) - 1)
					if t >= mt*nt {
						return
					}
					i0, j0 := t/nt*bm, t%nt*bn
					i1, j1 := min(m, i0+bm), min(n, j0+bn)
					TileQ4_KQ8_K(k, a[i0*xs:], xs, i1-i0, y[j0*ys:], ys, j1-j0, c[j0*m+i0:], m)
				}
			})
		}
		reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k))
	})
}
