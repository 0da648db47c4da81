package cpu

import (
	"sync/atomic"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// qstdMinN is the fewest activation rows (src1 rows per batch) for which Q4_0, Q4_1 and Q8_0
// weights in the standard layout take kern.GemmStd (the repacked micro-kernels on weights
// repacked on the fly) rather than the quantized GEMM or the vec-dot path, on kernel sets with
// repacked micro-kernels (mmKernels.gemmStd): measured at m=4096 k=14336, 2 threads, it beats the
// quantized GEMM from n = 2 (q4_0 143 vs 130 GFLOPS; n = 8: 642 vs 169).
const qstdMinN = 2

// teamGemm is a team GEMM of the kern package's protocol (GemmStd, GemmQ4_KStd, …) on weights
// in the standard layout, the kernel set's weight type fixed.
type teamGemm func(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, lda int, b []byte, ldb int, c []float32, ldc int)

// computeMulMatStdGemm runs gemm per (i12, i13) batch on activations already in the vec-dot type
// (yData with byte strides ynb1..3); its scratch follows the converted activations.
func computeMulMatStdGemm(p *params, dst *core.Tensor, gemm teamGemm, yData []byte, convBytes, ynb1, ynb2, ynb3 int64) {
	a, b := dst.Src[0], dst.Src[1]
	da, dd := a.Data(), dst.Data()
	m, n, k := int(a.Ne[1]), int(b.Ne[1]), int(a.Ne[0])
	wf := teamScratch(p, convBytes)
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	forEachBatch(p, dst, func(i12, i13 int64) {
		aoff := (i12/r2)*a.Nb[2] + (i13/r3)*a.Nb[3]
		boff := i12*ynb2 + i13*ynb3
		doff := i12*dst.Nb[2] + i13*dst.Nb[3]
		gemm(p.ith, p.nth, p.barrier, &p.pool.chunk, wf, m, n, k, da[aoff:], int(a.Nb[1]),
			yData[boff:], int(ynb1), f32s(dd[doff:]), int(dst.Nb[1]/4))
	})
}

// computeMulMatQstd runs kern.GemmStd of the weights' repack type per batch.
func computeMulMatQstd(p *params, dst *core.Tensor, yData []byte, convBytes, ynb1, ynb2, ynb3 int64) {
	rt, _ := gemmStdTypeOf(dst.Src[0].Type)
	gemm := func(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, lda int, b []byte, ldb int, c []float32, ldc int) {
		kern.GemmStd(rt, ith, nth, barrier, counter, work, m, n, k, a, lda, b, ldb, c, ldc)
	}
	computeMulMatStdGemm(p, dst, gemm, yData, convBytes, ynb1, ynb2, ynb3)
}

// kstdMinN is the fewest activation rows per batch for which Q4_K and Q6_K weights take
// kern.GemmQ4_KStd / GemmQ6_KStd (weights repacked on the fly, 8 rows per register) rather than
// the K-quant tiles, where the kernel set has their micro-kernels. The repacking is paid once per
// task, O(m·k) against the GEMM's O(m·n·k): on Zen 3 it takes 1.3 ms (Q4_K) and 4.1 ms (Q6_K) per
// 2048x2048 weights, 3% and 10% of a 512-row product, half of a 32-row one.
const kstdMinN = 128

// kstdGemm is an on-the-fly repacked K-quant GEMM and its work size.
type kstdGemm struct {
	gemm teamGemm
	work func(m, n, k, nth int) int
}

var (
	kstdQ4K = &kstdGemm{kern.GemmQ4_KStd, kern.GemmQ4_KStdWorkSize}
	kstdQ6K = &kstdGemm{kern.GemmQ6_KStd, kern.GemmQ6_KStdWorkSize}
)

// kstdOf is the on-the-fly repacked GEMM of weight type t, or nil (no allocation: it is called
// per node by every worker).
func kstdOf(t core.Type) *kstdGemm {
	switch t {
	case core.TypeQ4_K:
		return kstdQ4K
	case core.TypeQ6_K:
		return kstdQ6K
	}
	return nil
}

// computeMulMatKStd runs the weight type's kstdGemm per batch on Q8_K activations.
func computeMulMatKStd(p *params, dst *core.Tensor, yData []byte, convBytes, ynb1, ynb2, ynb3 int64) {
	computeMulMatStdGemm(p, dst, kstdOf(dst.Src[0].Type).gemm, yData, convBytes, ynb1, ynb2, ynb3)
}
