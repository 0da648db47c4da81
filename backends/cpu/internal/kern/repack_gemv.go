package kern

import "sync/atomic"

// RowsDone hears, from the worker that computed them, which outputs of a mat-vec set are final:
// rows [i0, i1) of job number job. A caller uses it to post-process outputs while they are in
// the worker's cache, without a barrier.
type RowsDone interface {
	RowsDone(job, i0, i1 int)
}

// GemvPrepBlocks writes blocks [b0, b1) of activation row j into work, the scratch of n prepared
// rows of k elements (GemvRepackedSetWorkSize(rt, n, k) floats) that GemvRepackedSetPrepared
// reads. y holds row j from its first block, in GemmRepacked's activation type for rt (Q8_0
// blocks, Q8_1 for Q4_1). Workers may prepare disjoint ranges at the same time.
func GemvPrepBlocks(rt RepackType, work []float32, n, k, j int, y []byte, b0, b1 int) {
	f := rt.format("GemvPrepBlocks")
	nb := k / QK
	switch {
	case k <= 0 || k%QK != 0 || j < 0 || j >= n || b0 < 0 || b1 > nb || b0 > b1:
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
	row := prep[j*nb*rpRec:]
	prepRepackRow(rt, b1-b0, 1, 0, y[b0*f.yblock:b1*f.yblock], row[b0*rpRec:b1*rpRec])
}

// GemvRepackedSetPrepared is GemvRepackedSet on activation rows already prepared in work by
// GemvPrepBlocks (every block of the n rows, made visible to every worker by a barrier or the
// like): the nth workers claim tasks from *counter (0 before the first claim) until none is left,
// with no barrier inside; the results are bit for bit GemvRepackedSet's. done, when not nil, is
// called by the worker that finished each task. It panics on sizes or slices that do not fit.
func GemvRepackedSetPrepared(rt RepackType, nth int, counter *atomic.Int64, work []float32, m, k int, a []byte,
	sliceBytes, n int, jobs []GemvJob, c []float32, done RowsDone) {
	rs := RepackedSize(rt, m, k)
	switch {
	case m < 0 || n < 0 || k < 0 || k%QK != 0 || sliceBytes < rs:
		panic("kern.GemvRepackedSetPrepared: bad sizes")
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
			if done != nil {
				done.RowsDone(int(t), 0, m)
			}
		}
	case len(work) < GemvRepackedSetWorkSize(rt, n, k):
		panic("kern.GemvRepackedSetPrepared: work shorter than GemvRepackedSetWorkSize")
	}
	for _, j := range jobs {
		if j.Row < 0 || j.Row >= n || j.Slice < 0 || (j.Slice*sliceBytes+rs) > len(a) || j.COff < 0 || j.COff+m > len(c) {
			panic("kern.GemvRepackedSetPrepared: job out of range")
		}
	}
	gemvSetTasks(rt, nth, counter, 0, m, k, a, sliceBytes, gemvPrepArea(work, n, k), jobs, c, done)
}
