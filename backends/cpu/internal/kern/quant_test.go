package kern

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

var blockCounts = []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 32, 33, 128, 129}

// quantInputs returns rows of 32*nb floats that exercise the quantizers: random at several
// scales, exact .5 ties (a block whose amax is 127 has d = 1), zeros, all-equal blocks,
// huge and infinite values, subnormals (1/d overflows), and values just below a tie.
func quantInputs(r *rand.Rand, nb int) [][]float32 {
	n := nb * QK
	var rows [][]float32
	for _, scale := range []float32{1, 1e-3, 1e4, 3e38} {
		rows = append(rows, randF32(r, n, -scale, scale))
	}
	ties := make([]float32, n)
	for i := range ties {
		switch i % QK {
		case 0:
			ties[i] = 127
		case 1:
			ties[i] = -127
		default:
			ties[i] = float32(r.IntN(253)-126) + 0.5
		}
	}
	rows = append(rows, ties)
	below := make([]float32, n) // d = 1 and values a hair below/above the .5 ties
	for i := range below {
		switch i % QK {
		case 0:
			below[i] = 127
		default:
			v := float32(r.IntN(253)-126) + 0.5
			if i%2 == 0 {
				below[i] = math.Nextafter32(v, 0)
			} else {
				below[i] = math.Nextafter32(v, float32(math.Inf(1)))
			}
		}
	}
	rows = append(rows, below)
	rows = append(rows, make([]float32, n)) // zeros
	same := make([]float32, n)
	for i := range same {
		same[i] = -3.25
	}
	rows = append(rows, same)
	special := make([]float32, n)
	specials := []float32{math.MaxFloat32, -math.MaxFloat32, float32(math.Inf(1)), float32(math.Inf(-1)),
		math.SmallestNonzeroFloat32, 1e-40, -1e-39, 1e-37, 0, float32(math.Copysign(0, -1)), 0.49999997, 0.5, -0.5, 1.5, 2.5}
	for i := range special {
		special[i] = specials[r.IntN(len(specials))]
		if (i/QK)%3 == 1 && i%QK != 0 { // some blocks with tiny amax only
			special[i] = float32(r.IntN(5)-2) * 1e-40
		}
	}
	rows = append(rows, special)
	return rows
}

// TestQuantizeRowQ8: every kernel set's Q8_0 and Q8_1 quantizers give the twin's bytes (the
// inputs of quantInputs: random, ties, values a hair off the ties, zeros, constants, specials).
func TestQuantizeRowQ8(t *testing.T) {
	for _, s := range supportedSets() {
		withSet(s, func() { testQuantizeRowQ8(t) })
	}
}

