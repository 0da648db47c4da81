package kern

import "encoding/binary"

// GemmQ6_KStd's repacked layout (see GemmQ4_KStd for the scheme): per super-block of 16 rows,
// kstd6Super bytes:
//
//	0    d[16]       f16 super-block scales, row r at 2r
//	32   sc[16][16]  int8 scales of the 16-element groups, group g of row r at 32+16g+r
//	288  pairs[8]    (int16 sc[2q], int16 sc[2q+1]) of row r at 288+64q+4r
//	800  u           the 6-bit codes (the quant plus 32) as bytes: elements 4c..4c+3 of row r at
//	                 800+64c+4r
//
// The micro-kernel sums two slices of VPMADDUBSW pairs in int16 (|63·128·2·2| < 2^15), scales
// them per group with VPMADDWD, and takes 32·Σ sc·bsum (the activations' own 16-element sums)
// off the super-block's int32 sum.
const kstd6Super = 4896

// repackQ6KGroup writes super-blocks kb..kb+kn-1 of the Q6_K rows a[r*lda:] (r < rows ≤ 16) as kn
// repacked super-blocks of one group (dst: kn*kstd6Super bytes); rows from rows to 15 are zero.
func repackQ6KGroup(dst, a []byte, lda, rows, kb, kn int) {
	_ = dst[kn*kstd6Super-1]
	if rows < RepackRows {
		clear(dst[:kn*kstd6Super])
	}
	for r := 0; r < rows; r++ {
		row := a[r*lda+kb*blockQ6_K : r*lda+(kb+kn)*blockQ6_K]
		for sb := 0; sb < kn; sb++ {
			src := (*[blockQ6_K]byte)(row[sb*blockQ6_K:])
			d := (*[kstd6Super]byte)(dst[sb*kstd6Super:])
			r := r & 15 // r < 16: lets the compiler drop the bounds checks below
			d[2*r], d[2*r+1] = src[208], src[209]
			for g := 0; g < 16; g++ {
				d[32+16*g+r] = src[192+g]
			}
			for q := 0; q < 8; q++ {
				o := 288 + 64*q + 4*r
				lo, hi := uint16(int16(int8(src[192+2*q]))), uint16(int16(int8(src[192+2*q+1])))
				d[o], d[o+1], d[o+2], d[o+3] = byte(lo), byte(lo>>8), byte(hi), byte(hi>>8)
			}
			u := (*[4096]byte)(d[800:])
			for half := 0; half < 2; half++ {
				for l := 0; l < 32; l += 4 {
					lo := binary.LittleEndian.Uint32(src[64*half+l:])
					hi := binary.LittleEndian.Uint32(src[64*half+l+32:])
					h := binary.LittleEndian.Uint32(src[128+32*half+l:])
					const m4, m2 = 0x0f0f0f0f, 0x03030303
					c := 32*half + l/4 // the slice of elements 128·half+l..+3
					binary.LittleEndian.PutUint32(u[64*c+4*r:], lo&m4|(h&m2)<<4)
					binary.LittleEndian.PutUint32(u[64*(c+8)+4*r:], hi&m4|(h>>2&m2)<<4)
					binary.LittleEndian.PutUint32(u[64*(c+16)+4*r:], lo>>4&m4|(h>>4&m2)<<4)
					binary.LittleEndian.PutUint32(u[64*(c+24)+4*r:], hi>>4&m4|(h>>6&m2)<<4)
				}
			}
		}
	}
}

// q6kStdR4Go is the Q6_K micro-kernel's pure-Go twin (p unused: the group sums are the Q8_K
// bsums).
func q6kStdR4Go(nb int, w []byte, h int, y []byte, ldy int, _ []byte, _ int, c []float32, ldc int, accum bool) {
	if !accum {
		for j := 0; j < 4; j++ {
			clear(c[j*ldc : j*ldc+8])
		}
	}
	for sb := 0; sb < nb; sb++ {
		ws := w[sb*kstd6Super : (sb+1)*kstd6Super]
		for j := 0; j < 4; j++ {
			ys := y[j*ldy+sb*blockQ8_K:]
			dy := kQ8KD(ys)
			for r8 := 0; r8 < 8; r8++ {
				r := 8*h + r8
				var isum, off int32
				for g := 0; g < 16; g++ {
					var s int32
					for e := 16 * g; e < 16*g+16; e++ {
						s += int32(ws[800+64*(e/4)+4*r+e%4]) * int32(int8(ys[4+e]))
					}
					sc := int32(int8(ws[32+16*g+r]))
					isum += sc * s
					off += sc * kBsum(ys, g)
				}
				v := float32(isum-32*off) * kF16(ws[2*r:])
				c[j*ldc+r8] += v * dy
			}
		}
	}
}
