package kern

import (
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/tandem-ml/tandem/core/quant"
)

// TestGemmQ4_KStd: GemmQ4_KStd and GemmQ6_KStd under every kernel set this CPU runs (the AVX2
// micro-kernels, the 16-row VNNI ones on the AVX-512 VNNI sets, the Go twins elsewhere) against DotQ4_KQ8_K per entry, within 2e-6 of Σ|x·y|: partial groups of
// weight rows and partial quads of activation rows, k across the chunking (kstdKC), padded row
// strides, odd addresses, teams of 1 to 3 workers, and activations at -128 (Q8_K's extreme).
func TestGemmQ4_KStd(t *testing.T) {
	type shape struct{ m, n, nb, nth int }
	shapes := []shape{{16, 4, 1, 1}, {32, 8, 2, 2}, {53, 9, 3, 2}, {16, 1, kstdKC + 3, 1}, {48, 13, 2*kstdKC + 1, 3}, {7, 6, 1, 2}, {160, 17, 4, 2}}
	for _, c := range kstdCases {
		for _, s := range supportedSets() {
			withSet(s, func() {
				for si, sh := range shapes {
					t.Run(fmt.Sprintf("%s/%v/m%d_n%d_nb%d_th%d", c.name, s, sh.m, sh.n, sh.nb, sh.nth), func(t *testing.T) {
						checkGemmKStd(t, c, uint64(si), sh.m, sh.n, sh.nb, sh.nth)
					})
				}
			})
		}
	}
}

// kstdCases are the on-the-fly repacked GEMMs.
// kstdCase is an on-the-fly repacked GEMM with its weight quantizer and row dot.
type kstdCase struct {
	name     string
	spec     *kstdSpec
	quantize func([]float32, []byte)
	deq      func([]byte, []float32)
	dot      func(int, []byte, []byte) float32
	gemm     func(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, lda int, b []byte, ldb int, c []float32, ldc int)
	work     func(m, n, k, nth int) int
}

var kstdCases = []kstdCase{
	{"q4_K", q4kStd, quant.QuantizeRowQ4_K, quant.DequantizeRowQ4_K, DotQ4_KQ8_K, GemmQ4_KStd, GemmQ4_KStdWorkSize},
	{"q6_K", q6kStd, quant.QuantizeRowQ6_K, quant.DequantizeRowQ6_K, DotQ6_KQ8_K, GemmQ6_KStd, GemmQ6_KStdWorkSize},
}

func checkGemmKStd(t *testing.T, tc kstdCase, seed uint64, m, n, nb, nth int) {
	r := newRand(seed + 90)
	k := nb * qkK
	xs, ys := nb*tc.spec.xb, nb*blockQ8_K
	lda, ldb, ldc := xs+int(seed%3), ys+5, m+int(seed%2)
	a := make([]byte, 1+(m-1)*lda+xs)[1:]
	b := make([]byte, 3+(n-1)*ldb+ys)[3:]
	xd, yd := make([][]float32, m), make([][]float32, n)
	for i := range m {
		tc.quantize(kqRow(r, k, i), a[i*lda:i*lda+xs])
		xd[i] = make([]float32, k)
		tc.deq(a[i*lda:i*lda+xs], xd[i])
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
	work := make([]float32, tc.work(m, n, k, nth))
	runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
		tc.gemm(ith, nth, barrier, counter, work, m, n, k, a, lda, b, ldb, c, ldc)
	})
	for j := range n {
		for i := range m {
			got := c[j*ldc+i]
			want := tc.dot(k, a[i*lda:], b[j*ldb:])
			var mag float64
			for e := range k {
				mag += math.Abs(float64(xd[i][e]) * float64(yd[j][e]))
			}
			if d := math.Abs(float64(got) - float64(want)); !(d <= 2e-6*mag+1e-30) {
				t.Fatalf("C[%d,%d] = %g, the row dot %g (|Σ|x·y|| %g)", j, i, got, want, mag)
			}
		}
	}
}