func testQuantizeRowQ8(t *testing.T) {
	r := newRand(10)
	for _, nb := range blockCounts {
		for ri, x := range quantInputs(r, nb) {
			for _, off := range []int{0, 1} {
				xb := make([]float32, len(x)+off)
				copy(xb[off:], x)
				xs := xb[off:]

				got0 := make([]byte, nb*BlockQ8_0Size+3)
				want0 := make([]byte, nb*BlockQ8_0Size+3)
				QuantizeRowQ8_0(xs, got0[1:])
				quantizeRowQ8_0Go(xs, want0[1:])
				if !bytes.Equal(got0, want0) {
					t.Fatalf("Q8_0 nb=%d input %d off %d: asm and twin differ at byte %d", nb, ri, off, firstDiff(got0, want0))
				}
				got1 := make([]byte, nb*BlockQ8_1Size+3)
				want1 := make([]byte, nb*BlockQ8_1Size+3)
				QuantizeRowQ8_1(xs, got1[1:])
				quantizeRowQ8_1Go(xs, want1[1:])
				if !bytes.Equal(got1, want1) {
					t.Fatalf("Q8_1 nb=%d input %d off %d: asm and twin differ at byte %d", nb, ri, off, firstDiff(got1, want1))
				}
				// Q8_1 carries the same d and quants as Q8_0.
				for b := 0; b < nb; b++ {
					q0 := want0[1+b*BlockQ8_0Size:]
					q1 := want1[1+b*BlockQ8_1Size:]
					if !bytes.Equal(q0[:2], q1[:2]) || !bytes.Equal(q0[2:34], q1[4:36]) {
						t.Fatalf("Q8_1 block %d differs from Q8_0", b)
					}
				}
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// TestQuantizeKnown checks the roundf (half away from zero) semantics and the d/s fields
// against hand-computed values, independently of the twin.
func TestQuantizeKnown(t *testing.T) {
	x := make([]float32, 32)
	x[0] = 127 // amax 127 -> d = 1, id = 1
	x[1] = -63.5
	x[2] = 0.5
	x[3] = -0.5
	x[4] = 1.5
	x[5] = 2.5
	x[6] = 0.49999997
	x[7] = -126.5
	x[8] = 3.4999998
	want := []int8{127, -64, 1, -1, 2, 3, 0, -127, 3}
	for _, q := range []func([]float32, []byte){QuantizeRowQ8_0, quantizeRowQ8_0Go} {
		dst := make([]byte, BlockQ8_0Size)
		q(x, dst)
		if d := binary.LittleEndian.Uint16(dst); d != 0x3c00 {
			t.Fatalf("d = %#04x, want 0x3c00", d)
		}
		for i, w := range want {
			if int8(dst[2+i]) != w {
				t.Fatalf("q[%d] = %d, want %d", i, int8(dst[2+i]), w)
			}
		}
	}
	// Q8_1: s = f16(sum(q) * d) with the float32 d. amax = 12.7 gives d = 0.1f, which is not a
	// half, so s must be computed from the float32 d: sum = 127+1+2+... .
	y := make([]float32, 32)
	y[0] = 12.7
	for i := 1; i < 32; i++ {
		y[i] = 0.1 * float32(i%3)
	}
	var q [36]byte
	quantizeRowQ8_1Go(y, q[:])
	var sum int32
	for _, b := range q[4:] {
		sum += int32(int8(b))
	}
	d := float32(12.7) / 127
	if s := binary.LittleEndian.Uint16(q[2:]); s != f32ToF16Ref(float32(sum)*d) {
		t.Fatalf("s = %#04x, want f16(%d*%g)", s, sum, d)
	}
	var qa [36]byte
	QuantizeRowQ8_1(y, qa[:])
	if qa != q {
		t.Fatalf("Q8_1 asm differs from twin")
	}
}

// Random quantized rows: quants in [-127, 127], positive scales over a wide range.
func randQ8(r *rand.Rand, nb, bsize, qoff int, scale func() uint16) []byte {
	b := make([]byte, nb*bsize)
	for i := 0; i < nb; i++ {
		blk := b[i*bsize:]
		binary.LittleEndian.PutUint16(blk, scale())
		if qoff == 4 {
			binary.LittleEndian.PutUint16(blk[2:], scale())
		}
		for j := 0; j < 32; j++ {
			blk[qoff+j] = byte(int8(r.IntN(255) - 127))
		}
	}
	return b
}

func randQ4(r *rand.Rand, nb, bsize, qoff int, scale func() uint16) []byte {
	b := make([]byte, nb*bsize)
	for i := 0; i < nb; i++ {
		blk := b[i*bsize:]
		binary.LittleEndian.PutUint16(blk, scale())
		if qoff == 4 {
			binary.LittleEndian.PutUint16(blk[2:], scale())
		}
		for j := 0; j < 16; j++ {
			blk[qoff+j] = byte(r.IntN(256))
		}
	}
	return b
}

// qdot describes one quantized dot kernel. terms returns the exact result in float64 (block
// integer sums times the float32 scale products both implementations use) and the error
// scale Σ_blocks |dx*dy| * Σ_j |qx_j*qy_j| (+ |m*s|).
type qdot struct {
	name   string
	xs, ys int                               // block sizes
	fast   func(n int, x, y []byte) float32  // exported (asm when available)
	twin   func(nb int, x, y []byte) float32 // pure Go
	terms  func(nb int, x, y []byte) (s, abs float64)
	genX   func(r *rand.Rand, nb int, sc func() uint16) []byte
	genY   func(r *rand.Rand, nb int, sc func() uint16) []byte
	hasMin bool
}

func q8terms(nb int, x, y []byte) (s, abs float64) {
	for b := 0; b < nb; b++ {
		xb, yb := x[b*34:], y[b*34:]
		var si, sa int64
		for j := 0; j < 32; j++ {
			p := int64(int8(xb[2+j])) * int64(int8(yb[2+j]))
			si += p
			sa += max(p, -p)
		}
		w := float64(halfAt(xb, 0) * halfAt(yb, 0))
		s += float64(si) * w
		abs += math.Abs(w) * float64(sa)
	}
	return
}

func q40terms(nb int, x, y []byte) (s, abs float64) {
	for b := 0; b < nb; b++ {
		xb, yb := x[b*18:], y[b*34:]
		var si, sa int64
		for j := 0; j < 16; j++ {
			p0 := int64(int(xb[2+j]&15)-8) * int64(int8(yb[2+j]))
			p1 := int64(int(xb[2+j]>>4)-8) * int64(int8(yb[18+j]))
			si += p0 + p1
			sa += max(p0, -p0) + max(p1, -p1)
		}
		w := float64(halfAt(xb, 0) * halfAt(yb, 0))
		s += float64(si) * w
		abs += math.Abs(w) * float64(sa)
	}
	return
}

func q41terms(nb int, x, y []byte) (s, abs float64) {
	for b := 0; b < nb; b++ {
		xb, yb := x[b*20:], y[b*36:]
		var si, sa int64
		for j := 0; j < 16; j++ {
			p0 := int64(xb[4+j]&15) * int64(int8(yb[4+j]))
			p1 := int64(xb[4+j]>>4) * int64(int8(yb[20+j]))
			si += p0 + p1
			sa += max(p0, -p0) + max(p1, -p1)
		}
		w := float64(halfAt(xb, 0) * halfAt(yb, 0))
		ms := float64(halfAt(xb, 2) * halfAt(yb, 2))
		s += float64(si)*w + ms
		abs += math.Abs(w)*float64(sa) + math.Abs(ms)
	}
	return
}

var qdots = []qdot{
	{"DotQ8_0Q8_0", 34, 34, DotQ8_0Q8_0, dotQ8_0Q8_0Go, q8terms,
		func(r *rand.Rand, nb int, sc func() uint16) []byte { return randQ8(r, nb, 34, 2, sc) },
		func(r *rand.Rand, nb int, sc func() uint16) []byte { return randQ8(r, nb, 34, 2, sc) }, false},
	{"DotQ4_0Q8_0", 18, 34, DotQ4_0Q8_0, dotQ4_0Q8_0Go, q40terms,
		func(r *rand.Rand, nb int, sc func() uint16) []byte { return randQ4(r, nb, 18, 2, sc) },
		func(r *rand.Rand, nb int, sc func() uint16) []byte { return randQ8(r, nb, 34, 2, sc) }, false},
	{"DotQ4_1Q8_1", 20, 36, DotQ4_1Q8_1, dotQ4_1Q8_1Go, q41terms,
		func(r *rand.Rand, nb int, sc func() uint16) []byte { return randQ4(r, nb, 20, 4, sc) },
		func(r *rand.Rand, nb int, sc func() uint16) []byte { return randQ8(r, nb, 36, 4, sc) }, true},
}

// TestQuantDots checks asm and twin against the float64 sum of the exact block terms.
// Criterion: |got - exact| <= (nb+4) * 2^-24 * Σ_b |dx*dy| Σ_j |qx_j*qy_j| (+|m*s|): the
// float32 summation bound for any order of accumulating partial integer sums scaled by
// dx*dy (the asm, like ggml's AVX2 kernel, scales 8 lanes of partial sums per block and adds
// them up at the end; the twin scales the block sum), hence |asm - twin| <= twice that.
// With unit scales every term is an integer and the sums stay below 2^24, so there the asm,
// the twin and the exact integer result must be identical.
func TestQuantDots(t *testing.T) {
	r := newRand(11)
	randScale := func() uint16 { return f32ToF16Go(float32(math.Ldexp(0.5+r.Float64(), r.IntN(16)-12))) }
	one := func() uint16 { return 0x3c00 }
	for _, q := range qdots {
		for _, nb := range blockCounts {
			for trial := 0; trial < 8; trial++ {
				x := q.genX(r, nb, randScale)
				y := q.genY(r, nb, randScale)
				n := nb * QK
				got := q.fast(n, x, y)
				tw := float32(0)
				if nb > 0 {
					tw = q.twin(nb, x, y)
				}
				exact, abs := q.terms(nb, x, y)
				bound := float64(nb+4) * math.Ldexp(1, -24) * abs
				if math.Abs(float64(got)-exact) > bound || math.Abs(float64(tw)-exact) > bound {
					t.Fatalf("%s nb=%d: asm %v twin %v exact %v bound %g", q.name, nb, got, tw, exact, bound)
				}
				// Misaligned copies give the same result.
				xb := append([]byte{0}, x...)
				yb := append([]byte{0, 0, 0}, y...)
				if g2 := q.fast(n, xb[1:], yb[3:]); g2 != got {
					t.Fatalf("%s nb=%d: misaligned result %v != %v", q.name, nb, g2, got)
				}
			}
			if nb > 32 || nb == 0 {
				continue
			}
			// Unit scales: exact integer arithmetic, including the extreme quants.
			for trial := 0; trial < 4; trial++ {
				x := q.genX(r, nb, one)
				y := q.genY(r, nb, one)
				if trial == 0 { // extreme quants everywhere
					setExtremes(x, nb, q.xs, q.xs-q.xq(), q.xq())
					setExtremes(y, nb, q.ys, 32, q.ys-32)
				}
				if q.hasMin {
					for b := 0; b < nb; b++ {
						binary.LittleEndian.PutUint16(x[b*q.xs+2:], f32ToF16Go(float32(r.IntN(9)-4)))
						binary.LittleEndian.PutUint16(y[b*q.ys+2:], f32ToF16Go(float32(r.IntN(2001)-1000)))
					}
				}
				exact, _ := q.terms(nb, x, y)
				got := q.fast(nb*QK, x, y)
				tw := q.twin(nb, x, y)
				if float64(got) != exact || float64(tw) != exact {
					t.Fatalf("%s nb=%d unit scales: asm %v twin %v exact %v", q.name, nb, got, tw, exact)
				}
			}
		}
	}
}

// xq is the offset of the quants in an x block (after d, or d and m).
func (q qdot) xq() int {
	if q.hasMin {
		return 4
	}
	return 2
}

// setExtremes fills the quant bytes [qoff, qoff+qlen) of every block with alternating
// extremes: ±127 for int8 quants, nibble pairs 0/15 for 4-bit ones.
func setExtremes(b []byte, nb, bsize, qlen, qoff int) {
	for blk := 0; blk < nb; blk++ {
		for j := 0; j < qlen; j++ {
			v := byte(0x7f)
			if qlen == 16 {
				v = 0x0f
			}
			if j%2 == 1 {
				if qlen == 16 {
					v = 0xf0
				} else {
					v = 0x81
				}
			}
			b[blk*bsize+qoff+j] = v
		}
	}
}

// TestQuantizedDotPipeline: quantize two float rows and check the quantized dot tracks the
// float dot (a sanity check of layouts end to end, not of rounding).
func TestQuantizedDotPipeline(t *testing.T) {
	r := newRand(12)
	const n = 4096
	x := randF32(r, n, -1, 1)
	y := randF32(r, n, -1, 1)
	var ref float64
	for i := range x {
		ref += float64(x[i]) * float64(y[i])
	}
	qx := make([]byte, n/32*34)
	qy := make([]byte, n/32*34)
	QuantizeRowQ8_0(x, qx)
	QuantizeRowQ8_0(y, qy)
	got := DotQ8_0Q8_0(n, qx, qy)
	var deq float64 // the dot of the dequantized rows
	for b := 0; b < n/32; b++ {
		for j := 0; j < 32; j++ {
			deq += float64(int8(qx[b*34+2+j])) * float64(halfAt(qx, b*34)) * float64(int8(qy[b*34+2+j])) * float64(halfAt(qy, b*34))
		}
	}
	if math.Abs(float64(got)-deq) > 1e-4 || math.Abs(float64(got)-ref) > 0.3 {
		t.Fatalf("q8_0 pipeline: %v vs dequantized %v vs float %v", got, deq, ref)
	}
	// q4_0 row from a reference quantizer (ggml's quantize_row_q4_0_ref) against q8_0.
	q4 := make([]byte, n/32*18)
	for b := 0; b < n/32; b++ {
		xb := x[b*32 : b*32+32]
		var amax, mx float32
		for _, v := range xb {
			if float32(math.Abs(float64(v))) > amax {
				amax = float32(math.Abs(float64(v)))
				mx = v
			}
		}
		d := mx / -8
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(q4[b*18:], f32ToF16Go(d))
		for j := 0; j < 16; j++ {
			lo := min(15, int8(xb[j]*id+8.5))
			hi := min(15, int8(xb[j+16]*id+8.5))
			q4[b*18+2+j] = byte(lo) | byte(hi)<<4
		}
	}
	deq = 0
	for b := 0; b < n/32; b++ {
		d := float64(halfAt(q4, b*18)) * float64(halfAt(qy, b*34))
		for j := 0; j < 16; j++ {
			deq += d * float64(int(q4[b*18+2+j]&15)-8) * float64(int8(qy[b*34+2+j]))
			deq += d * float64(int(q4[b*18+2+j]>>4)-8) * float64(int8(qy[b*34+18+j]))
		}
	}
	if got := DotQ4_0Q8_0(n, q4, qy); math.Abs(float64(got)-deq) > 1e-4 || math.Abs(float64(got)-ref) > 4 {
		t.Fatalf("q4_0 pipeline: %v vs dequantized %v vs float %v", got, deq, ref)
	}
	qy1 := make([]byte, n/32*36)
	QuantizeRowQ8_1(y, qy1)
	q41 := make([]byte, n/32*20)
	for b := 0; b < n/32; b++ {
		xb := x[b*32 : b*32+32]
		lo, hi := xb[0], xb[0]
		for _, v := range xb {
			lo, hi = min(lo, v), max(hi, v)
		}
		d := (hi - lo) / 15
		id := float32(0)
		if d != 0 {
			id = 1 / d
		}
		binary.LittleEndian.PutUint16(q41[b*20:], f32ToF16Go(d))
		binary.LittleEndian.PutUint16(q41[b*20+2:], f32ToF16Go(lo))
		for j := 0; j < 16; j++ {
			a := min(15, uint8((xb[j]-lo)*id+0.5))
			c := min(15, uint8((xb[j+16]-lo)*id+0.5))
			q41[b*20+4+j] = a | c<<4
		}
	}
	deq = 0
	for b := 0; b < n/32; b++ {
		d, m := float64(halfAt(q41, b*20)), float64(halfAt(q41, b*20+2))
		dy := float64(halfAt(qy1, b*36))
		for j := 0; j < 16; j++ {
			deq += (d*float64(q41[b*20+4+j]&15) + m) * dy * float64(int8(qy1[b*36+4+j]))
			deq += (d*float64(q41[b*20+4+j]>>4) + m) * dy * float64(int8(qy1[b*36+20+j]))
		}
	}
	// m*s uses s = f16(d*sum(q)), so allow for the f16 rounding of s (2^-11 relative).
	if got := DotQ4_1Q8_1(n, q41, qy1); math.Abs(float64(got)-deq) > 2e-2 || math.Abs(float64(got)-ref) > 4 {
		t.Fatalf("q4_1 pipeline: %v vs dequantized %v vs float %v", got, deq, ref)
	}
}
