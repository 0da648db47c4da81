package kern

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/tandem-ml/tandem/core"
)

// Benchmarks report GFLOPS (2 flops per multiply-add) or GB/s of operand bytes read.
// Keep runs short on the shared 2-core machine, e.g.
//
//	go test -run '^$' -bench 'Sgemm|Gonum' -benchtime 3x ./backends/cpu/internal/kern

var sinkF32 float32

func reportGFLOPS(b *testing.B, flopsPerOp float64) {
	b.ReportMetric(flopsPerOp*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
}

func reportGBs(b *testing.B, bytesPerOp float64) {
	b.ReportMetric(bytesPerOp*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}

func benchImpls(b *testing.B, f func(b *testing.B)) {
	b.Run("asm", func(b *testing.B) {
		if !useASM {
			b.Skip("no asm kernels")
		}
		f(b)
	})
	b.Run("go", func(b *testing.B) { withASM(false, func() { f(b) }) })
}

func BenchmarkDotF32(b *testing.B) {
	r := newRand(1)
	x, y := randF32(r, 4096, -1, 1), randF32(r, 4096, -1, 1)
	benchImpls(b, func(b *testing.B) {
		for b.Loop() {
			sinkF32 += DotF32(x, y)
		}
		reportGFLOPS(b, 2*4096)
	})
}

func BenchmarkDotF16(b *testing.B) {
	x, y := make([]uint16, 4096), make([]uint16, 4096)
	for i := range x {
		x[i], y[i] = f32ToF16Go(float32(i%7)*0.1), f32ToF16Go(float32(i%5)*0.2)
	}
	benchImpls(b, func(b *testing.B) {
		for b.Loop() {
			sinkF32 += DotF16(x, y)
		}
		reportGFLOPS(b, 2*4096)
	})
}

func BenchmarkF16ToF32Row(b *testing.B) {
	for _, n := range []int{4096, 4 << 20} {
		src, dst := make([]uint16, n), make([]float32, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchImpls(b, func(b *testing.B) {
				for b.Loop() {
					F16ToF32Row(src, dst)
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
			})
		})
	}
}

func BenchmarkF32ToF16Row(b *testing.B) {
	src, dst := randF32(newRand(1), 4096, -10, 10), make([]uint16, 4096)
	benchImpls(b, func(b *testing.B) {
		for b.Loop() {
			F32ToF16Row(src, dst)
		}
		b.ReportMetric(4096*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
	})
}

func BenchmarkQuantizeRowQ8_0(b *testing.B) {
	x := randF32(newRand(1), 4096, -3, 3)
	dst := make([]byte, 4096/32*BlockQ8_0Size)
	benchImpls(b, func(b *testing.B) {
		for b.Loop() {
			QuantizeRowQ8_0(x, dst)
		}
		b.ReportMetric(4096*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
	})
}

func BenchmarkExpF32(b *testing.B) {
	x := randF32(newRand(1), 4096, -20, 20)
	dst := make([]float32, 4096)
	benchImpls(b, func(b *testing.B) {
		for b.Loop() {
			ExpF32(dst, x)
		}
		b.ReportMetric(4096*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
	})
}

// BenchmarkExpSumF32: soft_max's exp-and-sum over a flash-attention block (256) and a long row,
// per kernel set the machine runs.
func BenchmarkExpSumF32(b *testing.B) {
	for _, n := range []int{256, 4096} {
		x := randF32(newRand(1), n, -20, 0)
		dst := make([]float32, n)
		for _, set := range supportedSets() {
			b.Run(fmt.Sprintf("n%d/%v", n, set), func(b *testing.B) {
				withSet(set, func() {
					for b.Loop() {
						sinkF32 += ExpSumF32(dst, x, 0)
					}
				})
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
			})
		}
	}
}

// Quantized dots: one 4096-element row pair (in cache) and 16Mi elements (memory-bound),
// Gop/s counted as 2 per element, GB/s of both rows.
func BenchmarkQuantDot(b *testing.B) {
	r := newRand(2)
	for _, q := range qdots {
		for _, n := range []int{4096, 16 << 20} {
			nb := n / QK
			one := func() uint16 { return 0x2c00 }
			x, y := q.genX(r, nb, one), q.genY(r, nb, one)
			b.Run(fmt.Sprintf("%s/%d", q.name, n), func(b *testing.B) {
				benchImpls(b, func(b *testing.B) {
					for b.Loop() {
						sinkF32 += q.fast(n, x, y)
					}
					reportGFLOPS(b, 2*float64(n))
					reportGBs(b, float64(len(x)+len(y)))
				})
			})
		}
	}
}

// runSgemmTeam runs one Sgemm with nth goroutines.
func runSgemmTeam(nth int, work []float32, m, n, k int, a, bm, c []float32) {
	runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
		Sgemm(ith, nth, barrier, counter, work, m, n, k, a, k, bm, k, c, m)
	})
}

// hostF32 is a copy of x (or n zeros, for nil x) in host memory as the CPU backend's buffers
// and work hold it (core.NewHostBuffer: huge pages where Linux gives them), so that a product
// is timed on the memory it runs on in a graph; OpenBLAS's operands from numpy have huge pages
// too.
func hostF32(b *testing.B, x []float32, n int) []float32 {
	if n == 0 {
		return nil
	}
	buf, err := core.NewHostBuffer(nil, int64(n)*4)
	if err != nil {
		b.Fatal(err)
	}
	raw := buf.Bytes()
	// Safe: the buffer is 32-byte aligned and n*4 bytes long, and the float32 slice points into
	// it, which keeps it alive.
	f := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(raw))), n)
	copy(f, x)
	return f
}

