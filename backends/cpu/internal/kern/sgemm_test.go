package kern

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tandem-ml/tandem/core/quant"
)

// teamBarrier is a reusable barrier for nth goroutines (generation counting).
type teamBarrier struct {
	mu   sync.Mutex
	cond *sync.Cond
	n    int
	left int
	gen  int
}

func newTeamBarrier(n int) *teamBarrier {
	b := &teamBarrier{n: n, left: n}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *teamBarrier) wait() {
	b.mu.Lock()
	gen := b.gen
	b.left--
	if b.left == 0 {
		b.left = b.n
		b.gen++
		b.cond.Broadcast()
	} else {
		for gen == b.gen {
			b.cond.Wait()
		}
	}
	b.mu.Unlock()
}

// runTeam runs f on nth goroutines the way a ggml-style thread pool would: a shared counter
// set to 0 before the team starts, a shared barrier, each worker with its own ith.
func runTeam(nth int, f func(ith int, barrier func(), counter *atomic.Int64)) {
	var counter atomic.Int64
	counter.Store(0)
	bar := newTeamBarrier(nth)
	var wg sync.WaitGroup
	for ith := 0; ith < nth; ith++ {
		wg.Add(1)
		go func(ith int) {
			defer wg.Done()
			f(ith, bar.wait, &counter)
		}(ith)
	}
	wg.Wait()
}

type gemmCase struct {
	m, n, k, lda, ldb, ldc int
}

// gemmCheck runs Sgemm (or SgemmF16A) with nth workers on random data and compares with a
// float64 reference. C starts as NaN (it must be overwritten), the padding columns of C
// (ldc > m) must stay untouched, and the scratch starts as NaN and misaligned.
func gemmCheck(t *testing.T, c gemmCase, nth int, f16 bool, seed uint64) {
	t.Helper()
	kind := gemmF32
	if f16 {
		kind = gemmF16
	}
	gemmCheckKind(t, c, nth, kind, seed)
}

// gemmKind selects the entry point gemmCheckKind tests.
type gemmKind int

const (
	gemmF32     gemmKind = iota // Sgemm
	gemmF16                     // SgemmF16A: f16 weights
	gemmBF16                    // SgemmBF16: bf16 weights and activations
	gemmF16BF16                 // SgemmF16ABF16: f16 weights, both rounded to bf16 on the pair path
)

// toF16 rounds x to IEEE halves in place and returns the bits.
func toF16(x []float32) []uint16 {
	h := make([]uint16, len(x))
	for i := range x {
		h[i] = f32ToF16Go(x[i])
		x[i] = f16ToF32Go(h[i])
	}
	return h
}

// toBF16 rounds x to bf16 (ggml's rounding) in place and returns the bits.
func toBF16(x []float32) []uint16 {
	h := make([]uint16, len(x))
	for i := range x {
		h[i] = quant.FP32ToBF16(x[i])
		x[i] = bf16ToF32(h[i])
	}
	return h
}

