package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// fp4GoldenTypes are the types of testdata/ggml_golden_fp4.bin (made by testdata/fp4_golden.c).
var fp4GoldenTypes = map[int]goldenType{
	39: {39, QK_MXFP4, BlockMXFP4Size, QuantizeRowMXFP4, DequantizeRowMXFP4, DotMXFP4Q8_0, QuantizeRowQ8_0, BlockQ8_0Size, 32},
	40: {40, QK_NVFP4, BlockNVFP4Size, QuantizeRowNVFP4, DequantizeRowNVFP4, DotNVFP4Q8_0, QuantizeRowQ8_0, BlockQ8_0Size, 32},
	41: {41, QK1_0, BlockQ1_0Size, QuantizeRowQ1_0, DequantizeRowQ1_0, DotQ1_0Q8_0, QuantizeRowQ8_0, BlockQ8_0Size, 32},
}

// TestGoldenGGMLFP4 compares the MXFP4, NVFP4 and Q1_0 quantizers, dequantizers and dots with
// ggml's on the 16 input families: bytes, dequantized floats and dots identical to the bit.
func TestGoldenGGMLFP4(t *testing.T) {
	checkGolden(t, "testdata/ggml_golden_fp4.bin", fp4GoldenTypes)
}

// TestFP4EdgesGGML compares quantized bytes and dequantized values with ggml's on the edge rows
// of testdata/ggml_fp4_edges.bin: scales at and just below powers of two, ties between codes,
// signed zeros, subnormal and huge magnitudes (the MXFP4 exponent's wrap below 2^−125, the NVFP4
// scale's clamp), infinities and NaNs.
func TestFP4EdgesGGML(t *testing.T) {
	checkEdges(t, "testdata/ggml_fp4_edges.bin", fp4GoldenTypes)
}

// TestFP4Scales checks the scale decoders and the UE4M3 rounding on hand-computed values.
func TestFP4Scales(t *testing.T) {
	for _, c := range []struct {
		e    uint8
		want float32
	}{
		{127, 0.5}, {128, 1}, {129, 2}, {130, 4}, {126, 0.25}, {0, float32(math.Ldexp(1, -128))},
		{1, float32(math.Ldexp(1, -127))}, {2, float32(math.Ldexp(1, -126))}, {254, float32(math.Ldexp(1, 126))},
	} {
		if got := E8M0ToFP32Half(c.e); got != c.want {
			t.Errorf("E8M0ToFP32Half(%d) = %g, want %g", c.e, got, c.want)
		}
	}
	for _, c := range []struct {
		x    uint8
		want float32 // half the UE4M3 value
	}{
		{0x00, 0}, {0x7F, 0}, {0x38, 0.5}, // exponent 7, mantissa 0: 1.0
		{0x3C, 0.75},                        // 1.5
		{0x40, 1},                           // exponent 8: 2.0
		{0x7E, 224},                         // exponent 15, mantissa 6: 256·1.75 = 448
		{0x01, float32(math.Ldexp(1, -10))}, // subnormal 1·2^−9
		{0x07, float32(math.Ldexp(7, -10))}, // subnormal 7·2^−9
		{0x08, float32(math.Ldexp(1, -7))},  // smallest normal 2^−6
		{0xB8, 0.5},                         // bit 7 ignored
	} {
		if got := UE4M3ToFP32Half(c.x); got != c.want {
			t.Errorf("UE4M3ToFP32Half(%#x) = %g, want %g", c.x, got, c.want)
		}
	}
	for _, c := range []struct {
		x    float32
		want uint8
	}{
		{0, 0}, {-1, 0}, {float32(math.NaN()), 0}, {1, 0x38}, {1.5, 0x3C}, {2, 0x40},
		{1.0625, 0x39},           // 1 + 1/16 rounds up (the dropped bit is a half) to 1.125
		{1.05, 0x38},             // below the half: 1.0
		{1.9375, 0x40},           // 1.9375 = 1 + 15/16 carries into the exponent
		{448, 0x7E}, {1e6, 0x7E}, // clamp
		{0.001, 0x01},                    // 0.001·512 + 0.5 = 1.012
		{float32(math.Ldexp(1, -11)), 0}, // 0.25 + 0.5 truncates to 0
		{0.0137, 0x07},                   // 7.01: clamps to mantissa 7
	} {
		if got := FP32ToUE4M3(c.x); got != c.want {
			t.Errorf("FP32ToUE4M3(%g) = %#x, want %#x", c.x, got, c.want)
		}
	}
}

