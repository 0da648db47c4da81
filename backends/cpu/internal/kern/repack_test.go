package kern

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"testing"
)

var repackTypes = []RepackType{RepackQ4_0, RepackQ4_1, RepackQ8_0}

// rpDot is the qdots entry for the weight type's dot product.
func rpDot(rt RepackType) qdot {
	switch rt {
	case RepackQ4_0:
		return qdots[1]
	case RepackQ4_1:
		return qdots[2]
	}
	return qdots[0]
}

func TestRepackRoundTrip(t *testing.T) {
	r := newRand(3)
	one := func() uint16 { return 0x3c00 }
	for _, rt := range repackTypes {
		q := rpDot(rt)
		for _, m := range []int{1, 15, 16, 17, 33} {
			for _, k := range []int{32, 64, 96, 320} {
				nb := k / QK
				src := make([]byte, 0, m*nb*q.xs)
				for i := 0; i < m; i++ {
					src = append(src, q.genX(r, nb, one)...)
				}
				size := RepackedSize(rt, m, k)
				if want := (m + 15) / 16 * nb * map[RepackType]int{RepackQ4_0: 288, RepackQ4_1: 320, RepackQ8_0: 544}[rt]; size != want {
					t.Fatalf("%v m=%d k=%d: RepackedSize %d, want %d", rt, m, k, size, want)
				}
				dst := bytes.Repeat([]byte{0xa5}, size+3)[3:] // garbage, misaligned
				Repack(rt, dst, src, m, k)
				back := make([]byte, len(src))
				Unpack(rt, back, dst, m, k)
				if !bytes.Equal(back, src) {
					t.Fatalf("%v m=%d k=%d: Unpack(Repack(x)) != x", rt, m, k)
				}
				// Padding rows read back as zero rows.
				row := make([]byte, nb*q.xs)
				for i := m; i < (m+15)/16*16; i++ {
					UnpackRow(rt, dst, k, i, row)
					if !bytes.Equal(row, make([]byte, len(row))) {
						t.Fatalf("%v m=%d k=%d: padding row %d = %x", rt, m, k, i, row)
					}
				}
				// Row by row, in reverse order, into a fresh slice: the same bytes for real rows.
				fresh := make([]byte, size)
				Repack(rt, fresh, nil, 0, k) // no rows: nothing written
				for i := m - 1; i >= 0; i-- {
					RepackRow(rt, fresh, k, i, src[i*nb*q.xs:(i+1)*nb*q.xs])
				}
				for i := 0; i < m; i++ {
					UnpackRow(rt, fresh, k, i, row)
					if !bytes.Equal(row, src[i*nb*q.xs:(i+1)*nb*q.xs]) {
						t.Fatalf("%v m=%d k=%d: UnpackRow(RepackRow) row %d differs", rt, m, k, i)
					}
				}
			}
		}
	}
}

// TestRepackLayout checks hand-computed byte positions of the layout.
func TestRepackLayout(t *testing.T) {
	const m, k = 18, 64 // two groups, two blocks
	for _, rt := range repackTypes {
		q := rpDot(rt)
		f := rt.format("test")
		src := make([]byte, m*2*q.xs)
		// Row 17, block 1: d = 0x1234, (m = 0x5678), quant byte 5 = 0x9c, quant byte 9 = 0x3e.
		blk := src[17*2*q.xs+q.xs:]
		binary.LittleEndian.PutUint16(blk, 0x1234)
		qo := 2
		if rt == RepackQ4_1 {
			binary.LittleEndian.PutUint16(blk[2:], 0x5678)
			qo = 4
		}
		blk[qo+5], blk[qo+9] = 0x9c, 0x3e
		dst := make([]byte, RepackedSize(rt, m, k))
		Repack(rt, dst, src, m, k)
		sb := dst[1*2*f.super+1*f.super:] // group 1, block 1; row 17 is row 1 of the group
		if got := binary.LittleEndian.Uint16(sb[2:]); got != 0x1234 {
			t.Errorf("%v: d at 2 = %#x", rt, got)
		}
		hdr := 32
		if rt == RepackQ4_1 {
			hdr = 64
			if got := binary.LittleEndian.Uint16(sb[32+2:]); got != 0x5678 {
				t.Errorf("%v: m at 34 = %#x", rt, got)
			}
		}
		x := byte(0)
		if rt == RepackQ8_0 {
			x = 0x80
		}
		// qs[5] is byte 1 of chunk 1, qs[9] byte 1 of chunk 2; row 1 at offset 4.
		if got := sb[hdr+64+4+1]; got != 0x9c^x {
			t.Errorf("%v: qs[5] stored %#x", rt, got)
		}
		if got := sb[hdr+128+4+1]; got != 0x3e^x {
			t.Errorf("%v: qs[9] stored %#x", rt, got)
		}
		if got := sb[hdr+64+4]; got != x {
			t.Errorf("%v: zero quant stored %#x", rt, got)
		}
		// Padding row 31 of group 1: zero scale, zero quants.
		if got := binary.LittleEndian.Uint16(sb[30:]); got != 0 || sb[hdr+60] != x {
			t.Errorf("%v: padding row 31: d %#x, quant %#x", rt, got, sb[hdr+60])
		}
	}
}

