package kern

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
)

// TestGemvRepackedSet checks every job of a set (rows prepared by every worker) against
// GemmRepacked's mat-vec on the same slice and row, bit for bit, for each kernel set, type, odd m
// (a partial last group), several jobs per slice and row, and one to three workers; every output
// is reported done once, and the unwritten parts of C stay untouched.
func TestGemvRepackedSet(t *testing.T) {
	shapes := []struct{ m, k, slices, n int }{{16, 32, 1, 1}, {33, 96, 3, 2}, {70, 2560, 4, 3}, {5, 320, 2, 1}}
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, rt := range repackTypes {
				q := rpDot(rt)
				r := newRand(uint64(rt) + 7)
				sc := func() uint16 { return f32ToF16Go(float32(math.Ldexp(0.5+r.Float64(), r.IntN(8)-4))) }
				for _, sh := range shapes {
					nb := sh.k / QK
					lda, ldb := nb*q.xs, nb*q.ys+3
					rs := RepackedSize(rt, sh.m, sh.k)
					sliceBytes := rs + 64
					a := make([]byte, sh.slices*sliceBytes)
					for e := 0; e < sh.slices; e++ {
						std := make([]byte, sh.m*lda)
						for i := 0; i < sh.m; i++ {
							copy(std[i*lda:], q.genX(r, nb, sc))
						}
						Repack(rt, a[e*sliceBytes:e*sliceBytes+rs], std, sh.m, sh.k)
					}
					b := make([]byte, sh.n*ldb)
					for j := 0; j < sh.n; j++ {
						copy(b[j*ldb:], q.genY(r, nb, sc))
					}
					var jobs []GemvJob
					ldc := sh.m + 2
					for e := 0; e < sh.slices; e++ {
						for j := 0; j < sh.n; j++ {
							jobs = append(jobs, GemvJob{Slice: e, Row: (e + j) % sh.n, COff: len(jobs) * ldc})
						}
					}
					for _, nth := range []int{1, 2, 3} {
						c := make([]float32, len(jobs)*ldc)
						for i := range c {
							c[i] = 777
						}
						work := make([]float32, GemvRepackedSetWorkSize(rt, sh.n, sh.k)+1)[1:]
						seen := &doneRecorder{count: make([]int, len(jobs)*sh.m), m: sh.m}
						runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
							gemvSetTeam(rt, ith, nth, barrier, counter, work, sh.m, sh.k, a, sliceBytes, sh.n, b, ldb, jobs, c, seen)
						})
						for i, v := range seen.count {
							if v != 1 {
								t.Fatalf("%v %v %+v nth=%d: output %d of job %d reported done %d times", s, rt, sh, nth, i%sh.m, i/sh.m, v)
							}
						}
						for ji, jb := range jobs {
							want := make([]float32, sh.m)
							w := make([]float32, GemmRepackedWorkSize(rt, sh.m, 1, sh.k, 1))
							GemmRepacked(rt, 0, 1, nil, new(atomic.Int64), w, sh.m, 1, sh.k,
								a[jb.Slice*sliceBytes:jb.Slice*sliceBytes+rs], b[jb.Row*ldb:], ldb, want, sh.m)
							for i := 0; i < ldc; i++ {
								got := c[ji*ldc+i]
								if i >= sh.m {
									if got != 777 {
										t.Fatalf("%v %v %+v: C past m overwritten", s, rt, sh)
									}
									continue
								}
								if got != want[i] {
									t.Fatalf("%v %v %+v nth=%d job %d row %d: %v, GemmRepacked %v", s, rt, sh, nth, ji, i, got, want[i])
								}
							}
						}
					}
				}
			}
		})
	}
}

// gemvSetTeam is one worker's part of a mat-vec set as the CPU backend runs it: a share of every
// activation row's blocks (n rows ldb bytes apart in b) prepared, a barrier, then the tasks.
func gemvSetTeam(rt RepackType, ith, nth int, barrier func(), counter *atomic.Int64, work []float32,
	m, k int, a []byte, sliceBytes, n int, b []byte, ldb int, jobs []GemvJob, c []float32, done RowsDone) {
	nb := k / BlockElems(rt)
	for j := 0; j < n; j++ {
		GemvPrepBlocks(rt, work, n, k, j, b[j*ldb:], ith*nb/nth, (ith+1)*nb/nth)
	}
	barrier()
	GemvRepackedSet(rt, nth, counter, work, m, k, a, sliceBytes, n, jobs, c, done)
}

