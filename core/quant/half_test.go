package quant

import (
	"math"
	"testing"
)

// refHalf decodes binary16 bits the slow, obvious way: sign * significand * 2^exponent with
// math.Ldexp. ok is false for NaN patterns.
func refHalf(h uint16) (v float64, ok bool) {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 0x1f
	m := int(h & 0x3ff)
	switch {
	case e == 0x1f && m != 0:
		return math.NaN(), false
	case e == 0x1f:
		return math.Inf(int(sign)), true
	case e == 0: // subnormal: m * 2^-24
		return sign * math.Ldexp(float64(m), -24), true
	default: // normal: (1024+m) * 2^(e-15-10)
		return sign * math.Ldexp(float64(1024+m), e-25), true
	}
}

// refBF16 decodes bfloat16 bits the slow way (8-bit exponent, bias 127, 7-bit mantissa).
func refBF16(h uint16) (v float64, ok bool) {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>7) & 0xff
	m := int(h & 0x7f)
	switch {
	case e == 0xff && m != 0:
		return math.NaN(), false
	case e == 0xff:
		return math.Inf(int(sign)), true
	case e == 0:
		return sign * math.Ldexp(float64(m), -133), true
	default:
		return sign * math.Ldexp(float64(128+m), e-134), true
	}
}

func TestFP16ToFP32AllPatterns(t *testing.T) {
	bad := 0
	for i := range 1 << 16 {
		h := uint16(i)
		got := FP16ToFP32(h)
		want, ok := refHalf(h)
		if !ok {
			// NaN: sign and payload kept, quiet bit set (x86 VCVTPH2PS and ggml's table agree).
			wantBits := uint32(h&0x8000)<<16 | 0x7fc00000 | uint32(h&0x3ff)<<13
			if math.Float32bits(got) != wantBits {
				t.Errorf("FP16ToFP32(%#04x) = %#08x, want NaN %#08x", h, math.Float32bits(got), wantBits)
				bad++
			}
		} else if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
			t.Errorf("FP16ToFP32(%#04x) = %g, want %g", h, got, want)
			bad++
		}
		if fp16ToFP32Slow(h) != got && ok {
			t.Errorf("table and slow decoder disagree at %#04x", h)
			bad++
		}
		if bad > 20 {
			t.Fatal("too many failures")
		}
	}
}

func TestFP16RoundTripAllPatterns(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		want := h
		if h&0x7c00 == 0x7c00 && h&0x3ff != 0 {
			want = h | 0x200 // a signalling NaN comes back quiet
		}
		if got := FP32ToFP16(FP16ToFP32(h)); got != want {
			t.Fatalf("FP32ToFP16(FP16ToFP32(%#04x)) = %#04x, want %#04x", h, got, want)
		}
	}
}

