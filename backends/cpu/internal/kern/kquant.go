package kern

import (
	"encoding/binary"
	"math"

	"github.com/tandem-ml/tandem/core/quant"
)

// K-quant and IQ4 dot products against their vec_dot_type (Q8_K, or Q8_0 for IQ4_NL). The
// integer parts are computed per sub-block (AVX2 kernels in kquant_amd64.s, pure-Go twins
// below, bit-identical); the float part runs here for both.
//
// DotIQ4_NLQ8_0 and DotIQ4_XSQ8_K give exactly ggml's generic results (their per-block sums
// are exact integers there too). DotQ4_KQ8_K, DotQ5_KQ8_K and DotQ6_KQ8_K scale each
// super-block's exact integer sum once (like ggml's SIMD kernels) instead of the generic
// kernel's eight float lanes, so they differ from quant's reference in the last bits.

const (
	qkK        = quant.QK_K
	kChunk     = 64 // super-blocks per integer-kernel call
	blockQ8_K  = quant.BlockQ8_KSize
	blockQ4_K  = quant.BlockQ4_KSize
	blockQ5_K  = quant.BlockQ5_KSize
	blockQ6_K  = quant.BlockQ6_KSize
	blockIQ4XS = quant.BlockIQ4_XSSize
	blockIQ4NL = quant.BlockIQ4_NLSize
)

func kU16(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }

func kF16(b []byte) float32 { return quant.FP16ToFP32(kU16(b)) }

func kQ8KD(y []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(y)) }

func kBsum(y []byte, g int) int32 { return int32(int16(kU16(y[260+2*g:]))) }

// kScaleMin unpacks Q4_K/Q5_K's 6-bit scale and min of sub-block j from the 12 scale bytes.
func kScaleMin(j int, s []byte) (int32, int32) {
	if j < 4 {
		return int32(s[j] & 63), int32(s[j+4] & 63)
	}
	return int32(s[j+4]&0xF | (s[j-4]>>6)<<4), int32(s[j+4]>>4 | (s[j]>>6)<<4)
}

func kCheck(op string, n, qk, xb, xlen, yb, ylen int) int {
	if n%qk != 0 {
		panic("kern." + op + ": n is not a whole number of blocks")
	}
	nb := n / qk
	if xlen < nb*xb || ylen < nb*yb {
		panic("kern." + op + ": operand shorter than the first")
	}
	return nb
}

// DotQ4_KQ8_K is the Q4_K × Q8_K dot of n elements (n a multiple of 256).
func DotQ4_KQ8_K(n int, x, y []byte) float32 {
	return dotK45("DotQ4_KQ8_K", n, x, y, blockQ4_K, false)
}

// DotQ5_KQ8_K is the Q5_K × Q8_K dot of n elements (n a multiple of 256).
func DotQ5_KQ8_K(n int, x, y []byte) float32 {
	return dotK45("DotQ5_KQ8_K", n, x, y, blockQ5_K, true)
}

func dotK45(op string, n int, x, y []byte, bs int, q5 bool) float32 {
	nb := kCheck(op, n, qkK, bs, len(x), blockQ8_K, len(y))
	// out stays on the stack only while the calls below are direct ones (a function value
	// taking it made it escape: one 2 KiB allocation per dot, per row of a generic-set mat-vec)
	var out [kChunk * 8]int32
	var sumf float32
	for c := 0; c < nb; c += kChunk {
		m := min(kChunk, nb-c)
		if q5 {
			q5kSums(m, x[c*bs:], y[c*blockQ8_K:], out[:m*8])
		} else {
			q4kSums(m, x[c*bs:], y[c*blockQ8_K:], out[:m*8])
		}
		for i := range m {
			bx := x[(c+i)*bs : (c+i)*bs+16]
			by := y[(c+i)*blockQ8_K : (c+i+1)*blockQ8_K]
			// Unpack the eight 6-bit scales (sc) and mins (mn) four at a time, as ggml does.
			s0 := binary.LittleEndian.Uint32(bx[4:])
			s1 := binary.LittleEndian.Uint32(bx[8:])
			s2 := binary.LittleEndian.Uint32(bx[12:])
			scLo, scHi := s0&0x3f3f3f3f, (s2&0x0f0f0f0f)|((s0>>6)&0x03030303)<<4
			mnLo, mnHi := s1&0x3f3f3f3f, ((s2>>4)&0x0f0f0f0f)|((s1>>6)&0x03030303)<<4
			o := out[8*i : 8*i+8]
			bsums := by[260:292]
			var isum, summ int32
			for j := range 4 {
				sh := 8 * j
				isum += int32(scLo>>sh&0xff)*o[j] + int32(scHi>>sh&0xff)*o[j+4]
				b0 := int32(int16(binary.LittleEndian.Uint16(bsums[4*j:]))) + int32(int16(binary.LittleEndian.Uint16(bsums[4*j+2:])))
				b1 := int32(int16(binary.LittleEndian.Uint16(bsums[16+4*j:]))) + int32(int16(binary.LittleEndian.Uint16(bsums[16+4*j+2:])))
				summ += int32(mnLo>>sh&0xff)*b0 + int32(mnHi>>sh&0xff)*b1
			}
			yd := kQ8KD(by)
			d := kF16(bx[0:]) * yd
			dmin := kF16(bx[2:]) * yd
			sumf += float32(float32(d*float32(isum)) - float32(dmin*float32(summ)))
		}
	}
	return sumf
}