type rpShape struct{ m, n, k, padB, padC int }

// TestGemmRepacked checks GemmRepacked on every kernel set this CPU runs against the exact
// per-pair results with TestQuantDots' bound, and for unit scales (all terms integers below
// 2^24) for equality.
func TestGemmRepacked(t *testing.T) {
	var shapes []rpShape
	for _, m := range []int{1, 15, 17, 33} {
		for _, n := range []int{1, 2, 7, 9, 17} {
			for _, k := range []int{32, 96, 320} {
				shapes = append(shapes, rpShape{m, n, k, n % 2 * 5, m % 3})
			}
		}
	}
	if raceEnabled {
		shapes = shapes[len(shapes)-8:]
	} else {
		shapes = append(shapes, rpShape{70, 40, 4096, 1, 0})
	}
	shapes = append(shapes, rpShape{3, 2, 0, 0, 0})
	defer func(a, b, c, d int) { rpTaskM, rpTaskN, rpMVecM, rpKC = a, b, c, d }(rpTaskM, rpTaskN, rpMVecM, rpKC)
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, ts := range [][4]int{{rpTaskM, rpTaskN, rpMVecM, rpKC}, {1, 1, 1, 3}} {
				rpTaskM, rpTaskN, rpMVecM, rpKC = ts[0], ts[1], ts[2], ts[3]
				for _, rt := range repackTypes {
					testGemmRepacked(t, s, rt, shapes)
				}
			}
		})
	}
}

func testGemmRepacked(t *testing.T, set KernelSet, rt RepackType, shapes []rpShape) {
	r := newRand(uint64(rt) + 100)
	q := rpDot(rt)
	randScale := func() uint16 { return f32ToF16Go(float32(math.Ldexp(0.5+r.Float64(), r.IntN(12)-8))) }
	one := func() uint16 { return 0x3c00 }
	for si, s := range shapes {
		unit := si%3 == 0
		scale := randScale
		if unit {
			scale = one
		}
		nb := s.k / QK
		lda, ldb, ldc := nb*q.xs, nb*q.ys+s.padB, s.m+s.padC
		a := make([]byte, s.m*lda)
		for i := 0; i < s.m; i++ {
			copy(a[i*lda:], q.genX(r, nb, scale))
		}
		b := make([]byte, s.n*ldb+1)[1:] // misaligned
		for j := 0; j < s.n; j++ {
			copy(b[j*ldb:], q.genY(r, nb, scale))
		}
		if si%4 == 1 && s.n > 1 { // activation row 1 at the extremes: ±127
			qo := q.ys - QK
			for bl := 0; bl < nb; bl++ {
				for e := 0; e < QK; e++ {
					v := int8(127)
					if (e/4+bl)%2 == 1 {
						v = -127
					}
					b[ldb+bl*q.ys+qo+e] = byte(v)
				}
			}
		}
		ra := make([]byte, RepackedSize(rt, s.m, s.k)+5)[5:]
		Repack(rt, ra, a, s.m, s.k)
		for _, nth := range []int{1, 2} {
			c := make([]float32, s.n*ldc)
			for i := range c {
				c[i] = float32(math.NaN())
			}
			for j := 0; j < s.n; j++ {
				for i := s.m; i < ldc; i++ {
					c[j*ldc+i] = 777
				}
			}
			work := make([]float32, GemmRepackedWorkSize(rt, s.m, s.n, s.k, nth)+1)[1:]
			for i := range work {
				work[i] = float32(math.NaN())
			}
			runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
				GemmRepacked(rt, ith, nth, barrier, counter, work, s.m, s.n, s.k, ra, b, ldb, c, ldc)
			})
			for j := 0; j < s.n; j++ {
				for i := 0; i < ldc; i++ {
					got := c[j*ldc+i]
					if i >= s.m {
						if got != 777 {
							t.Fatalf("%v %v %+v: padding of C overwritten", set, rt, s)
						}
						continue
					}
					x, y := a[i*lda:(i+1)*lda], b[j*ldb:j*ldb+nb*q.ys]
					exact, abs := q.terms(nb, x, y)
					bound := float64(nb+4) * 0x1p-24 * abs
					if unit {
						bound = 0
					}
					if !(math.Abs(float64(got)-exact) <= bound) {
						t.Fatalf("%v %v %+v nth=%d: c[%d][%d] = %v, exact %v (bound %g)", set, rt, s, nth, j, i, got, exact, bound)
					}
				}
			}
		}
	}
}

