package kern

import (
	"math"
	"unsafe"
)

// The bf16 pair path of the packed GEMM: where the CPU has AVX-512 BF16 (and full-rate 512-bit
// units), SgemmBF16 packs both operands as bf16 pairs instead of widening them to float32
// (SgemmF16ABF16 rounds its f16 weights and f32 activations to bf16 as it packs them), and
// a 12x32 VDPBF16PS micro-kernel does two multiply-adds per lane and instruction (twice the
// work per instruction of the f32 kernel, and half the packed bytes).
//
// A pair slot is one 32-bit word holding columns 2q (low half) and 2q+1 (high half) of a row;
// an odd k block ends with a zero in the high half. A pair panel of 16 weight rows is
// ap[q*16+r], one of 6 activation rows bp[q*6+r] (stride bStride(kp)). The panel counts are
// rounded up to even numbers and the padding panels packed as zeros, so every tile is a full
// 12x32 kernel call; tiles that stick out of C go through a scratch tile.

// pairSteps is the number of pair steps of a k block of kb columns.
func pairSteps(kb int) int { return (kb + 1) / 2 }

// evenUp rounds n up to an even number.
func evenUp(n int) int { return n + n&1 }

// pairBufSize is the scratch (in floats) of one k block on the pair path.
func (pl *gemmPlan) pairBufSize() int {
	kp := pairSteps(pl.kc)
	return evenUp(pl.apan)*gemmNR*kp + evenUp(pl.bpan)*bStride(kp)
}

// u16AsF32 views a bf16 slice as float32 words (two bf16 per word), dropping an odd last
// element. It is safe: float32 has the size of two uint16, the view covers only the slice's
// own memory, and the words are only copied (the packers move bits, never do arithmetic).
// amd64 (the only user through the assembly packers) allows unaligned 4-byte access.
func u16AsF32(s []uint16) []float32 {
	if len(s) < 2 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s)/2)
}

// packPairs packs rows [0, rows) of src (row stride ld, first element off), columns [0, kb),
// into an nr-row pair panel (dst[q*nr+r]); rows past rows and the column past an odd kb are
// zero. Full panels with an even stride and offset are the f32 packers' transpose on the
// 32-bit words.
func packPairs(dst []float32, src []uint16, ld, off, rows, nr, kb int) {
	kp := pairSteps(kb)
	q := 0
	if rows == nr && ld%2 == 0 && off%2 == 0 && kb >= 16 {
		view := u16AsF32(src)
		if nr == gemmNR {
			q = 8 * packAFull(dst, aSource{f32: view, lda: ld / 2}, off/2, kb/2)
		} else {
			q = 8 * packBFull(dst, bSource{f32: view, ldb: ld / 2}, off/2, kb/2)
		}
	}
	if q == kp {
		return
	}
	for r := 0; r < nr; r++ {
		if r >= rows {
			for p := q; p < kp; p++ {
				dst[p*nr+r] = 0
			}
			continue
		}
		row := src[off+r*ld : off+r*ld+kb]
		for p := q; p < kp; p++ {
			w := uint32(row[2*p])
			if 2*p+1 < kb {
				w |= uint32(row[2*p+1]) << 16
			}
			dst[p*nr+r] = math.Float32frombits(w)
		}
	}
}

// packPairsRounded is packPairs for an operand that is not bf16 (SgemmF16ABF16's): rows
// [0, rows) of f16 weights or f32 activations (exactly one is set), columns [off, off+kb) of
// each, are rounded to bf16 into a row-major block on the stack and packed from there. kb is at
// most gemmKCPairs.
func packPairsRounded(dst []float32, f16 []uint16, f32 []float32, ld, off, rows, nr, kb int) {
	var block [gemmNR * gemmKCPairs]uint16
	ldt := evenUp(kb)
	if f16 != nil && rows > 0 {
		f16ToBF16Rows(f16[off:], ld, rows, kb, block[:], ldt)
	} else {
		for r := 0; r < rows; r++ {
			at := off + r*ld
			F32ToBF16Row(f32[at:at+kb], block[r*ldt:r*ldt+kb])
		}
	}
	packPairs(dst, block[:], ldt, 0, rows, nr, kb)
}

