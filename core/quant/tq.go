package quant

// TQ1_0 and TQ2_0, ggml's ternary types (values −d, 0, +d per 256-element super-block),
// bit-compatible with ggml-common.h of ggml d99724f2.
//
// TQ2_0 keeps two bits per element (the trit plus one). TQ1_0 packs five trits into a byte as the
// fixed-point fraction ceil(t·256/243) of their base-3 number t (first trit most significant), so
// that multiplying the byte by 3^n (mod 256) and taking the top bits of ·3 reads trit n.
const (
	// BlockTQ1_0Size is the byte size of block_tq1_0: 48 bytes of five trits each (bytes 0 … 31
	// hold elements m + 32n, n = 0 … 4, of the first 160 values; bytes 32 … 47 elements 160 + m +
	// 16n of the next 80), 4 bytes of four trits each (byte j holds elements 240 + j + 4n), then
	// f16 d.
	BlockTQ1_0Size = (QK_K-4*QK_K/64)/5 + QK_K/64 + 2

	// BlockTQ2_0Size is the byte size of block_tq2_0: 64 bytes of 2-bit codes (byte 32h + m holds
	// element 128h + 32n + m in bits 2n, 2n+1; code c stands for (c−1)·d), then f16 d.
	BlockTQ2_0Size = QK_K/4 + 2
)

const (
	tq1QS = (QK_K - 4*QK_K/64) / 5 // 48
	tq1QH = QK_K / 64              // 4
)

var pow3 = [6]uint8{1, 3, 9, 27, 81, 243}

// tqScale returns the block's absolute maximum (C's MAX(amax, fabsf(v)) in order: a NaN is
// replaced by the next value) and its inverse (0 for a zero block).
func tqScale(xb []float32) (d, id float32) {
	for _, v := range xb {
		if a := abs32(v); !(d > a) {
			d = a
		}
	}
	if d != 0 {
		id = 1 / d
	}
	return d, id
}

// ternary returns lroundf(v·id)+1 as ggml's quantizers take it: 0, 1 or 2 for finite data.
func ternary(v, id float32) uint8 {
	return uint8(int32(roundHalfAway(v*id)) + 1)
}

// tritByte turns the base-3 number t of a byte's trits into its stored fraction ceil(t·256/243).
func tritByte(t uint8) uint8 { return uint8((uint16(t)*256 + 242) / 243) }

// trit reads the trit at position n (0 most significant) of a packed byte, minus one.
func trit(b uint8, n int) int32 { return int32((uint16(b*pow3[n])*3)>>8) - 1 }

// QuantizeRowTQ1_0 quantizes x into TQ1_0 blocks in dst as ggml's quantize_row_tq1_0_ref (also
// the CPU's from_float): d is the block's absolute maximum, each element rounds x/d (half away
// from zero) to −1, 0 or 1. len(x) must be a multiple of QK_K and dst must hold
// len(x)/QK_K*BlockTQ1_0Size bytes; otherwise it panics.
func QuantizeRowTQ1_0(x []float32, dst []byte) {
	nb := blocks("QuantizeRowTQ1_0", len(x), QK_K, BlockTQ1_0Size, len(dst), "dst")
	for i := range nb {
		xb := x[i*QK_K : (i+1)*QK_K]
		blk := dst[i*BlockTQ1_0Size : (i+1)*BlockTQ1_0Size]
		d, id := tqScale(xb)
		putF16(blk[tq1QS+tq1QH:], d)
		for m := range 32 {
			var q uint8
			for n := range 5 {
				q = q*3 + ternary(xb[m+32*n], id)
			}
			blk[m] = tritByte(q)
		}
		for m := range 16 {
			var q uint8
			for n := range 5 {
				q = q*3 + ternary(xb[160+m+16*n], id)
			}
			blk[32+m] = tritByte(q)
		}
		for j := range tq1QH {
			var q uint8
			for n := range 4 {
				q = q*3 + ternary(xb[240+j+tq1QH*n], id)
			}
			blk[tq1QS+j] = tritByte(q * 3)
		}
	}
}

// DequantizeRowTQ1_0 expands TQ1_0 blocks from src into y as ggml's dequantize_row_tq1_0.
// len(y) must be a multiple of QK_K and src must hold the blocks.
func DequantizeRowTQ1_0(src []byte, y []float32) {
	nb := blocks("DequantizeRowTQ1_0", len(y), QK_K, BlockTQ1_0Size, len(src), "src")
	for i := range nb {
		blk := (*[BlockTQ1_0Size]byte)(src[i*BlockTQ1_0Size:])
		d := getF16(blk[tq1QS+tq1QH:])
		yb := (*[QK_K]float32)(y[i*QK_K:])
		for n := range 5 {
			for m := range 32 {
				yb[32*n+m] = float32(trit(blk[m], n)) * d
			}
			for m := range 16 {
				yb[160+16*n+m] = float32(trit(blk[32+m], n)) * d
			}
		}
		for n := range 4 {
			for j := range tq1QH {
				yb[240+tq1QH*n+j] = float32(trit(blk[tq1QS+j], n)) * d
			}
		}
	}
}

