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
		defer func(g bool) { gemm512 = g }(gemm512)
		gemm512 = true
		for b.Loop() {
			kernel12x32(kb, ap, bp2, bStride(kb), c2, 2*gemmNR, false)
		}
		b.ReportMetric(2*flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
	})
	b.Run("avx512_6x32", func(b *testing.B) {
		if !use512 {
			b.Skip("no AVX-512 kernels")
		}
		defer func(g bool) { gemm512 = g }(gemm512)
		gemm512 = true
		for b.Loop() {
			kernel6x32(kb, ap, bp, c, 2*gemmNR, false)
		}
		reportGFLOPS(b, flops)
	})
}

// BenchmarkQ4MatVecRow: one Q4_0 weight row of 4096 (L1/L2-resident) against a Q8_0 activation
// row: the AVX2 dot vs the avx512vnni kernel on the prepared activation. GB/s of weights.
func BenchmarkQ4MatVecRow(b *testing.B) {
	const nb = 128
	r := newRand(6)
	sc := func() uint16 { return f32ToF16Go(float32(r.Float64())) }
	x := randQ4(r, nb, 18, 2, sc)
	y := randQ8(r, nb, 34, 2, sc)
	prep := make([]byte, prepQ4x4Size(nb))
	prepQ4x4(nb, y, prep)
	b.Run("avx2", func(b *testing.B) {
		if !useASM {
			b.Skip("no AVX2 kernels")
		}
		for b.Loop() {
			dotQ4_0Q8_0(nb, x, y)
		}
		reportGBs(b, float64(len(x)))
	})
	b.Run("avx512vnni", func(b *testing.B) {
		if !useVNNI || !hasVBMI {
			b.Skip("no AVX-512 VNNI kernels")
		}
		for b.Loop() {
			dotQ4_0MatVec(nb, x, y, prep)
		}
		reportGBs(b, float64(len(x)))
	})
}
