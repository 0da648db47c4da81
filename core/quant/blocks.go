package quant

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Block sizes (elements per block) and block byte sizes of ggml's legacy quantized formats.
// All multi-byte fields are little endian and the structs are packed, as in ggml-common.h.
const (
	// QK4_0 is the number of elements in a Q4_0 block.
	QK4_0 = 32
	// BlockQ4_0Size is the byte size of block_q4_0: f16 scale d, then 16 bytes of 4-bit quants.
	// Byte j holds element j in its low nibble and element j+16 in its high nibble; a quant q
	// stands for (q-8)*d.
	BlockQ4_0Size = 2 + QK4_0/2

	// QK4_1 is the number of elements in a Q4_1 block.
	QK4_1 = 32
	// BlockQ4_1Size is the byte size of block_q4_1: f16 scale d, f16 minimum m, then 16 bytes of
	// 4-bit quants laid out as in Q4_0; a quant q stands for q*d + m.
	BlockQ4_1Size = 4 + QK4_1/2

	// QK8_0 is the number of elements in a Q8_0 block.
	QK8_0 = 32
	// BlockQ8_0Size is the byte size of block_q8_0: f16 scale d, then 32 int8 quants; q stands for q*d.
	BlockQ8_0Size = 2 + QK8_0

	// QK8_1 is the number of elements in a Q8_1 block.
	QK8_1 = 32
	// BlockQ8_1Size is the byte size of block_q8_1: f16 scale d, f16 s = d * (sum of the 32 quants),
	// then 32 int8 quants; q stands for q*d. Q8_1 is the activation format paired with Q4_1.
	BlockQ8_1Size = 4 + QK8_1
)

// RowSize returns the bytes needed to store n elements in a format with blocks of qk elements of
// blockSize bytes each, e.g. RowSize(n, QK4_0, BlockQ4_0Size). n must be a multiple of qk.
func RowSize(n, qk, blockSize int) int {
	return n / qk * blockSize
}

// blocks checks that n elements form whole blocks and that buf holds them, and returns the
// block count. It panics, naming fn, otherwise: core validates shapes before calling in here.
func blocks(fn string, n, qk, blockSize, buf int, bufName string) int {
	if n%qk != 0 {
		panic(fmt.Sprintf("quant.%s: %d elements is not a whole number of %d-element blocks", fn, n, qk))
	}
	nb := n / qk
	if buf < nb*blockSize {
		panic(fmt.Sprintf("quant.%s: %s holds %d bytes, %d elements need %d (%d blocks of %d bytes)",
			fn, bufName, buf, n, nb*blockSize, nb, blockSize))
	}
	return nb
}

func putF16(b []byte, f float32) { binary.LittleEndian.PutUint16(b, FP32ToFP16(f)) }
func getF16(b []byte) float32    { return fp16Table[binary.LittleEndian.Uint16(b)] }

// toInt8 converts a float32 that the caller knows lies in the int8 range to int8, truncating
// toward zero like C's (int8_t) cast. Non-finite inputs (only possible from non-finite data)
// give an unspecified value instead of a panic.
func toInt8(v float32) int8 { return int8(int32(v)) }

// roundHalfAway rounds to the nearest integer, halfway cases away from zero (C's roundf).
// Converting float32 to float64 and back is exact, so this is roundf exactly.
func roundHalfAway(v float32) float32 { return float32(math.Round(float64(v))) }

// QuantizeRowQ4_0 quantizes x into Q4_0 blocks in dst, bit for bit as ggml's
// quantize_row_q4_0_ref: per block of 32, the element of largest magnitude (the first one on a
// tie) keeps its sign and sets d = max / -8; each element becomes min(15, trunc(x/d + 8.5)), so
// max itself maps to 0 and -max to 15 (it cannot reach 16). An all-zero block gets d = 0 and
// quants 8. len(x) must be a multiple of QK4_0 and dst must hold len(x)/QK4_0*BlockQ4_0Size
// bytes; extra dst bytes are left alone. Callers validate; otherwise it panics.
// A block holding NaN or ±Inf becomes a NaN block (FixNonFiniteQ4).
func QuantizeRowQ4_0(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ4_0", len(x), QK4_0, BlockQ4_0Size, len(dst), "dst")
	for i := range nb {
		xb := (*[QK4_0]float32)(x[i*QK4_0:])
		blk := (*[BlockQ4_0Size]byte)(dst[i*BlockQ4_0Size:])
		var amax, vmax float32
		for _, v := range xb {
			if av := abs32(v); amax < av {
				amax, vmax = av, v
			}
		}
		d := vmax / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(blk[0:2], d)
		for j := range QK4_0 / 2 {
			q0 := min(15, toInt8(float32(xb[j]*id)+8.5))
			q1 := min(15, toInt8(float32(xb[j+QK4_0/2]*id)+8.5))
			blk[2+j] = uint8(q0) | uint8(q1)<<4
		}
	}
	FixNonFiniteQ4(x[:nb*QK4_0], dst, false) // NaN and Inf by tandem's rule (nonfinite.go)
}

