package kern

import (
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/tandem-ml/tandem/core/quant"
)

// The float GEMM/mat-vec kernels per kernel set: every set this CPU runs computes the three
// entry points (f32, f16 and bf16 weights) on odd shapes, padded leading dimensions and both the
// packed path and the mat-vec path (n <= 3), with one and two workers.
func TestSgemmKindsPerSet(t *testing.T) {
	cases := []gemmCase{
		{37, 13, 71, 73, 75, 39},    // packed path, odd everything, padded lds
		{48, 12, 520, 521, 523, 50}, // two k blocks, full 12x32 tiles
		{29, 1, 133, 135, 133, 29},  // mat-vec, masked tails (133 = 2*64+5)
		{9, 3, 64, 64, 65, 10},      // mat-vec, n = 3, k a multiple of every vector width
		{5, 2, 31, 33, 31, 5},       // fewer than four rows per dot4 group
		{530, 19, 40, 41, 40, 531},  // two compute tasks along m (NC 512), odd panels at both ends
	}
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, c := range cases {
				for _, nth := range []int{1, 2} {
					for _, kind := range []gemmKind{gemmF32, gemmF16, gemmBF16, gemmF16BF16} {
						t.Run(fmt.Sprintf("%v/%+v/nth%d/kind%d", s, c, nth, kind), func(t *testing.T) {
							gemmCheckKind(t, c, nth, kind, uint64(c.m*1000+c.k))
						})
					}
				}
			}
		})
	}
}

func TestSgemmBF16Shapes(t *testing.T) {
	dims := []int{1, 4, 7, 17, 40}
	for _, nth := range []int{1, 2} {
		for _, m := range dims {
			for _, n := range dims {
				// 1031: three k blocks on the bf16 pair path, the last one odd.
				for _, k := range []int{1, 8, 33, 300, 1031} {
					for _, kind := range []gemmKind{gemmBF16, gemmF16BF16} {
						gemmCheckKind(t, gemmCase{m, n, k, k + 3, k + 1, m + 2}, nth, kind, uint64(m*10000+n*100+k))
					}
				}
			}
		}
	}
}

// TestSgemmF16ABF16: on the pair path SgemmF16ABF16 is bit for bit SgemmBF16 on the operands
// rounded to bf16 beforehand (f16 weights widened exactly, then both rounded to nearest even;
// halves that round up a binade, f16 subnormals, infinities and NaN included); elsewhere (n <= 3,
// or a set without the pair path) bit for bit SgemmF16A.
func TestSgemmF16ABF16(t *testing.T) {
	special := []uint16{0x3c01, 0x3c08, 0x3c18, 0x3fff, 0x0001, 0x03ff, 0x8005, 0x7bff, 0xfbff, 0x7c00, 0xfe00}
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, c := range []gemmCase{{37, 13, 71, 73, 75, 39}, {48, 12, 1031, 1031, 1033, 50}, {530, 19, 40, 41, 40, 531}, {20, 3, 50, 50, 50, 20}} {
				r := newRand(uint64(c.m + c.k))
				m, n, k := c.m, c.n, c.k
				ah := make([]uint16, (m-1)*c.lda+k)
				for i := range ah {
					ah[i] = f32ToF16Go(float32(r.Float64()*2 - 1))
					if i%7 == 3 {
						ah[i] = special[(i/7)%len(special)]
					}
				}
				b := randF32(r, (n-1)*c.ldb+k, -1, 1)
				b[1] = 0x1p-130 // a float32 subnormal activation
				got := make([]float32, (n-1)*c.ldc+m)
				want := make([]float32, len(got))
				pairs := gemmPairs && n > gemmSmallN
				ab, bb := make([]uint16, len(ah)), make([]uint16, len(b))
				for i, h := range ah {
					ab[i] = quant.FP32ToBF16(f16ToF32Go(h))
				}
				for i, f := range b {
					bb[i] = quant.FP32ToBF16(f)
				}
				for _, nth := range []int{1, 2} {
					work := make([]float32, SgemmWorkSize(m, n, k, nth))
					runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
						SgemmF16ABF16(ith, nth, barrier, counter, work, m, n, k, ah, c.lda, b, c.ldb, got, c.ldc)
					})
					runTeam(nth, func(ith int, barrier func(), counter *atomic.Int64) {
						if pairs {
							SgemmBF16(ith, nth, barrier, counter, work, m, n, k, ab, c.lda, bb, c.ldb, want, c.ldc)
						} else {
							SgemmF16A(ith, nth, barrier, counter, work, m, n, k, ah, c.lda, b, c.ldb, want, c.ldc)
						}
					})
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%v %+v nth=%d pairs=%v: C[%d] = %g, want %g", s, c, nth, pairs, i, got[i], want[i])
						}
					}
				}
			}
		})
	}
}

