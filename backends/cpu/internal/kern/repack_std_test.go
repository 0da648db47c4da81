package kern

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"
)

// TestGemmStd checks GemmStd on every kernel set this CPU runs: bit for bit GemmRepacked's result
// on the repacked weights, with 1, 2 and 3 workers, on m not a multiple of 16, odd n, k of one to
// several blocks (and several chunks of k), padded and misaligned strides; C's padding columns
// stay untouched. GemmRepacked itself is checked against the exact dots by TestGemmRepacked.
func TestGemmStd(t *testing.T) {
	var shapes []rpShape
	for _, m := range []int{1, 15, 16, 17, 33, 50} {
		for _, n := range []int{1, 3, 4, 8, 9, 17} {
			for _, k := range []int{32, 64, 96, 320} {
				shapes = append(shapes, rpShape{m, n, k, n % 2 * 5, m % 3})
			}
		}
	}
	if raceEnabled {
		shapes = shapes[len(shapes)-8:]
	} else {
		shapes = append(shapes, rpShape{70, 40, 4096, 1, 0}, rpShape{300, 25, 256, 3, 2})
	}
	shapes = append(shapes, rpShape{3, 2, 0, 0, 0})
	defer func(a, b int) { rpTaskM, rpKC = a, b }(rpTaskM, rpKC)
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, ts := range [][2]int{{rpTaskM, rpKC}, {1, 3}, {3, 2}} {
				rpTaskM, rpKC = ts[0], ts[1]
				for _, rt := range repackTypes {
					testGemmStd(t, s, rt, shapes)
				}
			}
		})
	}
}

func testGemmStd(t *testing.T, set KernelSet, rt RepackType, shapes []rpShape) {
	r := newRand(uint64(rt) + 200)
	q := rpDot(rt)
	randScale := func() uint16 { return f32ToF16Go(float32(math.Ldexp(0.5+r.Float64(), r.IntN(12)-8))) }
	for _, s := range shapes {
		nb := s.k / QK
		lda, ldb, ldc := nb*q.xs+s.padC*3, nb*q.ys+s.padB, s.m+s.padC
		a := make([]byte, s.m*lda+3)[3:] // misaligned
		for i := 0; i < s.m; i++ {
			copy(a[i*lda:], q.genX(r, nb, randScale))
		}
		b := make([]byte, s.n*ldb+1)[1:]
		for j := 0; j < s.n; j++ {
			copy(b[j*ldb:], q.genY(r, nb, randScale))
		}
		dense := make([]byte, s.m*nb*q.xs)
		for i := 0; i < s.m; i++ {
			copy(dense[i*nb*q.xs:], a[i*lda:i*lda+nb*q.xs])
		}
		ra := make([]byte, RepackedSize(rt, s.m, s.k))
		Repack(rt, ra, dense, s.m, s.k)
		newC := func() []float32 {
			c := make([]float32, s.n*ldc)
			for i := range c {
				c[i] = float32(math.NaN())
			}
			for j := 0; j < s.n; j++ {
				for i := s.m; i < ldc; i++ {
					c[j*ldc+i] = 777
				}
			}
			return c
		}
		want := newC()
		work := make([]float32, GemmRepackedWorkSize(rt, s.m, s.n, s.k, 1))
		runTeam(1, func(ith int, barrier func(), counter *atomic.Int64) {
			GemmRepacked(rt, ith, 1, barrier, counter, work, s.m, s.n, s.k, ra, b, ldb, want, ldc)
		})
		mv := s.n <= stdMatVecMaxN && HasStdMatVec() && s.k > 0
		if mv { // the mat-vec kernels: against the exact dots
			checkStdExact(t, set, rt, s, a, lda, b, ldb, want, ldc)
			want = nil
		}
		for _, nth := range []int{1, 2, 3} {
			c := newC()
			work := make([]float32, GemmStdWorkSize(rt, s.m, s.n, s.k, nth)+1)[1:]
			for i := range work {
				work[i] = float32(math.NaN())
			}
			runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
				GemmStd(rt, ith, nth, barrier, counter, work, s.m, s.n, s.k, a, lda, b, ldb, c, ldc)
			})
			if want == nil { // identical for every nth
				checkStdExact(t, set, rt, s, a, lda, b, ldb, c, ldc)
				want = c
			}
			for j := 0; j < s.n; j++ {
				for i := 0; i < ldc; i++ {
					if got, w := c[j*ldc+i], want[j*ldc+i]; math.Float32bits(got) != math.Float32bits(w) {
						t.Fatalf("%v %v %+v nth=%d: c[%d][%d] = %v, GemmRepacked %v", set, rt, s, nth, j, i, got, w)
					}
				}
			}
			if slices.ContainsFunc(c, func(v float32) bool { return v != v }) {
				t.Fatalf("%v %v %+v nth=%d: C not fully written", set, rt, s, nth)
			}
		}
	}
}

