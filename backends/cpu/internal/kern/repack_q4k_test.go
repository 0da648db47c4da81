package kern

import (
	"bytes"
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/tandem-ml/tandem/core/quant"
)

// TestRepackQ4KRoundTrip: arbitrary Q4_K blocks (every bit pattern of the packed scales) survive
// Repack/Unpack, RepackRow/UnpackRow and RepackGroups unchanged; padding rows read back as zero
// blocks; the sizes are 2368 bytes per group and super-block.
func TestRepackQ4KRoundTrip(t *testing.T) {
	r := newRand(31)
	for _, m := range []int{1, 15, 16, 17, 33} {
		for _, nb := range []int{1, 2, 3} {
			k := nb * qkK
			src := make([]byte, m*nb*blockQ4_K)
			for i := range src {
				src[i] = byte(r.IntN(256))
			}
			size := RepackedSize(RepackQ4_K, m, k)
			if want := (m + 15) / 16 * nb * 2368; size != want {
				t.Fatalf("m=%d nb=%d: RepackedSize %d, want %d", m, nb, size, want)
			}
			dst := bytes.Repeat([]byte{0xa5}, size+3)[3:]
			Repack(RepackQ4_K, dst, src, m, k)
			back := make([]byte, len(src))
			Unpack(RepackQ4_K, back, dst, m, k)
			if !bytes.Equal(back, src) {
				t.Fatalf("m=%d nb=%d: Unpack(Repack(x)) != x", m, nb)
			}
			row := make([]byte, nb*blockQ4_K)
			for i := m; i < (m+15)/16*16; i++ {
				UnpackRow(RepackQ4_K, dst, k, i, row)
				if !bytes.Equal(row, make([]byte, len(row))) {
					t.Fatalf("m=%d nb=%d: padding row %d = %x", m, nb, i, row)
				}
			}
			fresh := make([]byte, size)
			for i := m - 1; i >= 0; i-- {
				RepackRow(RepackQ4_K, fresh, k, i, src[i*nb*blockQ4_K:(i+1)*nb*blockQ4_K])
			}
			if !bytes.Equal(fresh, dst) {
				t.Fatalf("m=%d nb=%d: RepackRow row by row differs from Repack", m, nb)
			}
			if g := m / 16; g > 0 {
				grp := make([]byte, size)
				RepackGroups(RepackQ4_K, grp, k, 0, g, src)
				if !bytes.Equal(grp[:g*nb*2368], dst[:g*nb*2368]) {
					t.Fatalf("m=%d nb=%d: RepackGroups differs from Repack", m, nb)
				}
			}
		}
	}
}

// q4kTestData quantizes m random weight rows (Q4_K) and n activation rows (Q8_K, row 1 at
// -128, Q8_K's extreme) of nb super-blocks, returning the standard rows, their repacked slice
// and the activations, rows ldb bytes apart.
func q4kTestData(seed uint64, m, n, nb, ldb int) (std, rep, b []byte) {
	r := newRand(seed)
	k := nb * qkK
	std = make([]byte, m*nb*blockQ4_K)
	for i := 0; i < m; i++ {
		quant.QuantizeRowQ4_K(kqRow(r, k, i), std[i*nb*blockQ4_K:(i+1)*nb*blockQ4_K])
	}
	rep = make([]byte, RepackedSize(RepackQ4_K, m, k))
	Repack(RepackQ4_K, rep, std, m, k)
	b = make([]byte, n*ldb)
	for j := 0; j < n; j++ {
		v := kqRow(r, k, j+1)
		if j == 1 {
			for e := range v {
				v[e] = -float32(1 + e%3)
			}
		}
		quant.QuantizeRowQ8_K(v, b[j*ldb:j*ldb+nb*blockQ8_K])
	}
	return std, rep, b
}