func TestFP32ToFP16Cases(t *testing.T) {
	p := math.Ldexp
	cases := []struct {
		name string
		f    float64
		want uint16
	}{
		{"zero", 0, 0x0000},
		{"negative zero", math.Copysign(0, -1), 0x8000},
		{"one", 1, 0x3c00},
		{"minus two", -2, 0xc000},
		{"1+2^-10, exact", 1 + p(1, -10), 0x3c01},
		{"1+2^-11, tie to even (down)", 1 + p(1, -11), 0x3c00},
		{"1+2^-11+2^-23, above tie", 1 + p(1, -11) + p(1, -23), 0x3c01},
		{"1+3*2^-11, tie to even (up)", 1 + 3*p(1, -11), 0x3c02},
		{"-(1+3*2^-11)", -(1 + 3*p(1, -11)), 0xbc02},
		{"65504 max finite", 65504, 0x7bff},
		{"65519 rounds down", 65519, 0x7bff},
		{"65520 tie goes to inf", 65520, 0x7c00},
		{"-65520", -65520, 0xfc00},
		{"1e10", 1e10, 0x7c00},
		{"float32 max", math.MaxFloat32, 0x7c00},
		{"+inf", math.Inf(1), 0x7c00},
		{"-inf", math.Inf(-1), 0xfc00},
		{"2^-14 smallest normal", p(1, -14), 0x0400},
		{"2^-14 - 2^-25, tie between 0x3ff and 0x400 goes even (up)", p(1, -14) - p(1, -25), 0x0400},
		{"2^-24 smallest subnormal", p(1, -24), 0x0001},
		{"-2^-24", -p(1, -24), 0x8001},
		{"2^-25 tie to even zero", p(1, -25), 0x0000},
		{"-2^-25 to negative zero", -p(1, -25), 0x8000},
		{"1.5*2^-25 rounds up to 2^-24", 1.5 * p(1, -25), 0x0001},
		{"2^-25 + 2^-40 rounds up", p(1, -25) + p(1, -40), 0x0001},
		{"1.5*2^-24 tie goes to 2 (even)", 1.5 * p(1, -24), 0x0002},
		{"2.5*2^-24 tie goes to 2 (even)", 2.5 * p(1, -24), 0x0002},
		{"2^-26 to zero", p(1, -26), 0x0000},
		{"float32 subnormal to zero", p(1, -140), 0x0000},
		{"0.1", 0.1, 0x2e66},
		{"1/3", 1.0 / 3, 0x3555},
	}
	for _, c := range cases {
		if got := FP32ToFP16(float32(c.f)); got != c.want {
			t.Errorf("%s: FP32ToFP16(%g) = %#04x, want %#04x", c.name, c.f, got, c.want)
		}
	}
	// NaNs stay NaN, keep sign and the top payload bits, and come out quiet (VCVTPS2PH rule).
	nans := []struct {
		in   uint32
		want uint16
	}{
		{0x7fc00000, 0x7e00},
		{0xffc00000, 0xfe00},
		{0x7f800001, 0x7e00}, // signalling, payload only in low bits
		{0x7fa00000, 0x7f00}, // payload bit 21 -> half bit 8
		{0x7fffffff, 0x7fff},
	}
	for _, c := range nans {
		if got := FP32ToFP16(math.Float32frombits(c.in)); got != c.want {
			t.Errorf("FP32ToFP16(NaN %#08x) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
}

// refFP32ToFP16 rounds f to binary16 the slow way: binary-search the largest finite half not
// above |f| among the ordered positive halves, then compare distances in float64 (exact here),
// ties to the even pattern; 65520 and above is infinity (IEEE overflow rule).
func refFP32ToFP16(f float32) uint16 {
	a := math.Abs(float64(f))
	var sign uint16
	if math.Signbit(float64(f)) {
		sign = 0x8000
	}
	if a >= 65520 {
		return sign | 0x7c00
	}
	lo, hi := 0, 0x7bff // invariant: value(lo) <= a
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if v, _ := refHalf(uint16(mid)); v <= a {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	vlo, _ := refHalf(uint16(lo))
	vhi := 65536.0
	if lo < 0x7bff {
		vhi, _ = refHalf(uint16(lo + 1))
	}
	dlo, dhi := a-vlo, vhi-a
	if dhi < dlo || dhi == dlo && lo&1 == 1 {
		return sign | uint16(lo+1)
	}
	return sign | uint16(lo)
}

func TestFP32ToFP16AgainstReference(t *testing.T) {
	check := func(f float32) {
		t.Helper()
		if f != f {
			return
		}
		if got, want := FP32ToFP16(f), refFP32ToFP16(f); got != want {
			t.Fatalf("FP32ToFP16(%g [%#08x]) = %#04x, want %#04x", f, math.Float32bits(f), got, want)
		}
	}
	// A spread over all float32 bit patterns.
	for b := uint64(0); b < 1<<32; b += 4099 {
		check(math.Float32frombits(uint32(b)))
	}
	// Every rounding boundary: each half value, the midpoint to the next one, and the float32
	// neighbours of that midpoint, with both signs.
	for h := range 0x7c00 {
		v, _ := refHalf(uint16(h))
		next := 65536.0
		if h < 0x7bff {
			next, _ = refHalf(uint16(h + 1))
		}
		mid := float32((v + next) / 2) // exact: 12 significant bits
		for _, f := range []float32{float32(v), mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1e30)} {
			check(f)
			check(-f)
		}
	}
}

func TestBF16AllPatterns(t *testing.T) {
	for i := range 1 << 16 {
		h := uint16(i)
		got := BF16ToFP32(h)
		want, ok := refBF16(h)
		if !ok {
			if math.Float32bits(got) != uint32(h)<<16 {
				t.Fatalf("BF16ToFP32(NaN %#04x) = %#08x, want payload kept", h, math.Float32bits(got))
			}
			if back := FP32ToBF16(got); back != h|0x40 {
				t.Fatalf("FP32ToBF16(BF16ToFP32(%#04x)) = %#04x, want quiet NaN %#04x", h, back, h|0x40)
			}
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
			t.Fatalf("BF16ToFP32(%#04x) = %g, want %g", h, got, want)
		}
		if back := FP32ToBF16(got); back != h {
			t.Fatalf("FP32ToBF16(BF16ToFP32(%#04x)) = %#04x", h, back)
		}
	}
}

func TestFP32ToBF16Cases(t *testing.T) {
	p := math.Ldexp
	cases := []struct {
		name string
		bits uint32
		want uint16
	}{
		{"one", math.Float32bits(1), 0x3f80},
		{"1+2^-8 tie to even (down)", math.Float32bits(float32(1 + p(1, -8))), 0x3f80},
		{"1+2^-8+2^-23 above tie", math.Float32bits(float32(1 + p(1, -8) + p(1, -23))), 0x3f81},
		{"1+3*2^-8 tie to even (up)", math.Float32bits(float32(1 + 3*p(1, -8))), 0x3f82},
		{"-(1+3*2^-8)", math.Float32bits(float32(-(1 + 3*p(1, -8)))), 0xbf82},
		{"float32 max rounds to inf", 0x7f7fffff, 0x7f80},
		{"largest value rounding to max bf16", 0x7f7f7fff, 0x7f7f},
		{"+inf", 0x7f800000, 0x7f80},
		{"-inf", 0xff800000, 0xff80},
		{"negative zero", 0x80000000, 0x8000},
		{"subnormal tie to even zero", 0x00008000, 0x0000},
		{"subnormal tie to even up", 0x00018000, 0x0002},
		{"subnormal above tie", 0x00008001, 0x0001},
		{"quiet NaN", 0x7fc00000, 0x7fc0},
		{"negative quiet NaN", 0xffc00000, 0xffc0},
		{"signalling NaN low payload made quiet", 0x7f800001, 0x7fc0},
		{"NaN payload kept, no rounding into inf", 0x7f81ffff, 0x7fc1},
		{"all-ones NaN", 0xffffffff, 0xffff},
	}
	for _, c := range cases {
		if got := FP32ToBF16(math.Float32frombits(c.bits)); got != c.want {
			t.Errorf("%s: FP32ToBF16(%#08x) = %#04x, want %#04x", c.name, c.bits, got, c.want)
		}
	}
}

// refFP32ToBF16 rounds a non-NaN float32 to bfloat16 by comparing distances to the two
// neighbouring bf16 values in float64; ties go to the even pattern; past the largest finite
// bf16 the upper neighbour is infinity, which wins at and beyond the midpoint (2^128 - 2^119).
func refFP32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	lo := uint16(b >> 16) // truncation: the neighbour toward zero
	if b&0xffff == 0 {
		return lo
	}
	vlo, _ := refBF16(lo)
	var vhi float64
	if lo&0x7fff == 0x7f7f {
		vhi = math.Copysign(math.Ldexp(1, 128), vlo)
	} else {
		vhi, _ = refBF16(lo + 1)
	}
	x := float64(f)
	dlo, dhi := math.Abs(x-vlo), math.Abs(vhi-x)
	if dhi < dlo || dhi == dlo && lo&1 == 1 {
		return lo + 1
	}
	return lo
}

func TestFP32ToBF16AgainstReference(t *testing.T) {
	for b := uint64(0); b < 1<<32; b += 4099 {
		f := math.Float32frombits(uint32(b))
		if f != f {
			continue
		}
		if got, want := FP32ToBF16(f), refFP32ToBF16(f); got != want {
			t.Fatalf("FP32ToBF16(%#08x) = %#04x, want %#04x", uint32(b), got, want)
		}
	}
}

func TestHalfRows(t *testing.T) {
	src := []float32{0, 1, -2, 0.1, 65520, float32(math.Inf(-1)), 1e-8, 3.14159}
	h := make([]uint16, len(src)+2) // longer dst is fine
	FP32ToFP16Row(src, h)
	back := make([]float32, len(src))
	FP16ToFP32Row(h[:len(src)], back)
	for i, f := range src {
		if h[i] != FP32ToFP16(f) || back[i] != FP16ToFP32(h[i]) {
			t.Errorf("f16 row element %d: %#04x %g", i, h[i], back[i])
		}
	}
	FP32ToBF16Row(src, h)
	BF16ToFP32Row(h[:len(src)], back)
	for i, f := range src {
		if h[i] != FP32ToBF16(f) || back[i] != BF16ToFP32(h[i]) {
			t.Errorf("bf16 row element %d: %#04x %g", i, h[i], back[i])
		}
	}
	expectPanic(t, "FP16ToFP32Row", func() { FP16ToFP32Row(make([]uint16, 4), make([]float32, 3)) })
	expectPanic(t, "FP32ToFP16Row", func() { FP32ToFP16Row(make([]float32, 4), make([]uint16, 3)) })
	expectPanic(t, "BF16ToFP32Row", func() { BF16ToFP32Row(make([]uint16, 4), make([]float32, 3)) })
	expectPanic(t, "FP32ToBF16Row", func() { FP32ToBF16Row(make([]float32, 4), make([]uint16, 3)) })
}