// gemmCheckKind is gemmCheck for any of the three entry points.
func gemmCheckKind(t *testing.T, c gemmCase, nth int, kind gemmKind, seed uint64) {
	t.Helper()
	f16 := kind == gemmF16 || kind == gemmF16BF16
	r := newRand(seed)
	m, n, k := c.m, c.n, c.k
	a := randF32(r, max(0, (m-1)*c.lda+k), -1, 1)
	var ah []uint16
	if f16 {
		ah = toF16(a)
	}
	b := randF32(r, max(0, (n-1)*c.ldb+k), -1, 1)
	var bh []uint16
	if kind == gemmBF16 {
		ah, bh = toBF16(a), toBF16(b)
	}
	// SgemmF16ABF16 reads f16 weights and f32 activations; on the pair path the reference takes
	// both rounded to bf16 (the rounding itself is checked bit for bit in TestSgemmF16ABF16).
	bIn := b
	if kind == gemmF16BF16 && gemmPairs && n > gemmSmallN {
		bIn = append([]float32(nil), b...)
		toBF16(a)
		toBF16(b)
	}
	cl := max(0, (n-1)*c.ldc+m)
	cm := make([]float32, cl+3)
	nan := float32(math.NaN())
	for i := range cm {
		cm[i] = nan
	}
	const pad = float32(777)
	for j := 0; j < n; j++ {
		for i := m; i < c.ldc && j*c.ldc+i < cl; i++ {
			cm[j*c.ldc+i] = pad
		}
	}
	cs := cm[:cl]
	ws := SgemmWorkSize(m, n, k, nth)
	work := make([]float32, ws+1)
	for i := range work {
		work[i] = nan
	}
	runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
		switch kind {
		case gemmF16:
			SgemmF16A(ith, nth, barrier, counter, work[1:], m, n, k, ah, c.lda, b, c.ldb, cs, c.ldc)
		case gemmBF16:
			SgemmBF16(ith, nth, barrier, counter, work[1:], m, n, k, ah, c.lda, bh, c.ldb, cs, c.ldc)
		case gemmF16BF16:
			SgemmF16ABF16(ith, nth, barrier, counter, work[1:], m, n, k, ah, c.lda, bIn, c.ldb, cs, c.ldc)
		default:
			Sgemm(ith, nth, barrier, counter, work[1:], m, n, k, a, c.lda, b, c.ldb, cs, c.ldc)
		}
	})
	ref := make([]float64, 0, m*n)
	got := make([]float64, 0, m*n)
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			var s float64
			for p := 0; p < k; p++ {
				s += float64(a[i*c.lda+p]) * float64(b[j*c.ldb+p])
			}
			g := cs[j*c.ldc+i]
			if g != g {
				t.Fatalf("%+v nth=%d: C[%d,%d] is NaN (not written)", c, nth, j, i)
			}
			ref = append(ref, s)
			got = append(got, float64(g))
		}
		for i := m; i < c.ldc && j*c.ldc+i < cl; i++ {
			if cs[j*c.ldc+i] != pad {
				t.Fatalf("%+v nth=%d: padding C[%d,%d] overwritten", c, nth, j, i)
			}
		}
	}
	for i := cl; i < len(cm); i++ {
		if cm[i] == cm[i] {
			t.Fatalf("%+v: wrote past the end of C", c)
		}
	}
	// f32 accumulation of k products: NMSE ~ k * 2^-48; allow 1e-10.
	if e := nmse(ref, got); e > 1e-10 || (k == 0 && e != 0) {
		t.Fatalf("%+v nth=%d kind=%d: nmse %g", c, nth, kind, e)
	}
}

var gemmDims = []int{1, 2, 5, 17, 33, 65, 127}

func TestSgemmShapes(t *testing.T) {
	dims := gemmDims
	if raceEnabled {
		dims = []int{1, 5, 17, 33}
	}
	for _, nth := range []int{1, 2, 3} {
		for _, m := range dims {
			for _, n := range dims {
				for _, k := range dims {
					gemmCheck(t, gemmCase{m, n, k, k, k, m}, nth, false, uint64(m*10000+n*100+k))
				}
			}
		}
	}
}