// TestGemvRepackedSetQ4K: the Q4_K mat-vec set (rows prepared by every worker, one to three
// workers, several slices and rows, a partial last group) under every kernel set this CPU runs:
// each output within 2e-6 of Σ|x·y| of DotQ4_KQ8_K, bit for bit GemmRepacked's result for the
// same row computed in a quad of four activation rows, reported done once, and C past m
// untouched.
func TestGemvRepackedSetQ4K(t *testing.T) {
	shapes := []struct{ m, nb, slices, n int }{{16, 1, 1, 4}, {33, 3, 3, 4}, {70, 10, 2, 4}, {5, 2, 2, 4}}
	for _, s := range supportedSets() {
		withSet(s, func() {
			for si, sh := range shapes {
				k := sh.nb * qkK
				ldb := sh.nb*blockQ8_K + 3
				rs := RepackedSize(RepackQ4_K, sh.m, k)
				sliceBytes := rs + 64
				a := make([]byte, sh.slices*sliceBytes)
				stds := make([][]byte, sh.slices)
				var b []byte
				for e := 0; e < sh.slices; e++ {
					var rep []byte
					stds[e], rep, b = q4kTestData(uint64(100*si+e), sh.m, sh.n, sh.nb, ldb)
					copy(a[e*sliceBytes:], rep)
				}
				var jobs []GemvJob
				ldc := sh.m + 2
				for e := 0; e < sh.slices; e++ {
					for j := 0; j < sh.n; j++ {
						jobs = append(jobs, GemvJob{Slice: e, Row: (e + j) % sh.n, COff: len(jobs) * ldc})
					}
				}
				// GemmRepacked over all n rows (one quad) per slice: the reference bits
				quads := make([][]float32, sh.slices)
				for e := range quads {
					quads[e] = make([]float32, sh.n*sh.m)
					w := make([]float32, GemmRepackedWorkSize(RepackQ4_K, sh.m, sh.n, k, 1))
					GemmRepacked(RepackQ4_K, 0, 1, nil, new(atomic.Int64), w, sh.m, sh.n, k,
						a[e*sliceBytes:e*sliceBytes+rs], b, ldb, quads[e], sh.m)
				}
				for _, nth := range []int{1, 2, 3} {
					c := make([]float32, len(jobs)*ldc)
					for i := range c {
						c[i] = 777
					}
					work := make([]float32, GemvRepackedSetWorkSize(RepackQ4_K, sh.n, k)+1)[1:]
					seen := &doneRecorder{count: make([]int, len(jobs)*sh.m), m: sh.m}
					runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
						gemvSetTeam(RepackQ4_K, ith, nth, barrier, counter, work, sh.m, k, a, sliceBytes, sh.n, b, ldb, jobs, c, seen)
					})
					for i, v := range seen.count {
						if v != 1 {
							t.Fatalf("%v %+v nth=%d: output %d of job %d reported done %d times", s, sh, nth, i%sh.m, i/sh.m, v)
						}
					}
					for ji, jb := range jobs {
						y := b[jb.Row*ldb:]
						for i := 0; i < ldc; i++ {
							got := c[ji*ldc+i]
							if i >= sh.m {
								if got != 777 {
									t.Fatalf("%v %+v: C past m overwritten", s, sh)
								}
								continue
							}
							if want := quads[jb.Slice][jb.Row*sh.m+i]; got != want {
								t.Fatalf("%v %+v nth=%d job %d row %d: %v, GemmRepacked %v", s, sh, nth, ji, i, got, want)
							}
							x := stds[jb.Slice][i*sh.nb*blockQ4_K:]
							want := DotQ4_KQ8_K(k, x, y)
							if tol := 2e-6 * q4kAbsDot(x, y, sh.nb); math.Abs(float64(got-want)) > tol {
								t.Fatalf("%v %+v job %d row %d: %v, DotQ4_KQ8_K %v (tol %g)", s, sh, ji, i, got, want, tol)
							}
						}
					}
				}
			}
		})
	}
}

