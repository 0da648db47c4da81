package kern

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
)

// TestGemvRepackedPair: two products of one shape and jobs run as a pair give each product's
// GemvRepackedSet results bit for bit, for every repacked type, under every kernel set this CPU
// runs, odd m (a partial last group), several jobs, one to three workers; each task's rows are
// reported once, after both products' rows are written, and C past m stays untouched.
func TestGemvRepackedPair(t *testing.T) {
	shapes := []struct{ m, nb, slices, n int }{{16, 1, 1, 1}, {33, 3, 3, 2}, {70, 10, 2, 3}, {5, 2, 2, 1}}
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, rt := range append(repackTypes[:len(repackTypes):len(repackTypes)], RepackQ4_K) {
				for si, sh := range shapes {
					k := sh.nb * BlockElems(rt)
					rs := RepackedSize(rt, sh.m, k)
					sliceBytes := rs + 64
					a := [2][]byte{make([]byte, sh.slices*sliceBytes), make([]byte, sh.slices*sliceBytes)}
					var b []byte
					ldb := 0
					if rt == RepackQ4_K {
						ldb = sh.nb*blockQ8_K + 3
						for p := range a {
							for e := 0; e < sh.slices; e++ {
								var rep []byte
								_, rep, b = q4kTestData(uint64(1000*p+100*si+e), sh.m, 4, sh.nb, ldb)
								copy(a[p][e*sliceBytes:], rep)
							}
						}
					} else {
						q := rpDot(rt)
						r := newRand(uint64(rt) + uint64(si) + 11)
						sc := func() uint16 { return f32ToF16Go(float32(math.Ldexp(0.5+r.Float64(), r.IntN(8)-4))) }
						lda := sh.nb * q.xs
						ldb = sh.nb*q.ys + 3
						for p := range a {
							for e := 0; e < sh.slices; e++ {
								std := make([]byte, sh.m*lda)
								for i := 0; i < sh.m; i++ {
									copy(std[i*lda:], q.genX(r, sh.nb, sc))
								}
								Repack(rt, a[p][e*sliceBytes:e*sliceBytes+rs], std, sh.m, k)
							}
						}
						b = make([]byte, sh.n*ldb)
						for j := 0; j < sh.n; j++ {
							copy(b[j*ldb:], q.genY(r, sh.nb, sc))
						}
					}
					var jobs []GemvJob
					ldc := sh.m + 2
					for e := 0; e < sh.slices; e++ {
						for j := 0; j < sh.n; j++ {
							jobs = append(jobs, GemvJob{Slice: e, Row: (e + j) % sh.n, COff: len(jobs) * ldc})
						}
					}
					// each product alone: the reference bits
					var want [2][]float32
					for p := range want {
						want[p] = make([]float32, len(jobs)*ldc)
						work := make([]float32, GemvRepackedSetWorkSize(rt, sh.n, k))
						runTeam(1, func(ith int, barrier func(), counter *atomic.Int64) {
							gemvSetTeam(rt, ith, 1, barrier, counter, work, sh.m, k, a[p], sliceBytes, sh.n, b, ldb, jobs, want[p], nil)
						})
					}
					for _, nth := range []int{1, 2, 3} {
						c := [2][]float32{make([]float32, len(jobs)*ldc), make([]float32, len(jobs)*ldc)}
						for p := range c {
							for i := range c[p] {
								c[p][i] = 777
							}
						}
						work := make([]float32, GemvRepackedSetWorkSize(rt, sh.n, k)+1)[1:]
						seen := &pairRecorder{doneRecorder: doneRecorder{count: make([]int, len(jobs)*sh.m), m: sh.m}, c: c, jobs: jobs}
						runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
							nb := sh.nb
							for j := 0; j < sh.n; j++ {
								GemvPrepBlocks(rt, work, sh.n, k, j, b[j*ldb:], ith*nb/nth, (ith+1)*nb/nth)
							}
							barrier()
							GemvRepackedPair(rt, nth, counter, work, sh.m, k, a[0], a[1], sliceBytes, sh.n, jobs, c[0], c[1], seen)
						})
						if seen.early != "" {
							t.Fatalf("%v %v %+v nth=%d: %s", s, rt, sh, nth, seen.early)
						}
						for i, v := range seen.count {
							if v != 1 {
								t.Fatalf("%v %v %+v nth=%d: output %d of job %d reported done %d times", s, rt, sh, nth, i%sh.m, i/sh.m, v)
							}
						}
						for p := range c {
							for i := range c[p] {
								if got := c[p][i]; math.Float32bits(got) != math.Float32bits(want[p][i]) && !(i%ldc >= sh.m && got == 777) {
									t.Fatalf("%v %v %+v nth=%d product %d job %d row %d: %v, alone %v", s, rt, sh, nth, p, i/ldc, i%ldc, got, want[p][i])
								}
							}
						}
					}
				}
			}
		})
	}
}

// pairRecorder counts the reports of a pair's outputs and checks that both products' rows are
// written (no longer 777) when their task is reported.
type pairRecorder struct {
	doneRecorder
	c     [2][]float32
	jobs  []GemvJob
	once  sync.Once
	early string
}

func (d *pairRecorder) RowsDone(job, i0, i1 int) {
	for p := range d.c {
		for i := i0; i < i1; i++ {
			if d.c[p][d.jobs[job].COff+i] == 777 {
				d.once.Do(func() { d.early = "a task reported before its rows were written" })
			}
		}
	}
	d.doneRecorder.RowsDone(job, i0, i1)
}