func benchSgemm(b *testing.B, m, n, k, nth int) {
	r := newRand(3)
	a := hostF32(b, randF32(r, m*k, -1, 1), m*k)
	bm := hostF32(b, randF32(r, n*k, -1, 1), n*k)
	c := hostF32(b, nil, m*n)
	work := hostF32(b, nil, SgemmWorkSize(m, n, k, nth))
	for b.Loop() {
		runSgemmTeam(nth, work, m, n, k, a, bm, c)
	}
	reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k))
}

// BenchmarkSgemm: square GEMMs and the mat-vec shape (n = 1), 1 and 2 workers. KERN_OWN=kc,mb,nb
// tries another blocking for the 256-bit kernels.
func BenchmarkSgemm(b *testing.B) {
	defer setGemmKCFromEnv()()
	for _, s := range [][3]int{{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 1, 4096}} {
		for _, nth := range []int{1, 2} {
			b.Run(fmt.Sprintf("m%d_n%d_k%d/th%d", s[0], s[1], s[2], nth), func(b *testing.B) {
				benchSgemm(b, s[0], s[1], s[2], nth)
			})
		}
	}
}

// setGemmKCFromEnv is a tuning hook: KERN_OWN=kc,mb,nb sets gemmOwnA's blocking (ownKC, ownMB,
// ownNB) for a benchmark; the returned func restores it.
func setGemmKCFromEnv() func() {
	kc, mb, nb := ownKC, ownMB, ownNB
	if v := os.Getenv("KERN_OWN"); v != "" {
		var k, m, n int
		if _, err := fmt.Sscanf(v, "%d,%d,%d", &k, &m, &n); err == nil && k >= 8 && k%8 == 0 && m >= gemmNR && m%gemmNR == 0 && n >= gemmMR && n%gemmMR == 0 {
			ownKC, ownMB, ownNB = k, m, n
		}
	}
	return func() { ownKC, ownMB, ownNB = kc, mb, nb }
}

// BenchmarkSgemmF16A: f16 weights in f32 products (f32) and rounded to bf16 pairs where the CPU
// has them (bf16, SgemmF16ABF16).
func BenchmarkSgemmF16A(b *testing.B) {
	defer setGemmKCFromEnv()()
	// square, TinyLlama's FFN up and down over a 512-token prompt, and a mat-vec
	for _, s := range [][3]int{{2048, 2048, 2048}, {5632, 512, 2048}, {2048, 512, 5632}, {4096, 1, 4096}} {
		m, n, k := s[0], s[1], s[2]
		for _, nth := range []int{1, 2} {
			for _, prec := range []string{"f32", "bf16"} {
				gemm := SgemmF16A
				if prec == "bf16" {
					gemm = SgemmF16ABF16
				}
				b.Run(fmt.Sprintf("m%d_n%d_k%d/th%d/%s", m, n, k, nth, prec), func(b *testing.B) {
					r := newRand(4)
					a := make([]uint16, m*k)
					for i := range a {
						a[i] = f32ToF16Go(2*r.Float32() - 1)
					}
					bm := randF32(r, n*k, -1, 1)
					c := make([]float32, m*n)
					work := make([]float32, SgemmWorkSize(m, n, k, nth))
					for b.Loop() {
						runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
							gemm(ith, nth, barrier, counter, work, m, n, k, a, k, bm, k, c, m)
						})
					}
					reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k))
				})
			}
		}
	}
}