// TestFP4HandBlocks quantizes, dequantizes and dots hand-made blocks.
func TestFP4HandBlocks(t *testing.T) {
	// MXFP4: amax 6 → e = floor(log2 6) − 2 + 127 = 127, half scale 0.5; 6, 3, −1.5, 0.5, 1.25
	// are codes 7 (12·0.5), 5 (6·0.5), 11 (−3·0.5), 1 (1·0.5) and 2 (1.25 is nearer 1 than 1.5:
	// 2·0.5 = 1, |1 − 1.25| = 0.25 = |1.5 − 1.25|, the first of equals wins).
	x := make([]float32, 32)
	copy(x, []float32{6, 3, -1.5, 0.5, 1.25})
	x[16] = -6
	b := make([]byte, BlockMXFP4Size)
	QuantizeRowMXFP4(x, b)
	want := []byte{127, 0x7 | 0xF<<4, 0x5, 0xB, 0x1, 0x2}
	if !bytes.Equal(b[:6], want) {
		t.Errorf("MXFP4 block % x, want % x", b[:6], want)
	}
	y := make([]float32, 32)
	DequantizeRowMXFP4(b, y)
	if y[0] != 6 || y[1] != 3 || y[2] != -1.5 || y[3] != 0.5 || y[4] != 1 || y[16] != -6 || y[5] != 0 {
		t.Errorf("MXFP4 dequantized %v", y[:17])
	}
	// Hand-made block: e = 129 (half scale 2), codes 1 (2), 7 (24), 15 (−24), 9 (−2).
	b = []byte{129, 0x1 | 0x7<<4, 0xF | 0x9<<4}
	b = append(b, make([]byte, 14)...)
	DequantizeRowMXFP4(b, y)
	if y[0] != 2 || y[16] != 24 || y[1] != -24 || y[17] != -2 {
		t.Errorf("MXFP4 e=129 block: %v %v %v %v", y[0], y[16], y[1], y[17])
	}
	// Dot against a Q8_0 block of scale 1 (f16 0x3C00), all codes 1: (2·1)·Σ kvalues =
	// 2·(1 + 12 − 12 − 1) = 0; with q_y[16] = 3 instead: 2·(1 + 36 − 12 − 1) = 48.
	q8 := make([]byte, BlockQ8_0Size)
	q8[0], q8[1] = 0x00, 0x3C
	for j := range 32 {
		q8[2+j] = 1
	}
	if d := DotMXFP4Q8_0(32, b, q8); d != 0 {
		t.Errorf("MXFP4 dot = %g, want 0", d)
	}
	q8[2+16] = 3
	if d := DotMXFP4Q8_0(32, b, q8); d != 48 {
		t.Errorf("MXFP4 dot = %g, want 48", d)
	}

	// NVFP4: sub-block 0 of amax 6 → scale byte 0x38 (1.0, half 0.5), the codes as MXFP4's;
	// sub-block 1 all zero → scale 0, codes 0; sub-block 2 amax 0.75 → 0.125 = 2^−3, byte
	// (−3+7)<<3 = 0x20, half 0.0625: 0.75 is code 7 (12·0.0625), −0.25 code 12 (−4·0.0625).
	x = make([]float32, 64)
	copy(x, []float32{6, 3, -1.5, 0.5})
	x[8] = -6
	x[32], x[33] = 0.75, -0.25
	nb := make([]byte, BlockNVFP4Size)
	QuantizeRowNVFP4(x, nb)
	if !bytes.Equal(nb[:4], []byte{0x38, 0, 0x20, 0}) {
		t.Errorf("NVFP4 scales % x", nb[:4])
	}
	if !bytes.Equal(nb[4:8], []byte{0x7 | 0xF<<4, 0x5, 0xB, 0x1}) || nb[4+16] != 0x7 || nb[4+17] != 0xC {
		t.Errorf("NVFP4 codes % x", nb[4:])
	}
	y = make([]float32, 64)
	DequantizeRowNVFP4(nb, y)
	if y[0] != 6 || y[8] != -6 || y[2] != -1.5 || y[32] != 0.75 || y[33] != -0.25 {
		t.Errorf("NVFP4 dequantized %v", y)
	}
	// Dot against two Q8_0 blocks of scale 1 and all codes 2: sub-block 0 gives 0.5·2·(12−12+6−3+1)
	// = 4 (codes 7, 15, 5, 11, 1), sub-block 2 gives 0.0625·2·(12 − 4) = 1.
	q8s := make([]byte, 2*BlockQ8_0Size)
	for k := range 2 {
		q8s[k*BlockQ8_0Size+1] = 0x3C
		for j := range 32 {
			q8s[k*BlockQ8_0Size+2+j] = 2
		}
	}
	if d := DotNVFP4Q8_0(64, nb, q8s); d != 5 {
		t.Errorf("NVFP4 dot = %g, want 5", d)
	}

	// Q1_0: ±2 alternating from +2 → d = mean |x| = 2 (f16 0x4000), bits 1, 0, 1, 0 … = 0x55.
	x = make([]float32, 128)
	for i := range x {
		x[i] = 2
		if i%2 == 1 {
			x[i] = -2
		}
	}
	x[1] = float32(math.Copysign(0, -1)) // −0 is ≥ 0: its bit is set; the mean becomes 127·2/128
	qb := make([]byte, BlockQ1_0Size)
	QuantizeRowQ1_0(x, qb)
	if binary.LittleEndian.Uint16(qb) != FP32ToFP16(254.0/128) || qb[2] != 0x57 || qb[3] != 0x55 || qb[17] != 0x55 {
		t.Errorf("Q1_0 block % x", qb)
	}
	y = make([]float32, 128)
	DequantizeRowQ1_0(qb, y)
	if d := getF16(qb); y[0] != d || y[1] != d || y[3] != -d || y[127] != -d {
		t.Errorf("Q1_0 dequantized %v", y[:4])
	}
	// Dot against four Q8_0 blocks of scale 1, codes 1 … 32 in each. Block 0 has the signs
	// + + + − + − … −: 1 + 2 + 3 + (−4 + 5) + … + (−30 + 31) − 32 = 6 + 14 − 32 = −12; blocks 1 … 3
	// alternate + − …: (1 − 2) + … + (31 − 32) = −16 each; the dot is d·(−12 − 48) = −60·254/128.
	q4 := make([]byte, 4*BlockQ8_0Size)
	for k := range 4 {
		q4[k*BlockQ8_0Size+1] = 0x3C
		for j := range 32 {
			q4[k*BlockQ8_0Size+2+j] = byte(j + 1)
		}
	}
	if d := DotQ1_0Q8_0(128, qb, q4); d != -60*254.0/128 {
		t.Errorf("Q1_0 dot = %g, want %g", d, -60*254.0/128)
	}
}

