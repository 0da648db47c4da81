package kern

import (
	"sync/atomic"
	"unsafe"
)

// GemvJob is one mat-vec product of GemvRepackedSet: the weight slice Slice of a with the
// prepared activation row Row, its m results written to c[COff:COff+m].
type GemvJob struct {
	Slice, Row, COff int
}

// GemvRepackedSetWorkSize returns the float32 elements of shared scratch GemvRepackedSet needs
// for n prepared activation rows of k elements (GemvPrepBlocks writes them).
func GemvRepackedSetWorkSize(rt RepackType, n, k int) int {
	rt.format("GemvRepackedSetWorkSize")
	if n <= 0 || k <= 0 {
		return 0
	}
	return n*(k/QK)*rpRec/4 + gemmAlign
}

// RowsDone hears, from the worker that computed them, which outputs of a mat-vec set are final:
// rows [i0, i1) of job number job. A caller uses it to post-process outputs while they are in
// the worker's cache, without a barrier.
type RowsDone interface {
	RowsDone(job, i0, i1 int)
}

// GemvPrepBlocks writes blocks [b0, b1) of activation row j into work, the scratch of n prepared
// rows of k elements (GemvRepackedSetWorkSize(rt, n, k) floats) that GemvRepackedSet reads. y
// holds row j from its first block, in GemmRepacked's activation type for rt (Q8_0 blocks, Q8_1
// for Q4_1). Workers may prepare disjoint ranges at the same time.
func GemvPrepBlocks(rt RepackType, work []float32, n, k, j int, y []byte, b0, b1 int) {
	f := rt.format("GemvPrepBlocks")
	nb := k / f.qk
	switch {
	case k <= 0 || k%f.qk != 0 || j < 0 || j >= n || b0 < 0 || b1 > nb || b0 > b1:
		panic("kern.GemvPrepBlocks: bad sizes")
	case len(work) < GemvRepackedSetWorkSize(rt, n, k):
		panic("kern.GemvPrepBlocks: work shorter than GemvRepackedSetWorkSize")
	case len(y) < b1*f.yblock:
		panic("kern.GemvPrepBlocks: activation row too short")
	}
	if b0 == b1 {
		return
	}
	prep := gemvPrepArea(work, n, k)
	if rt == RepackQ4_K {
		row := prep[j*nb*q4kRec:]
		prepQ4KBlocks(b1-b0, y[b0*f.yblock:b1*f.yblock], row[b0*q4kRec:b1*q4kRec])
		return
	}
	row := prep[j*nb*rpRec:]
	yb, pb := y[b0*f.yblock:b1*f.yblock], row[b0*rpRec:b1*rpRec]
	prepRepackRow(rt, b1-b0, 1, 0, yb, pb)
}

// GemvRepackedSet runs a set of mat-vec products over repacked weights as one team job — a
// mixture-of-experts layer for one token, where each (slot, token) row multiplies a different
// expert's matrix, or one generated token's MUL_MAT (one job). For every job j and i < m,
// c[j.COff+i] = dot(weight row i of slice j.Slice of a, activation row j.Row) over k elements (a
// multiple of 32, of 256 for Q4_K), bit for bit GemmRepacked's result for that slice and row
// (for Q4_K: for GemmRepacked's rows in whole quads of four; its other rows add their partial
// sums per 16 super-blocks of k, so past 4096 elements they may differ by float32 rounding). a
// holds repacked slices of m rows (RepackedSize bytes each) sliceBytes apart; the n activation rows are already
// prepared in work by GemvPrepBlocks (every block of every row, made visible to every worker by a
// barrier or the like).
//
// The nth workers each call it with the same arguments and claim tasks — up to rpMVecM groups of
// 16 rows of one job (gemvTaskGroups) — from *counter (0 before the first claim) until none is
// left, so the jobs share out evenly however few there are; there is no barrier inside. done,
// when not nil, is called by the worker that finished each task. It panics on sizes or slices
// that do not fit (programmer errors).
func GemvRepackedSet(rt RepackType, nth int, counter *atomic.Int64, work []float32, m, k int, a []byte,
	sliceBytes, n int, jobs []GemvJob, c []float32, done RowsDone) {
	gemvSet("GemvRepackedSet", rt, nth, counter, work, m, k, a, nil, sliceBytes, n, jobs, c, nil, done)
}

