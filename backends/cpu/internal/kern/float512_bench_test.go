package kern

import (
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkDot4: the four-row mat-vec kernels on cache-resident rows (k = 4096, 16 rows cycled),
// per kernel set; GB/s counts weight bytes.
func BenchmarkDot4(b *testing.B) {
	const k, rows = 4096, 16
	r := newRand(3)
	af := randF32(r, rows*k, -1, 1)
	x := randF32(r, k, -1, 1)
	ah := make([]uint16, len(af))
	for i := range af {
		ah[i] = f32ToF16Go(af[i])
	}
	ab := toBF16(append([]float32(nil), af...))
	xb := toBF16(append([]float32(nil), x...))
	for _, s := range supportedSets() {
		for _, kind := range []string{"f32", "f16", "bf16"} {
			b.Run(fmt.Sprintf("%v/%s", s, kind), func(b *testing.B) {
				withSet(s, func() {
					var out [4]float32
					es := 2
					if kind == "f32" {
						es = 4
					}
					i := 0
					for b.Loop() {
						off := (i % (rows / 4)) * 4 * k
						switch kind {
						case "f32":
							dot4(aSource{f32: af, lda: k}, off, k, x, &out)
						case "f16":
							dot4(aSource{f16: ah, lda: k}, off, k, x, &out)
						default:
							dot4BF16(aSource{bf16: ab, lda: k}, off, k, xb, &out)
						}
						i++
					}
					b.ReportMetric(float64(4*k*es)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
				})
			})
		}
	}
}

// BenchmarkMatVecDRAM: the mat-vec path (n = 1) on m=4096, k=14336 weights (far larger than the
// caches) with 1 and 2 workers, f32 / f16 / bf16 weights; GB/s counts weight bytes.
func BenchmarkMatVecDRAM(b *testing.B) {
	if testing.Short() {
		b.Skip("large")
	}
	const m, k = 4096, 14336
	r := newRand(8)
	x := randF32(r, k, -1, 1)
	xb := toBF16(append([]float32(nil), x...))
	c := make([]float32, m)
	af := randF32(r, m*k, -1, 1)
	ah := make([]uint16, len(af))
	for i := range af {
		ah[i] = f32ToF16Go(af[i])
	}
	ab := toBF16(append([]float32(nil), af...))
	for _, kind := range []string{"f32", "f16", "bf16"} {
		for _, nth := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads%d", kind, nth), func(b *testing.B) {
				es := 2
				if kind == "f32" {
					es = 4
				}
				for b.Loop() {
					runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
						switch kind {
						case "f32":
							Sgemm(ith, nth, barrier, counter, nil, m, 1, k, af, k, x, k, c, m)
						case "f16":
							SgemmF16A(ith, nth, barrier, counter, nil, m, 1, k, ah, k, x, k, c, m)
						default:
							SgemmBF16(ith, nth, barrier, counter, nil, m, 1, k, ab, k, xb, k, c, m)
						}
					})
				}
				b.ReportMetric(float64(m*k*es)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
	}
}

// BenchmarkSgemmBF16: the packed bf16 GEMM (VDPBF16PS pairs where the CPU has AVX-512 BF16,
// else widened to float32) on 2048³, 1 and 2 workers.
func BenchmarkSgemmBF16(b *testing.B) {
	const m, n, k = 2048, 2048, 2048
	r := newRand(4)
	a := toBF16(randF32(r, m*k, -1, 1))
	bm := toBF16(randF32(r, n*k, -1, 1))
	c := make([]float32, m*n)
	for _, nth := range []int{1, 2} {
		b.Run(fmt.Sprintf("m%d_n%d_k%d/th%d", m, n, k, nth), func(b *testing.B) {
			work := make([]float32, SgemmWorkSize(m, n, k, nth))
			for b.Loop() {
				runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
					SgemmBF16(ith, nth, barrier, counter, work, m, n, k, a, k, bm, k, c, m)
				})
			}
			reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k))
		})
	}
}