// packPairBlock is pack for the pair path.
func (pl *gemmPlan) packPairBlock(t, task int, buf []float32, a aSource, b bSource) {
	p0, kb := pl.block(t)
	kp := pairSteps(kb)
	if task < pl.packATasks {
		for ip := task * gemmPackA; ip < min(evenUp(pl.apan), (task+1)*gemmPackA); ip++ {
			i0 := ip * gemmNR
			rows := max(0, min(gemmNR, pl.m-i0))
			dst := buf[ip*gemmNR*kp : (ip+1)*gemmNR*kp]
			if a.bf16 != nil {
				packPairs(dst, a.bf16, a.lda, i0*a.lda+p0, rows, gemmNR, kb)
			} else {
				packPairsRounded(dst, a.f16, nil, a.lda, i0*a.lda+p0, rows, gemmNR, kb)
			}
		}
		return
	}
	task -= pl.packATasks
	aSize := evenUp(pl.apan) * gemmNR * kp
	bs := bStride(kp)
	for jp := task * gemmPackB; jp < min(evenUp(pl.bpan), (task+1)*gemmPackB); jp++ {
		j0 := jp * gemmMR
		rows := max(0, min(gemmMR, pl.n-j0))
		dst := buf[aSize+jp*bs : aSize+(jp+1)*bs]
		if b.bf16 != nil {
			packPairs(dst, b.bf16, b.ldb, j0*b.ldb+p0, rows, gemmMR, kb)
		} else {
			packPairsRounded(dst, nil, b.f32, b.ldb, j0*b.ldb+p0, rows, gemmMR, kb)
		}
	}
}

// computePairs is compute for the pair path: B panel pairs outer, A panel pairs inner, as the
// 512-bit f32 kernels run.
func (pl *gemmPlan) computePairs(t, task int, buf []float32, c []float32, ldc int) {
	_, kb := pl.block(t)
	kp := pairSteps(kb)
	accum := t > 0
	tm := task % pl.mTasks
	tn := task / pl.mTasks
	aSize := evenUp(pl.apan) * gemmNR * kp
	bs := bStride(kp)
	ip0, ip1 := tm*pl.nc/gemmNR, min(evenUp(pl.apan), (tm+1)*pl.nc/gemmNR)
	jp0, jp1 := tn*pl.mc/gemmMR, min(evenUp(pl.bpan), (tn+1)*pl.mc/gemmMR)
	var tmp [2 * gemmMR * 2 * gemmNR]float32
	for jp := jp0; jp < jp1; jp += 2 {
		j0 := jp * gemmMR
		bp := buf[aSize+jp*bs : aSize+(jp+2)*bs]
		for ip := ip0; ip < ip1; ip += 2 {
			i0 := ip * gemmNR
			ap := buf[ip*gemmNR*kp : (ip+2)*gemmNR*kp]
			ni, nj := min(2*gemmNR, pl.m-i0), min(2*gemmMR, pl.n-j0)
			if ni == 2*gemmNR && nj == 2*gemmMR {
				kernel12x32BF16(kp, ap, bp, bs, c[j0*ldc+i0:], ldc, accum)
				continue
			}
			kernel12x32BF16(kp, ap, bp, bs, tmp[:], 2*gemmNR, false)
			for r := 0; r < nj; r++ {
				dst := c[(j0+r)*ldc+i0 : (j0+r)*ldc+i0+ni]
				src := tmp[r*2*gemmNR : r*2*gemmNR+ni]
				if accum {
					for q := range dst {
						dst[q] += src[q]
					}
				} else {
					copy(dst, src)
				}
			}
		}
	}
}

// kernel12x32BF16Go is the pure-Go twin of the VDPBF16PS micro-kernel: the 12x32 C tile at c
// (row stride ldc) is set (or, with accum, incremented) to the pair dot products of kp steps,
// each lane adding the odd product (rounded to float32) and then the even one, with bf16
// subnormal inputs and subnormal sums flushed to zero, as VDPBF16PS does.
func kernel12x32BF16Go(kp int, ap, bp []float32, bs int, c []float32, ldc int, accum bool) {
	var acc [2 * gemmMR][2 * gemmNR]float32
	for q := 0; q < kp; q++ {
		for j := 0; j < 2*gemmMR; j++ {
			bw := math.Float32bits(bp[(j/gemmMR)*bs+q*gemmMR+j%gemmMR])
			be, bo := bf16DAZ(uint16(bw)), bf16DAZ(uint16(bw>>16))
			for i := 0; i < 2*gemmNR; i++ {
				aw := math.Float32bits(ap[(i/gemmNR)*gemmNR*kp+q*gemmNR+i%gemmNR])
				ae, ao := bf16DAZ(uint16(aw)), bf16DAZ(uint16(aw>>16))
				s := ftz32(acc[j][i] + ao*bo) // the products are exact in float32
				acc[j][i] = ftz32(s + ae*be)
			}
		}
	}
	for j := 0; j < 2*gemmMR; j++ {
		dst := c[j*ldc : j*ldc+2*gemmNR]
		for i := range dst {
			if accum {
				dst[i] += acc[j][i]
			} else {
				dst[i] = acc[j][i]
			}
		}
	}
}

// bf16DAZ widens a bf16, reading subnormals as zero of the same sign (VDPBF16PS's inputs).
func bf16DAZ(h uint16) float32 {
	if h&0x7f80 == 0 {
		return math.Float32frombits(uint32(h&0x8000) << 16)
	}
	return bf16ToF32(h)
}

// ftz32 flushes a float32 subnormal to zero of the same sign (VDPBF16PS's results).
func ftz32(f float32) float32 {
	if math.Abs(float64(f)) < 0x1p-126 {
		return float32(math.Copysign(0, float64(f)))
	}
	return f
}