// GemvRepackedPair is GemvRepackedSet for two products of the same shape, weight type and jobs
// that read the same prepared rows (a feed-forward's gate and up): the weights a0 and a1, the
// results c0 and c1. Each task computes the same rows of both products that GemvRepackedSet's
// task computes of one, so each product's results are bit for bit GemvRepackedSet's, and done,
// when not nil, hears of the task once, after both: a caller can combine the two products' rows
// (the GLU of gate and up) in the worker that computed them.
func GemvRepackedPair(rt RepackType, nth int, counter *atomic.Int64, work []float32, m, k int, a0, a1 []byte,
	sliceBytes, n int, jobs []GemvJob, c0, c1 []float32, done RowsDone) {
	gemvSet("GemvRepackedPair", rt, nth, counter, work, m, k, a0, a1, sliceBytes, n, jobs, c0, c1, done)
}

// gemvSet checks and runs a mat-vec set (a1 nil) or pair, naming op in its panics.
func gemvSet(op string, rt RepackType, nth int, counter *atomic.Int64, work []float32, m, k int, a, a1 []byte,
	sliceBytes, n int, jobs []GemvJob, c, c1 []float32, done RowsDone) {
	rs := RepackedSize(rt, m, k)
	alen, clen := len(a), len(c)
	if a1 != nil {
		alen, clen = min(alen, len(a1)), min(clen, len(c1))
	}
	switch {
	case m < 0 || n < 0 || k < 0 || sliceBytes < rs:
		panic("kern." + op + ": bad sizes")
	case m == 0 || n == 0 || len(jobs) == 0:
		return
	case k == 0:
		// Nothing to prepare or read: the dots are empty sums, claimed as tasks like any other.
		for {
			t := counter.Add(1) - 1
			if t >= int64(len(jobs)) {
				return
			}
			j := jobs[t]
			clear(c[j.COff : j.COff+m])
			if a1 != nil {
				clear(c1[j.COff : j.COff+m])
			}
			if done != nil {
				done.RowsDone(int(t), 0, m)
			}
		}
	case len(work) < GemvRepackedSetWorkSize(rt, n, k):
		panic("kern." + op + ": work shorter than GemvRepackedSetWorkSize")
	}
	for _, j := range jobs {
		if j.Row < 0 || j.Row >= n || j.Slice < 0 || (j.Slice*sliceBytes+rs) > alen || j.COff < 0 || j.COff+m > clen {
			panic("kern." + op + ": job out of range")
		}
	}
	gemvSetTasks(rt, nth, counter, m, k, a, sliceBytes, gemvPrepArea(work, n, k), jobs, c, done, a1, c1)
}

// gemvPrepArea is the prepared activation rows in work: n rows of k/32 records, from work's
// first 64-byte aligned float.
func gemvPrepArea(work []float32, n, k int) []byte {
	off := alignOff(work)
	// Viewing the float32 scratch as bytes is safe: the slice stays live as long as the
	// returned one, and bytes have no alignment requirement.
	return unsafe.Slice((*byte)(unsafe.Pointer(&work[off])), (len(work)-off)*4)[:n*(k/QK)*rpRec]
}

// gemvSetTasks is GemvRepackedSet's task loop: tasks of groups of one job each (gemvTaskGroups),
// numbered by the counter; done, when not nil, hears of every finished task. With a1 (a second
// product's weights, the same layout and jobs) each task computes its rows of both, into c and
// c1, before done hears of it (GemvRepackedPair).
func gemvSetTasks(rt RepackType, nth int, counter *atomic.Int64, m, k int, a []byte, sliceBytes int,
	prep []byte, jobs []GemvJob, c []float32, done RowsDone, a1 []byte, c1 []float32) {
	f := rt.format("GemvRepackedSet")
	rs := RepackedSize(rt, m, k)
	nb := k / f.qk
	ts := k / QK * rpRec // bytes per prepared row (k/256 records of q4kRec for Q4_K: the same)
	ngroups := (m + RepackRows - 1) / RepackRows
	gs := nb * f.super
	tm := gemvTaskGroups(ngroups, len(jobs), nth, gs)
	per := int64((ngroups + tm - 1) / tm)
	ntasks := per * int64(len(jobs))
	for {
		t := counter.Add(1) - 1
		if t >= ntasks {
			return
		}
		ji := int(t / per)
		j := jobs[ji]
		g0 := int(t%per) * tm
		g1 := min(ngroups, g0+tm)
		p := prep[j.Row*ts : (j.Row+1)*ts]
		gemvTask(rt, f, m, nb, a[j.Slice*sliceBytes:j.Slice*sliceBytes+rs], p, c[j.COff:j.COff+m], g0, g1)
		if a1 != nil {
			gemvTask(rt, f, m, nb, a1[j.Slice*sliceBytes:j.Slice*sliceBytes+rs], p, c1[j.COff:j.COff+m], g0, g1)
		}
		if done != nil {
			done.RowsDone(ji, g0*RepackRows, min(m, g1*RepackRows))
		}
	}
}

