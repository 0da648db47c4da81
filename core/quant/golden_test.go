package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"testing"
)

// goldenRNG is the xorshift64* generator the C golden-data driver uses.
type goldenRNG uint64

func (s *goldenRNG) next() uint64 {
	x := uint64(*s)
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*s = goldenRNG(x)
	return x * 2685821657736338717
}

func (s *goldenRNG) u() float32 { return float32(s.next()>>40) * (1.0 / 16777216.0) }

// genInput reproduces the C driver's 16 input families (row%16): uniform, sum of uniforms,
// outliers, all positive, all negative, zero blocks, constant blocks, tiny (1e-20), huge (3e4),
// small integers, half integers, heavy tails, all zero, one non-zero per block, per-16 scales,
// mixed magnitudes.
func genInput(row, salt, n int) []float32 {
	st := goldenRNG(uint64(row*2+salt)*0x9E3779B97F4A7C15 + 1)
	for range 4 {
		st.next()
	}
	x := make([]float32, n)
	var c float32
	for i := range x {
		a := st.u()
		var v float32
		switch row % 16 {
		case 0:
			v = 2*a - 1
		case 1:
			b := a + st.u()
			b += st.u()
			b += st.u()
			v = (b - 2) * 1.7
		case 2:
			v = 2*a - 1
			if st.next()&63 == 0 {
				v *= 100
			}
		case 3:
			v = a + 0.01
		case 4:
			v = -a - 0.5
		case 5:
			if (i/32)%3 != 0 && i < 256 {
				v = 2*a - 1
			}
		case 6:
			if i%32 == 0 {
				c = 2*a - 1
			}
			v = c
		case 7:
			v = (2*a - 1) * 1e-20
		case 8:
			v = (2*a - 1) * 3e4
		case 9:
			v = float32(int32(a*9) - 4)
		case 10:
			v = float32(int32(a*17)-8) * 0.5
		case 11:
			b := a * a
			v = b * b * 8
			if st.next()&1 != 0 {
				v = -v
			}
		case 13:
			if i%32 == (row/16)%32 {
				v = 2*a - 1
			}
		case 14:
			v = (2*a - 1) * float32(1+(i/16)%7)
		case 15:
			if i < n/2 {
				v = (2*a - 1) * 10
			} else {
				v = (2*a - 1) * 0.1
			}
		}
		x[i] = v
	}
	return x
}

type goldenType struct {
	id, blck, size int
	quantize       func([]float32, []byte)
	dequantize     func([]byte, []float32)
	dot            func(int, []byte, []byte) float32
	vecDot         func([]float32, []byte) // quantizer of the vec_dot_type
	vecDotSize     int                     // bytes per 32 elements of the vec_dot_type... per block
	vecDotBlck     int
}

var goldenTypes = map[int]goldenType{
	6:  {6, 32, BlockQ5_0Size, QuantizeRowQ5_0, DequantizeRowQ5_0, DotQ5_0Q8_0, QuantizeRowQ8_0, BlockQ8_0Size, 32},
	7:  {7, 32, BlockQ5_1Size, QuantizeRowQ5_1, DequantizeRowQ5_1, DotQ5_1Q8_1, QuantizeRowQ8_1, BlockQ8_1Size, 32},
	10: {10, 256, BlockQ2_KSize, QuantizeRowQ2_K, DequantizeRowQ2_K, DotQ2_KQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, 256},
	11: {11, 256, BlockQ3_KSize, QuantizeRowQ3_K, DequantizeRowQ3_K, DotQ3_KQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, 256},
	12: {12, 256, BlockQ4_KSize, QuantizeRowQ4_K, DequantizeRowQ4_K, DotQ4_KQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, 256},
	13: {13, 256, BlockQ5_KSize, QuantizeRowQ5_K, DequantizeRowQ5_K, DotQ5_KQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, 256},
	14: {14, 256, BlockQ6_KSize, QuantizeRowQ6_K, DequantizeRowQ6_K, DotQ6_KQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, 256},
	15: {15, 256, BlockQ8_KSize, QuantizeRowQ8_K, DequantizeRowQ8_K, nil, nil, 0, 0},
	20: {20, 32, BlockIQ4_NLSize, QuantizeRowIQ4_NL, DequantizeRowIQ4_NL, DotIQ4_NLQ8_0, QuantizeRowQ8_0, BlockQ8_0Size, 32},
	23: {23, 256, BlockIQ4_XSSize, QuantizeRowIQ4_XS, DequantizeRowIQ4_XS, DotIQ4_XSQ8_K, QuantizeRowQ8_K, BlockQ8_KSize, 256},
	8:  {8, 32, BlockQ8_0Size, QuantizeRowQ8_0, DequantizeRowQ8_0, nil, nil, 0, 0},
	9:  {9, 32, BlockQ8_1Size, QuantizeRowQ8_1, nil, nil, nil, 0, 0},
}