// checkStdExact checks c (GemmStd's result) against the exact dots with TestGemmRepacked's bound
// (a little wider: the mat-vec sums per lane, then reduces), and C's padding columns.
func checkStdExact(t *testing.T, set KernelSet, rt RepackType, s rpShape, a []byte, lda int, b []byte, ldb int, c []float32, ldc int) {
	t.Helper()
	q := rpDot(rt)
	nb := s.k / QK
	for j := 0; j < s.n; j++ {
		for i := 0; i < ldc; i++ {
			got := c[j*ldc+i]
			if i >= s.m {
				if got != 777 {
					t.Fatalf("%v %v %+v: padding of C overwritten", set, rt, s)
				}
				continue
			}
			exact, abs := q.terms(nb, a[i*lda:i*lda+nb*q.xs], b[j*ldb:j*ldb+nb*q.ys])
			if bound := float64(nb+8) * 0x1p-24 * abs; !(math.Abs(float64(got)-exact) <= bound) {
				t.Fatalf("%v %v %+v: c[%d][%d] = %v, exact %v (bound %g)", set, rt, s, j, i, got, exact, bound)
			}
		}
	}
}

// TestMatVec4 checks the four-row mat-vec kernel of the active set, for 1 to stdMatVecMaxN
// activation rows, against its pure-Go twin:
// exact with unit scales (every term an integer, sums below 2^24), within the dots' bound
// otherwise.
func TestMatVec4(t *testing.T) {
	if !hasStdMatVec() {
		t.Skip("no mat-vec kernels on standard weights in this kernel set")
	}
	r := newRand(11)
	one := func() uint16 { return 0x3c00 }
	randScale := func() uint16 { return f32ToF16Go(float32(math.Ldexp(0.5+r.Float64(), r.IntN(12)-8))) }
	for _, rt := range repackTypes {
		q := rpDot(rt)
		for _, unit := range []bool{true, false} {
			sc := randScale
			if unit {
				sc = one
			}
			for _, ng := range []int{1, 2, 7} {
				nb := 4 * ng
				lda := nb*q.xs + 3
				x := make([]byte, 4*lda)
				for i := 0; i < 4; i++ {
					copy(x[i*lda:], q.genX(r, nb, sc))
				}
				x = x[:3*lda+nb*q.xs] // no slack after the last row
				for nj := 1; nj <= stdMatVecMaxN; nj++ {
					ps := stdMatVecSize(rt, 1, nb) + 64*(nj-1) // rows apart by more than a row
					prep := make([]byte, (nj-1)*ps+stdMatVecSize(rt, 1, nb))
					ys := make([][]byte, nj)
					for j := range ys {
						ys[j] = q.genY(r, nb, sc)
						prepMV4(rt, nb, ys[j], prep[j*ps:])
					}
					got := [4 * stdMatVecMaxN]float32{}
					for i := range got {
						got[i] = 777 // entries past nj stay untouched
					}
					var want [4 * stdMatVecMaxN]float32
					stdMV4(rt, ng, x, lda, prep, ps, nj, &got)
					mv4Go(rt, ng, x, lda, prep, ps, nj, &want)
					for i := 4 * nj; i < len(got); i++ {
						if got[i] != 777 {
							t.Fatalf("%v ng=%d nj=%d: out[%d] written", rt, ng, nj, i)
						}
					}
					for j := 0; j < nj; j++ {
						for i := 0; i < 4; i++ {
							g, w := got[4*j+i], want[4*j+i]
							exact, abs := q.terms(nb, x[i*lda:i*lda+nb*q.xs], ys[j])
							if unit && (g != w || float64(g) != exact) {
								t.Fatalf("%v ng=%d nj=%d unit: row %d·%d = %v, twin %v, exact %v", rt, ng, nj, i, j, g, w, exact)
							}
							bound := float64(nb+8) * 0x1p-24 * abs
							if !(math.Abs(float64(g)-exact) <= bound) || !(math.Abs(float64(w)-exact) <= bound) {
								t.Fatalf("%v ng=%d nj=%d: row %d·%d = %v, twin %v, exact %v (bound %g)", rt, ng, nj, i, j, g, w, exact, bound)
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkGemmStd compares GemmStd with the quantized GEMM (Q4_0, Q8_0) on standard-layout
// weights (m=4096, k=14336) for small and large n: the crossover sets the CPU backend's
// qstdMinN. GB/s counts the weight bytes.
func BenchmarkGemmStd(b *testing.B) {
	m, k := 4096, 14336
	if testing.Short() {
		m, k = 256, 1024
	}
	nb := k / QK
	r := newRand(6)
	sc := func() uint16 { return 0x2c00 }
	for _, rt := range repackTypes {
		q := rpDot(rt)
		a := make([]byte, 0, m*nb*q.xs)
		for i := 0; i < m; i++ {
			a = append(a, q.genX(r, nb, sc)...)
		}
		for _, n := range []int{1, 2, 3, 4, 6, 8, 16, 512} {
			y := make([]byte, 0, n*nb*q.ys)
			for j := 0; j < n; j++ {
				y = append(y, q.genY(r, nb, sc)...)
			}
			c := make([]float32, m*n)
			const nth = 2
			b.Run(fmt.Sprintf("%v/n%d/std", rt, n), func(b *testing.B) {
				work := make([]float32, GemmStdWorkSize(rt, m, n, k, nth))
				for b.Loop() {
					runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
						GemmStd(rt, ith, nth, barrier, counter, work, m, n, k, a, nb*q.xs, y, nb*q.ys, c, m)
					})
				}
				reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k))
				reportGBs(b, float64(len(a)))
			})
			if rt == RepackQ4_1 {
				continue
			}
			b.Run(fmt.Sprintf("%v/n%d/qgemm", rt, n), func(b *testing.B) {
				work := make([]float32, QgemmWorkSize(m, n, k, nth))
				gemm := GemmQ4_0Q8_0
				if rt == RepackQ8_0 {
					gemm = GemmQ8_0Q8_0
				}
				for b.Loop() {
					runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
						gemm(ith, nth, barrier, counter, work, m, n, k, a, nb*q.xs, y, nb*q.ys, c, m)
					})
				}
				reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k))
				reportGBs(b, float64(len(a)))
			})
		}
	}
}