// q4kAbsDot is Σ|x·y| of a Q4_K row and a Q8_K row (nb blocks), the scale of their dot's rounding.
func q4kAbsDot(x, y []byte, nb int) float64 {
	xf, yf := make([]float32, nb*qkK), make([]float32, nb*qkK)
	quant.DequantizeRowQ4_K(x[:nb*blockQ4_K], xf)
	quant.DequantizeRowQ8_K(y[:nb*blockQ8_K], yf)
	var s float64
	for i := range xf {
		s += math.Abs(float64(xf[i]) * float64(yf[i]))
	}
	return s
}

// TestGemmRepackedQ4K: GemmRepacked on stored Q4_K groups gives GemmQ4_KStd's results on the
// standard rows bit for bit (the same micro-kernel over the same groups), for partial groups and
// quads, k across the chunking and teams of 1 to 3 workers.
func TestGemmRepackedQ4K(t *testing.T) {
	shapes := []struct{ m, n, nb, nth int }{{16, 4, 1, 1}, {53, 9, 3, 2}, {48, 13, 2*kstdKC + 1, 3}, {7, 6, 1, 2}, {16, 1, 2, 2}}
	for _, s := range supportedSets() {
		withSet(s, func() {
			for si, sh := range shapes {
				k := sh.nb * qkK
				ldb := sh.nb * blockQ8_K
				std, rep, b := q4kTestData(uint64(7*si+1), sh.m, sh.n, sh.nb, ldb)
				want := make([]float32, sh.n*sh.m)
				got := make([]float32, sh.n*sh.m)
				w1 := make([]float32, GemmQ4_KStdWorkSize(sh.m, sh.n, k, sh.nth))
				runTeam(sh.nth, func(ith int, barrier func(), counter *atomic.Int64) {
					GemmQ4_KStd(ith, sh.nth, barrier, counter, w1, sh.m, sh.n, k, std, sh.nb*blockQ4_K, b, ldb, want, sh.m)
				})
				w2 := make([]float32, GemmRepackedWorkSize(RepackQ4_K, sh.m, sh.n, k, sh.nth))
				runTeam(sh.nth, func(ith int, barrier func(), counter *atomic.Int64) {
					GemmRepacked(RepackQ4_K, ith, sh.nth, barrier, counter, w2, sh.m, sh.n, k, rep, b, ldb, got, sh.m)
				})
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%v %+v: C[%d] = %v, GemmQ4_KStd %v", s, sh, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// BenchmarkQ4KMatVec: one activation row times Q4_K weights (TinyLlama's FFN shapes), the
// standard layout's tile kernel (TileQ4_KQ8_K) against the repacked mat-vec (GemvRepackedSet),
// one worker; GB/s counts the weight bytes read. The in-cache shape (m 256) shows the kernels'
// own speed.
func BenchmarkQ4KMatVec(b *testing.B) {
	for _, sh := range [][2]int{{256, 2048}, {5632, 2048}, {2048, 5632}} {
		m, k := sh[0], sh[1]
		nb := k / qkK
		std, rep, y := q4kTestData(5, m, 1, nb, nb*blockQ8_K)
		c := make([]float32, m)
		b.Run(fmt.Sprintf("tile/m%d_k%d", m, k), func(b *testing.B) {
			for b.Loop() {
				TileQ4_KQ8_K(k, std, nb*blockQ4_K, m, y, nb*blockQ8_K, 1, c, m)
			}
			b.ReportMetric(float64(len(std))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
		b.Run(fmt.Sprintf("repacked/m%d_k%d", m, k), func(b *testing.B) {
			work := make([]float32, GemvRepackedSetWorkSize(RepackQ4_K, 1, k))
			jobs := []GemvJob{{}}
			for b.Loop() {
				runTeam(1, func(ith int, barrier func(), counter *atomic.Int64) {
					gemvSetTeam(RepackQ4_K, ith, 1, barrier, counter, work, m, k, rep, len(rep), 1, y, len(y), jobs, c, nil)
				})
			}
			b.ReportMetric(float64(len(rep))*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