// DotQ6_KQ8_K is the Q6_K × Q8_K dot of n elements (n a multiple of 256).
func DotQ6_KQ8_K(n int, x, y []byte) float32 {
	nb := kCheck("DotQ6_KQ8_K", n, qkK, blockQ6_K, len(x), blockQ8_K, len(y))
	var out [kChunk * 16]int32
	var sumf float32
	for c := 0; c < nb; c += kChunk {
		m := min(kChunk, nb-c)
		q6kSums(m, x[c*blockQ6_K:], y[c*blockQ8_K:], out[:m*16])
		for i := range m {
			bx := x[(c+i)*blockQ6_K : (c+i+1)*blockQ6_K]
			by := y[(c+i)*blockQ8_K : (c+i+1)*blockQ8_K]
			sc := bx[192:208]
			bsums := by[260:292]
			o := out[16*i : 16*i+16]
			var isum int32
			for g := range 16 {
				isum += int32(int8(sc[g])) * (o[g] - 32*int32(int16(binary.LittleEndian.Uint16(bsums[2*g:]))))
			}
			d := kF16(bx[208:]) * kQ8KD(by)
			sumf += float32(d * float32(isum))
		}
	}
	return sumf
}

// DotIQ4_XSQ8_K is the IQ4_XS × Q8_K dot of n elements (n a multiple of 256), equal to ggml's
// generic kernel.
func DotIQ4_XSQ8_K(n int, x, y []byte) float32 {
	nb := kCheck("DotIQ4_XSQ8_K", n, qkK, blockIQ4XS, len(x), blockQ8_K, len(y))
	var out [kChunk * 8]int32
	var sumf float32
	for c := 0; c < nb; c += kChunk {
		m := min(kChunk, nb-c)
		iq4xsSums(m, x[c*blockIQ4XS:], y[c*blockQ8_K:], out[:m*8])
		for i := range m {
			bx := x[(c+i)*blockIQ4XS:]
			by := y[(c+i)*blockQ8_K:]
			d4d8 := kF16(bx[0:]) * kQ8KD(by)
			sh := kU16(bx[2:])
			for ib := range 8 {
				ls := int32((bx[4+ib/2]>>(4*(ib%2)))&0xF) | int32((sh>>(2*ib))&3)<<4
				dl := d4d8 * float32(ls-32)
				sumf += float32(dl * float32(out[8*i+ib]))
			}
		}
	}
	return sumf
}

// DotIQ4_NLQ8_0 is the IQ4_NL × Q8_0 dot of n elements (n a multiple of 32), equal to ggml's
// generic kernel.
func DotIQ4_NLQ8_0(n int, x, y []byte) float32 {
	nb := kCheck("DotIQ4_NLQ8_0", n, QK, blockIQ4NL, len(x), BlockQ8_0Size, len(y))
	var out [kChunk * 8]int32
	var sumf float32
	for c := 0; c < nb; c += len(out) {
		m := min(len(out), nb-c)
		iq4nlSums(m, x[c*blockIQ4NL:], y[c*BlockQ8_0Size:], out[:m])
		for i := range m {
			bx := x[(c+i)*blockIQ4NL:]
			by := y[(c+i)*BlockQ8_0Size:]
			d := kF16(by) * kF16(bx)
			sumf += float32(d * float32(out[i]))
		}
	}
	return sumf
}

// The pure-Go twins of the integer kernels.