// TestRepackGroupFast checks the assembly group conversion (where this build has it) against
// repackGroupGo byte for byte, on padded misaligned rows and block ranges inside the rows.
func TestRepackGroupFast(t *testing.T) {
	r := newRand(9)
	for _, rt := range repackTypes {
		f := rt.format("test")
		q8 := rt == RepackQ8_0
		for _, c := range []struct{ nb, lda, kb, kn int }{{1, f.block, 0, 1}, {5, 5*f.block + 7, 1, 3}, {9, 9 * f.block, 0, 9}} {
			a := make([]byte, 16*c.lda+1)[1:]
			for i := range a {
				a[i] = byte(r.Uint32())
			}
			want := make([]byte, c.kn*f.super)
			repackGroupGo(f, q8, want, a, c.lda, RepackRows, c.kb, c.kn)
			got := make([]byte, c.kn*f.super+3)[3:]
			if !repackGroupFast(f, got, a, c.lda, c.kb, c.kn) {
				if HasRepackKernels() {
					t.Fatalf("%v: repackGroupFast declined with repacked kernels active", rt)
				}
				continue
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%v %+v: repackGroupFast differs from repackGroupGo", rt, c)
			}
		}
	}
}

// TestGemmStdMatVecNoAllocs: GemmStd of one activation row on one worker allocates nothing (its
// four-row kernel's output stays on the stack), in every kernel set.
func TestGemmStdMatVecNoAllocs(t *testing.T) {
	r := newRand(3)
	const m, k = 64, 256
	nb := k / QK
	for _, rt := range repackTypes {
		q := rpDot(rt)
		var a []byte
		for i := 0; i < m; i++ {
			a = append(a, q.genX(r, nb, func() uint16 { return 0x3c00 })...)
		}
		y := q.genY(r, nb, func() uint16 { return 0x3c00 })
		c := make([]float32, m)
		work := make([]float32, GemmStdWorkSize(rt, m, 1, k, 1))
		var counter atomic.Int64
		allocs := testing.AllocsPerRun(20, func() {
			counter.Store(0)
			GemmStd(rt, 0, 1, func() {}, &counter, work, m, 1, k, a, nb*q.xs, y, nb*q.ys, c, m)
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per call", rt, allocs)
		}
	}
}
