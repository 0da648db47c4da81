package kern

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Lengths that hit every loop and tail of the kernels (32-, 16-, 8-wide bodies, scalar tails).
var testLengths = []int{0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 1023, 1024, 4097}

// Offsets of the test slices into their backing arrays: aligned and misaligned.
var testOffsets = []int{0, 1, 3}

const guardVal = float32(-12345.5)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

func randF32(r *rand.Rand, n int, lo, hi float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = lo + (hi-lo)*r.Float32()
	}
	return x
}

// guarded returns a slice of n elements at offset off inside a backing array filled with
// guardVal, so writes past either end can be detected with checkGuards.
func guarded(n, off int) (full, s []float32) {
	full = make([]float32, off+n+9)
	for i := range full {
		full[i] = guardVal
	}
	return full, full[off : off+n]
}

func checkGuards(t *testing.T, name string, full []float32, off, n int) {
	t.Helper()
	for i, v := range full {
		if (i < off || i >= off+n) && v != guardVal {
			t.Fatalf("%s: wrote outside the slice at %d (off %d, n %d)", name, i, off, n)
		}
	}
}

// nmse is ggml's metric Σ(a-b)²/Σa² with a the reference.
func nmse(ref, got []float64) float64 {
	var num, den float64
	for i := range ref {
		d := ref[i] - got[i]
		num += d * d
		den += ref[i] * ref[i]
	}
	if den == 0 {
		if num == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return num / den
}

func f64s(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// withASM runs f with the assembly paths switched to on (if available) or off.
func withASM(on bool, f func()) {
	old := useASM
	useASM = on && old
	defer func() { useASM = old }()
	f()
}

func TestFeatures(t *testing.T) {
	fs := Features()
	seen := map[string]bool{}
	for _, f := range fs {
		seen[f.Name] = f.Enabled
	}
	if _, ok := seen["ASM"]; !ok {
		t.Fatal("Features lacks ASM")
	}
	if seen["ASM"] != HasASM() {
		t.Fatal("ASM feature disagrees with HasASM")
	}
	if seen["ASM"] && (!seen["AVX2"] || !seen["FMA"] || !seen["F16C"]) {
		t.Fatal("ASM enabled without AVX2/FMA/F16C")
	}
	t.Logf("features: %v", fs)
}

// dotCase runs a dot kernel over 24 random trials per length/offset and checks asm and twin
// against a float64 reference with ggml's NMSE over the trial vector.
func TestDotF32(t *testing.T) {
	r := newRand(1)
	for _, n := range testLengths {
		for _, off := range testOffsets {
			var ref, got, twin []float64
			for trial := 0; trial < 24; trial++ {
				xf, x := guarded(n, off)
				yf, y := guarded(n, off+1)
				copy(x, randF32(r, n, -1, 1))
				copy(y, randF32(r, n, -1, 1))
				var s float64
				for i := range x {
					s += float64(x[i]) * float64(y[i])
				}
				ref = append(ref, s)
				got = append(got, float64(DotF32(x, y)))
				twin = append(twin, float64(dotF32Go(x, y)))
				checkGuards(t, "DotF32 x", xf, off, n)
				checkGuards(t, "DotF32 y", yf, off+1, n)
			}
			if e := nmse(ref, got); e > 1e-7 {
				t.Errorf("DotF32 n=%d off=%d: nmse asm %g", n, off, e)
			}
			if e := nmse(ref, twin); e > 1e-7 {
				t.Errorf("DotF32 n=%d off=%d: nmse twin %g", n, off, e)
			}
			if e := nmse(twin, got); e > 1e-7 {
				t.Errorf("DotF32 n=%d off=%d: nmse asm vs twin %g", n, off, e)
			}
		}
	}
}

func TestDotHalfAndBF16(t *testing.T) {
	r := newRand(2)
	type kind struct {
		name string
		conv func(float32) uint16
		back func(uint16) float32
		fast func(x, y []uint16) float32
		twin func(x, y []uint16) float32
	}
	kinds := []kind{
		{"DotF16", f32ToF16Go, f16ToF32Go, DotF16, dotF16Go},
		{"DotBF16", func(f float32) uint16 { return uint16(math.Float32bits(f) >> 16) }, bf16ToF32, DotBF16, dotBF16Go},
	}
	for _, k := range kinds {
		for _, n := range testLengths {
			for _, off := range testOffsets {
				var ref, got, twin, mixed, mixedTwin []float64
				for trial := 0; trial < 16; trial++ {
					xb := make([]uint16, n+off+4)
					yb := make([]uint16, n+off+4)
					for i := range xb {
						xb[i] = k.conv(2*r.Float32() - 1)
						yb[i] = k.conv(2*r.Float32() - 1)
					}
					x, y := xb[off:off+n], yb[off:off+n]
					var s float64
					for i := range x {
						s += float64(k.back(x[i])) * float64(k.back(y[i]))
					}
					ref = append(ref, s)
					got = append(got, float64(k.fast(x, y)))
					twin = append(twin, float64(k.twin(x, y)))
					if k.name == "DotF16" {
						yf := make([]float32, n)
						for i := range yf {
							yf[i] = f16ToF32Go(y[i])
						}
						mixed = append(mixed, float64(dotF16F32(x, yf)))
						mixedTwin = append(mixedTwin, float64(dotF16F32Go(x, yf)))
					}
				}
				for _, c := range []struct {
					what string
					a, b []float64
				}{{"asm", ref, got}, {"twin", ref, twin}, {"asm vs twin", twin, got}, {"f16·f32", ref, mixed}, {"f16·f32 twin", ref, mixedTwin}} {
					if len(c.b) == 0 {
						continue
					}
					if e := nmse(c.a, c.b); e > 1e-7 {
						t.Errorf("%s n=%d off=%d: nmse %s %g", k.name, n, off, c.what, e)
					}
				}
			}
		}
	}
}

func TestElementwiseF32(t *testing.T) {
	r := newRand(3)
	for _, n := range testLengths {
		for _, off := range testOffsets {
			a := randF32(r, n, -2, 2)
			b := randF32(r, n, -2, 2)
			alpha := float32(0.7312)

			// Axpy: asm uses FMA, the twin may not: NMSE against float64.
			yf, y := guarded(n, off)
			copy(y, b)
			AxpyF32(alpha, a, y)
			checkGuards(t, "AxpyF32", yf, off, n)
			ref := make([]float64, n)
			for i := range ref {
				ref[i] = float64(alpha)*float64(a[i]) + float64(b[i])
			}
			if e := nmse(ref, f64s(y)); e > 1e-7 {
				t.Errorf("AxpyF32 n=%d off=%d nmse %g", n, off, e)
			}
			y2 := append([]float32(nil), b...)
			axpyF32Go(alpha, a, y2)
			if e := nmse(f64s(y2), f64s(y)); e > 1e-7 {
				t.Errorf("AxpyF32 vs twin n=%d nmse %g", n, e)
			}

			// Scale, Add, Mul: one rounding per element, so exactly the twin's result.
			xf, x := guarded(n, off)
			copy(x, a)
			ScaleF32(alpha, x)
			checkGuards(t, "ScaleF32", xf, off, n)
			for i := range x {
				if x[i] != alpha*a[i] {
					t.Fatalf("ScaleF32 n=%d i=%d: %v != %v", n, i, x[i], alpha*a[i])
				}
			}
			df, d := guarded(n, off)
			AddF32(d, a, b)
			checkGuards(t, "AddF32", df, off, n)
			for i := range d {
				if d[i] != a[i]+b[i] {
					t.Fatalf("AddF32 n=%d i=%d", n, i)
				}
			}
			MulF32(d, a, b)
			checkGuards(t, "MulF32", df, off, n)
			for i := range d {
				if d[i] != a[i]*b[i] {
					t.Fatalf("MulF32 n=%d i=%d", n, i)
				}
			}
			// In place (dst aliasing a).
			copy(d, a)
			AddF32(d, d, b)
			for i := range d {
				if d[i] != a[i]+b[i] {
					t.Fatalf("AddF32 in place n=%d i=%d", n, i)
				}
			}

			// Max: exact; put the maximum at every kind of position.
			if n > 0 {
				for _, pos := range []int{0, n - 1, n / 2, (n / 8) * 8 % n} {
					v := append([]float32(nil), a...)
					v[pos] = 7.5
					if got := MaxF32(v); got != 7.5 {
						t.Fatalf("MaxF32 n=%d pos=%d: %v", n, pos, got)
					}
					if got := maxF32Go(v); got != 7.5 {
						t.Fatalf("maxF32Go n=%d pos=%d: %v", n, pos, got)
					}
				}
			}
		}
	}
	if got := MaxF32(nil); !math.IsInf(float64(got), -1) {
		t.Fatalf("MaxF32(nil) = %v", got)
	}
	if got := MaxF32([]float32{-3, -2, -9}); got != -2 {
		t.Fatalf("MaxF32 negatives = %v", got)
	}
}

func TestShortOperandPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"DotF32":  func() { DotF32(make([]float32, 5), make([]float32, 4)) },
		"AxpyF32": func() { AxpyF32(1, make([]float32, 5), make([]float32, 4)) },
		"AddF32":  func() { AddF32(make([]float32, 5), make([]float32, 5), make([]float32, 4)) },
		"F16Row":  func() { F16ToF32Row(make([]uint16, 9), make([]float32, 8)) },
		"Q8_0":    func() { QuantizeRowQ8_0(make([]float32, 33), make([]byte, 100)) },
		"DotQ8":   func() { DotQ8_0Q8_0(64, make([]byte, 68), make([]byte, 67)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic on a short operand", name)
				}
			}()
			f()
		}()
	}
}

