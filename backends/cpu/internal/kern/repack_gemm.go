package kern

import (
	"encoding/binary"
	"math"
	"sync/atomic"
	"unsafe"
)

// GemmRepacked: quantized MUL_MAT on repacked weights (see repack.go).
//
// Phase 1 (tasks of rpPrepTiles activation tiles, claimed from the counter): the activation
// rows are copied into tiles of nr rows (8, or 1 for the mat-vec n == 1), block-major inside a
// tile, one record of nr*40 bytes per block: the nr rows' 32 quants, then their scales d as
// float32, then a per-row correction — for Q4_0 and Q8_0 the int32 -8*Σq or -128*Σq that turns
// the unsigned-weight integer sum into the signed one, for Q4_1 the Q8_1 block sum s as
// float32. Rows past n are zero. Barrier.
// Phase 2 (tasks of rpTaskM groups x rpTaskN tiles, claimed from the counter): each (group,
// tile) pair is one micro-kernel call per rpKC blocks of k, accumulating into C; pairs at the
// edges of C (rows past m or n) run over all of k into a local tile that is then copied.
var (
	rpTaskM = 8 // groups of 16 weight rows per task
	rpTaskN = 8 // activation tiles per task (GEMM)
	rpMVecM = 8 // groups per task of the mat-vec, at least where the rows allow (gemvTaskGroups)

	rpMVecBytes = 256 << 10 // weight bytes per task of the mat-vec, at least (gemvTaskGroups)
	rpKC        = 64        // blocks of k per micro-kernel call
)

const (
	rpMVecTasks = 2 // mat-vec tasks per worker, at least, where rows allow (gemvTaskGroups)
	rpNR        = 8 // activation rows per tile (GEMM)
	rpRec       = 40
	rpPrepTiles = 2
)

// rpTileRows is the number of activation rows per prepared tile.
func rpTileRows(n int) int {
	if n == 1 {
		return 1
	}
	return rpNR
}

// GemmRepackedWorkSize returns the float32 elements of shared scratch GemmRepacked needs for n
// activation rows of k elements (m and nth are accepted for symmetry and unused).
func GemmRepackedWorkSize(rt RepackType, m, n, k int, nth int) int {
	rt.format("GemmRepackedWorkSize")
	if m <= 0 || n <= 0 || k <= 0 {
		return 0
	}
	if rt == RepackQ4_K {
		return q4kStd.workSize(m, n, k, nth, true)
	}
	nr := rpTileRows(n)
	return (n+nr-1)/nr*(k/QK)*nr*rpRec/4 + gemmAlign
}

