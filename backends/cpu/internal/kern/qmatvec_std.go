package kern

import (
	"encoding/binary"
	"math"
	"sync/atomic"
)

// Mat-vec on standard-layout Q4_0, Q4_1 and Q8_0 weights (GemmStd with n ≤ stdMatVecMaxN where
// the kernel set has the 512-bit kernels, qmatvec_std512_amd64.s): every activation row is
// prepared once per group of four blocks (prepMV4), then tasks of stdMVTaskRows weight rows are
// dotted four rows per kernel call against all the activation rows at once (each block decoded
// once, the weights read once). Blocks past the last full group of four and rows
// past the last full four are dotted by the row dots (DotQ4_0Q8_0 and co).

// stdMatVecMaxN is the most activation rows GemmStd runs as mat-vecs.
const stdMatVecMaxN = StdMatVecMaxN

// StdMatVecMaxN is the most activation rows GemmStd runs as mat-vecs where HasStdMatVec (the
// weights read once for all of them).
const StdMatVecMaxN = 4

// stdMVTaskRows is the weight rows per mat-vec task (a multiple of 4).
var stdMVTaskRows = 64

// mvGroup returns the bytes of one prepared group of four activation blocks.
func mvGroup(rt RepackType) int {
	if rt == RepackQ4_1 {
		return 320
	}
	return 256
}

// prepMV4 prepares the full groups of four activation blocks of y (nb blocks, Q8_0 or for Q4_1
// weights Q8_1) into dst (nb/4 groups of mvGroup bytes): y[0:16] of the four blocks (16-byte
// lanes), y[16:32], int32 corrections per 4-byte lane (Q4_0: -8·Σ, Q8_0: -128·Σ of the lane's
// quants in both halves; Q4_1: 0), f32 dy per lane, and for Q4_1 f32 sy in lane 0 of each block
// (zero in the others).
func prepMV4(rt RepackType, nb int, y, dst []byte) {
	f := rt.format("prepMV4")
	gs := mvGroup(rt)
	qo := f.yblock - QK
	mul := int32(-8)
	if rt == RepackQ8_0 {
		mul = -128
	}
	for g := 0; g < nb/4; g++ {
		d := dst[g*gs : (g+1)*gs]
		for i := 0; i < 4; i++ {
			blk := y[(4*g+i)*f.yblock : (4*g+i+1)*f.yblock]
			q := blk[qo:]
			copy(d[16*i:16*i+16], q[:16])
			copy(d[64+16*i:64+16*i+16], q[16:32])
			for l := 0; l < 4; l++ {
				var s int32
				if rt != RepackQ4_1 {
					for t := 0; t < 4; t++ {
						s += int32(int8(q[4*l+t])) + int32(int8(q[16+4*l+t]))
					}
				}
				binary.LittleEndian.PutUint32(d[128+16*i+4*l:], uint32(mul*s))
			}
			dy := math.Float32bits(f16ToF32Go(binary.LittleEndian.Uint16(blk)))
			for l := 0; l < 4; l++ {
				binary.LittleEndian.PutUint32(d[192+16*i+4*l:], dy)
			}
			if rt == RepackQ4_1 {
				sy := math.Float32bits(f16ToF32Go(binary.LittleEndian.Uint16(blk[2:])))
				binary.LittleEndian.PutUint32(d[256+16*i:], sy)
				clear(d[256+16*i+4 : 256+16*i+16])
			}
		}
	}
}

// stdMatVecSize is the bytes of prepared activations stdMatVec needs for n rows of nb blocks.
func stdMatVecSize(rt RepackType, n, nb int) int { return n * (nb / 4) * mvGroup(rt) }

// rowDot is the row dot of weight type rt against its activation type over nb blocks.
func rowDot(rt RepackType, nb int, x, y []byte) float32 {
	switch rt {
	case RepackQ4_0:
		return dotQ4_0Q8_0(nb, x, y)
	case RepackQ4_1:
		return dotQ4_1Q8_1(nb, x, y)
	}
	return dotQ8_0Q8_0(nb, x, y)
}

