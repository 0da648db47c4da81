package kern

import "testing"

// BenchmarkMicroKernel: the register-blocked micro-kernels alone on L1-resident panels
// (kb = 256), per kernel set: 6x16 (AVX2) twice vs one 6x32 (AVX-512) for the same 6x32 tile.
func BenchmarkMicroKernel(b *testing.B) {
	const kb = 256
	r := newRand(5)
	ap := randF32(r, 2*gemmNR*kb, -1, 1)
	bp := randF32(r, gemmMR*kb, -1, 1)
	c := make([]float32, gemmMR*2*gemmNR)
	flops := 2 * float64(gemmMR*2*gemmNR*kb)
	b.Run("avx2_6x16x2", func(b *testing.B) {
		if !useASM {
			b.Skip("no AVX2 kernels")
		}
		for b.Loop() {
			kernel6x16(kb, ap[:gemmNR*kb], bp, c, 2*gemmNR, false)
			kernel6x16(kb, ap[gemmNR*kb:], bp, c[gemmNR:], 2*gemmNR, false)
		}
		reportGFLOPS(b, flops)
	})
	bp2 := randF32(r, 2*bStride(kb), -1, 1)
	c2 := make([]float32, 2*gemmMR*2*gemmNR)
	b.Run("avx512_12x32_per6rows", func(b *testing.B) {
		if !use512 {
			b.Skip("no AVX-512 kernels")
		}
		for b.Loop() {
			kernel12x32(kb, ap, bp2, bStride(kb), c2, 2*gemmNR, false)
		}
		b.ReportMetric(2*flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
	})
	b.Run("avx512_6x32", func(b *testing.B) {
		if !use512 {
			b.Skip("no AVX-512 kernels")
		}
		for b.Loop() {
			kernel6x32(kb, ap, bp, c, 2*gemmNR, false)
		}
		reportGFLOPS(b, flops)
	})
}