// f16Ref is the slow reference: the value of a half computed from its fields in float64.
func f16Ref(h uint16) (f float32, isNaN bool) {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch {
	case e == 0x1f && m == 0:
		return float32(math.Inf(int(s))), false
	case e == 0x1f:
		return 0, true
	case e == 0:
		return float32(s * m * math.Pow(2, -24)), false
	}
	return float32(s * (1 + m/1024) * math.Pow(2, float64(e-15))), false
}

func TestF16ToF32AllHalves(t *testing.T) {
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	for _, off := range []int{0, 1, 3, 7} {
		src := all[off:]
		dst := make([]float32, len(src)+4)
		F16ToF32Row(src, dst[1:len(src)+1])
		if dst[0] != 0 || dst[len(src)+1] != 0 {
			t.Fatalf("F16ToF32Row wrote outside dst")
		}
		for i, h := range src {
			got := dst[i+1]
			twin := f16ToF32Go(h)
			ref, isNaN := f16Ref(h)
			if isNaN {
				// Quiet NaN with sign and payload kept: the VCVTPH2PS rule.
				want := uint32(h&0x8000)<<16 | 0x7fc00000 | uint32(h&0x3ff)<<13
				if math.Float32bits(got) != want || math.Float32bits(twin) != want {
					t.Fatalf("half %#04x: NaN bits asm %#08x twin %#08x want %#08x", h, math.Float32bits(got), math.Float32bits(twin), want)
				}
				continue
			}
			if math.Float32bits(got) != math.Float32bits(ref) || math.Float32bits(twin) != math.Float32bits(ref) {
				t.Fatalf("half %#04x: asm %v twin %v ref %v", h, got, twin, ref)
			}
			if F16ToF32(h) != ref && !(ref == 0 && F16ToF32(h) == 0) {
				t.Fatalf("F16ToF32(%#04x)", h)
			}
		}
	}
}

