package kern

import (
	"encoding/binary"
	"fmt"
)

// Repacked weight layout for the quantized GEMM and mat-vec kernels (GemmRepacked).
//
// A 2-D slice of m weight rows of k elements is cut into ceil(m/RepackRows) groups of
// RepackRows consecutive rows; rows past m are zero padding (scale 0, quants 0). A group holds
// its rows' nb = k/32 blocks (k/256 for Q4_K) as nb superblocks, block index ascending, one superblock per
// block index laid out so that a 512-bit load covers one 4-byte slice of all 16 rows:
//
//   - Q4_0 (288 bytes): the 16 rows' f16 scales d (row r at byte 2r), then 4 chunks of 64
//     bytes; chunk c holds, for row r, the row's block bytes qs[4c:4c+4] at offset 4r (low
//     nibbles: elements 4c..4c+3, high nibbles: elements 16+4c..16+4c+3).
//   - Q4_1 (320 bytes): 16 f16 d, 16 f16 m, then the 4 chunks as for Q4_0.
//   - Q8_0 (544 bytes): 16 f16 d, then 8 chunks of 64 bytes; chunk c holds row r's
//     qs[4c:4c+4] XOR 0x80 (the quant plus 128, unsigned) at offset 4r. A zero quant of a
//     padding row is stored as 0x80.
//   - Q4_K (2368 bytes per 256 elements): kstd.go's layout, the rows' d and dmin, their 6-bit
//     sub-block scales and mins unpacked to bytes, and the quants in 4-byte slices of 16 rows
//     (repack_q4k.go).
//
// The group stride is nb superblocks; the slice is RepackedSize bytes.

// RepackRows is the number of weight rows interleaved in one repacked group.
const RepackRows = 16

// RepackType names a weight format that has a repacked layout.
type RepackType int

// The repacked weight formats.
const (
	RepackQ4_0 RepackType = iota + 1 // Q4_0 weights, Q8_0 activations
	RepackQ4_1                       // Q4_1 weights, Q8_1 activations
	RepackQ8_0                       // Q8_0 weights, Q8_0 activations
	RepackQ4_K                       // Q4_K weights, Q8_K activations (repack_q4k.go)
)

// String is the weight type's ggml name ("q4_0", "q4_1", "q8_0").
func (rt RepackType) String() string {
	switch rt {
	case RepackQ4_0:
		return "q4_0"
	case RepackQ4_1:
		return "q4_1"
	case RepackQ8_0:
		return "q8_0"
	case RepackQ4_K:
		return "q4_K"
	}
	return fmt.Sprintf("RepackType(%d)", int(rt))
}

// repackFormat describes one repacked type: the standard block size of its weights, the
// superblock size, the offset of the first chunk in a superblock, the number of 4-byte quant
// slices per row and block (chunks), its activation block size, and the elements per block.
type repackFormat struct {
	block, super, hdr, chunks, yblock, qk int
}

// repackFormats are the formats by repack type (index 0: none). Q4_K's super-block is the
// 256-element layout of kstd.go: repackRow, unpackRow and repackGroup hand it (qk 256) to
// repack_q4k.go's functions; hdr and chunks are unused there.
var repackFormats = [...]repackFormat{
	RepackQ4_0: {BlockQ4_0Size, 288, 32, 4, BlockQ8_0Size, QK},
	RepackQ4_1: {BlockQ4_1Size, 320, 64, 4, BlockQ8_1Size, QK},
	RepackQ8_0: {BlockQ8_0Size, 544, 32, 8, BlockQ8_0Size, QK},
	RepackQ4_K: {blockQ4_K, kstdSuper, 320, 0, blockQ8_K, qkK},
}

// format is rt's format; it panics, naming op, on a type without one (the entry points' check).
func (rt RepackType) format(op string) repackFormat {
	if rt < RepackQ4_0 || int(rt) >= len(repackFormats) {
		panic(fmt.Sprintf("kern.%s: bad repack type %d", op, int(rt)))
	}
	return repackFormats[rt]
}

