package cpu_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// fillRandom writes uniform [-1, 1) values into t (quantizing for quantized types).
func fillRandom(t testing.TB, x *core.Tensor, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 7))
	if x.Type.IsQuantized() && !x.Type.CanConvert() {
		fillRandomBlocks(t, x, r) // no quantizer: random valid blocks
		return
	}
	v := make([]float32, x.NElements())
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	if err := core.SetFloat32s(x, v); err != nil {
		t.Fatal(err)
	}
}

// nmse is ggml's normalized mean squared error Σ(a−b)²/Σb² with b the reference.
func nmse(a []float32, b []float64) float64 {
	var num, den float64
	for i := range a {
		d := float64(a[i]) - b[i]
		num += d * d
		den += b[i] * b[i]
	}
	if den == 0 {
		return num
	}
	return num / den
}

// refMulMat computes mul_mat in float64 from the values of a (dequantized) and b as read.
func refMulMat(a, b []float32, ane, bne [4]int64) []float64 {
	k := ane[0]
	m, n := ane[1], bne[1]
	r2, r3 := bne[2]/ane[2], bne[3]/ane[3]
	out := make([]float64, m*n*bne[2]*bne[3])
	for i3 := int64(0); i3 < bne[3]; i3++ {
		for i2 := int64(0); i2 < bne[2]; i2++ {
			for j := int64(0); j < n; j++ {
				for i := int64(0); i < m; i++ {
					arow := ((i3/r3*ane[2]+i2/r2)*ane[1] + i) * k
					brow := ((i3*bne[2]+i2)*bne[1] + j) * k
					var s float64
					for p := int64(0); p < k; p++ {
						s += float64(a[arow+p]) * float64(b[brow+p])
					}
					out[((i3*bne[2]+i2)*n+j)*m+i] = s
				}
			}
		}
	}
	return out
}

func TestMulMatTypesShapes(t *testing.T) {
	types := []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0}
	shapes := []struct{ k, m, n, a2, a3, b2, b3 int64 }{
		{64, 5, 7, 1, 1, 1, 1},
		{32, 17, 1, 1, 1, 1, 1},
		{96, 33, 19, 2, 1, 6, 1}, // GQA-style broadcast over dim 2
		{64, 3, 4, 1, 2, 3, 4},   // broadcast over dims 2 and 3
		{128, 65, 9, 1, 1, 1, 1},
	}
	for _, typ := range types {
		for _, s := range shapes {
			name := fmt.Sprintf("%v_k%d_m%d_n%d_b%dx%d", typ, s.k, s.m, s.n, s.b2, s.b3)
			t.Run(name, func(t *testing.T) {
				var first []float32
				for _, threads := range []int{1, 2, 3} {
					ctx := core.NewContext(core.ContextParams{MemSize: 16 << 20})
					a := ctx.NewTensor4D(typ, s.k, s.m, s.a2, s.a3)
					b := ctx.NewTensor4D(core.TypeF32, s.k, s.n, s.b2, s.b3)
					fillRandom(t, a, 1)
					fillRandom(t, b, 2)
					r := ctx.MulMat(a, b)
					g := core.NewGraph(core.DefaultGraphSize)
					g.BuildForwardExpand(r)
					if err := cpu.Compute(g, threads); err != nil {
						t.Fatal(err)
					}
					got := mustF32(t, r)
					av, bv := mustF32(t, a), mustF32(t, b)
					ref := refMulMat(av, bv, a.Ne, b.Ne)
					limit := 1e-10
					if typ != core.TypeF32 {
						limit = 5e-4 // activations are rounded to f16/bf16/q8 before the dot
					}
					if e := nmse(got, ref); e > limit {
						t.Fatalf("threads %d: NMSE %g > %g", threads, e, limit)
					}
					if first == nil {
						first = got
					} else {
						equalF32(t, "threads vs 1 thread", got, first)
					}
				}
			})
		}
	}
}