// q4kSumsGo: out[8i+j] = Σ over sub-block j of super-block i of code·q8.
func q4kSumsGo(nb int, x, y []byte, out []int32) {
	for i := range nb {
		qs := x[i*blockQ4_K+16:]
		q8 := y[i*blockQ8_K+4:]
		for c := range 4 {
			var lo, hi int32
			for l := range 32 {
				q := qs[32*c+l]
				lo += int32(q&0xF) * int32(int8(q8[64*c+l]))
				hi += int32(q>>4) * int32(int8(q8[64*c+32+l]))
			}
			out[8*i+2*c], out[8*i+2*c+1] = lo, hi
		}
	}
}

// q5kSumsGo is q4kSumsGo with the fifth bits of Q5_K.
func q5kSumsGo(nb int, x, y []byte, out []int32) {
	for i := range nb {
		qh := x[i*blockQ5_K+16:]
		qs := x[i*blockQ5_K+48:]
		q8 := y[i*blockQ8_K+4:]
		for c := range 4 {
			var lo, hi int32
			for l := range 32 {
				q := qs[32*c+l]
				a := int32(q&0xF) | int32(qh[l]>>(2*c)&1)<<4
				b := int32(q>>4) | int32(qh[l]>>(2*c+1)&1)<<4
				lo += a * int32(int8(q8[64*c+l]))
				hi += b * int32(int8(q8[64*c+32+l]))
			}
			out[8*i+2*c], out[8*i+2*c+1] = lo, hi
		}
	}
}

// q6kSumsGo: out[16i+g] = Σ over group g (16 elements) of the unsigned 6-bit code·q8.
func q6kSumsGo(nb int, x, y []byte, out []int32) {
	for i := range nb {
		bx := x[i*blockQ6_K:]
		q8 := y[i*blockQ8_K+4:]
		for h := range 2 {
			for k := range 4 {
				var s0, s1 int32
				for l := range 32 {
					lo := bx[64*h+32*(k&1)+l] >> (4 * (k >> 1)) & 0xF
					hi := bx[128+32*h+l] >> (2 * k) & 3
					v := int32(lo|hi<<4) * int32(int8(q8[128*h+32*k+l]))
					if l < 16 {
						s0 += v
					} else {
						s1 += v
					}
				}
				out[16*i+8*h+2*k], out[16*i+8*h+2*k+1] = s0, s1
			}
		}
	}
}

// iq4xsSumsGo: out[8i+ib] = Σ over sub-block ib of kvalues[code]·q8.
func iq4xsSumsGo(nb int, x, y []byte, out []int32) {
	for i := range nb {
		qs := x[i*blockIQ4XS+8:]
		q8 := y[i*blockQ8_K+4:]
		for ib := range 8 {
			var s int32
			for j := range 16 {
				q := qs[16*ib+j]
				s += int32(quant.KValuesIQ4NL[q&0xF])*int32(int8(q8[32*ib+j])) +
					int32(quant.KValuesIQ4NL[q>>4])*int32(int8(q8[32*ib+16+j]))
			}
			out[8*i+ib] = s
		}
	}
}

// iq4nlSumsGo: out[i] = Σ over block i of kvalues[code]·q8 (Q8_0 blocks).
func iq4nlSumsGo(nb int, x, y []byte, out []int32) {
	for i := range nb {
		qs := x[i*blockIQ4NL+2:]
		q8 := y[i*BlockQ8_0Size+2:]
		var s int32
		for j := range 16 {
			q := qs[j]
			s += int32(quant.KValuesIQ4NL[q&0xF])*int32(int8(q8[j])) + int32(quant.KValuesIQ4NL[q>>4])*int32(int8(q8[16+j]))
		}
		out[i] = s
	}
}

// QuantizeRowQ8_K quantizes x (a multiple of 256 values) into Q8_K blocks in dst, bit for bit
// as quant.QuantizeRowQ8_K (ggml's quantize_row_q8_K_ref, also its x86 from_float), with an
// AVX2 kernel for d and the codes; zero blocks get zero bsums. Non-finite inputs give
// unspecified codes.
func QuantizeRowQ8_K(x []float32, dst []byte) {
	nb := kCheck("QuantizeRowQ8_K", len(x), qkK, 4, len(x), blockQ8_K, len(dst))
	if nb == 0 {
		return
	}
	if !quantizeRowQ8_K(nb, x, dst) {
		quant.QuantizeRowQ8_K(x, dst[:nb*blockQ8_K])
	}
}
