package kern

import (
	"sync/atomic"
	"unsafe"
)

// GemvJob is one mat-vec product of GemvRepackedSet: the weight slice Slice of a with the
// activation row Row of b, its m results written to c[COff:COff+m].
type GemvJob struct {
	Slice, Row, COff int
}

// GemvRepackedSetWorkSize returns the float32 elements of shared scratch GemvRepackedSet needs
// for n activation rows of k elements.
func GemvRepackedSetWorkSize(rt RepackType, n, k int) int {
	rt.format("GemvRepackedSetWorkSize")
	if n <= 0 || k <= 0 {
		return 0
	}
	return n*(k/QK)*rpRec/4 + gemmAlign
}

// GemvRepackedSet runs a set of mat-vec products over repacked weights as one team job — a
// mixture-of-experts layer for one token, where each (slot, token) row multiplies a different
// expert's matrix. For every job j and i < m, c[j.COff+i] = dot(weight row i of slice j.Slice of
// a, activation row j.Row of b) over k elements (a multiple of 32), equal to GemmRepacked's
// result for that slice and row. a holds repacked slices of m rows (RepackedSize bytes each)
// sliceBytes apart; b holds n activation rows ldb bytes apart in GemmRepacked's types.
//
// The team protocol is GemmRepacked's: every worker calls it with its ith and the same other
// arguments; *counter is 0 before the first worker enters; barrier() is called exactly once by
// every worker when nth > 1 and there is work (never when nth == 1). The tasks — rpMVecM groups
// of 16 rows of one job — are claimed from the counter, so the jobs share out
// evenly however few there are. It panics on sizes or slices that do not fit (programmer errors).
func GemvRepackedSet(rt RepackType, ith, nth int, barrier func(), counter *atomic.Int64, work []float32,
	m, k int, a []byte, sliceBytes int, n int, b []byte, ldb int, jobs []GemvJob, c []float32) {
	f := rt.format("GemvRepackedSet")
	rs := RepackedSize(rt, m, k)
	switch {
	case nth < 1 || ith < 0 || ith >= nth:
		panic("kern.GemvRepackedSet: bad worker index")
	case m < 0 || n < 0 || k < 0 || k%QK != 0 || sliceBytes < rs:
		panic("kern.GemvRepackedSet: bad sizes")
	case m == 0 || n == 0 || len(jobs) == 0 || k == 0:
		if k == 0 && ith == 0 {
			for _, j := range jobs {
				clear(c[j.COff : j.COff+m])
			}
		}
		return
	case ldb < k/QK*f.yblock || len(b) < (n-1)*ldb+k/QK*f.yblock:
		panic("kern.GemvRepackedSet: activation operand too short")
	case len(work) < GemvRepackedSetWorkSize(rt, n, k):
		panic("kern.GemvRepackedSet: work shorter than GemvRepackedSetWorkSize")
	}
	for _, j := range jobs {
		if j.Row < 0 || j.Row >= n || j.Slice < 0 || (j.Slice*sliceBytes+rs) > len(a) || j.COff < 0 || j.COff+m > len(c) {
			panic("kern.GemvRepackedSet: job out of range")
		}
	}
	prep := gemvPrepArea(work, n, k)
	nprep := rpPrepPhase(rt, counter, n, k/QK, 1, b, ldb, prep)
	if nth > 1 {
		barrier()
	}
	gemvSetTasks(rt, nth, counter, nprep+int64(nth), m, k, a, sliceBytes, prep, jobs, c, nil)
}

// gemvPrepArea is the prepared activation rows in work: n rows of k/32 records, from work's
// first 64-byte aligned float.
func gemvPrepArea(work []float32, n, k int) []byte {
	off := alignOff(work)
	// Viewing the float32 scratch as bytes is safe: the slice stays live as long as the
	// returned one, and bytes have no alignment requirement.
	return unsafe.Slice((*byte)(unsafe.Pointer(&work[off])), (len(work)-off)*4)[:n*(k/QK)*rpRec]
}

// gemvSetTasks is the task phase of the mat-vec sets: tasks numbered from base on the counter,
// groups of one job each (gemvTaskGroups); done, when not nil, hears of every finished task.
func gemvSetTasks(rt RepackType, nth int, counter *atomic.Int64, base int64, m, k int, a []byte, sliceBytes int,
	prep []byte, jobs []GemvJob, c []float32, done RowsDone) {
	f := rt.format("GemvRepackedSet")
	rs := RepackedSize(rt, m, k)
	nb := k / QK
	ts := nb * rpRec
	ngroups := (m + RepackRows - 1) / RepackRows
	gf := m / RepackRows // groups below gf are full
	tm := gemvTaskGroups(ngroups, len(jobs), nth)
	per := int64((ngroups + tm - 1) / tm)
	ntasks := per * int64(len(jobs))
	gs := nb * f.super
	for {
		t := counter.Add(1) - 1 - base
		if t >= ntasks {
			return
		}
		ji := int(t / per)
		j := jobs[ji]
		g0 := int(t%per) * tm
		g1 := min(ngroups, g0+tm)
		w := a[j.Slice*sliceBytes : j.Slice*sliceBytes+rs]
		p := prep[j.Row*ts : (j.Row+1)*ts]
		// k in rpKC-block steps as GemmRepacked, so that both round alike
		for kb := 0; kb < nb; kb += rpKC {
			kn := min(rpKC, nb-kb)
			pk := p[kb*rpRec : (kb+kn)*rpRec]
			for g := g0; g < min(g1, gf); g++ {
				rpTile(rt, 1, kn, w[g*gs+kb*f.super:g*gs+(kb+kn)*f.super], pk, c[j.COff+g*RepackRows:], RepackRows, kb > 0)
			}
		}
		if g1 > gf {
			var tmp [RepackRows]float32
			rpTile(rt, 1, nb, w[gf*gs:(gf+1)*gs], p, tmp[:], RepackRows, false)
			copy(c[j.COff+gf*RepackRows:j.COff+m], tmp[:m-gf*RepackRows])
		}
		if done != nil {
			done.RowsDone(ji, g0*RepackRows, min(m, g1*RepackRows))
		}
	}
}

// gemvTaskGroups is the number of weight groups per task of a mat-vec over ngroups groups in
// njobs jobs on nth workers: rpMVecM, halved while that would give fewer than rpMVecTasks tasks
// per worker, so that the last tasks leave little time idle (a 256-row K or V projection is 2
// tasks of 8 groups: with 8 or 16 workers most would wait at the node's end for the two).
func gemvTaskGroups(ngroups, njobs, nth int) int {
	tm := rpMVecM
	for tm > 1 && (ngroups+tm-1)/tm*njobs < rpMVecTasks*nth {
		tm /= 2
	}
	return tm
}