// TestDot1F16PerSet: the one-row f16 mat-vec kernel against its pure-Go twin and a float64
// reference for every tail of its 64- and 16-element steps (32 and 8 on the AVX2 sets), on
// slices 1 element past a 64-byte boundary; and the mat-vec it serves (gemmDot1's tasks) on more
// rows than one task.
func TestDot1F16PerSet(t *testing.T) {
	dot1Check(t, gemmF16, f32ToF16Go, f16ToF32Go, dot1F16, dotF16F32Go)
}

// TestDot1F32PerSet: the same for the one-row f32 kernel (hasDot1F32; 32-element steps).
func TestDot1F32PerSet(t *testing.T) {
	id := func(x float32) float32 { return x }
	dot1Check(t, gemmF32, id, id, dot1F32, dotF32Go)
}

// dot1Check runs a one-row dot (weights of type W, f32 activations) against its twin and a
// float64 reference on every kernel set, for every step tail, then the mat-vec through gemmDot1.
func dot1Check[W uint16 | float32](t *testing.T, kind gemmKind, toW func(float32) W, fromW func(W) float32, dot, twin func([]W, []float32) float32) {
	t.Helper()
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, k := range []int{1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 80, 96, 127, 128, 129, 1001, 2048} {
				r := newRand(uint64(k) + 7)
				af := randF32(r, 1+k, -1, 1)[1:]
				x := randF32(r, 1+k, -1, 1)[1:]
				a := make([]W, k)
				var ref, mag float64
				for i := range a {
					a[i] = toW(af[i])
					p := float64(fromW(a[i])) * float64(x[i])
					ref, mag = ref+p, mag+math.Abs(p)
				}
				got, tw := dot(a, x), twin(a, x)
				tol := 1e-6*mag + 1e-30
				if math.Abs(float64(got)-ref) > tol || math.Abs(float64(got)-float64(tw)) > 2*tol {
					t.Fatalf("%v k=%d: got %g, twin %g, reference %g", s, k, got, tw, ref)
				}
			}
			for _, nth := range []int{1, 2} {
				gemmCheckKind(t, gemmCase{1500, 1, 700, 703, 700, 1500}, nth, kind, 99)
			}
		})
	}
}

// TestDot1BF16PerSet: the one-row bf16 dot (the bf16 mat-vec's kernel where hasDot1BF16)
// against its pure-Go twin and a float64 reference for every tail of its 64- and 32-element
// steps, on slices 1 and 16 elements (32 bytes, as GGUF data lies) past a 64-byte boundary; and
// the bf16 mat-vec through gemmDot1's tasks on more rows than one task.
func TestDot1BF16PerSet(t *testing.T) {
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, skew := range []int{1, 16} {
				for _, k := range []int{1, 31, 32, 33, 63, 64, 65, 96, 127, 128, 129, 1001, 2048} {
					r := newRand(uint64(k*100 + skew))
					a := toBF16(randF32(r, skew+k, -1, 1))[skew:]
					x := toBF16(randF32(r, skew+k, -1, 1))[skew:]
					var ref, mag float64
					for i := range a {
						p := float64(bf16ToF32(a[i])) * float64(bf16ToF32(x[i]))
						ref, mag = ref+p, mag+math.Abs(p)
					}
					got, twin := dot1BF16(a, x), dotBF16Go(a, x)
					tol := 1e-6*mag + 1e-30
					if math.Abs(float64(got)-ref) > tol || math.Abs(float64(got)-float64(twin)) > 2*tol {
						t.Fatalf("%v skew %d k=%d: got %g, twin %g, reference %g", s, skew, k, got, twin, ref)
					}
				}
			}
			for _, nth := range []int{1, 2} {
				gemmCheckKind(t, gemmCase{1500, 1, 700, 703, 700, 1500}, nth, gemmBF16, 98)
			}
		})
	}
}