// BenchmarkGemmRepacked: the MUL_MAT shapes of the quantized targets (m=4096 weight rows,
// k=14336; n=512 activation rows and the mat-vec n=1) on repacked weights. GB/s counts the
// weight bytes (the mat-vec is a stream of them).
func BenchmarkGemmRepacked(b *testing.B) {
	m, k := 4096, 14336
	if testing.Short() {
		m, k = 256, 1024
	}
	if v := os.Getenv("KERN_RPTASK"); v != "" { // tuning hook: KERN_RPTASK=4x8x64 (groups x tiles x blocks)
		defer func(a, b, c int) { rpTaskM, rpTaskN, rpKC = a, b, c }(rpTaskM, rpTaskN, rpKC)
		fmt.Sscanf(v, "%dx%dx%d", &rpTaskM, &rpTaskN, &rpKC)
	}
	nb := k / QK
	r := newRand(5)
	sc := func() uint16 { return 0x2c00 }
	// The f32 mat-vec baseline the quantized mat-vec is measured against (weight GB/s): one
	// DotF32 per weight row, rows claimed by the workers in tasks of 64.
	wf := randF32(r, m*k, -1, 1)
	xf := randF32(r, k, -1, 1)
	cf := make([]float32, m)
	for _, nth := range []int{1, 2} {
		b.Run(fmt.Sprintf("f32/n1/th%d", nth), func(b *testing.B) {
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
	}
	for _, n := range []int{512, 1} {
		for _, rt := range repackTypes {
			q := rpDot(rt)
			a := make([]byte, 0, m*nb*q.xs)
			for i := 0; i < m; i++ {
				a = append(a, q.genX(r, nb, sc)...)
			}
			ra := make([]byte, RepackedSize(rt, m, k)) // large: page-aligned
			Repack(rt, ra, a, m, k)
			y := make([]byte, 0, n*nb*q.ys)
			for j := 0; j < n; j++ {
				y = append(y, q.genY(r, nb, sc)...)
			}
			c := make([]float32, m*n)
			for _, nth := range []int{1, 2} {
				b.Run(fmt.Sprintf("%v/n%d/th%d", rt, n, nth), func(b *testing.B) {
					work := make([]float32, GemmRepackedWorkSize(rt, m, n, k, nth))
					for b.Loop() {
						runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
							GemmRepacked(rt, ith, nth, barrier, counter, work, m, n, k, ra, y, nb*q.ys, c, m)
						})
					}
					reportGFLOPS(b, 2*float64(m)*float64(n)*float64(k))
					reportGBs(b, float64(len(ra)))
				})
			}
		}
	}
}

