package quant

import (
	"encoding/binary"
	"testing"
)

// TestGoldenGGMLIQ compares the IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M dequantizers and dots
// against Q8_K with ggml's on random blocks of testdata/ggml_golden_iq.bin (made by
// testdata/iq_golden.c: zero blocks, all-0xff bytes, subnormal, ±65504 and random finite scales)
// and the Q8_K rows of genInput(r, 1): dequantized floats and dots identical to the bit.
func TestGoldenGGMLIQ(t *testing.T) {
	checkRawGolden(t, "testdata/ggml_golden_iq.bin", 0x31474951, map[int]goldenType{
		16: {16, QK_K, BlockIQ2_XXSSize, nil, DequantizeRowIQ2_XXS, DotIQ2_XXSQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, QK_K},
		17: {17, QK_K, BlockIQ2_XSSize, nil, DequantizeRowIQ2_XS, DotIQ2_XSQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, QK_K},
		22: {22, QK_K, BlockIQ2_SSize, nil, DequantizeRowIQ2_S, DotIQ2_SQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, QK_K},
		19: {19, QK_K, BlockIQ1_SSize, nil, DequantizeRowIQ1_S, DotIQ1_SQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, QK_K},
		29: {29, QK_K, BlockIQ1_MSize, nil, DequantizeRowIQ1_M, DotIQ1_MQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, QK_K},
	})
}

// TestIQHand checks hand-decoded blocks: grid entry 0 of each type with known signs and scales.
func TestIQHand(t *testing.T) {
	one := FP32ToFP16(1)
	// IQ2_XXS: d = 1, sub-block 0: grid indices 0 (all 8s), sign index 1 (ksigns 129: values 0
	// and 7 negated), scale 3: db = (0.5+3)/4 = 0.875, so ±7.
	b := make([]byte, BlockIQ2_XXSSize)
	binary.LittleEndian.PutUint16(b, one)
	binary.LittleEndian.PutUint32(b[6:], 3<<28|1)
	y := make([]float32, QK_K)
	DequantizeRowIQ2_XXS(b, y)
	want := []float32{-7, 7, 7, 7, 7, 7, 7, -7, 7}
	for i, w := range want {
		if y[i] != w {
			t.Fatalf("iq2_xxs: y[%d] = %g, want %g (%v)", i, y[i], w, y[:9])
		}
	}
	if y[32] != 8*0.125 {
		t.Errorf("iq2_xxs: second sub-block y[32] = %g, want 1", y[32])
	}
	// IQ1_S: d = 2, sub-block 0 with scale 1 (multiplier 3) and a negative delta, index 0 (all −1):
	// 2·3·(−1 − 1/8) = −6.75.
	b = make([]byte, BlockIQ1_SSize)
	binary.LittleEndian.PutUint16(b, FP32ToFP16(2))
	binary.LittleEndian.PutUint16(b[2+QK_K/8:], 0x8000|1<<12)
	DequantizeRowIQ1_S(b, y)
	if y[0] != -6.75 || y[32] != 2*(-1+0.125) {
		t.Errorf("iq1_s: y[0] = %g, y[32] = %g; want -6.75, -1.75", y[0], y[32])
	}
	if BlockIQ2_XXSSize != 66 || BlockIQ2_XSSize != 74 || BlockIQ2_SSize != 82 || BlockIQ1_SSize != 50 || BlockIQ1_MSize != 56 {
		t.Errorf("block sizes %d %d %d %d %d; ggml's are 66 74 82 50 56", BlockIQ2_XXSSize, BlockIQ2_XSSize,
			BlockIQ2_SSize, BlockIQ1_SSize, BlockIQ1_MSize)
	}
}