// tileFormat is format for the micro-kernel drivers, which run per tile after an entry point
// has checked rt: a table read the compiler inlines (format's panic message keeps it out of
// line, and it showed as ~2% of a generated token's time).
func (rt RepackType) tileFormat() repackFormat { return repackFormats[rt] }

// qsOff is the offset of the quants in a standard weight block.
func (f repackFormat) qsOff() int { return f.block - 4*f.chunks }

// RepackedSize returns the bytes of a repacked 2-D slice of m rows of k elements (k a multiple
// of the type's block: 32, or 256 for Q4_K).
func RepackedSize(rt RepackType, m, k int) int {
	f := rt.format("RepackedSize")
	if m < 0 || k < 0 || k%f.qk != 0 {
		panic("kern.RepackedSize: bad sizes")
	}
	return (m + RepackRows - 1) / RepackRows * (k / f.qk) * f.super
}

// BlockElems returns the elements per weight block of rt (32, or 256 for Q4_K): a repacked
// row's length is a multiple of it.
func BlockElems(rt RepackType) int { return rt.format("BlockElems").qk }

// checkRepack validates a repacked slice of m rows (mRows < 0: only the row index i is known).
func checkRepack(op string, rt RepackType, slice []byte, k, i int) repackFormat {
	f := rt.format(op)
	if k < 0 || k%f.qk != 0 || i < 0 {
		panic("kern." + op + ": bad sizes")
	}
	if len(slice) < RepackedSize(rt, i+1, k) {
		panic("kern." + op + ": repacked slice too short")
	}
	return f
}

// RepackRow writes the standard row (k elements, row bytes) as row i of a repacked slice.
func RepackRow(rt RepackType, slice []byte, k, i int, row []byte) {
	f := checkRepack("RepackRow", rt, slice, k, i)
	nb := k / f.qk
	if len(row) < nb*f.block {
		panic("kern.RepackRow: row too short")
	}
	repackRow(f, rt == RepackQ8_0, slice, nb, i, row)
}

func repackRow(f repackFormat, q8 bool, slice []byte, nb, i int, row []byte) {
	if f.qk == qkK {
		repackQ4KRow(slice, nb, i, row)
		return
	}
	g, r := i/RepackRows, i%RepackRows
	qo := f.qsOff()
	grp := slice[g*nb*f.super:]
	for b := 0; b < nb; b++ {
		sb := grp[b*f.super : (b+1)*f.super]
		src := row[b*f.block : (b+1)*f.block]
		copy(sb[2*r:2*r+2], src[0:2])
		if f.hdr == 64 { // Q4_1: the minimum
			copy(sb[32+2*r:32+2*r+2], src[2:4])
		}
		for c := 0; c < f.chunks; c++ {
			d := sb[f.hdr+64*c+4*r : f.hdr+64*c+4*r+4]
			s := src[qo+4*c : qo+4*c+4]
			if q8 {
				binary.LittleEndian.PutUint32(d, binary.LittleEndian.Uint32(s)^0x80808080)
			} else {
				copy(d, s)
			}
		}
	}
}

// UnpackRow reads row i of a repacked slice back into the standard row (k elements).
func UnpackRow(rt RepackType, slice []byte, k, i int, row []byte) {
	f := checkRepack("UnpackRow", rt, slice, k, i)
	nb := k / f.qk
	if len(row) < nb*f.block {
		panic("kern.UnpackRow: row too short")
	}
	unpackRow(f, rt == RepackQ8_0, slice, nb, i, row)
}

