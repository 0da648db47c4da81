package kern

import "encoding/binary"

// Q4_K weights stored repacked (RepackQ4_K): the groups of 16 interleaved rows that GemmQ4_KStd
// builds on the fly (kstd.go's layout, kstdSuper bytes per super-block of 256 elements), kept in
// a CPU_REPACK buffer so that a generated token's mat-vec reads them as they are. The products
// run GemmQ4_KStd's micro-kernel on them (several activation rows) or q4kRepTile1 (one row,
// both halves of a group in one sweep: AVX2, or on the AVX-512 VNNI sets q4kRepR1VNNI), with the
// same integer sums and float operations per super-block.

// q4kRec is the bytes of a prepared activation super-block of the Q4_K mat-vec: the Q8_K block
// (d, 256 quants, the 16 bsums) and from byte 292 the eight int16 sums of its 32-element
// sub-blocks, padded to keep records 64-byte aligned. Per element it is rpRec/QK, so the
// scratch of GemvRepackedSetWorkSize is the same for every type.
const q4kRec = 320

// putQ4KBlock writes the standard Q4_K block src as row r (< 16) of the repacked super-block d.
func putQ4KBlock(d *[kstdSuper]byte, r int, src *[blockQ4_K]byte) {
	r &= 15 // r < 16: lets the compiler drop the bounds checks below
	d[2*r], d[2*r+1] = src[0], src[1]
	d[32+2*r], d[32+2*r+1] = src[2], src[3]
	s0 := binary.LittleEndian.Uint32(src[4:])
	s1 := binary.LittleEndian.Uint32(src[8:])
	s2 := binary.LittleEndian.Uint32(src[12:])
	scLo, scHi := s0&0x3f3f3f3f, (s2&0x0f0f0f0f)|((s0>>6)&0x03030303)<<4
	mnLo, mnHi := s1&0x3f3f3f3f, ((s2>>4)&0x0f0f0f0f)|((s1>>6)&0x03030303)<<4
	for j := 0; j < 4; j++ {
		d[64+16*j+r] = byte(scLo >> (8 * j))
		d[64+16*(j+4)+r] = byte(scHi >> (8 * j))
	}
	// mins 0..3 are mnLo's bytes, 4..7 mnHi's; pair q holds mins 2q and 2q+1
	d[192+2*r], d[192+2*r+1] = byte(mnLo), byte(mnLo>>8)
	d[192+32+2*r], d[192+32+2*r+1] = byte(mnLo>>16), byte(mnLo>>24)
	d[192+64+2*r], d[192+64+2*r+1] = byte(mnHi), byte(mnHi>>8)
	d[192+96+2*r], d[192+96+2*r+1] = byte(mnHi>>16), byte(mnHi>>24)
	qd := (*[2048]byte)(d[320:])
	for i := 0; i < 32; i++ {
		binary.LittleEndian.PutUint32(qd[64*i+4*r:], binary.LittleEndian.Uint32(src[16+4*i:]))
	}
}

// getQ4KBlock reads row r (< 16) of the repacked super-block s back into the standard block
// dst: putQ4KBlock's exact inverse (the 12-byte scale packing is a bijection of the 6-bit
// scales and mins).
func getQ4KBlock(dst *[blockQ4_K]byte, r int, s *[kstdSuper]byte) {
	r &= 15
	dst[0], dst[1] = s[2*r], s[2*r+1]
	dst[2], dst[3] = s[32+2*r], s[32+2*r+1]
	var sc, mn [8]byte
	for j := 0; j < 8; j++ {
		sc[j] = s[64+16*j+r]
		mn[j] = s[192+32*(j/2)+2*r+j%2]
	}
	for j := 0; j < 4; j++ {
		dst[4+j] = sc[j]&63 | (sc[j+4]>>4)<<6
		dst[8+j] = mn[j]&63 | (mn[j+4]>>4)<<6
		dst[12+j] = sc[j+4]&15 | (mn[j+4]&15)<<4
	}
	qd := (*[2048]byte)(s[320:])
	for i := 0; i < 32; i++ {
		binary.LittleEndian.PutUint32(dst[16+4*i:], binary.LittleEndian.Uint32(qd[64*i+4*r:]))
	}
}