// DequantizeRowQ4_0 expands Q4_0 blocks from src into y, bit for bit as ggml's
// dequantize_row_q4_0: element = (q-8) * d. len(y) must be a multiple of QK4_0 and src must hold
// len(y)/QK4_0*BlockQ4_0Size bytes. Callers validate; otherwise it panics.
func DequantizeRowQ4_0(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ4_0", len(y), QK4_0, BlockQ4_0Size, len(src), "src")
	for i := range nb {
		blk := (*[BlockQ4_0Size]byte)(src[i*BlockQ4_0Size:])
		yb := (*[QK4_0]float32)(y[i*QK4_0:])
		d := getF16(blk[0:2])
		for j := range QK4_0 / 2 {
			q := blk[2+j]
			yb[j] = float32(int32(q&0x0f)-8) * d
			yb[j+QK4_0/2] = float32(int32(q>>4)-8) * d
		}
	}
}

// QuantizeRowQ4_1 quantizes x into Q4_1 blocks in dst, bit for bit as ggml's
// quantize_row_q4_1_ref: per block, m = min, d = (max-min)/15, and each element becomes
// min(15, trunc((x-min)/d + 0.5)) (round half up). A constant block gets d = 0 and quants 0.
// len(x) must be a multiple of QK4_1 and dst must hold len(x)/QK4_1*BlockQ4_1Size bytes.
// Callers validate; otherwise it panics. A block holding NaN or ±Inf becomes a NaN block
// (FixNonFiniteQ4).
func QuantizeRowQ4_1(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ4_1", len(x), QK4_1, BlockQ4_1Size, len(dst), "dst")
	for i := range nb {
		xb := (*[QK4_1]float32)(x[i*QK4_1:])
		blk := (*[BlockQ4_1Size]byte)(dst[i*BlockQ4_1Size:])
		lo := float32(math.MaxFloat32)
		hi := float32(-math.MaxFloat32)
		for _, v := range xb {
			if v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
		d := (hi - lo) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(blk[0:2], d)
		putF16(blk[2:4], lo)
		for j := range QK4_1 / 2 {
			q0 := min(15, toInt8(float32((xb[j]-lo)*id)+0.5))
			q1 := min(15, toInt8(float32((xb[j+QK4_1/2]-lo)*id)+0.5))
			blk[4+j] = uint8(q0) | uint8(q1)<<4
		}
	}
	FixNonFiniteQ4(x[:nb*QK4_1], dst, true)
}

// DequantizeRowQ4_1 expands Q4_1 blocks from src into y, bit for bit as ggml's
// dequantize_row_q4_1: element = q*d + m, the product rounded to float32 before the add.
// len(y) must be a multiple of QK4_1 and src must hold len(y)/QK4_1*BlockQ4_1Size bytes.
// Callers validate; otherwise it panics.
func DequantizeRowQ4_1(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ4_1", len(y), QK4_1, BlockQ4_1Size, len(src), "src")
	for i := range nb {
		blk := (*[BlockQ4_1Size]byte)(src[i*BlockQ4_1Size:])
		yb := (*[QK4_1]float32)(y[i*QK4_1:])
		d := getF16(blk[0:2])
		m := getF16(blk[2:4])
		for j := range QK4_1 / 2 {
			q := blk[4+j]
			yb[j] = float32(float32(q&0x0f)*d) + m
			yb[j+QK4_1/2] = float32(float32(q>>4)*d) + m
		}
	}
}

// QuantizeRowQ8_0 quantizes x into Q8_0 blocks in dst, bit for bit as ggml's
// quantize_row_q8_0_ref: per block, d = amax/127 and each element becomes round(x/d), halfway
// cases away from zero (C roundf), so quants lie in [-127, 127]. An all-zero block gets d = 0.
// len(x) must be a multiple of QK8_0 and dst must hold len(x)/QK8_0*BlockQ8_0Size bytes.
// Callers validate; otherwise it panics. Blocks holding NaN or ±Inf follow FixNonFiniteQ8's rule.
// ggml quirk kept out: ggml-cpu's SIMD quantize_row_q8_0 (AVX2, used by its CPY/SET_ROWS into
// Q8_0) rounds halfway cases to even, unlike its reference, so test-backend-ops' CPY(f16 or bf16
// → q8_0) cases, whose f16/bf16-exact inputs hit ties, differ from ggml's CPU by an ulp of a quant
// (docs/test-backend-ops.md); tandem keeps the reference rounding.
func QuantizeRowQ8_0(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ8_0", len(x), QK8_0, BlockQ8_0Size, len(dst), "dst")
	for i := range nb {
		xb := (*[QK8_0]float32)(x[i*QK8_0:])
		blk := (*[BlockQ8_0Size]byte)(dst[i*BlockQ8_0Size:])
		d, id := q8Scale(xb)
		putF16(blk[0:2], d)
		for j, v := range xb {
			blk[2+j] = uint8(toInt8(roundHalfAway(v * id)))
		}
	}
	FixNonFiniteQ8(x[:nb*QK8_0], dst, false) // NaN and Inf by tandem's rule (nonfinite.go)
}

// DequantizeRowQ8_0 expands Q8_0 blocks from src into y, bit for bit as ggml's
// dequantize_row_q8_0: element = q*d. len(y) must be a multiple of QK8_0 and src must hold
// len(y)/QK8_0*BlockQ8_0Size bytes. Callers validate; otherwise it panics.
func DequantizeRowQ8_0(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ8_0", len(y), QK8_0, BlockQ8_0Size, len(src), "src")
	for i := range nb {
		blk := (*[BlockQ8_0Size]byte)(src[i*BlockQ8_0Size:])
		yb := (*[QK8_0]float32)(y[i*QK8_0:])
		d := getF16(blk[0:2])
		for j := range yb {
			yb[j] = float32(int8(blk[2+j])) * d
		}
	}
}

// QuantizeRowQ8_1 quantizes x into Q8_1 blocks in dst, bit for bit as ggml's
// quantize_row_q8_1_ref: the quants and d are those of Q8_0, and s = f16(d * sum of the quants),
// computed from the float32 d before it is rounded to f16. len(x) must be a multiple of QK8_1
// and dst must hold len(x)/QK8_1*BlockQ8_1Size bytes. Callers validate; otherwise it panics.
// Blocks holding NaN or ±Inf follow FixNonFiniteQ8's rule.
func QuantizeRowQ8_1(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ8_1", len(x), QK8_1, BlockQ8_1Size, len(dst), "dst")
	for i := range nb {
		xb := (*[QK8_1]float32)(x[i*QK8_1:])
		blk := (*[BlockQ8_1Size]byte)(dst[i*BlockQ8_1Size:])
		d, id := q8Scale(xb)
		putF16(blk[0:2], d)
		var sum int32
		for j, v := range xb {
			q := toInt8(roundHalfAway(v * id))
			blk[4+j] = uint8(q)
			sum += int32(q)
		}
		putF16(blk[2:4], float32(sum)*d)
	}
	FixNonFiniteQ8(x[:nb*QK8_1], dst, true)
}

// DequantizeRowQ8_1 expands Q8_1 blocks from src into y: element = q*d (s is not needed).
// len(y) must be a multiple of QK8_1 and src must hold len(y)/QK8_1*BlockQ8_1Size bytes.
// Callers validate; otherwise it panics.
func DequantizeRowQ8_1(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ8_1", len(y), QK8_1, BlockQ8_1Size, len(src), "src")
	for i := range nb {
		blk := (*[BlockQ8_1Size]byte)(src[i*BlockQ8_1Size:])
		yb := (*[QK8_1]float32)(y[i*QK8_1:])
		d := getF16(blk[0:2])
		for j := range yb {
			yb[j] = float32(int8(blk[4+j])) * d
		}
	}
}

// q8Scale returns ggml's Q8 scale d = amax/127 of a block and its inverse (0 when d is 0).
// amax is updated as C's MAX(amax, |v|), i.e. replaced unless amax > |v|.
func q8Scale(xb *[32]float32) (d, id float32) {
	var amax float32
	for _, v := range xb {
		if av := abs32(v); !(amax > av) {
			amax = av
		}
	}
	d = amax / 127
	if d != 0 {
		id = 1 / d
	}
	return d, id
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }
