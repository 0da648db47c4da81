package kern

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"
)

// GemmStd: quantized MUL_MAT on weights in the standard layout through the repacked
// micro-kernels (repack_gemm.go), the weights repacked on the fly.
//
// Phase 1 is GemmRepacked's (the activation tiles, shared). Phase 2 (tasks of tm groups of 16
// weight rows x tn activation tiles, claimed from the counter; tn is every tile unless there are
// too few groups to keep the team busy): per rpKC blocks of k, the task's full groups are
// converted into the repacked layout in the worker's own scratch — O(rows·k) work against the
// O(rows·n·k) of the tiles that follow — and the micro-kernel runs on each (tile, group) pair
// exactly as GemmRepacked's does, so C is bit for bit the repacked path's: full pairs accumulate
// into C chunk by chunk, pairs of the last partial tile into a local buffer chunk by chunk (the
// kernels add block after block, so the chunking does not change the sums), and the last
// partial group is converted over all of k and run over all of k per tile, as GemmRepacked does.

// HasRepackKernels reports whether the active kernel set has repacked micro-kernels in assembly
// (avx2 and above on amd64), the sets where GemmStd is the fast path for the standard layout.
func HasRepackKernels() bool { return hasRepackASM() }

// stdThreadBytes is one worker's scratch in GemmStd: converted weights (tm groups of one chunk
// of k, or one group over all of k) and the partial-tile buffer.
func stdThreadBytes(f repackFormat, nb, nr int) int {
	w := max(rpTaskM*min(rpKC, nb), nb) * f.super
	edge := rpTaskM * nr * RepackRows * 4
	return (w + edge + 63) &^ 63
}

// GemmStdWorkSize returns the float32 elements of shared scratch GemmStd needs for m weight rows,
// n activation rows of k elements and nth workers.
func GemmStdWorkSize(rt RepackType, m, n, k int, nth int) int {
	f := rt.format("GemmStdWorkSize")
	if m <= 0 || n <= 0 || k <= 0 || nth <= 0 {
		return 0
	}
	nb := k / QK
	nr := rpTileRows(n)
	prep := ((n+nr-1)/nr*nb*nr*rpRec + 63) &^ 63
	prep = max(prep+nth*stdThreadBytes(f, nb, nr), stdMatVecSize(rt, n, nb))
	return prep/4 + gemmAlign
}

// HasStdMatVec reports whether the active kernel set has the mat-vec kernels GemmStd runs on
// standard weights for n ≤ StdMatVecMaxN (avx512vnni with VBMI); elsewhere GemmStd's small n are slow.
func HasStdMatVec() bool { return hasStdMatVec() }

// stdSplit returns the groups (tm) and tiles (tn) per task of GemmStd's phase 2: tm up to
// rpTaskM groups with all tiles per task, the tiles cut as well when the groups alone give fewer
// than two tasks per worker.
func stdSplit(ngroups, ntiles, nth int) (tm, tn int) {
	tm = max(1, min(rpTaskM, ngroups/(2*nth)))
	mt := (ngroups + tm - 1) / tm
	nt := 1
	if mt < 2*nth {
		nt = min(ntiles, (2*nth+mt-1)/mt)
	}
	return tm, (ntiles + nt - 1) / nt
}