// doneRecorder counts the RowsDone reports of every output.
type doneRecorder struct {
	mu    sync.Mutex
	count []int
	m     int
}

func (d *doneRecorder) RowsDone(job, i0, i1 int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := i0; i < i1; i++ {
		d.count[job*d.m+i]++
	}
}

// BenchmarkGemvRepackedSet: the mixture-of-experts FFN steps for one token (2 of 8 experts,
// 2816x1024 gate/up and 1024x2816 down, Q4_0). GB/s counts the weight bytes the two products read.
func BenchmarkGemvRepackedSet(b *testing.B) {
	for _, sh := range [][2]int{{2816, 1024}, {1024, 2816}} {
		b.Run(fmt.Sprintf("m%d_k%d", sh[0], sh[1]), func(b *testing.B) { benchGemvSet(b, sh[0], sh[1]) })
	}
}

func benchGemvSet(b *testing.B, m, k int) {
	ne := 8
	rt := RepackQ4_0
	q := rpDot(rt)
	r := newRand(9)
	nb := k / QK
	rs := RepackedSize(rt, m, k)
	a := make([]byte, ne*rs)
	std := make([]byte, m*nb*q.xs)
	for i := 0; i < m; i++ {
		copy(std[i*nb*q.xs:], q.genX(r, nb, func() uint16 { return 0x2c00 }))
	}
	for e := 0; e < ne; e++ {
		Repack(rt, a[e*rs:(e+1)*rs], std, m, k)
	}
	y := q.genY(r, nb, func() uint16 { return 0x2c00 })
	jobs := []GemvJob{{Slice: 3, COff: 0}, {Slice: 6, COff: m}}
	c := make([]float32, 2*m)
	work := make([]float32, GemvRepackedSetWorkSize(rt, 1, k))
	for _, nth := range []int{1, 2} {
		b.Run(fmt.Sprintf("th%d", nth), func(b *testing.B) {
			for b.Loop() {
				runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
					gemvSetTeam(rt, ith, nth, barrier, counter, work, m, k, a, rs, 1, y, len(y), jobs, c, nil)
				})
			}
			b.ReportMetric(float64(2*rs)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// TestGemvTaskGroups: mat-vec tasks start at 8 groups or rpMVecBytes of weights, whichever is
// more, and shrink until every worker has 2 tasks or a task is one group (TinyLlama's shapes: K/V
// 16 groups, Q/O 128, FFN 352; the MoE's 2 jobs of 176, its Q 64 groups; Q4_0 groups of k 1024
// are 9216 bytes, of k 2048 18432, Q8_0 of k 2048 34816).
func TestGemvTaskGroups(t *testing.T) {
	for _, c := range []struct{ groups, jobs, nth, bytes, want int }{
		{128, 1, 2, 0, 8}, {352, 1, 2, 0, 8}, {176, 2, 2, 0, 8}, {16, 1, 2, 0, 4}, {16, 1, 1, 0, 8},
		{128, 1, 8, 0, 8}, {128, 1, 16, 0, 4}, {16, 1, 16, 0, 1}, {1, 1, 4, 0, 1}, {64, 2, 8, 0, 8},
		{176, 2, 2, 9216, 26}, {128, 1, 2, 18432, 13}, {352, 1, 2, 18432, 14}, {16, 1, 2, 18432, 4},
		{128, 1, 2, 34816, 8}, {176, 2, 8, 9216, 22}, {64, 1, 2, 9216, 16}, {100, 1, 2, 9216, 25}, {0, 1, 2, 9216, 1},
		{16, 1, 8, 18432, 1},
	} {
		if got := gemvTaskGroups(c.groups, c.jobs, c.nth, c.bytes); got != c.want {
			t.Errorf("%d groups of %d bytes, %d jobs, %d workers: %d groups per task, want %d", c.groups, c.bytes, c.jobs, c.nth, got, c.want)
		}
	}
}
