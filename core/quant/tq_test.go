package quant

import (
	"bytes"
	"math"
	"testing"
)

// tqGoldenTypes are the types of testdata/ggml_golden_tq.bin (made by testdata/tq_golden.c).
var tqGoldenTypes = map[int]goldenType{
	34: {34, QK_K, BlockTQ1_0Size, QuantizeRowTQ1_0, DequantizeRowTQ1_0, DotTQ1_0Q8_K, QuantizeRowQ8_K, BlockQ8_KSize, QK_K},
	35: {35, QK_K, BlockTQ2_0Size, QuantizeRowTQ2_0, DequantizeRowTQ2_0, DotTQ2_0Q8_K, QuantizeRowQ8_K, BlockQ8_KSize, QK_K},
}

// TestGoldenGGMLTQ compares the TQ1_0 and TQ2_0 quantizers, dequantizers and dots with ggml's
// on the 16 input families: bytes, dequantized floats and dots identical to the bit.
func TestGoldenGGMLTQ(t *testing.T) {
	checkGolden(t, "testdata/ggml_golden_tq.bin", tqGoldenTypes)
}

// TestTQEdgesGGML compares quantized bytes and dequantized values with ggml's on the edge rows
// of testdata/ggml_tq_edges.bin: exact ties at half the maximum and one ulp beside them, inexact
// inverses, zero blocks with signed zeros, a maximum past f16's range, tiny maxima.
func TestTQEdgesGGML(t *testing.T) {
	checkEdges(t, "testdata/ggml_tq_edges.bin", tqGoldenTypes)
}

// checkEdges checks an edge-row file (testdata/README.md's format of ggml_fp4_edges.bin) against
// the types, which must be exactly the file's: quantized bytes and dequantized values identical.
func checkEdges(t *testing.T, path string, types map[int]goldenType) {
	t.Helper()
	rd32, _ := goldenReader(t, path)
	var magic, nrows, n, ntypes uint32
	rd32(&magic)
	rd32(&nrows)
	rd32(&n)
	rd32(&ntypes)
	if magic != 0x31455154 || ntypes != uint32(len(types)) {
		t.Fatalf("bad header %#x %d types", magic, ntypes)
	}
	rows := make([][]float32, nrows)
	for r := range rows {
		rows[r] = make([]float32, n)
		rd32(rows[r])
	}
	for range ntypes {
		var id uint32
		rd32(&id)
		gt, ok := types[int(id)]
		if !ok {
			t.Fatalf("%s: type %d is not expected", path, id)
		}
		rs := int(n) / gt.blck * gt.size
		for r, x := range rows {
			want := make([]byte, rs)
			wantY := make([]float32, n)
			rd32(want)
			rd32(wantY)
			got := make([]byte, rs)
			gt.quantize(x, got)
			if !bytes.Equal(got, want) {
				t.Errorf("type %d edge row %d: quantized\n got %x\nggml %x", id, r, got, want)
			}
			y := make([]float32, n)
			gt.dequantize(want, y)
			for i := range y {
				if math.Float32bits(y[i]) != math.Float32bits(wantY[i]) {
					t.Errorf("type %d edge row %d: element %d dequantizes to %g, ggml %g", id, r, i, y[i], wantY[i])
					break
				}
			}
		}
	}
}

// TestTQHand checks a hand-built block of each type: d = 2, elements −1, 0, 1 in turn.
func TestTQHand(t *testing.T) {
	x := make([]float32, QK_K)
	for i := range x {
		x[i] = float32(i%3-1) * 2
	}
	for _, c := range []struct {
		name string
		size int
		q    func([]float32, []byte)
		dq   func([]byte, []float32)
	}{
		{"tq1_0", BlockTQ1_0Size, QuantizeRowTQ1_0, DequantizeRowTQ1_0},
		{"tq2_0", BlockTQ2_0Size, QuantizeRowTQ2_0, DequantizeRowTQ2_0},
	} {
		b := make([]byte, c.size)
		c.q(x, b)
		if d := getF16(b[c.size-2:]); d != 2 {
			t.Errorf("%s: d = %g, want 2", c.name, d)
		}
		y := make([]float32, QK_K)
		c.dq(b, y)
		for i := range y {
			if y[i] != x[i] {
				t.Fatalf("%s: element %d = %g, want %g", c.name, i, y[i], x[i])
			}
		}
	}
	if BlockTQ1_0Size != 54 || BlockTQ2_0Size != 66 {
		t.Errorf("block sizes %d, %d; ggml's are 54, 66", BlockTQ1_0Size, BlockTQ2_0Size)
	}
}
