package kern

import "github.com/tandem-ml/tandem/core/quant"

// F32ToBF16Row rounds len(src) floats to bfloat16 the way ggml does (round to nearest even on
// the bits, subnormals kept, a NaN kept quiet with its sign: quant.FP32ToBF16), writing the
// bits to dst.
func F32ToBF16Row(src []float32, dst []uint16) {
	checkLen("F32ToBF16Row", len(src), len(dst))
	if len(src) == 0 {
		return
	}
	f32ToBF16Row(src, dst[:len(src)])
}

// f32ToBF16RowGo is the pure-Go twin of F32ToBF16Row.
func f32ToBF16RowGo(src []float32, dst []uint16) {
	dst = dst[:len(src)]
	for i, f := range src {
		dst[i] = quant.FP32ToBF16(f)
	}
}

// f16ToBF16RowsGo is the pure-Go twin of f16ToBF16Rows: each half widened exactly, then rounded
// as F32ToBF16Row rounds.
func f16ToBF16RowsGo(src []uint16, ld, rows, kb int, dst []uint16, ldd int) {
	for r := 0; r < rows; r++ {
		for p, h := range src[r*ld : r*ld+kb] {
			dst[r*ldd+p] = quant.FP32ToBF16(quant.FP16ToFP32(h))
		}
	}
}