// GemmStd computes C[j*ldc+i] = dot(weight row i, activation row j) for i < m, j < n over k
// elements (a multiple of 32), like GemmRepacked but with the weights in the standard layout:
// rows of Q4_0, Q4_1 or Q8_0 blocks lda bytes apart in a. The activations (b, rows ldb bytes
// apart) are Q8_0 rows for Q4_0 and Q8_0 weights, Q8_1 rows for Q4_1. C equals GemmRepacked's on
// the repacked weights bit for bit, whatever nth — except for n ≤ StdMatVecMaxN where HasStdMatVec, which
// reads the standard blocks directly (the same integer block sums, float order of its own). The team protocol is GemmRepacked's, with work
// of GemmStdWorkSize floats. It panics on sizes or slices that do not fit (programmer errors).
func GemmStd(rt RepackType, ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, lda int, b []byte, ldb int, c []float32, ldc int) {
	f := rt.format("GemmStd")
	nb := k / QK
	switch {
	case nth < 1 || ith < 0 || ith >= nth:
		panic("kern.GemmStd: bad worker index")
	case m < 0 || n < 0 || k < 0 || k%QK != 0:
		panic("kern.GemmStd: bad sizes")
	case m == 0 || n == 0:
		return
	case lda < nb*f.block || ldb < nb*f.yblock || ldc < m:
		panic("kern.GemmStd: leading dimension too small")
	case len(a) < (m-1)*lda+nb*f.block || len(b) < (n-1)*ldb+nb*f.yblock || len(c) < (n-1)*ldc+m:
		panic("kern.GemmStd: operand too short")
	}
	if k == 0 {
		clearTeamRows(ith, nth, n, m, c, ldc)
		return
	}
	if len(work) < GemmStdWorkSize(rt, m, n, k, nth) {
		panic("kern.GemmStd: work shorter than GemmStdWorkSize")
	}
	off := alignOff(work)
	// Viewing the float32 scratch as bytes is safe: the slice stays live for the whole call,
	// and bytes have no alignment requirement.
	wb := unsafe.Slice((*byte)(unsafe.Pointer(&work[off])), (len(work)-off)*4)
	if hasStdMatVec() && n <= stdMatVecMaxN {
		stdMatVec(rt, ith, nth, barrier, counter, wb, m, n, nb, a, lda, b, ldb, c, ldc)
		return
	}
	nr := rpTileRows(n)
	ntiles := (n + nr - 1) / nr
	ts := nb * nr * rpRec // bytes per prepared tile
	prep := wb[:ntiles*ts]
	per := stdThreadBytes(f, nb, nr)
	mine := wb[(ntiles*ts+63)&^63+ith*per:][:per]
	wsize := max(rpTaskM*min(rpKC, nb), nb) * f.super
	wscr := mine[:wsize]
	// The partial-tile buffer: per is a multiple of 64 and wsize of 4, so it is 4-byte aligned
	// inside the 64-byte aligned scratch, and it lies within the live work slice.
	edge := unsafe.Slice((*float32)(unsafe.Pointer(&mine[wsize])), rpTaskM*nr*RepackRows)

	nprep := rpPrepPhase(rt, counter, n, nb, nr, b, ldb, prep)
	base := nprep + int64(nth)
	if nth > 1 {
		barrier()
	}

	ngroups := (m + RepackRows - 1) / RepackRows
	tm, tn := stdSplit(ngroups, ntiles, nth)
	mt := (ngroups + tm - 1) / tm
	nt := (ntiles + tn - 1) / tn
	ntasks := int64(mt * nt)
	rec := nr * rpRec
	q8 := rt == RepackQ8_0
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
		for kb := 0; gf > g0 && kb < nb; kb += rpKC {
			kn := min(rpKC, nb-kb)
			gs := kn * f.super
			for g := g0; g < gf; g++ {
				repackGroup(f, q8, wscr[(g-g0)*gs:(g-g0+1)*gs], a[g*RepackRows*lda:], lda, RepackRows, kb, kn)
			}
			for tile := t0; tile < t1; tile++ {
				p := prep[tile*ts+kb*rec : tile*ts+(kb+kn)*rec]
				g := g0
				for ; tile < tf && nr == rpNR && g+1 < gf; g += 2 {
					w := wscr[(g-g0)*gs : (g-g0+2)*gs]
					if !rpTile2(rt, kn, w, gs, p, c[tile*nr*ldc+g*RepackRows:], ldc, kb > 0) {
						break
					}
				}
				for ; g < gf; g++ {
					w := wscr[(g-g0)*gs : (g-g0+1)*gs]
					if tile < tf {
						rpTile(rt, nr, kn, w, p, c[tile*nr*ldc+g*RepackRows:], ldc, kb > 0)
					} else {
						rpTilePart(rt, nr, n-tile*nr, kn, w, p, edge[(g-g0)*nr*RepackRows:], RepackRows, kb > 0)
					}
				}
			}
		}
		if tf < t1 { // the partial tile's full groups
			for g := g0; g < gf; g++ {
				for r := 0; tf*nr+r < n; r++ {
					e := edge[(g-g0)*nr*RepackRows+r*RepackRows:][:RepackRows]
					copy(c[(tf*nr+r)*ldc+g*RepackRows:], e)
				}
			}
		}
		if gf < g1 { // the partial group: over all of k
			g := gf
			rows := m - g*RepackRows
			w := wscr[:nb*f.super]
			repackGroup(f, q8, w, a[g*RepackRows*lda:], lda, rows, 0, nb)
			var tmp [rpNR * RepackRows]float32
			for tile := t0; tile < t1; tile++ {
				nv := min(nr, n-tile*nr)
				rpTilePart(rt, nr, nv, nb, w, prep[tile*ts:(tile+1)*ts], tmp[:], RepackRows, false)
				for r := 0; r < nv; r++ {
					copy(c[(tile*nr+r)*ldc+g*RepackRows:][:rows], tmp[r*RepackRows:])
				}
			}
		}
	}
}

// repackGroup writes blocks kb..kb+kn-1 of the standard rows a[r*lda:] (r < rows ≤ 16) as kn
// superblocks of one repacked group (dst: kn*f.super bytes); rows from rows to 15 are zero
// padding.
func repackGroup(f repackFormat, q8 bool, dst, a []byte, lda, rows, kb, kn int) {
	if f.qk == qkK {
		repackQ4KGroup(dst, a, lda, rows, kb, kn)
		return
	}
	if rows == RepackRows && repackGroupFast(f, dst, a, lda, kb, kn) {
		return
	}
	repackGroupGo(f, q8, dst, a, lda, rows, kb, kn)
}

// repackGroupGo is repackGroup's pure-Go twin.
func repackGroupGo(f repackFormat, q8 bool, dst, a []byte, lda, rows, kb, kn int) {
	_ = dst[kn*f.super-1]
	if rows < RepackRows {
		for b := 0; b < kn; b++ {
			sb := dst[b*f.super : (b+1)*f.super]
			clear(sb[:f.hdr])
			if q8 {
				for i := f.hdr; i < f.super; i++ {
					sb[i] = 0x80
				}
			} else {
				clear(sb[f.hdr:])
			}
		}
	}
	qo := f.qsOff()
	var x uint32
	if q8 {
		x = 0x80808080
	}
	for r := 0; r < rows; r++ {
		row := a[r*lda+kb*f.block : r*lda+(kb+kn)*f.block]
		for b := 0; b < kn; b++ {
			src := row[b*f.block : (b+1)*f.block]
			sb := dst[b*f.super : (b+1)*f.super]
			binary.LittleEndian.PutUint16(sb[2*r:], binary.LittleEndian.Uint16(src))
			if f.hdr == 64 { // Q4_1: the minimum
				binary.LittleEndian.PutUint16(sb[32+2*r:], binary.LittleEndian.Uint16(src[2:]))
			}
			for ch := 0; ch < f.chunks; ch++ {
				binary.LittleEndian.PutUint32(sb[f.hdr+64*ch+4*r:], binary.LittleEndian.Uint32(src[qo+4*ch:])^x)
			}
		}
	}
}