// RepackGroups (the assembly group repacker where the kernel set has it) writes the same bytes as
// RepackRow row by row, for groups starting past the first and a slice with a partial last group.
func TestRepackGroupsMatchesRows(t *testing.T) {
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, rt := range repackTypes {
				q := rpDot(rt)
				r := newRand(uint64(rt) + 40)
				m, k := 53, 96
				nb := k / QK
				lda := nb * q.xs
				std := make([]byte, m*lda)
				for i := 0; i < m; i++ {
					copy(std[i*lda:], q.genX(r, nb, func() uint16 { return f32ToF16Go(float32(r.Float64() + 0.1)) }))
				}
				size := RepackedSize(rt, m, k)
				want, got := make([]byte, size), make([]byte, size)
				for i := 0; i < m; i++ {
					RepackRow(rt, want, k, i, std[i*lda:(i+1)*lda])
					if i >= 3*RepackRows { // the partial last group goes row by row in both
						RepackRow(rt, got, k, i, std[i*lda:(i+1)*lda])
					}
				}
				RepackGroups(rt, got, k, 0, 1, std)
				RepackGroups(rt, got, k, RepackRows, 2, std[RepackRows*lda:])
				if !bytes.Equal(got, want) {
					t.Fatalf("%v %v: RepackGroups differs from RepackRow", s, rt)
				}
			}
		})
	}
}

// TestRepackIntegerExtremes: the micro-kernels sum a block's products in int16 lanes before
// widening them (16 products per lane for Q4_0/Q4_1); weight rows of all-maximal and all-minimal
// quants against activations of all +127 and all -127 reach the largest sums those lanes hold,
// and every kernel set must give the row dot's result (a saturated or wrapped lane is off by
// thousands), for the mat-vec (one activation row) and the GEMM (eight).
func TestRepackIntegerExtremes(t *testing.T) {
	const m, nb = 16, 3
	k := nb * QK
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, rt := range repackTypes {
				q := rpDot(rt)
				qx, qy := q.xs-QK/2, q.ys-QK // quant offsets in the blocks
				if rt == RepackQ8_0 {
					qx = 2
				}
				a := make([]byte, m*nb*q.xs)
				for i := 0; i < m; i++ {
					for bl := 0; bl < nb; bl++ {
						blk := a[(i*nb+bl)*q.xs : (i*nb+bl+1)*q.xs]
						blk[0], blk[1] = 0x00, 0x3c // d = 1 (a Q4_1 min stays 0)
						for e := qx; e < q.xs; e++ {
							switch {
							case i%2 == 0 && rt == RepackQ8_0:
								blk[e] = 127
							case i%2 == 0:
								blk[e] = 0xff // nibbles 15
							case rt == RepackQ8_0:
								blk[e] = 0x81 // -127
							default:
								blk[e] = 0 // nibbles 0: Q4_0's -8
							}
						}
					}
				}
				for _, n := range []int{1, 8} {
					b := make([]byte, n*nb*q.ys)
					for j := 0; j < n; j++ {
						for bl := 0; bl < nb; bl++ {
							blk := b[(j*nb+bl)*q.ys : (j*nb+bl+1)*q.ys]
							blk[0], blk[1] = 0x00, 0x3c
							v := byte(127)
							if j%2 == 1 {
								v = 0x81
							}
							for e := qy; e < q.ys; e++ {
								blk[e] = v
							}
							if rt == RepackQ4_1 { // Q8_1's s = d·Σq
								s := f32ToF16Go(float32(int8(v)) * QK)
								blk[2], blk[3] = byte(s), byte(s>>8)
							}
						}
					}
					ra := make([]byte, RepackedSize(rt, m, k))
					Repack(rt, ra, a, m, k)
					c := make([]float32, n*m)
					w := make([]float32, GemmRepackedWorkSize(rt, m, n, k, 1))
					GemmRepacked(rt, 0, 1, nil, new(atomic.Int64), w, m, n, k, ra, b, nb*q.ys, c, m)
					for j := 0; j < n; j++ {
						for i := 0; i < m; i++ {
							want := q.fast(k, a[i*nb*q.xs:], b[j*nb*q.ys:])
							if got := c[j*m+i]; math.Abs(float64(got-want)) > 1e-6*math.Abs(float64(want)) {
								t.Fatalf("%v %v n=%d: C[%d][%d] = %v, row dot %v", s, rt, n, j, i, got, want)
							}
						}
					}
				}
			}
		})
	}
}