// GemmRepacked computes C[j*ldc+i] = dot(weight row i, activation row j) for i < m, j < n
// over k elements (a multiple of 32, of 256 for Q4_K): a is a repacked slice of m rows
// (RepackedSize bytes, see Repack), b holds the activation rows ldb bytes apart — Q8_0 rows for
// Q4_0 and Q8_0 weights, Q8_1 rows for Q4_1, Q8_K rows for Q4_K — and the result equals
// DotQ4_0Q8_0, DotQ4_1Q8_1, DotQ8_0Q8_0 or DotQ4_KQ8_K of the standard rows up to float32
// rounding of the per-block sums (the integer block sums are exact). The team protocol is
// Sgemm's and GemmQ4_0Q8_0's: every worker of nth calls it with its ith and the same other
// arguments; *counter is 0 before the first worker enters and unspecified after all return;
// barrier() is called exactly once by every worker when nth > 1 and m, n, k are all positive
// (never when nth == 1, where it may be nil); work is shared scratch of GemmRepackedWorkSize
// floats; C is complete once all workers have returned. Activation quants must lie in
// [-127, 127] as QuantizeRowQ8_0/Q8_1 produce them (Q8_K's [-128, 127] for Q4_K). It panics on
// sizes or slices that do not fit (programmer errors).
func GemmRepacked(rt RepackType, ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, b []byte, ldb int, c []float32, ldc int) {
	f := rt.format("GemmRepacked")
	switch {
	case nth < 1 || ith < 0 || ith >= nth:
		panic("kern.GemmRepacked: bad worker index")
	case m < 0 || n < 0 || k < 0 || k%f.qk != 0:
		panic("kern.GemmRepacked: bad sizes")
	case m == 0 || n == 0:
		return
	case ldb < k/f.qk*f.yblock || ldc < m:
		panic("kern.GemmRepacked: leading dimension too small")
	case len(a) < RepackedSize(rt, m, k) || len(b) < (n-1)*ldb+k/f.qk*f.yblock || len(c) < (n-1)*ldc+m:
		panic("kern.GemmRepacked: operand too short")
	}
	if k == 0 {
		clearTeamRows(ith, nth, n, m, c, ldc)
		return
	}
	if len(work) < GemmRepackedWorkSize(rt, m, n, k, nth) {
		panic("kern.GemmRepacked: work shorter than GemmRepackedWorkSize")
	}
	if rt == RepackQ4_K {
		q4kStd.run(ith, nth, barrier, counter, work, m, n, k, a, 0, true, b, ldb, c, ldc)
		return
	}
	off := alignOff(work)
	nb := k / QK
	nr := rpTileRows(n)
	ntiles := (n + nr - 1) / nr
	ts := nb * nr * rpRec // bytes per prepared tile
	// Viewing the float32 scratch as bytes is safe: the slice stays live for the whole call,
	// and bytes have no alignment requirement.
	prep := unsafe.Slice((*byte)(unsafe.Pointer(&work[off])), (len(work)-off)*4)[:ntiles*ts]

	// Phase 1: prepare the activation tiles.
	nprep := rpPrepPhase(rt, counter, n, nb, nr, b, ldb, prep)
	base := nprep + int64(nth)
	if nth > 1 {
		barrier()
	}

	// Phase 2: tiles.
	ngroups := (m + RepackRows - 1) / RepackRows
	tm, tn := rpTaskM, rpTaskN
	if nr == 1 {
		tm, tn = gemvTaskGroups(ngroups, 1, nth, nb*f.super), 1
	}
	mt := (ngroups + tm - 1) / tm
	nt := (ntiles + tn - 1) / tn
	ntasks := int64(mt * nt)
	gs := nb * f.super // group stride
	rec := nr * rpRec
	for {
		t := counter.Add(1) - 1 - base
		if t >= ntasks {
			return
		}
		g0 := int(t) / nt * tm
		t0 := int(t) % nt * tn
		g1, t1 := min(ngroups, g0+tm), min(ntiles, t0+tn)
		gf := min(g1, m/RepackRows) // groups below gf are full
		tf := min(t1, n/nr)         // tiles below tf are full
		for kb := 0; kb < nb; kb += rpKC {
			kn := min(rpKC, nb-kb)
			for tile := t0; tile < tf; tile++ {
				p := prep[tile*ts+kb*rec : tile*ts+(kb+kn)*rec]
				g := g0
				for ; nr == rpNR && g+1 < gf; g += 2 {
					w := a[g*gs+kb*f.super : (g+1)*gs+(kb+kn)*f.super]
					if !rpTile2(rt, kn, w, gs, p, c[tile*nr*ldc+g*RepackRows:], ldc, kb > 0) {
						break
					}
				}
				for ; g < gf; g++ {
					w := a[g*gs+kb*f.super : g*gs+(kb+kn)*f.super]
					rpTile(rt, nr, kn, w, p, c[tile*nr*ldc+g*RepackRows:], ldc, kb > 0)
				}
			}
		}
		// Edge pairs: the whole of k into a local tile.
		var tmp [rpNR * RepackRows]float32
		for tile := t0; tile < t1; tile++ {
			for g := g0; g < g1; g++ {
				if tile < tf && g < gf {
					continue
				}
				rows := min(nr, n-tile*nr)
				rpTilePart(rt, nr, rows, nb, a[g*gs:(g+1)*gs], prep[tile*ts:(tile+1)*ts], tmp[:], RepackRows, false)
				for r := 0; r < rows; r++ {
					i0 := g * RepackRows
					i1 := min(m, i0+RepackRows)
					copy(c[(tile*nr+r)*ldc+i0:(tile*nr+r)*ldc+i1], tmp[r*RepackRows:r*RepackRows+i1-i0])
				}
			}
		}
	}
}

// rpPrepPhase is phase 1 of GemmRepacked and GemmStd: tasks of rpPrepTiles activation tiles,
// claimed from the counter, copied from b (n rows ldb bytes apart, nb blocks each) into prep
// (tiles of nr rows, rows past n zero). It returns the number of tasks.
func rpPrepPhase(rt RepackType, counter *atomic.Int64, n, nb, nr int, b []byte, ldb int, prep []byte) int64 {
	f := rt.format("GemmRepacked")
	ntiles := (n + nr - 1) / nr
	ts := nb * nr * rpRec
	nprep := int64((ntiles + rpPrepTiles - 1) / rpPrepTiles)
	for {
		t := counter.Add(1) - 1
		if t >= nprep {
			return nprep
		}
		for tile := int(t) * rpPrepTiles; tile < min(ntiles, int(t+1)*rpPrepTiles); tile++ {
			p := prep[tile*ts : (tile+1)*ts]
			for r := 0; r < nr; r++ {
				j := tile*nr + r
				if j >= n {
					prepRepackZero(nb, nr, r, p)
					continue
				}
				prepRepackRow(rt, nb, nr, r, b[j*ldb:j*ldb+nb*f.yblock], p)
			}
		}
	}
}