// TestDot4PerSet: the four-row mat-vec kernels against their pure-Go twins and a float64
// reference, for every k tail length, on slices that start 1 element past a 64-byte boundary.
func TestDot4PerSet(t *testing.T) {
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, k := range []int{1, 2, 15, 16, 17, 31, 32, 33, 63, 64, 65, 96, 127, 130, 1001} {
				r := newRand(uint64(k))
				lda := k + 5
				af := randF32(r, 1+4*lda, -1, 1)[1:]
				x := randF32(r, 1+k, -1, 1)[1:]
				ah := make([]uint16, len(af))
				ab := toBF16(append([]float32(nil), af...))
				xb := toBF16(append([]float32(nil), x...))
				for i := range af {
					ah[i] = f32ToF16Go(af[i])
				}
				for _, kind := range []gemmKind{gemmF32, gemmF16, gemmBF16, gemmF16BF16} {
					var got, twin [4]float32
					var src aSource
					switch kind {
					case gemmF32:
						src = aSource{f32: af, lda: lda}
						dot4(src, 0, k, x, &got)
						dot4Go(src, 0, k, x, &twin)
					case gemmF16:
						src = aSource{f16: ah, lda: lda}
						dot4(src, 0, k, x, &got)
						dot4Go(src, 0, k, x, &twin)
					case gemmBF16:
						src = aSource{bf16: ab, lda: lda}
						dot4BF16(src, 0, k, xb, &got)
						dot4BF16Go(src, 0, k, xb, &twin)
					}
					for row := 0; row < 4; row++ {
						var ref, mag float64
						for p := 0; p < k; p++ {
							var av, xv float64
							switch kind {
							case gemmF32:
								av, xv = float64(af[row*lda+p]), float64(x[p])
							case gemmF16:
								av, xv = float64(f16ToF32Go(ah[row*lda+p])), float64(x[p])
							case gemmBF16:
								av, xv = float64(bf16ToF32(ab[row*lda+p])), float64(bf16ToF32(xb[p]))
							}
							ref += av * xv
							mag += math.Abs(av * xv)
						}
						tol := 1e-6*mag + 1e-30
						if d := math.Abs(float64(got[row]) - ref); d > tol {
							t.Fatalf("%v k=%d kind=%d row %d: got %g, reference %g", s, k, kind, row, got[row], ref)
						}
						if d := math.Abs(float64(got[row]) - float64(twin[row])); d > 2*tol {
							t.Fatalf("%v k=%d kind=%d row %d: got %g, twin %g", s, k, kind, row, got[row], twin[row])
						}
					}
				}
			}
		})
	}
}

// vdpbf16Model is a bit-exact model of dotBF16AVX512BF16: two accumulators of 16 lanes; lane i
// of a 32-element chunk adds the odd product, rounds to f32, then the even product (VDPBF16PS),
// with bf16 subnormal inputs and subnormal results flushed to zero; 64-element chunks use both
// accumulators, a remaining full 32-element chunk the first, the masked tail the second; then
// the reduction tree of the assembly.
func vdpbf16Model(x, y []uint16) float32 {
	var acc [2][16]float32
	daz := func(h uint16) float32 {
		if h&0x7f80 == 0 {
			return 0
		}
		return bf16ToF32(h)
	}
	ftz := func(f float32) float32 {
		if math.Abs(float64(f)) < 0x1p-126 {
			return 0
		}
		return f
	}
	chunk := func(a *[16]float32, x, y []uint16) {
		for i := 0; i < 16; i++ {
			var xe, xo, ye, yo uint16
			if 2*i < len(x) {
				xe, ye = x[2*i], y[2*i]
			}
			if 2*i+1 < len(x) {
				xo, yo = x[2*i+1], y[2*i+1]
			}
			po := daz(xo) * daz(yo) // exact in float32
			pe := daz(xe) * daz(ye)
			s := ftz(a[i] + po)
			a[i] = ftz(s + pe)
		}
	}
	n := len(x)
	p := 0
	for ; p+64 <= n; p += 64 {
		chunk(&acc[0], x[p:p+32], y[p:p+32])
		chunk(&acc[1], x[p+32:p+64], y[p+32:p+64])
	}
	if p+32 <= n {
		chunk(&acc[0], x[p:p+32], y[p:p+32])
		p += 32
	}
	if p < n {
		chunk(&acc[1], x[p:], y[p:])
	}
	var z [16]float32
	for i := range z {
		z[i] = acc[0][i] + acc[1][i]
	}
	var h [8]float32
	for i := range h {
		h[i] = z[i] + z[i+8]
	}
	q := [4]float32{h[0] + h[4], h[1] + h[5], h[2] + h[6], h[3] + h[7]}
	a0, a1 := q[0]+q[2], q[1]+q[3]
	return a0 + a1
}