func unpackRow(f repackFormat, q8 bool, slice []byte, nb, i int, row []byte) {
	if f.qk == qkK {
		unpackQ4KRow(slice, nb, i, row)
		return
	}
	g, r := i/RepackRows, i%RepackRows
	qo := f.qsOff()
	grp := slice[g*nb*f.super:]
	for b := 0; b < nb; b++ {
		sb := grp[b*f.super : (b+1)*f.super]
		dst := row[b*f.block : (b+1)*f.block]
		copy(dst[0:2], sb[2*r:2*r+2])
		if f.hdr == 64 {
			copy(dst[2:4], sb[32+2*r:32+2*r+2])
		}
		for c := 0; c < f.chunks; c++ {
			s := sb[f.hdr+64*c+4*r : f.hdr+64*c+4*r+4]
			d := dst[qo+4*c : qo+4*c+4]
			if q8 {
				binary.LittleEndian.PutUint32(d, binary.LittleEndian.Uint32(s)^0x80808080)
			} else {
				copy(d, s)
			}
		}
	}
}

// Repack writes m dense standard rows of k elements (src) as a repacked slice (dst, at least
// RepackedSize bytes), padding rows included.
func Repack(rt RepackType, dst, src []byte, m, k int) {
	f := rt.format("Repack")
	if m < 0 || k < 0 || k%f.qk != 0 {
		panic("kern.Repack: bad sizes")
	}
	nb := k / f.qk
	switch {
	case len(dst) < RepackedSize(rt, m, k):
		panic("kern.Repack: dst shorter than RepackedSize")
	case len(src) < m*nb*f.block:
		panic("kern.Repack: src shorter than m rows")
	}
	q8 := rt == RepackQ8_0
	// a group of 16 rows at a time (the assembly converts whole groups), padding rows zero
	lda := nb * f.block
	for g := 0; nb > 0 && g*RepackRows < m; g++ {
		rows := min(RepackRows, m-g*RepackRows)
		repackGroup(f, q8, dst[g*nb*f.super:(g+1)*nb*f.super], src[g*RepackRows*lda:], lda, rows, 0, nb)
	}
}

// RepackGroups writes the standard rows i0..i0+16*ng-1 (src, dense) into a repacked slice of
// rows of k elements (slice: a whole repacked slice, as RepackRow takes): i0 is a multiple of
// RepackRows, and the groups it fills are all full (16 rows each). Equal to RepackRow row by row.
func RepackGroups(rt RepackType, slice []byte, k, i0, ng int, src []byte) {
	f := checkRepack("RepackGroups", rt, slice, k, max(i0, 0))
	nb := k / f.qk
	lda := nb * f.block
	switch {
	case i0 < 0 || i0%RepackRows != 0 || ng < 0:
		panic("kern.RepackGroups: bad first row or group count")
	case len(src) < ng*RepackRows*lda:
		panic("kern.RepackGroups: src shorter than the groups")
	case (i0/RepackRows+ng)*nb*f.super > len(slice):
		panic("kern.RepackGroups: groups past the slice")
	}
	q8 := rt == RepackQ8_0
	for g := 0; nb > 0 && g < ng; g++ {
		o := (i0/RepackRows + g) * nb * f.super
		repackGroup(f, q8, slice[o:o+nb*f.super], src[g*RepackRows*lda:], lda, RepackRows, 0, nb)
	}
}

// Unpack reads the m rows of a repacked slice (src) back into dense standard rows (dst): the
// exact inverse of Repack.
func Unpack(rt RepackType, dst, src []byte, m, k int) {
	f := rt.format("Unpack")
	if m < 0 || k < 0 || k%f.qk != 0 {
		panic("kern.Unpack: bad sizes")
	}
	nb := k / f.qk
	switch {
	case len(src) < RepackedSize(rt, m, k):
		panic("kern.Unpack: src shorter than RepackedSize")
	case len(dst) < m*nb*f.block:
		panic("kern.Unpack: dst shorter than m rows")
	}
	q8 := rt == RepackQ8_0
	for i := 0; i < m; i++ {
		unpackRow(f, q8, src, nb, i, dst[i*nb*f.block:])
	}
}