// gemvTask computes the rows of weight groups [g0, g1) of one repacked slice w (m rows, nb blocks
// of format f) against the prepared row p into c (the slice's m results).
func gemvTask(rt RepackType, f repackFormat, m, nb int, w, p []byte, c []float32, g0, g1 int) {
	if rt == RepackQ4_K {
		q4kSetTask(nb, m, w, p, c, g0, g1)
		return
	}
	gf := m / RepackRows // groups below gf are full
	gs := nb * f.super
	// k in rpKC-block steps as GemmRepacked, so that both round alike, each group's steps one
	// after another: the group is one memory stream that the kernel's prefetches run ahead
	// in (walking the task's groups per step instead, the prefetches past each step's end
	// fetched what the next step of the same group reads only after the other groups':
	// a 151 MB q4_0 matrix on one Zen 5 core read at 27-30 GB/s that way)
	for g := g0; g < min(g1, gf); g++ {
		for kb := 0; kb < nb; kb += rpKC {
			kn := min(rpKC, nb-kb)
			rpTile(rt, 1, kn, w[g*gs+kb*f.super:g*gs+(kb+kn)*f.super], p[kb*rpRec:(kb+kn)*rpRec], c[g*RepackRows:], RepackRows, kb > 0)
		}
	}
	if g1 > gf {
		var tmp [RepackRows]float32
		rpTile(rt, 1, nb, w[gf*gs:(gf+1)*gs], p, tmp[:], RepackRows, false)
		copy(c[gf*RepackRows:m], tmp[:m-gf*RepackRows])
	}
}

// gemvTaskGroups is the number of weight groups per task of a mat-vec over ngroups groups of
// groupBytes bytes in njobs jobs on nth workers: rpMVecM or rpMVecBytes of weights, whichever is
// more groups, and fewer while that would give fewer than rpMVecTasks tasks per worker, so that
// the last tasks leave little time idle (a 256-row K or V projection is 2 tasks of 8 groups: with
// 8 or 16 workers most would wait at the node's end for the two). A worker that takes a task
// starts a new memory stream: the MoE's gate and up expert products (k 1024, 9 KiB groups) took
// 1.41-1.87 ms a token in tasks of 26 groups against 1.65-2.00 in tasks of 8 (two workers, Zen 5,
// three alternating rounds). Two tasks a worker rather than four halve the streams of the small
// products (an MoE token's Q, K and V group went from 24 tasks to 12): MoE Q4_0 tg +0.9-4.3%,
// TinyLlama Q4_K_M +2.3%, Q4_0 and Q8_0 +0.4-0.9% (in-process A/B medians, two Zen 5 workers
// on one die); a group's products share one tail, and the big products' tasks did not change.
func gemvTaskGroups(ngroups, njobs, nth, groupBytes int) int {
	tm := rpMVecM
	if groupBytes > 0 {
		tm = max(tm, rpMVecBytes/groupBytes)
	}
	if ngroups < 1 || njobs < 1 {
		return 1
	}
	// tasks per job: as tm gives, or enough for rpMVecTasks per worker (at most one a group),
	// then groups per task as equal as they come
	perJob := (rpMVecTasks*max(nth, 1) + njobs - 1) / njobs
	nt := max((ngroups+tm-1)/tm, min(perJob, ngroups))
	return (ngroups + nt - 1) / nt
}
