package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// q2_0GoldenTypes is the type of testdata/ggml_golden_q2_0.bin and ggml_q2_0_edges.bin (made by
// testdata/iq3_golden.c).
var q2_0GoldenTypes = map[int]goldenType{
	42: {42, QK2_0, BlockQ2_0Size, QuantizeRowQ2_0, DequantizeRowQ2_0, DotQ2_0Q8_0, QuantizeRowQ8_0, BlockQ8_0Size, QK8_0},
}

// TestGoldenGGMLQ2_0 compares the Q2_0 quantizer, dequantizer and dot with ggml's on the 16
// input families: bytes, dequantized floats and dots identical to the bit.
func TestGoldenGGMLQ2_0(t *testing.T) {
	checkGolden(t, "testdata/ggml_golden_q2_0.bin", q2_0GoldenTypes)
}

// TestQ2_0EdgesGGML compares Q2_0's quantized bytes and dequantized values with ggml's on the
// edge rows: ties at half the maximum and one ulp beside them, inexact inverses, signed zeros,
// maxima past f16's range, tiny maxima, infinities and NaNs.
func TestQ2_0EdgesGGML(t *testing.T) {
	checkEdges(t, "testdata/ggml_q2_0_edges.bin", q2_0GoldenTypes)
}

// TestRawBlocksGGML decodes ggml's random IQ3_XXS, IQ3_S and Q2_0 blocks of
// testdata/ggml_iq3_raw.bin (every byte random but d: d of 0, −0, the smallest subnormal, f16's
// maximum, negative and moderate values) and dots them with Q8_K / Q8_0 activations: dequantized
// floats and dots identical to ggml's to the bit.
func TestRawBlocksGGML(t *testing.T) {
	types := map[int]goldenType{
		18: {18, QK_K, BlockIQ3_XXSSize, nil, DequantizeRowIQ3_XXS, DotIQ3_XXSQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, QK_K},
		21: {21, QK_K, BlockIQ3_SSize, nil, DequantizeRowIQ3_S, DotIQ3_SQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, QK_K},
		42: q2_0GoldenTypes[42],
	}
	checkRawGolden(t, "testdata/ggml_iq3_raw.bin", 0x52335149, types)
}

// checkRawGolden checks a file of raw blocks (testdata/README.md's format of ggml_iq3_raw.bin)
// against the types, which must be exactly the file's.
func checkRawGolden(t *testing.T, path string, magic uint32, types map[int]goldenType) {
	t.Helper()
	read, left := goldenReader(t, path)
	var hdr [4]uint32
	read(&hdr)
	if hdr[0] != magic || int(hdr[3]) != len(types) {
		t.Fatalf("%s: bad header %#x, %d types", path, hdr[0], hdr[3])
	}
	nrows, n := int(hdr[1]), int(hdr[2])
	for range hdr[3] {
		var th [3]uint32
		read(&th)
		gt, ok := types[int(th[0])]
		if !ok || gt.blck != int(th[1]) || gt.size != int(th[2]) {
			t.Fatalf("type %d: golden block %d/%d bytes, ours %+v", th[0], th[1], th[2], gt)
		}
		for r := range nrows {
			q := make([]byte, n/gt.blck*gt.size)
			var wantHash uint64
			var wantDot float32
			read(q)
			read(&wantHash)
			read(&wantDot)
			y := make([]float32, n)
			gt.dequantize(q, y)
			if goldenHash(y) != wantHash {
				t.Errorf("type %d row %d: dequantized values differ from ggml's", th[0], r)
			}
			act := make([]byte, n/gt.vecDotBlck*gt.vecDotSize)
			gt.vecDot(genInput(r, 1, n), act)
			if d := gt.dot(n, q, act); math.Float32bits(d) != math.Float32bits(wantDot) {
				t.Errorf("type %d row %d: dot = %g, ggml %g", th[0], r, d, wantDot)
			}
		}
	}
	if n := left(); n != 0 {
		t.Errorf("%s: %d bytes left over", path, n)
	}
}