// TestDotBF16VDPBF16PS: with AVX-512 BF16, DotBF16 is the VDPBF16PS kernel and matches the

// TestDot4x3PerSet: the three-activation-row dot (f32 and f16 weights) on every kernel set, against
// a float64 reference and its pure-Go twin, for k below, at and across the 8-element steps and
// misaligned, padded rows; the kernel must also leave out what is past the three rows.
func TestDot4x3PerSet(t *testing.T) {
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, k := range []int{1, 7, 8, 9, 16, 17, 33, 64, 130, 1001} {
				r := newRand(uint64(k) + 77)
				lda, ldx := k+5, k+3
				af := randF32(r, 1+4*lda, -1, 1)[1:]
				x := randF32(r, 1+3*ldx, -1, 1)[1:]
				ah := make([]uint16, len(af))
				for i := range af {
					ah[i] = f32ToF16Go(af[i])
				}
				for _, f16 := range []bool{false, true} {
					src := aSource{f32: af, lda: lda}
					if f16 {
						src = aSource{f16: ah, lda: lda}
					}
					var got, twin [12]float32
					dot4x3(src, 0, k, x[:2*ldx+k], ldx, &got)
					dot4x3Go(src, 0, k, x, ldx, &twin)
					for j := 0; j < 3; j++ {
						for row := 0; row < 4; row++ {
							var ref, mag float64
							for p := 0; p < k; p++ {
								av := float64(af[row*lda+p])
								if f16 {
									av = float64(f16ToF32Go(ah[row*lda+p]))
								}
								ref += av * float64(x[j*ldx+p])
								mag += math.Abs(av * float64(x[j*ldx+p]))
							}
							tol := 1e-6*mag + 1e-30
							g := float64(got[4*j+row])
							if d := math.Abs(g - ref); d > tol {
								t.Fatalf("%v k=%d f16=%v row %d x %d: got %g, reference %g", s, k, f16, row, j, g, ref)
							}
							if d := math.Abs(g - float64(twin[4*j+row])); d > 2*tol {
								t.Fatalf("%v k=%d f16=%v row %d x %d: got %g, twin %g", s, k, f16, row, j, g, twin[4*j+row])
							}
						}
					}
				}
			}
		})
	}
}

// bit-exact model (including lengths with every kind of tail and misaligned starts).
func TestDotBF16VDPBF16PS(t *testing.T) {
	if !useBF16 {
		t.Skip("no AVX-512 BF16 kernels on this CPU/build")
	}
	r := newRand(77)
	for _, n := range []int{1, 2, 3, 31, 32, 33, 63, 64, 65, 95, 96, 97, 128, 1000, 4099} {
		xf := randF32(r, n+1, -2, 2)
		yf := randF32(r, n+1, -2, 2)
		x, y := toBF16(xf)[1:], toBF16(yf)[1:]
		got, want := DotBF16(x, y), vdpbf16Model(x, y)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("n=%d: DotBF16 %g, model %g", n, got, want)
		}
		// And against the float64 reference.
		var ref, mag float64
		for i := range x {
			p := float64(bf16ToF32(x[i])) * float64(bf16ToF32(y[i]))
			ref += p
			mag += math.Abs(p)
		}
		if math.Abs(float64(got)-ref) > 1e-6*mag {
			t.Fatalf("n=%d: DotBF16 %g, reference %g", n, got, ref)
		}
	}
	// Subnormal bf16 inputs count as zero, as VDPBF16PS defines.
	x := []uint16{0x0001, 0x3f80}
	y := []uint16{0x3f80, 0x0040}
	if got := DotBF16(x, y); got != 0 {
		t.Fatalf("subnormal inputs: got %g, want 0", got)
	}
}

// TestF32ToBF16Row: every kernel set against quant.FP32ToBF16 on special values (ties, NaNs,
// infinities, subnormals, the largest finite values) and random bits, for every tail length and
// a misaligned start; the element after the row is untouched.
func TestF32ToBF16Row(t *testing.T) {
	special := []uint32{0, 0x80000000, 0x00000001, 0x807fffff, 0x3f808000, 0x3f818000, 0x3f80ffff,
		0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffbfffff, 0x7fff8000,
		0x3f7fffff, 0x00008000, 0x00018000}
	r := newRand(9)
	src := make([]float32, 0, 1100)
	for _, b := range special {
		src = append(src, math.Float32frombits(b))
	}
	for len(src) < 1100 {
		src = append(src, math.Float32frombits(r.Uint32()))
	}
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, n := range []int{0, 1, 15, 16, 17, 33, 100, 1099} {
				dst := make([]uint16, n+2)
				dst[n+1] = 0xbeef
				F32ToBF16Row(src[1:n+1], dst[1:])
				for i := 0; i < n; i++ {
					if want := quant.FP32ToBF16(src[1+i]); dst[1+i] != want {
						t.Fatalf("%v n=%d: bits %#08x -> %#04x, want %#04x", s, n, math.Float32bits(src[1+i]), dst[1+i], want)
					}
				}
				if dst[n+1] != 0xbeef || dst[0] != 0 {
					t.Fatalf("%v n=%d: wrote outside the row", s, n)
				}
			}
		})
	}
}