// prepRepackRow writes activation row y (nb Q8_0 or Q8_1 blocks) as row r of a prepared tile
// of nr rows (p: nb records of nr*rpRec bytes).
func prepRepackRow(rt RepackType, nb, nr, r int, y, p []byte) {
	if !prepRec(rt, nb, nr, r, y, p) {
		prepRepackRowGo(rt, nb, nr, r, y, p)
	}
}

// prepRepackRowGo is prepRepackRow in Go, the kernels' twin.
func prepRepackRowGo(rt RepackType, nb, nr, r int, y, p []byte) {
	rec := nr * rpRec
	ys := BlockQ8_0Size
	if rt == RepackQ4_1 {
		ys = BlockQ8_1Size
	}
	for b := 0; b < nb; b++ {
		d := p[b*rec : (b+1)*rec]
		var q []byte
		var corr uint32
		if rt == RepackQ4_1 {
			blk := y[b*BlockQ8_1Size : (b+1)*BlockQ8_1Size]
			q = blk[4:]
			corr = math.Float32bits(f16ToF32Go(binary.LittleEndian.Uint16(blk[2:])))
		} else {
			blk := y[b*BlockQ8_0Size : (b+1)*BlockQ8_0Size]
			q = blk[2:]
			var s int32
			for _, v := range q {
				s += int32(int8(v))
			}
			if rt == RepackQ4_0 {
				corr = uint32(-8 * s)
			} else {
				corr = uint32(-128 * s)
			}
		}
		copy(d[r*QK:(r+1)*QK], q[:QK])
		binary.LittleEndian.PutUint32(d[nr*QK+4*r:], math.Float32bits(f16ToF32Go(binary.LittleEndian.Uint16(y[b*ys:]))))
		binary.LittleEndian.PutUint32(d[nr*(QK+4)+4*r:], corr)
	}
}

// prepRepackZero writes zeros as row r of a prepared tile.
func prepRepackZero(nb, nr, r int, p []byte) {
	rec := nr * rpRec
	for b := 0; b < nb; b++ {
		d := p[b*rec : (b+1)*rec]
		clear(d[r*QK : (r+1)*QK])
		clear(d[nr*QK+4*r : nr*QK+4*r+4])
		clear(d[nr*(QK+4)+4*r : nr*(QK+4)+4*r+4])
	}
}

// rpTileGo is the pure-Go micro-kernel: for activation row j < rows (≤ nr) of the prepared tile
// p and weight row r < 16 of the group w (both nb blocks), c[j*ldc+r] = Σ over blocks of
// float32(sumi)*(dw*dy) (+ mw*sy for Q4_1), added to c when accum.
func rpTileGo(rt RepackType, nr, rows, nb int, w, p []byte, c []float32, ldc int, accum bool) {
	f := rt.tileFormat()
	rec := nr * rpRec
	for j := 0; j < rows; j++ {
		for r := 0; r < RepackRows; r++ {
			var acc float32
			if accum {
				acc = c[j*ldc+r]
			}
			for b := 0; b < nb; b++ {
				sb := w[b*f.super : (b+1)*f.super]
				d := p[b*rec : (b+1)*rec]
				y := d[j*QK : (j+1)*QK]
				corr := binary.LittleEndian.Uint32(d[nr*(QK+4)+4*j:])
				var sumi int32
				if rt != RepackQ4_1 {
					sumi = int32(corr)
				}
				for ch := 0; ch < f.chunks; ch++ {
					x := sb[f.hdr+64*ch+4*r : f.hdr+64*ch+4*r+4]
					for t := 0; t < 4; t++ {
						if rt == RepackQ8_0 {
							sumi += int32(x[t]) * int32(int8(y[4*ch+t]))
						} else {
							sumi += int32(x[t]&15)*int32(int8(y[4*ch+t])) + int32(x[t]>>4)*int32(int8(y[16+4*ch+t]))
						}
					}
				}
				dw := f16ToF32Go(binary.LittleEndian.Uint16(sb[2*r:]))
				dy := math.Float32frombits(binary.LittleEndian.Uint32(d[nr*QK+4*j:]))
				acc += float32(sumi) * (dw * dy)
				if rt == RepackQ4_1 {
					mw := f16ToF32Go(binary.LittleEndian.Uint16(sb[32+2*r:]))
					acc += mw * math.Float32frombits(corr)
				}
			}
			c[j*ldc+r] = acc
		}
	}
}