// A permuted, non-contiguous src1 (rows strided across dims) gives the same result as its copy.
func TestMulMatNonContiguousSrc1(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 16 << 20})
	a := ctx.NewTensor3D(core.TypeQ8_0, 64, 9, 2)
	b := ctx.NewTensor3D(core.TypeF32, 64, 2, 5) // permuted to [64, 5, 2]
	fillRandom(t, a, 3)
	fillRandom(t, b, 4)
	bp := ctx.Permute(b, 0, 2, 1, 3)
	r1 := ctx.MulMat(a, bp)
	r2 := ctx.MulMat(a, ctx.Cont(bp))
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(r1)
	if impl := ctx.Err(); impl != nil {
		t.Fatal(impl)
	}
	if err := cpu.Compute(g, 2); err != nil {
		t.Fatal(err)
	}
	bv := mustF32(t, bp)
	ref := refMulMat(mustF32(t, a), bv, a.Ne, bp.Ne)
	if e := nmse(mustF32(t, r1), ref); e > 5e-4 {
		t.Fatalf("NMSE %g", e)
	}
	g2 := core.NewGraph(core.DefaultGraphSize)
	g2.BuildForwardExpand(r2)
	if err := cpu.Compute(g2, 2); err != nil {
		t.Fatal(err)
	}
	equalF32(t, "permuted vs contiguous src1", mustF32(t, r1), mustF32(t, r2))
}

// chainGraph builds n tiny ADD nodes in a chain.
func chainGraph(n int) (*core.Graph, *core.Tensor) {
	ctx := core.NewContext(core.ContextParams{MemSize: int64(n+2) * (core.TensorOverhead + 64)})
	x := ctx.NewTensor1D(core.TypeF32, 4)
	one := ctx.NewTensor1D(core.TypeF32, 4)
	copy(one.Float32s(), []float32{1, 1, 1, 1})
	y := x
	for i := 0; i < n; i++ {
		y = ctx.Add(y, one)
	}
	g := core.NewGraph(n + 8)
	g.BuildForwardExpand(y)
	return g, y
}

func TestAbortStopsAndLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	g, y := chainGraph(200)
	var calls atomic.Int32
	be, err := cpu.New(cpu.Options{Threads: 3, Abort: func() bool { return calls.Add(1) >= 50 }})
	if err != nil {
		t.Fatal(err)
	}
	err = be.GraphCompute(g)
	if !errors.Is(err, cpu.ErrAborted) {
		t.Fatalf("want ErrAborted, got %v", err)
	}
	if got := y.Float32s()[0]; got != 0 {
		t.Fatalf("last node ran after abort: %v", got)
	}
	// The nodes before the abort did run: node 49's value is 50.
	if v := g.Node(49).Float32s()[0]; v != 50 {
		t.Fatalf("node 49 = %v, want 50", v)
	}
	// The backend still works after an abort, with another thread count.
	be.SetAbort(nil)
	if err := be.SetThreads(2); err != nil {
		t.Fatal(err)
	}
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	if got := y.Float32s()[0]; got != 200 {
		t.Fatalf("after re-run: %v, want 200", got)
	}
	be.Close()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Fatalf("%d goroutines after Close, %d before", n, before)
	}
}

func TestBadInputErrors(t *testing.T) {
	if _, err := cpu.New(cpu.Options{Threads: -1}); err == nil {
		t.Fatal("negative threads accepted")
	}
	// A tensor without memory is an error, not a crash.
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 4)
	g := core.NewGraph(8)
	g.BuildForwardExpand(ctx.Add(a, a))
	if err := cpu.Compute(g, 1); err == nil || !strings.Contains(err.Error(), "no host memory") {
		t.Fatalf("want no-host-memory error, got %v", err)
	}
	// A graph from a failed context returns the construction error.
	ctx = core.NewContext(core.ContextParams{MemSize: 1 << 20})
	r := ctx.MulMat(ctx.NewTensor2D(core.TypeF32, 4, 4), ctx.NewTensor2D(core.TypeF32, 5, 4))
	g = core.NewGraph(8)
	g.BuildForwardExpand(r)
	if err := cpu.Compute(g, 1); err == nil || !strings.Contains(err.Error(), "MUL_MAT") {
		t.Fatalf("want MUL_MAT error, got %v", err)
	}
}