// TestDot4F16Heads: the scores of a head group over a block of keys (three heads per kernel call
// where the set has one) are Dot4F16's, bit for bit, for head dims that take the kernel
// (multiples of 32) and others, one to eight heads, one to sixteen quads of keys, rows and
// queries off 64-byte lines; nothing past each head's row of out is written.
func TestDot4F16Heads(t *testing.T) {
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, k := range []int{1, 32, 40, 64, 128, 256} {
				for _, nh := range []int{1, 2, 3, 4, 7, 8} {
					for _, nquad := range []int{1, 3, 16} {
						r := newRand(uint64(k*1000 + nh*10 + nquad))
						lda, ldq, off, ldo := k+16, k+8, 16, 4*nquad+3
						a := make([]uint16, off+(4*nquad-1)*lda+k)
						for i := range a {
							a[i] = f32ToF16Go(float32(r.NormFloat64()))
						}
						q := randF32(r, 3+(nh-1)*ldq+k, -1, 1)[3:]
						out := make([]float32, nh*ldo)
						for i := range out {
							out[i] = 42
						}
						Dot4F16Heads(a, off, lda, k, nquad, q, ldq, nh, out, ldo)
						for h := range nh {
							for qd := range nquad {
								var want [4]float32
								Dot4F16(a, off+4*qd*lda, lda, k, q[h*ldq:], &want)
								for rr := range 4 {
									if got := out[h*ldo+4*qd+rr]; math.Float32bits(got) != math.Float32bits(want[rr]) {
										t.Fatalf("%v k=%d heads %d quads %d: head %d key %d = %v, Dot4F16 %v", s, k, nh, nquad, h, 4*qd+rr, got, want[rr])
									}
								}
							}
							for i := 4 * nquad; i < ldo; i++ {
								if out[h*ldo+i] != 42 {
									t.Fatalf("%v k=%d heads %d quads %d: wrote past head %d's keys", s, k, nh, nquad, h)
								}
							}
						}
					}
				}
			}
		})
	}
}

// TestF16ToBF16Rows: the f16 -> bf16 row rounding of SgemmF16ABF16's packer against its pure-Go
// twin on every kernel set: all 65536 halves (NaN payloads, infinities, subnormals, the ties of
// the rounding), and widths with every tail of the 32- and 16-element steps, row strides past
// the width, the destination's padding untouched.
func TestF16ToBF16Rows(t *testing.T) {
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	for _, s := range supportedSets() {
		withSet(s, func() {
			got, want := make([]uint16, len(all)), make([]uint16, len(all))
			f16ToBF16Rows(all, 1<<14, 4, 1<<14, got, 1<<14)
			f16ToBF16RowsGo(all, 1<<14, 4, 1<<14, want, 1<<14)
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%v: half %#04x -> %#04x, want %#04x", s, i, got[i], want[i])
				}
			}
			r := newRand(5)
			for _, kb := range []int{1, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 512} {
				for _, rows := range []int{1, 3, 16} {
					ld, ldd := kb+7, kb+3
					src := make([]uint16, (rows-1)*ld+kb)
					for i := range src {
						src[i] = uint16(r.Uint32())
					}
					got := make([]uint16, rows*ldd)
					want := make([]uint16, rows*ldd)
					for i := range got {
						got[i], want[i] = 0xdead, 0xdead
					}
					f16ToBF16Rows(src, ld, rows, kb, got, ldd)
					f16ToBF16RowsGo(src, ld, rows, kb, want, ldd)
					for i := range got {
						if got[i] != want[i] {
							t.Fatalf("%v kb=%d rows=%d: dst[%d] = %#04x, want %#04x", s, kb, rows, i, got[i], want[i])
						}
					}
				}
			}
		})
	}
}