func TestSgemmLarger(t *testing.T) {
	cases := []gemmCase{
		{300, 200, 129, 129, 129, 300},
		{70, 50, 600, 603, 601, 75},      // three k blocks, padded leading dimensions
		{40, 20, 1100, 1103, 1101, 41},   // three k blocks of the 512-bit kernels too
		{16, 6, 256, 256, 256, 16},       // exactly one tile
		{32, 12, 520, 520, 520, 32},      // k blocks of 264 and 256
		{150, 200, 520, 523, 521, 151},   // partial task blocks on both sides (64 weight rows per task, two task columns at 2-3 workers)
		{33, 4, 9, 9, 9, 33},             // smallest n on the packed path (bf16, 512-bit kernels)
		{33, 32, 70, 70, 70, 33},         // largest n of the dot path (f32, f16 on the 256-bit kernels)
		{33, 33, 70, 70, 70, 33},         // smallest n on their packed path
		{150, 1543, 530, 533, 531, 151},  // a wide product (ownWideN): B-panel-major tasks, two k blocks, every edge
		{600, 40, 1030, 1030, 1031, 601}, // 512-bit kernels: task rows of own512MB (the last partial), three k blocks
		{100, 3, 77, 80, 79, 101},        // mat-vec path, n = 3
		{1000, 1, 1000, 1000, 1000, 1000},
		{0, 5, 5, 5, 5, 1},
		{5, 0, 5, 5, 5, 5},
		{7, 9, 0, 1, 1, 7}, // k == 0: C = 0
	}
	if raceEnabled {
		cases = []gemmCase{{70, 50, 600, 603, 601, 75}, {33, 4, 9, 9, 9, 33}, {100, 3, 77, 80, 79, 101}, {7, 9, 0, 1, 1, 7}, {40, 1540, 40, 40, 40, 40}}
	}
	for _, c := range cases {
		for _, nth := range []int{1, 2, 3} {
			gemmCheck(t, c, nth, false, 7)
			gemmCheck(t, c, nth, true, 8)
		}
	}
}

func TestSgemmF16AShapes(t *testing.T) {
	dims := []int{1, 5, 17, 65}
	for _, nth := range []int{1, 2} {
		for _, m := range dims {
			for _, n := range dims {
				for _, k := range []int{1, 8, 33, 300} {
					gemmCheck(t, gemmCase{m, n, k, k + 1, k, m}, nth, true, uint64(m*10000+n*100+k))
				}
			}
		}
	}
}

// TestSgemmGoKernel runs the drivers with the pure-Go micro-kernel and packers (the purego
// path) on the same machine.
func TestSgemmGoKernel(t *testing.T) {
	withASM(false, func() {
		for _, c := range []gemmCase{{33, 17, 65, 65, 65, 33}, {70, 50, 600, 603, 601, 75}, {20, 3, 40, 40, 40, 20}} {
			for _, nth := range []int{1, 2} {
				gemmCheck(t, c, nth, false, 9)
				gemmCheck(t, c, nth, true, 10)
			}
		}
	})
}

// TestSgemmDeterministic: results do not depend on nth (each C element has one owner per k
// block and the k blocks are summed in order).
func TestSgemmDeterministic(t *testing.T) {
	r := newRand(30)
	m, n, k := 130, 70, 700
	a := randF32(r, m*k, -1, 1)
	b := randF32(r, n*k, -1, 1)
	var first []float32
	for _, nth := range []int{1, 2, 3, 4} {
		c := make([]float32, m*n)
		work := make([]float32, SgemmWorkSize(m, n, k, nth))
		runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
			Sgemm(ith, nth, barrier, counter, work, m, n, k, a, k, b, k, c, m)
		})
		if first == nil {
			first = c
			continue
		}
		for i := range c {
			if c[i] != first[i] {
				t.Fatalf("nth=%d differs from nth=1 at %d", nth, i)
			}
		}
	}
}

