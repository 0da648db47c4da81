package quant

import (
	"encoding/binary"
	"math"
	"testing"
)

// iqGoldenTypes are the types of testdata/ggml_golden_iq.bin (made by testdata/iq_golden.c): id,
// block bytes, dequantizer, dot against Q8_K.
var iqGoldenTypes = map[uint32]struct {
	size int
	dq   func([]byte, []float32)
	dot  func(int, []byte, []byte) float32
}{
	16: {BlockIQ2_XXSSize, DequantizeRowIQ2_XXS, DotIQ2_XXSQ8_K},
	17: {BlockIQ2_XSSize, DequantizeRowIQ2_XS, DotIQ2_XSQ8_K},
	22: {BlockIQ2_SSize, DequantizeRowIQ2_S, DotIQ2_SQ8_K},
	19: {BlockIQ1_SSize, DequantizeRowIQ1_S, DotIQ1_SQ8_K},
	29: {BlockIQ1_MSize, DequantizeRowIQ1_M, DotIQ1_MQ8_K},
}

// TestGoldenGGMLIQ compares the IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M dequantizers and dots
// against Q8_K with ggml's on random blocks (zero blocks, all-ones bytes, subnormal, ±65504 and
// random finite scales) and ggml's Q8_K rows: dequantized floats and dots identical to the bit.
// The dot over the Go-quantized activations is checked too (QuantizeRowQ8_K is ggml's).
func TestGoldenGGMLIQ(t *testing.T) {
	read, _ := goldenReader(t, "testdata/ggml_golden_iq.bin")
	var hdr [4]uint32
	read(&hdr)
	if hdr[0] != 0x31474951 {
		t.Fatalf("bad magic %#x", hdr[0])
	}
	nrows, n, ntypes := int(hdr[1]), int(hdr[2]), int(hdr[3])
	q8 := make([][]byte, nrows)
	for r := range q8 {
		q8[r] = make([]byte, n/QK_K*BlockQ8_KSize)
		read(q8[r])
	}
	seen := map[uint32]bool{}
	for range ntypes {
		var th [3]uint32
		read(&th)
		gt, ok := iqGoldenTypes[th[0]]
		if !ok || th[1] != QK_K || int(th[2]) != gt.size {
			t.Fatalf("type %d: golden block %d/%d bytes, ours %d", th[0], th[1], th[2], gt.size)
		}
		seen[th[0]] = true
		for r := range nrows {
			blk := make([]byte, n/QK_K*gt.size)
			read(blk)
			var wantHash uint64
			var wantDot float32
			read(&wantHash)
			read(&wantDot)
			y := make([]float32, n)
			gt.dq(blk, y)
			if goldenHash(y) != wantHash {
				t.Errorf("type %d row %d: dequantized values differ from ggml's", th[0], r)
			}
			if d := gt.dot(n, blk, q8[r]); math.Float32bits(d) != math.Float32bits(wantDot) {
				t.Errorf("type %d row %d: dot = %g, ggml %g", th[0], r, d, wantDot)
			}
		}
	}
	if len(seen) != len(iqGoldenTypes) {
		t.Errorf("golden file covers %d types, want %d", len(seen), len(iqGoldenTypes))
	}
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