// TestIQ3HandBlocks decodes hand-built blocks: IQ3_XXS with d = 1, scale nibble 3 (factor
// (0.5+3)·0.5 = 1.75), grid index 0 (all fours) and sign index 1 (element 0 negated, and the
// parity bit 7); IQ3_S with d = 1, scales 2 and 5 (factors 5 and 11), index 256 through the
// high bit, signs 0x81.
func TestIQ3HandBlocks(t *testing.T) {
	xxs := make([]byte, BlockIQ3_XXSSize)
	putF16(xxs, 1)
	binary.LittleEndian.PutUint32(xxs[2+QK_K/4:], 3<<28|1) // group 0: signs 1 for l = 0, 0 for the rest
	y := make([]float32, QK_K)
	DequantizeRowIQ3_XXS(xxs, y)
	g := iq3xxsGrid[0]
	for j := range 8 {
		want := 1.75 * float32(g[j%4])
		if j == 0 || j == 7 {
			want = -want
		}
		if y[j] != want {
			t.Errorf("iq3_xxs element %d = %g, want %g", j, y[j], want)
		}
	}
	if y[32] != 0.25*float32(iq3xxsGrid[0][0]) { // scale nibble 0: factor 0.25, sign index 0
		t.Errorf("iq3_xxs group 1 element 0 = %g", y[32])
	}

	s := make([]byte, BlockIQ3_SSize)
	putF16(s, 1)
	s[2] = 7                          // group 0, index 0: low byte 7
	s[2+QK_K/4] = 1                   // high bit of index 0 of group 0: index 263
	s[2+QK_K/4+QK_K/32] = 0x81        // signs of elements 0 and 7
	s[2+QK_K/4+QK_K/32+QK_K/8] = 0x52 // group 0 scale 2, group 1 scale 5
	DequantizeRowIQ3_S(s, y)
	for j := range 8 {
		gi := iq3sGrid[0]
		if j < 4 {
			gi = iq3sGrid[263]
		}
		want := 5 * float32(gi[j%4])
		if j == 0 || j == 7 {
			want = -want
		}
		if y[j] != want {
			t.Errorf("iq3_s element %d = %g, want %g", j, y[j], want)
		}
	}
	if y[32] != 11*float32(iq3sGrid[0][0]) {
		t.Errorf("iq3_s group 1 element 0 = %g, want %g", y[32], 11*float32(iq3sGrid[0][0]))
	}
}

// iq3QuantTypes are the quantizers of testdata/ggml_golden_iq3.bin and ggml_iq3_edges.bin (made by
// testdata/iq3_golden.c with ggml's quantize_row_iq3_xxs_ref and quantize_row_iq3_s_ref).
var iq3QuantTypes = map[int]goldenType{
	18: {18, QK_K, BlockIQ3_XXSSize, QuantizeRowIQ3_XXS, DequantizeRowIQ3_XXS, DotIQ3_XXSQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, QK_K},
	21: {21, QK_K, BlockIQ3_SSize, QuantizeRowIQ3_S, DequantizeRowIQ3_S, DotIQ3_SQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, QK_K},
}

// TestGoldenGGMLIQ3Quantizers compares the IQ3_XXS and IQ3_S quantizers with ggml's reference
// ones on the 16 input families (bytes identical; dequantized floats and dots too) and on the
// finite edge rows (ties, inexact inverses, signed zeros, a zero block, maxima past f16's range,
// tiny maxima).
func TestGoldenGGMLIQ3Quantizers(t *testing.T) {
	checkGolden(t, "testdata/ggml_golden_iq3.bin", iq3QuantTypes)
	checkEdges(t, "testdata/ggml_iq3_edges.bin", iq3QuantTypes)
}

// TestIQ3QuantizersNonFinite: ggml's IQ3 quantizers abort on infinities and NaNs (no neighbour
// nearer than FLT_MAX); tandem's return blocks without panicking, and a row of zeros and values
// below IQ3_XXS's 1e-8 group threshold gives zero blocks.
func TestIQ3QuantizersNonFinite(t *testing.T) {
	x := make([]float32, QK_K)
	for i := range x {
		x[i] = float32((i*7)%11-5) * 0.3
	}
	x[5], x[64], x[100], x[200], x[201] = float32(math.Inf(1)), float32(math.NaN()), float32(math.NaN()),
		float32(math.Inf(-1)), float32(math.NaN())
	QuantizeRowIQ3_XXS(x, make([]byte, BlockIQ3_XXSSize))
	QuantizeRowIQ3_S(x, make([]byte, BlockIQ3_SSize))
	for i := range x {
		x[i] = float32(i%3-1) * 1e-9
	}
	for _, c := range []struct {
		q    func([]float32, []byte)
		size int
	}{{QuantizeRowIQ3_XXS, BlockIQ3_XXSSize}, {QuantizeRowIQ3_S, BlockIQ3_SSize}} {
		b := make([]byte, c.size)
		for i := range b {
			b[i] = 0xff
		}
		if c.size == BlockIQ3_SSize {
			clear(x)
		}
		c.q(x, b)
		if !bytes.Equal(b, make([]byte, c.size)) {
			t.Errorf("block of %d bytes: %x, want zeros", c.size, b)
		}
	}
}