func TestSgemmPanics(t *testing.T) {
	a := make([]float32, 1024)
	for name, f := range map[string]func(){
		"short a":   func() { Sgemm(0, 1, nil, new(atomic.Int64), nil, 10, 1, 10, a[:90], 10, a, 10, a, 10) },
		"small lda": func() { Sgemm(0, 1, nil, new(atomic.Int64), nil, 2, 1, 10, a, 9, a, 10, a, 10) },
		"no work":   func() { Sgemm(0, 1, nil, new(atomic.Int64), nil, 16, 40, 16, a, 16, a, 16, a, 16) }, // a packed product
		"nth 0":     func() { Sgemm(0, 0, nil, new(atomic.Int64), nil, 1, 1, 1, a, 1, a, 1, a, 1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func ExampleSgemm() {
	// C (2 activation rows x 3 weight rows) = B (2x4) · Aᵀ (A is 3x4), with 2 workers.
	a := []float32{1, 0, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1}
	b := []float32{1, 2, 3, 4, 5, 6, 7, 8}
	c := make([]float32, 6)
	m, n, k, nth := 3, 2, 4, 2
	work := make([]float32, SgemmWorkSize(m, n, k, nth))
	var counter atomic.Int64 // 0 before the team starts
	bar := newTeamBarrier(nth)
	var wg sync.WaitGroup
	for ith := 0; ith < nth; ith++ {
		wg.Add(1)
		go func(ith int) {
			defer wg.Done()
			Sgemm(ith, nth, bar.wait, &counter, work, m, n, k, a, k, b, k, c, m)
		}(ith)
	}
	wg.Wait()
	fmt.Println(c)
	// Output: [1 2 10 5 6 26]
}

// TestSgemmWideFusedB: a wide product packs B in its tasks (ownFusedB): bit for bit what the
// team-packed schedule gives (the same tiles over the same k blocks), with less scratch and no
// barrier, for f32 and f16 weights, one to three workers, and every kernel width this CPU runs.
func TestSgemmWideFusedB(t *testing.T) {
	r := newRand(31)
	// three k blocks; two A sub-blocks, the second ending in a lone panel; 17 groups of B
	// panels, the last one short and ending in a partial panel
	m, n, k := 300, ownWideN+13, 1030
	if raceEnabled {
		m, k = 40, 100 // the race detector slows the Go tiles 20-fold; keep the team's claims
	}
	a := randF32(r, m*k, -1, 1)
	ah := make([]uint16, len(a))
	for i, v := range a {
		ah[i] = quant.FP32ToFP16(v)
	}
	b := randF32(r, n*k, -1, 1)
	for _, set := range []KernelSet{SetGeneric, SetAVX2, SetAVX512} {
		if set > DetectedKernelSet() {
			continue
		}
		withSet(set, func() { wideFusedBCheck(t, set, m, n, k, a, ah, b) })
	}
}

func wideFusedBCheck(t *testing.T, set KernelSet, m, n, k int, a []float32, ah []uint16, b []float32) {
	t.Helper()
	for _, f16 := range []bool{false, true} {
		for _, nth := range []int{1, 2, 3} {
			run := func(fuse bool) ([]float32, int64, int) {
				defer func(old bool) { ownFuseB = old }(ownFuseB)
				ownFuseB = fuse
				size := SgemmWorkSize(m, n, k, nth)
				work, c := make([]float32, size), make([]float32, m*n)
				var barriers atomic.Int64
				runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
					count := func() { barriers.Add(1); barrier() }
					if f16 {
						SgemmF16A(ith, nth, count, counter, work, m, n, k, ah, k, b, k, c, m)
					} else {
						Sgemm(ith, nth, count, counter, work, m, n, k, a, k, b, k, c, m)
					}
				})
				return c, barriers.Load(), size
			}
			fused, fb, fsize := run(true)
			team, _, tsize := run(false)
			for i := range fused {
				if math.Float32bits(fused[i]) != math.Float32bits(team[i]) {
					t.Fatalf("%v f16=%v nth=%d: C[%d] = %v fused, %v team-packed", set, f16, nth, i, fused[i], team[i])
				}
			}
			if fb != 0 {
				t.Errorf("%v f16=%v nth=%d: the fused schedule passed %d barriers, want 0", set, f16, nth, fb)
			}
			if fsize >= tsize {
				t.Errorf("%v f16=%v nth=%d: fused scratch %d floats, team-packed %d: want less", set, f16, nth, fsize, tsize)
			}
		}
	}
}