func benchMulMat(b *testing.B, typ core.Type, m, n, k int64, threads int) {
	ctx := core.NewContext(core.ContextParams{MemSize: typ.RowSize(k)*m + 4*k*n + 4*m*n + 1<<20})
	a := ctx.NewTensor2D(typ, k, m)
	x := ctx.NewTensor2D(core.TypeF32, k, n)
	fillRandom(b, a, 1)
	fillRandom(b, x, 2)
	r := ctx.MulMat(a, x)
	g := core.NewGraph(8)
	g.BuildForwardExpand(r)
	be, err := cpu.New(cpu.Options{Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	if err := be.GraphCompute(g); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := be.GraphCompute(g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
}

// benchThreads is the worker counts the benchmarks compare: 1, 2, and on a machine with more
// cores 4, 8, ... up to all of them.
func benchThreads() []int {
	out := []int{1, 2}
	for th := 4; th < runtime.NumCPU(); th *= 2 {
		out = append(out, th)
	}
	if n := runtime.NumCPU(); n > 2 {
		out = append(out, n)
	}
	return out
}

func BenchmarkMulMat(b *testing.B) {
	for _, typ := range []core.Type{core.TypeF32, core.TypeQ4_0} {
		for _, s := range []struct{ m, n, k int64 }{{1024, 1024, 1024}, {4096, 1, 4096}} {
			for _, th := range benchThreads() {
				b.Run(fmt.Sprintf("%v/m%d_n%d_k%d/threads%d", typ, s.m, s.n, s.k, th), func(b *testing.B) {
					benchMulMat(b, typ, s.m, s.n, s.k, th)
				})
			}
		}
	}
}

// BenchmarkPoolOverhead measures the per-node cost of the pool on a 1000-node graph of tiny ADDs.
func BenchmarkPoolOverhead(b *testing.B) {
	for _, th := range benchThreads() {
		b.Run(fmt.Sprintf("threads%d", th), func(b *testing.B) {
			g, _ := chainGraph(1000)
			be, _ := cpu.New(cpu.Options{Threads: th})
			defer be.Close()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := be.GraphCompute(g); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000/1000, "µs/node")
		})
	}
}

// TestMulMatMoreWorkersThanOutputs: a product with fewer output columns than workers is cut into
// no empty chunk (found by FuzzGraph: a [2,1] product on four workers had chunks past the end,
// and the non-finite fix-up of quantized weights sliced one and panicked), on every route a
// one-row product of two weight rows takes.
func TestMulMatMoreWorkersThanOutputs(t *testing.T) {
	for _, typ := range []core.Type{core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ5_0, core.TypeQ8_0, core.TypeQ4_K, core.TypeQ6_K, core.TypeIQ4_NL} {
		be, err := cpu.New(cpu.Options{Threads: 4})
		if err != nil {
			t.Fatal(err)
		}
		const k = 256
		ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
		a := ctx.NewTensor2D(typ, k, 2)
		b := ctx.NewTensor2D(core.TypeF32, k, 1)
		y := ctx.MulMat(a, b)
		w, x := make([]float32, 2*k), make([]float32, k)
		for i := range w {
			w[i] = float32(i/k*2 - 1) // row 0 all -1, row 1 all +1: exact in every type
		}
		for i := range x {
			x[i] = 1
		}
		if err := core.SetFloat32s(a, w); err != nil {
			t.Fatal(err)
		}
		if err := core.SetFloat32s(b, x); err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(y)
		if err := be.GraphCompute(g); err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		got, err := core.GetFloat32s(y)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(float64(got[0]+k)) > 1e-3*k || math.Abs(float64(got[1]-k)) > 1e-3*k {
			t.Fatalf("%v: %v, want [%d %d]", typ, got, -k, k)
		}
		be.Close()
	}
}