// iq4nlLeadingZeroBlock reports whether IQ4_NL block ib of x is all zero with only zero blocks
// before it: ggml emits uninitialised scratch bytes as its codes, which cannot be compared.
func iq4nlLeadingZeroBlock(x []float32, ib int) bool {
	for _, v := range x[:(ib+1)*32] {
		if abs32(v) >= groupMaxEps {
			return false
		}
	}
	return true
}

// TestGoldenGGML compares every quantizer, dequantizer and dot product with the outputs of
// ggml's reference C code (testdata/README.md): quantized bytes and dequantized floats
// identical, dots identical to the bit.
func TestGoldenGGML(t *testing.T) {
	path := "testdata/ggml_golden.bin"
	if p := os.Getenv("TANDEM_GGML_GOLDEN"); p != "" {
		path = p
	}
	checkGolden(t, path, goldenTypes)
}

// checkGolden checks the golden file at path (testdata/README.md's format) against the types,
// which must be exactly the file's.
func checkGolden(t *testing.T, path string, types map[int]goldenType) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rd := bytes.NewReader(data)
	u32 := func() int {
		var v uint32
		if err := binary.Read(rd, binary.LittleEndian, &v); err != nil {
			t.Fatal(err)
		}
		return int(v)
	}
	if u32() != 0x31475154 {
		t.Fatal("bad magic")
	}
	nrows, n, ntypes := u32(), u32(), u32()
	seen := 0
	for range ntypes {
		id, blck, size := u32(), u32(), u32()
		gt, ok := types[id]
		if !ok || gt.blck != blck || gt.size != size {
			t.Fatalf("type %d: golden block %d/%d bytes, ours %+v", id, blck, size, gt)
		}
		seen++
		rs := n / blck * size
		bad := 0
		for r := range nrows {
			want := make([]byte, rs)
			if _, err := rd.Read(want); err != nil {
				t.Fatal(err)
			}
			var wantHash uint64
			var wantDot float32
			binary.Read(rd, binary.LittleEndian, &wantHash)
			binary.Read(rd, binary.LittleEndian, &wantDot)
			x := genInput(r, 0, n)
			got := make([]byte, rs)
			gt.quantize(x, got)
			if id == 20 {
				for ib := range n / 32 {
					if iq4nlLeadingZeroBlock(x, ib) {
						copy(got[ib*size+2:(ib+1)*size], want[ib*size+2:(ib+1)*size])
					}
				}
			}
			if !bytes.Equal(got, want) {
				if bad++; bad <= 3 {
					for i := range got {
						if got[i] != want[i] {
							t.Errorf("type %d row %d (family %d): quantized byte %d (block %d, offset %d) = %#x, ggml %#x",
								id, r, r%16, i, i/size, i%size, got[i], want[i])
							break
						}
					}
				}
				continue
			}
			if gt.dequantize != nil {
				y := make([]float32, n)
				gt.dequantize(want, y)
				if goldenHash(y) != wantHash {
					t.Errorf("type %d row %d: dequantized values differ from ggml's", id, r)
				}
			}
			if gt.dot != nil {
				act := make([]byte, n/gt.vecDotBlck*gt.vecDotSize)
				gt.vecDot(genInput(r, 1, n), act)
				if d := gt.dot(n, want, act); math.Float32bits(d) != math.Float32bits(wantDot) {
					t.Errorf("type %d row %d: dot = %g, ggml %g", id, r, d, wantDot)
				}
			}
		}
		if bad > 0 {
			t.Errorf("type %d: %d of %d rows quantize differently from ggml", id, bad, nrows)
		}
	}
	if seen != len(types) {
		t.Errorf("golden file covers %d types, want %d", seen, len(types))
	}
}

// goldenReader reads the fixture at path: read fills v (a fixed-size value or slice) from the
// next little-endian bytes, failing t when the data runs out; left counts the bytes not read.
func goldenReader(t *testing.T, path string) (read func(v any), left func() int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rd := bytes.NewReader(data)
	read = func(v any) {
		t.Helper()
		if err := binary.Read(rd, binary.LittleEndian, v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return read, rd.Len
}

// goldenHash is the C driver's row hash: FNV-1a over the little-endian bytes of y, with the
// driver's offset basis 1469598103934665603.
func goldenHash(y []float32) uint64 {
	h := uint64(1469598103934665603)
	for _, v := range y {
		b := math.Float32bits(v)
		for k := range 4 {
			h ^= uint64(byte(b >> (8 * k)))
			h *= 1099511628211
		}
	}
	return h
}