// stdMatVec is GemmStd's mat-vec (n ≤ stdMatVecMaxN, stdMV4 the active set's four-row kernel; prep
// of at least stdMatVecSize bytes), with GemmStd's arguments and team protocol.
func stdMatVec(rt RepackType, ith, nth int, barrier func(), counter *atomic.Int64, prep []byte, m, n, nb int, a []byte, lda int, b []byte, ldb int, c []float32, ldc int) {
	f := rt.format("GemmStd")
	gsz := mvGroup(rt)
	ps := (nb / 4) * gsz
	// Every worker prepares its share of the n rows' groups (a contiguous range of them).
	ng := nb / 4
	for q := ith * n * ng / nth; q < (ith+1)*n*ng/nth; {
		j, g := q/ng, q%ng
		e := min(ng, g+(ith+1)*n*ng/nth-q)
		prepMV4(rt, 4*(e-g), b[j*ldb+4*g*f.yblock:j*ldb+4*e*f.yblock], prep[j*ps+g*gsz:j*ps+e*gsz])
		q += e - g
	}
	if nth > 1 {
		barrier()
	}
	tb := 4 * ng // first block of the tail
	ntasks := int64((m + stdMVTaskRows - 1) / stdMVTaskRows)
	var out [4 * stdMatVecMaxN]float32
	for {
		t := counter.Add(1) - 1
		if t >= ntasks {
			return
		}
		i0 := int(t) * stdMVTaskRows
		i1 := min(m, i0+stdMVTaskRows)
		i := i0
		for ; i+4 <= i1; i += 4 {
			x := a[i*lda:]
			if ng > 0 {
				stdMV4(rt, ng, x, lda, prep, ps, n, &out)
			} else {
				out = [4 * stdMatVecMaxN]float32{}
			}
			for j := 0; j < n; j++ {
				y := b[j*ldb : j*ldb+nb*f.yblock]
				for r := 0; r < 4; r++ {
					v := out[4*j+r]
					if tb < nb {
						v += rowDot(rt, nb-tb, x[r*lda+tb*f.block:r*lda+nb*f.block], y[tb*f.yblock:])
					}
					c[j*ldc+i+r] = v
				}
			}
		}
		for ; i < i1; i++ {
			for j := 0; j < n; j++ {
				c[j*ldc+i] = rowDot(rt, nb, a[i*lda:i*lda+nb*f.block], b[j*ldb:j*ldb+nb*f.yblock])
			}
		}
	}
}

// mv4Go is the pure-Go twin of the four-row kernels (stdMV4): out[4*j+r] = the dot of the ng
// full groups of four blocks of weight row r (x[r*lda:]) with prepared activation row j
// (prep[j*ps:]), j < nj ≤ stdMatVecMaxN.
func mv4Go(rt RepackType, ng int, x []byte, lda int, prep []byte, ps, nj int, out *[4 * stdMatVecMaxN]float32) {
	for j := 0; j < nj; j++ {
		var o [4]float32
		mv4Go1(rt, ng, x, lda, prep[j*ps:], &o)
		copy(out[4*j:], o[:])
	}
}

// mv4Go1 is mv4Go for one activation row.
func mv4Go1(rt RepackType, ng int, x []byte, lda int, prep []byte, out *[4]float32) {
	f := rt.format("mv4")
	gs := mvGroup(rt)
	for r := 0; r < 4; r++ {
		var acc float32
		for g := 0; g < ng; g++ {
			blk := x[r*lda+4*g*f.block:]
			d := prep[g*gs : (g+1)*gs]
			for i := 0; i < 4; i++ {
				xb := blk[i*f.block : (i+1)*f.block]
				qs := xb[f.qsOff():]
				var sumi int32
				for e := 0; e < 16; e++ {
					y0, y1 := int32(int8(d[16*i+e])), int32(int8(d[64+16*i+e]))
					switch rt {
					case RepackQ8_0:
						sumi += int32(int8(qs[e]))*y0 + int32(int8(qs[16+e]))*y1
					case RepackQ4_0:
						sumi += (int32(qs[e]&15)-8)*y0 + (int32(qs[e]>>4)-8)*y1
					default:
						sumi += int32(qs[e]&15)*y0 + int32(qs[e]>>4)*y1
					}
				}
				dx := f16ToF32Go(binary.LittleEndian.Uint16(xb))
				dy := math.Float32frombits(binary.LittleEndian.Uint32(d[192+16*i:]))
				acc += float32(sumi) * (dx * dy)
				if rt == RepackQ4_1 {
					mx := f16ToF32Go(binary.LittleEndian.Uint16(xb[2:]))
					acc += mx * math.Float32frombits(binary.LittleEndian.Uint32(d[256+16*i:]))
				}
			}
		}
		out[r] = acc
	}
}
