package kern

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"testing"
)

// BenchmarkKQuantTile: MUL_MAT of m=4096 weight rows of k=14336 K-quant/IQ4 weights against n=1
// (mat-vec) and n=512 activation rows, on 2 threads, beside the f32 mat-vec (weight GB/s is
// the figure to compare at n=1, GFLOPS at n=512). "tile" is the KTile path, "dot" one row dot
// per pair (the path before the tile kernels), e.g.
//
//	flock /tmp/tandem-bench.lock go test -run '^$' -bench 'KQuantTile/.*/tile' -benchtime 3x .
func BenchmarkKQuantTile(b *testing.B) {
	m, k := 4096, 14336
	if testing.Short() {
		m, k = 256, 1024
	}
	const nth = 2
	r := newRand(7)
	wf := randF32(r, m*k, -1, 1)
	xf := randF32(r, k, -1, 1)
	cf := make([]float32, m)
	b.Run("f32/n1/th2", func(b *testing.B) {
		for b.Loop() {
			runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
				for {
					t := int(counter.Add(1) - 1)
					if t*64 >= m {
						return
					}
					for i := t * 64; i < min(m, t*64+64); i++ {
						cf[i] = DotF32(wf[i*k:(i+1)*k], xf)
					}
				}
			})
		}
		reportGFLOPS(b, 2*float64(m)*float64(k))
		reportGBs(b, 4*float64(m)*float64(k))
	})
	wf = nil
	for _, c := range kqCases {
		xs := k / c.qk * c.bs
		x := make([]byte, m*xs)
		for i := range x {
			x[i] = byte(r.Uint32())
		}
		kqBenchScales(c.name, x)
		ys := k / c.qk * c.actBs
		if c.qk == 32 {
			ys = k / 32 * c.actBs
		}
		for _, n := range []int{1, 512} {
			y := make([]byte, n*ys)
			for j := range n {
				c.actQuant(randF32(r, k, -1, 1), y[j*ys:(j+1)*ys])
			}
			out := make([]float32, m*n)
			tile := kqTiles[c.name]
			for _, path := range []string{"tile", "dot"} {
				b.Run(fmt.Sprintf("%s/n%d/%s/th2", c.name, n, path), func(b *testing.B) {
					const bm, bn = 64, 64
					mt, nt := (m+bm-1)/bm, (n+bn-1)/bn
					for b.Loop() {
						runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
							for {
								t := int(counter.Add(1) - 1)
								if t >= mt*nt {
									return
								}
								i0, j0 := t/nt*bm, t%nt*bn
								i1, j1 := min(m, i0+bm), min(n, j0+bn)
								if path == "tile" {
									tile(k, x[i0*xs:], xs, i1-i0, y[j0*ys:], ys, j1-j0, out[j0*m+i0:], m)
									continue
								}
								for j := j0; j < j1; j++ {
									for i := i0; i < i1; i++ {
										out[j*m+i] = c.fast(k, x[i*xs:(i+1)*xs], y[j*ys:(j+1)*ys])
									}
								}
							}
						})
					}
					reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k))
					reportGBs(b, float64(len(x)))
				})
			}
		}
	}
}

// kqBenchScales gives the random weight blocks of type name sane f16 scales.
func kqBenchScales(name string, x []byte) {
	put := func(bs int, offs ...int) {
		for b := 0; b+bs <= len(x); b += bs {
			for _, o := range offs {
				binary.LittleEndian.PutUint16(x[b+o:], 0x2c00)
			}
		}
	}
	switch name {
	case "q4_K":
		put(blockQ4_K, 0, 2)
	case "q5_K":
		put(blockQ5_K, 0, 2)
	case "q6_K":
		put(blockQ6_K, 208)
	case "iq4_xs":
		put(blockIQ4XS, 0)
	case "iq4_nl":
		put(blockIQ4NL, 0)
	}
}
