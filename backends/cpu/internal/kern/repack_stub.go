package kern

// TEMPORARY stub of the repack API being written on branch qgemm (repack.go); deleted before that
// branch is merged. Layout: per 16-row group, per block index, the 16 rows' standard blocks one
// after another (padding rows zero).

import "sync/atomic"

const RepackRows = 16

type RepackType int

const (
	RepackQ4_0 RepackType = iota + 1
	RepackQ4_1
	RepackQ8_0
)

func stubBlock(rt RepackType) int {
	switch rt {
	case RepackQ4_0:
		return BlockQ4_0Size
	case RepackQ4_1:
		return BlockQ4_1Size
	}
	return BlockQ8_0Size
}

func RepackedSize(rt RepackType, m, k int) int {
	g := (m + RepackRows - 1) / RepackRows
	return g * RepackRows * (k / QK) * stubBlock(rt)
}

func stubOff(rt RepackType, k, i, b int) int {
	bs := stubBlock(rt)
	nb := k / QK
	return (i/RepackRows)*RepackRows*nb*bs + b*RepackRows*bs + (i%RepackRows)*bs
}

func Repack(rt RepackType, dst, src []byte, m, k int) {
	clear(dst[:RepackedSize(rt, m, k)])
	rs := k / QK * stubBlock(rt)
	for i := 0; i < m; i++ {
		RepackRow(rt, dst, k, i, src[i*rs:(i+1)*rs])
	}
}

func Unpack(rt RepackType, dst, src []byte, m, k int) {
	rs := k / QK * stubBlock(rt)
	for i := 0; i < m; i++ {
		UnpackRow(rt, src, k, i, dst[i*rs:(i+1)*rs])
	}
}

func RepackRow(rt RepackType, slice []byte, k, i int, row []byte) {
	bs := stubBlock(rt)
	for b := 0; b < k/QK; b++ {
		o := stubOff(rt, k, i, b)
		copy(slice[o:o+bs], row[b*bs:(b+1)*bs])
	}
}

func UnpackRow(rt RepackType, slice []byte, k, i int, row []byte) {
	bs := stubBlock(rt)
	for b := 0; b < k/QK; b++ {
		o := stubOff(rt, k, i, b)
		copy(row[b*bs:(b+1)*bs], slice[o:o+bs])
	}
}

func GemmRepackedWorkSize(rt RepackType, m, n, k, nth int) int { return 0 }

func GemmRepacked(rt RepackType, ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, b []byte, ldb int, c []float32, ldc int) {
	if nth > 1 {
		barrier()
	}
	row := make([]byte, k/QK*stubBlock(rt))
	for i := ith; i < m; i += nth {
		UnpackRow(rt, a, k, i, row)
		for j := 0; j < n; j++ {
			var v float32
			switch rt {
			case RepackQ4_0:
				v = DotQ4_0Q8_0(k, row, b[j*ldb:])
			case RepackQ4_1:
				v = DotQ4_1Q8_1(k, row, b[j*ldb:])
			default:
				v = DotQ8_0Q8_0(k, row, b[j*ldb:])
			}
			c[j*ldc+i] = v
		}
	}
}