// TestFP4RoundTrip checks quantize→dequantize and the dots on ggml's test-quantize-fns data
// against that test's limits: total error sqrt(Σ(a−b)²)/n under 0.002 (MXFP4), 0.003 (NVFP4)
// and 0.025 (Q1_0); dot error |dot−ref|/n under 0.02, 0.03 and 0.40.
func TestFP4RoundTrip(t *testing.T) {
	const n = 4096
	x := make([]float32, n)
	y := make([]float32, n)
	for i := range x {
		x[i] = float32(0.1 + 2*math.Cos(float64(i)))
		y[i] = float32(0.1 + 2*math.Cos(float64(i)+1))
	}
	var ref float64
	for i := range x {
		ref += float64(x[i]) * float64(y[i])
	}
	limits := map[int][2]float64{39: {0.002, 0.02}, 40: {0.003, 0.03}, 41: {0.025, 0.40}}
	for id, gt := range fp4GoldenTypes {
		q := make([]byte, n/gt.blck*gt.size)
		gt.quantize(x, q)
		d := make([]float32, n)
		gt.dequantize(q, d)
		var se float64
		for i := range x {
			e := float64(x[i] - d[i])
			se += e * e
		}
		if e := math.Sqrt(se) / n; e > limits[id][0] {
			t.Errorf("type %d: round-trip error %g > %g", id, e, limits[id][0])
		}
		act := make([]byte, n/gt.vecDotBlck*gt.vecDotSize)
		gt.vecDot(y, act)
		if e := math.Abs(float64(gt.dot(n, q, act))-ref) / n; e > limits[id][1] {
			t.Errorf("type %d: dot error %g > %g", id, e, limits[id][1])
		}
	}
}