// repackQ4KRow writes the standard Q4_K row (nb blocks) as row i of a repacked slice.
func repackQ4KRow(slice []byte, nb, i int, row []byte) {
	grp := slice[i/RepackRows*nb*kstdSuper:]
	for b := 0; b < nb; b++ {
		putQ4KBlock((*[kstdSuper]byte)(grp[b*kstdSuper:]), i%RepackRows, (*[blockQ4_K]byte)(row[b*blockQ4_K:]))
	}
}

// unpackQ4KRow reads row i of a repacked slice back into the standard Q4_K row (nb blocks).
func unpackQ4KRow(slice []byte, nb, i int, row []byte) {
	grp := slice[i/RepackRows*nb*kstdSuper:]
	for b := 0; b < nb; b++ {
		getQ4KBlock((*[blockQ4_K]byte)(row[b*blockQ4_K:]), i%RepackRows, (*[kstdSuper]byte)(grp[b*kstdSuper:]))
	}
}

// prepQ4KBlocks writes the Q8_K blocks y (nb of them) as nb prepared records (dst, q4kRec bytes
// each): the block, then its sub-block sums.
func prepQ4KBlocks(nb int, y, dst []byte) {
	for b := 0; b < nb; b++ {
		rec := dst[b*q4kRec : (b+1)*q4kRec]
		copy(rec[:blockQ8_K], y[b*blockQ8_K:(b+1)*blockQ8_K])
		kstdPrepPairs(1, y[b*blockQ8_K:], rec[blockQ8_K:blockQ8_K+kstdPairs])
	}
}

// q4kRepTile1 computes the dots of the 16 rows of the repacked group w (nb super-blocks) with one
// Q8_K activation row, its blocks ys bytes apart in y and their sub-block sum pairs (kstdPairs
// bytes each) ps bytes apart in p: c[r] (+)= dot r for r < 16, added when accum. Per row the
// arithmetic is GemmQ4_KStd's micro-kernel's, bit for bit.
func q4kRepTile1(nb int, w, y []byte, ys int, p []byte, ps int, c []float32, accum bool) {
	// Bounds checks standing in for the assembly's unchecked accesses.
	_ = w[nb*kstdSuper-1]
	_ = y[(nb-1)*ys+blockQ8_K-1]
	_ = p[(nb-1)*ps+kstdPairs-1]
	_ = c[RepackRows-1]
	if k := q4kRep1Kernel(); k != nil {
		acc := 0
		if accum {
			acc = 1
		}
		k(nb, &w[0], &y[0], ys, &p[0], ps, &c[0], acc)
		return
	}
	q4kRep1Go(nb, w, y, ys, p, ps, c, accum)
}

// q4kRep1Go is q4kRepTile1's pure-Go twin: the kernel's integer sums, with the float32 operations
// of q4kStdR4Go.
func q4kRep1Go(nb int, w, y []byte, ys int, p []byte, ps int, c []float32, accum bool) {
	if !accum {
		clear(c[:RepackRows])
	}
	for sb := 0; sb < nb; sb++ {
		ws := w[sb*kstdSuper : (sb+1)*kstdSuper]
		yb := y[sb*ys:]
		dy := kQ8KD(yb)
		for r := 0; r < RepackRows; r++ {
			isum, msum := q4kSuperSums(ws, r, yb, p[sb*ps:])
			d := kF16(ws[2*r:])
			dmin := kF16(ws[32+2*r:])
			v := float32(float32(isum)*d) - float32(dmin*float32(msum))
			c[r] += v * dy
		}
	}
}

// q4kSetTask is one task of GemvRepackedSet on Q4_K weights: groups g0..g1-1 of the repacked
// slice w (m rows, nb super-blocks) against the prepared row p, into c (m results).
func q4kSetTask(nb, m int, w, p []byte, c []float32, g0, g1 int) {
	gs := nb * kstdSuper
	gf := min(g1, m/RepackRows) // groups below gf are full
	for g := g0; g < gf; g++ {
		q4kRepTile1(nb, w[g*gs:(g+1)*gs], p, q4kRec, p[blockQ8_K:], q4kRec, c[g*RepackRows:], false)
	}
	if g1 > gf {
		var tmp [RepackRows]float32
		q4kRepTile1(nb, w[gf*gs:(gf+1)*gs], p, q4kRec, p[blockQ8_K:], q4kRec, tmp[:], false)
		copy(c[gf*RepackRows:m], tmp[:m-gf*RepackRows])
	}
}