// BenchmarkGonumSgemm is the baseline: gonum's pure-Go blas32.Gemm on the same 1024³
// problem (C = B·Aᵀ), with GOMAXPROCS 1 and 2 (gonum parallelizes internally).
func BenchmarkGonumSgemm(b *testing.B) {
	const m, n, k = 1024, 1024, 1024
	r := newRand(3)
	a := blas32.General{Rows: m, Cols: k, Stride: k, Data: randF32(r, m*k, -1, 1)}
	bm := blas32.General{Rows: n, Cols: k, Stride: k, Data: randF32(r, n*k, -1, 1)}
	c := blas32.General{Rows: n, Cols: m, Stride: m, Data: make([]float32, m*n)}
	for _, procs := range []int{1, 2} {
		b.Run(fmt.Sprintf("m%d_n%d_k%d/procs%d", m, n, k, procs), func(b *testing.B) {
			old := runtime.GOMAXPROCS(procs)
			defer runtime.GOMAXPROCS(old)
			for b.Loop() {
				blas32.Gemm(blas.NoTrans, blas.Trans, 1, bm, a, 0, c)
			}
			reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k))
		})
	}
}

// BenchmarkGemmQuant: the MUL_MAT shapes of ggml's quantized targets (m=4096 weight rows,
// k=14336, n=512 activation rows, and the mat-vec n=1), Q4_0 and Q8_0 weights x Q8_0
// activations, with the tiled GEMM and, for comparison, the vec_dot path (one Dot call per
// output over ggml's 16x16 chunks, or per weight row for n=1).
func BenchmarkGemmQuant(b *testing.B) {
	const m, k = 4096, 14336
	if v := os.Getenv("KERN_QTASK"); v != "" { // tuning hook: KERN_QTASK=64x12
		fmt.Sscanf(v, "%dx%d", &qgemmTaskM, &qgemmTaskN)
	}
	nb := k / QK
	r := newRand(5)
	sc := func() uint16 { return 0x2c00 }
	for _, n := range []int{512, 1} {
		for _, q := range qdots[:2] {
			a := make([]byte, 0, m*nb*q.xs)
			for i := 0; i < m; i++ {
				a = append(a, q.genX(r, nb, sc)...)
			}
			y := make([]byte, 0, n*nb*BlockQ8_0Size)
			for j := 0; j < n; j++ {
				y = append(y, q.genY(r, nb, sc)...)
			}
			c := make([]float32, m*n)
			gemm := GemmQ8_0Q8_0
			if q.xs == BlockQ4_0Size {
				gemm = GemmQ4_0Q8_0
			}
			lda, ldb := nb*q.xs, nb*BlockQ8_0Size
			for _, nth := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/n%d/tiled/th%d", q.name, n, nth), func(b *testing.B) {
					work := make([]float32, QgemmWorkSize(m, n, k, nth))
					for b.Loop() {
						runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
							gemm(ith, nth, barrier, counter, work, m, n, k, a, lda, y, ldb, c, m)
						})
					}
					reportGFLOPS(b, 2*float64(m)*float64(n)*k)
					reportGBs(b, float64(len(a)+len(y)))
				})
				b.Run(fmt.Sprintf("%s/n%d/vecdot/th%d", q.name, n, nth), func(b *testing.B) {
					cs := min(16, n)
					for b.Loop() {
						runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
							nc0 := m / cs
							for {
								t := int(counter.Add(1) - 1)
								if t >= nc0*(n/cs) {
									return
								}
								i0, j0 := t%nc0*cs, t/nc0*cs
								for j := j0; j < j0+cs; j++ {
									for i := i0; i < i0+cs; i++ {
										c[j*m+i] = q.fast(k, a[i*lda:(i+1)*lda], y[j*ldb:(j+1)*ldb])
									}
								}
							}
						})
					}
					reportGFLOPS(b, 2*float64(m)*float64(n)*k)
					reportGBs(b, float64(len(a)+len(y)))
				})
			}
		}
	}
}