// QuantizeRowTQ2_0 quantizes x into TQ2_0 blocks in dst as ggml's quantize_row_tq2_0_ref (also
// the CPU's from_float): d is the block's absolute maximum, each element rounds x/d (half away
// from zero) to −1, 0 or 1, stored plus one. len(x) must be a multiple of QK_K and dst must hold
// len(x)/QK_K*BlockTQ2_0Size bytes; otherwise it panics.
func QuantizeRowTQ2_0(x []float32, dst []byte) {
	nb := blocks("QuantizeRowTQ2_0", len(x), QK_K, BlockTQ2_0Size, len(dst), "dst")
	for i := range nb {
		xb := x[i*QK_K : (i+1)*QK_K]
		blk := dst[i*BlockTQ2_0Size : (i+1)*BlockTQ2_0Size]
		d, id := tqScale(xb)
		putF16(blk[QK_K/4:], d)
		for h := range 2 {
			for m := range 32 {
				var q uint8
				for n := range 4 {
					q += (ternary(xb[128*h+32*n+m], id) & 3) << (2 * n)
				}
				blk[32*h+m] = q
			}
		}
	}
}

// DequantizeRowTQ2_0 expands TQ2_0 blocks from src into y as ggml's dequantize_row_tq2_0.
// len(y) must be a multiple of QK_K and src must hold the blocks.
func DequantizeRowTQ2_0(src []byte, y []float32) {
	nb := blocks("DequantizeRowTQ2_0", len(y), QK_K, BlockTQ2_0Size, len(src), "src")
	for i := range nb {
		blk := (*[BlockTQ2_0Size]byte)(src[i*BlockTQ2_0Size:])
		d := getF16(blk[QK_K/4:])
		yb := (*[QK_K]float32)(y[i*QK_K:])
		for h := range 2 {
			for n := range 4 {
				for m := range 32 {
					yb[128*h+32*n+m] = float32(int32(blk[32*h+m]>>(2*n)&3)-1) * d
				}
			}
		}
	}
}

// DotTQ1_0Q8_K is ggml_vec_dot_tq1_0_q8_K (generic): per super-block the integer sum of trit·q
// is scaled by (d_x·d_y), the blocks summed in float32 in order.
func DotTQ1_0Q8_K(n int, x, y []byte) float32 {
	nb := blocks("DotTQ1_0Q8_K", n, QK_K, BlockTQ1_0Size, len(x), "x")
	blocks("DotTQ1_0Q8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := (*[BlockTQ1_0Size]byte)(x[i*BlockTQ1_0Size:])
		by := y[i*BlockQ8_KSize : (i+1)*BlockQ8_KSize]
		q8 := (*[QK_K]byte)(by[4:])
		var sum int32
		for n := range 5 {
			for m := range 32 {
				sum += trit(bx[m], n) * int32(int8(q8[32*n+m]))
			}
			for m := range 16 {
				sum += trit(bx[32+m], n) * int32(int8(q8[160+16*n+m]))
			}
		}
		for n := range 4 {
			for j := range tq1QH {
				sum += trit(bx[tq1QS+j], n) * int32(int8(q8[240+tq1QH*n+j]))
			}
		}
		sumf += float32(sum) * float32(getF16(bx[tq1QS+tq1QH:])*q8kD(by))
	}
	return sumf
}

// DotTQ2_0Q8_K is ggml_vec_dot_tq2_0_q8_K (generic): per super-block the integer sum of
// (code−1)·q is scaled by d_y·d_x, the blocks summed in float32 in order.
func DotTQ2_0Q8_K(n int, x, y []byte) float32 {
	nb := blocks("DotTQ2_0Q8_K", n, QK_K, BlockTQ2_0Size, len(x), "x")
	blocks("DotTQ2_0Q8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := (*[BlockTQ2_0Size]byte)(x[i*BlockTQ2_0Size:])
		by := y[i*BlockQ8_KSize : (i+1)*BlockQ8_KSize]
		q8 := (*[QK_K]byte)(by[4:])
		var sumi int32
		for h := range 2 {
			for n := range 4 {
				for m := range 32 {
					sumi += int32(int8(q8[128*h+32*n+m])) * (int32(bx[32*h+m]>>(2*n)&3) - 1)
				}
			}
		}
		sumf += float32(sumi) * float32(q8kD(by)*getF16(bx[QK_K/4:]))
	}
	return sumf
}