// The Go twins of the micro-kernels agree with the assembly ones, the 16-row kernels among them,
// to float rounding (the assembly fuses multiply-adds).
func TestKStdKernelTwins(t *testing.T) {
	for _, tc := range kstdCases {
		k := tc.spec.kernel()
		if k == nil {
			t.Logf("%s: no micro-kernel in the active kernel set", tc.name)
			continue
		}
		r := newRand(3)
		nb := 5
		w := make([]byte, nb*tc.spec.super)
		std := make([]byte, RepackRows*nb*tc.spec.xb)
		for i := range RepackRows {
			tc.quantize(kqRow(r, nb*qkK, i), std[i*nb*tc.spec.xb:(i+1)*nb*tc.spec.xb])
		}
		tc.spec.repack(w, std, nb*tc.spec.xb, RepackRows, 0, nb)
		y := make([]byte, 4*nb*blockQ8_K)
		p := make([]byte, 4*nb*kstdPairs)
		for j := range 4 {
			quant.QuantizeRowQ8_K(kqRow(r, nb*qkK, j+2), y[j*nb*blockQ8_K:(j+1)*nb*blockQ8_K])
			kstdPrepPairs(nb, y[j*nb*blockQ8_K:], p[j*nb*kstdPairs:])
		}
		if tc.spec.kernel16 != nil {
			if k16 := tc.spec.kernel16(); k16 != nil {
				got, want := make([]float32, 4*16), make([]float32, 4*16)
				for i := range got {
					got[i], want[i] = float32(i), float32(i)
				}
				k16(nb, &w[0], &y[0], nb*blockQ8_K, &p[0], nb*kstdPairs, &got[0], 16, 1)
				for h := range 2 {
					tc.spec.twin(nb, w, h, y, nb*blockQ8_K, p, nb*kstdPairs, want[8*h:], 16, true)
				}
				for i := range got {
					if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
						t.Fatalf("%s 16-row kernel entry %d: asm %g, Go twin %g", tc.name, i, got[i], want[i])
					}
				}
			}
		}
		for h := range 2 {
			got, want := make([]float32, 4*8), make([]float32, 4*8)
			for i := range got {
				got[i], want[i] = float32(i), float32(i) // accumulate onto these
			}
			k(nb, &w[0], h, &y[0], nb*blockQ8_K, &p[0], nb*kstdPairs, &got[0], 8, 1)
			tc.spec.twin(nb, w, h, y, nb*blockQ8_K, p, nb*kstdPairs, want, 8, true)
			for i := range got {
				if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("%s half %d entry %d: asm %g, Go twin %g", tc.name, h, i, got[i], want[i])
				}
			}
		}
	}
}

// BenchmarkGemmKStd: the TinyLlama FFN up shape over a 512-token prompt, 2 workers, the
// on-the-fly repacked GEMM of Q4_K and Q6_K beside their K-quant tile path (TileQ4_KQ8_K,
// TileQ6_KQ8_K in 64x64 tasks, as BenchmarkKQuantTile).
func BenchmarkGemmKStd(b *testing.B) {
	m, n, k := 5632, 512, 2048
	if testing.Short() {
		m, n, k = 256, 128, 1024
	}
	const nth = 2
	tiles := map[string]KTile{"q4_K": TileQ4_KQ8_K, "q6_K": TileQ6_KQ8_K}
	for _, tc := range kstdCases {
		r := newRand(8)
		nb := k / qkK
		xs, ys := nb*tc.spec.xb, nb*blockQ8_K
		a := make([]byte, m*xs)
		for i := range m {
			tc.quantize(kqRow(r, k, i), a[i*xs:(i+1)*xs])
		}
		y := make([]byte, n*ys)
		for j := range n {
			quant.QuantizeRowQ8_K(kqRow(r, k, j), y[j*ys:(j+1)*ys])
		}
		c := make([]float32, m*n)
		b.Run(tc.name+"/kstd", func(b *testing.B) {
			work := make([]float32, tc.work(m, n, k, nth))
			for b.Loop() {
				runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
					tc.gemm(ith, nth, barrier, counter, work, m, n, k, a, xs, y, ys, c, m)
				})
			}
			reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k))
		})
		b.Run(tc.name+"/tile", func(b *testing.B) {
			const bm, bn = 64, 64
			mt, nt := (m+bm-1)/bm, (n+bn-1)/bn
			tile := tiles[tc.name]
			for b.Loop() {
				runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
					for {
						t := int(counter.Add(1) - 1)
						if t >= mt*nt {
							return
						}
						i0, j0 := t/nt*bm, t%nt*bn
						i1, j1 := min(m, i0+bm), min(n, j0+bn)
						tile(k, a[i0*xs:], xs, i1-i0, y[j0*ys:], ys, j1-j0, c[j0*m+i0:], m)
					}
				})
			}
			reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k))
		})
	}
}