// f32ToF16Ref is an independent slow reference: the nearest half by search, ties to even.
func f32ToF16Ref(f float32) uint16 {
	var sign uint16
	if math.Signbit(float64(f)) {
		sign = 0x8000
	}
	a := math.Abs(float64(f))
	if math.IsInf(a, 0) || a >= 65520 { // 65520 is the tie between 65504 and 2^16: overflow
		return sign | 0x7c00
	}
	val := func(h uint16) float64 { v, _ := f16Ref(h); return float64(v) }
	// Largest h in [0, 0x7bff] with val(h) <= a (positive halves are monotonic).
	lo, hi := 0, 0x7bff
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if val(uint16(mid)) <= a {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	h := uint16(lo)
	if h < 0x7bff {
		dl, du := a-val(h), val(h+1)-a
		if du < dl || (du == dl && h&1 == 1) {
			h++
		}
	}
	return sign | h
}

func TestF32ToF16(t *testing.T) {
	// Round trip of every non-NaN half, through the row kernel (asm) and the twin.
	var src []float32
	var want []uint16
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			continue
		}
		src = append(src, f16ToF32Go(h))
		want = append(want, h)
	}
	for _, off := range []int{0, 1, 5} {
		dst := make([]uint16, len(src)-off)
		F32ToF16Row(src[off:], dst)
		for i, h := range dst {
			if h != want[i+off] || f32ToF16Go(src[i+off]) != want[i+off] {
				t.Fatalf("round trip of half %#04x: asm %#04x twin %#04x", want[i+off], h, f32ToF16Go(src[i+off]))
			}
		}
	}

	// Hand cases: rounding, ties, overflow, subnormals, signed zeros.
	p2 := func(e int) float32 { return float32(math.Ldexp(1, e)) }
	cases := []struct {
		f float32
		h uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000},
		{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65519.99, 0x7bff}, {65520, 0x7c00},
		{-65520, 0xfc00}, {1e10, 0x7c00}, {float32(math.Inf(1)), 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
		{1 + p2(-11), 0x3c00},           // tie, round to even (down)
		{1 + 3*p2(-11), 0x3c02},         // tie, round to even (up)
		{1 + p2(-11) + p2(-20), 0x3c01}, // just above the tie
		{p2(-24), 0x0001},               // smallest subnormal
		{p2(-25), 0x0000},               // tie with zero: even
		{p2(-25) + p2(-40), 0x0001},     // above the tie
		{3 * p2(-25), 0x0002},           // 1.5 ulp: tie to even
		{p2(-14), 0x0400},               // smallest normal
		{1023.5 * p2(-24), 0x0400},      // tie between the largest subnormal and 2^-14
		{1022.5 * p2(-24), 0x03fe},      // tie to even, stays subnormal
		{-p2(-24) * 0.75, 0x8001},       // rounds up to the smallest subnormal
		{p2(-126), 0},                   // f32 normal min
		{math.Float32frombits(1), 0},    // f32 subnormal
		{math.Float32frombits(0x80000001), 0x8000},
	}
	for _, c := range cases {
		in := []float32{c.f}
		out := make([]uint16, 1)
		F32ToF16Row(in, out)
		if out[0] != c.h || f32ToF16Go(c.f) != c.h || f32ToF16Ref(c.f) != c.h {
			t.Errorf("F32ToF16(%g = %#08x): asm %#04x twin %#04x ref %#04x want %#04x", c.f, math.Float32bits(c.f), out[0], f32ToF16Go(c.f), f32ToF16Ref(c.f), c.h)
		}
	}

	// Random float32 bit patterns (all exponents) and values around the half range: asm,
	// twin and the search reference agree bit for bit; NaNs follow the VCVTPS2PH rule.
	r := newRand(4)
	const n = 200000
	in := make([]float32, n)
	for i := range in {
		if i%2 == 0 {
			in[i] = math.Float32frombits(r.Uint32())
		} else {
			in[i] = float32(math.Ldexp(2*r.Float64()-1, r.IntN(46)-30))
		}
	}
	out := make([]uint16, n)
	F32ToF16Row(in, out)
	for i, f := range in {
		tw := f32ToF16Go(f)
		if out[i] != tw {
			t.Fatalf("F32ToF16(%#08x): asm %#04x twin %#04x", math.Float32bits(f), out[i], tw)
		}
		if f != f {
			b := math.Float32bits(f)
			want := uint16(b>>16)&0x8000 | 0x7e00 | uint16(b>>13)&0x3ff
			if tw != want {
				t.Fatalf("NaN %#08x -> %#04x, want %#04x", b, tw, want)
			}
			continue
		}
		if ref := f32ToF16Ref(f); tw != ref {
			t.Fatalf("F32ToF16(%g): twin %#04x ref %#04x", f, tw, ref)
		}
	}
}

func ExampleFeatures() {
	for _, f := range Features() {
		if f.Name == "ASM" {
			fmt.Println("ASM feature present")
		}
	}
	// Output: ASM feature present
}
