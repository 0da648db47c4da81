package kern

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// withSet runs f with the kernels capped at s (never above what the CPU has).
func withSet(s KernelSet, f func()) {
	oldASM, oldAVXVNNI, old512, oldVNNI, oldBF16, oldGemm, oldPairs := useASM, useAVXVNNI, use512, useVNNI, useBF16, gemm512, gemmPairs
	useASM = oldASM && s >= SetAVX2
	useAVXVNNI = oldAVXVNNI && s >= SetAVXVNNI
	use512 = old512 && s >= SetAVX512
	useVNNI = oldVNNI && s >= SetAVX512VNNI
	useBF16 = oldBF16 && s >= SetAVX512BF16
	// The 512-bit SGEMM kernels run in tests on every AVX-512 CPU, wide or not.
	gemm512 = use512
	gemmPairs = useBF16 && gemm512
	defer func() {
		useASM, useAVXVNNI, use512, useVNNI, useBF16, gemm512, gemmPairs = oldASM, oldAVXVNNI, old512, oldVNNI, oldBF16, oldGemm, oldPairs
	}()
	f()
}

// supportedSets lists every kernel set this machine and build can run, narrowest first.
func supportedSets() []KernelSet { return SupportedKernelSets() }

func TestParseKernelSet(t *testing.T) {
	for in, want := range map[string]KernelSet{"generic": SetGeneric, "purego": SetGeneric, "AVX2": SetAVX2, " avx512 ": SetAVX512, "avx512vnni": SetAVX512VNNI, "AVXVNNI": SetAVXVNNI, "avx512bf16": SetAVX512BF16} {
		if got, err := ParseKernelSet(in); err != nil || got != want {
			t.Errorf("ParseKernelSet(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseKernelSet("sse9"); err == nil || !strings.Contains(err.Error(), `"sse9"`) {
		t.Errorf("unknown set: %v", err)
	}
	if ActiveKernelSet() > DetectedKernelSet() {
		t.Errorf("active set %v above the detected %v", ActiveKernelSet(), DetectedKernelSet())
	}
	// CI runs the package with every cap; the active set must honour it.
	if v := os.Getenv(KernelCapEnv); v != "" {
		want, err := ParseKernelSet(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", KernelCapEnv, v, err)
		}
		if got := ActiveKernelSet(); got != widestRunnable(min(want, DetectedKernelSet())) {
			t.Errorf("%s=%s but the active set is %v", KernelCapEnv, v, got)
		}
	}
}

// Every kernel set this CPU runs computes the same products; the AVX-512 micro-kernel does the
// FMAs of each element in the same order as the AVX2 one, so those two agree bit for bit. Every
// case has more activation rows than gemmDotN256, so the AVX2 sets pack too (below it they dot
// rows and add in another order).
func TestSgemmKernelSets(t *testing.T) {
	cases := []gemmCase{
		{64, 36, 40, 40, 40, 64},     // two panel pairs, six full B panels
		{96, 37, 300, 301, 300, 97},  // pairs, a partial B panel, two k blocks
		{48, 38, 17, 17, 17, 48},     // a pair and a lone panel
		{33, 39, 9, 9, 9, 33},        // a pair with a partial second panel
		{1040, 40, 33, 33, 33, 1040}, // a compute task boundary inside the rows (1024)
	}
	for _, c := range cases {
		if c.n <= gemmDotN256 {
			t.Fatalf("%+v: n within the AVX2 dot path", c)
		}
	}
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, c := range cases {
				for _, nth := range []int{1, 2} {
					gemmCheck(t, c, nth, false, uint64(c.m+c.n))
					gemmCheck(t, c, nth, true, uint64(c.m+c.k))
				}
			}
		})
	}
	if DetectedKernelSet() < SetAVX512 {
		t.Logf("this CPU has no AVX-512: the 512-bit kernels were not run")
		return
	}
	r := newRand(77)
	for _, c := range cases {
		a := randF32(r, c.m*c.lda, -1, 1)
		b := randF32(r, c.n*c.ldb, -1, 1)
		var out [2][]float32
		for i, s := range []KernelSet{SetAVX2, SetAVX512} {
			withSet(s, func() {
				out[i] = make([]float32, c.n*c.ldc)
				work := make([]float32, SgemmWorkSize(c.m, c.n, c.k, 2))
				runTeam(2, func(ith int, barrier func(), counter *atomic.Int64) {
					Sgemm(ith, 2, barrier, counter, work, c.m, c.n, c.k, a, c.lda, b, c.ldb, out[i], c.ldc)
				})
			})
		}
		// The sets block k differently (ownKC against gemmKC512), so sums are added in another
		// order once k exceeds one block of either: equal to float rounding, exactly below.
		if c.k <= ownKC {
			for i := range out[0] {
				if out[0][i] != out[1][i] {
					t.Fatalf("%+v: avx512 %v != avx2 %v at %d", c, out[1][i], out[0][i], i)
				}
			}
			continue
		}
		ref, got := make([]float64, len(out[0])), make([]float64, len(out[1]))
		for i := range out[0] {
			ref[i], got[i] = float64(out[0][i]), float64(out[1][i])
		}
		if e := nmse(ref, got); e > 1e-12 {
			t.Fatalf("%+v: avx512 vs avx2 NMSE %g > 1e-12", c, e)
		}
	}
}
