package quant

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func TestDotHandBlocks(t *testing.T) {
	// Q8_0 x Q8_0, two blocks.
	// Block 0: x d = 1 (0x3C00), q = 1..32; y d = 0.5 (0x3800), q = 2 everywhere:
	//   sumi = 2*(1+...+32) = 2*528 = 1056, times 1*0.5 -> 528.
	// Block 1: x d = 2 (0x4000), q = -j; y d = 2, q = j (j = 0..31):
	//   sumi = -(0^2+...+31^2) = -10416, times 4 -> -41664.
	// Total 528 - 41664 = -41136.
	x := []byte{0x00, 0x3c}
	y := []byte{0x00, 0x38}
	for j := range 32 {
		x = append(x, byte(j+1))
		y = append(y, 2)
	}
	x = append(x, 0x00, 0x40)
	y = append(y, 0x00, 0x40)
	for j := range 32 {
		x = append(x, byte(int8(-j)))
		y = append(y, byte(j))
	}
	if got := DotQ8_0Q8_0(64, x, y); got != -41136 {
		t.Errorf("DotQ8_0Q8_0 = %g, want -41136", got)
	}
	if got := DotQ8_0Q8_0(32, x, y); got != 528 {
		t.Errorf("DotQ8_0Q8_0 over the first block = %g, want 528", got)
	}

	// Q4_0 x Q8_0: x d = 0.5 (0x3800), every byte 0x0F: low nibbles 15 (value 7), high nibbles
	// 0 (value -8); y d = 0.25 (0x3400), q = 1 for elements 0..15 and 2 for 16..31:
	// sumi = 16*7*1 + 16*(-8)*2 = 112 - 256 = -144, times 0.5*0.25 -> -18.
	x4 := append([]byte{0x00, 0x38}, bytes.Repeat([]byte{0x0f}, 16)...)
	y8 := append([]byte{0x00, 0x34}, bytes.Repeat([]byte{1}, 16)...)
	y8 = append(y8, bytes.Repeat([]byte{2}, 16)...)
	if got := DotQ4_0Q8_0(32, x4, y8); got != -18 {
		t.Errorf("DotQ4_0Q8_0 = %g, want -18", got)
	}

	// Q4_1 x Q8_1: x d = 1, m = 2 (0x4000), every byte 0x53 (low 3, high 5); y d = 0.5, q = 4
	// everywhere, s = 0.5*128 = 64 (0x5400): sumi = 16*3*4 + 16*5*4 = 512,
	// result (1*0.5)*512 + 2*64 = 384. Check by hand through dequantized values: x is 5 (low) and
	// 7 (high), y is 2, so 16*5*2 + 16*7*2 = 384.
	x41 := append([]byte{0x00, 0x3c, 0x00, 0x40}, bytes.Repeat([]byte{0x53}, 16)...)
	y81 := append([]byte{0x00, 0x38, 0x00, 0x54}, bytes.Repeat([]byte{4}, 32)...)
	if got := DotQ4_1Q8_1(32, x41, y81); got != 384 {
		t.Errorf("DotQ4_1Q8_1 = %g, want 384", got)
	}
	// The s field is used as stored, not recomputed from the quants: s = 0 drops the m term.
	y81[2], y81[3] = 0, 0
	if got := DotQ4_1Q8_1(32, x41, y81); got != 256 {
		t.Errorf("DotQ4_1Q8_1 with s = 0: %g, want 256", got)
	}
}

func dot64(a, b []float32) (sum, abs float64) {
	for i := range a {
		p := float64(a[i]) * float64(b[i])
		sum += p
		abs += math.Abs(p)
	}
	return sum, abs
}

// TestDotsAgainstDequantized checks each block dot against the float64 dot of the dequantized
// rows. The dequantized values are exact products (an 8-bit quant times an 11-bit f16 scale), so
// the only differences are float32 rounding in the block order: a few ulps per block term plus
// the running sum, bounded by (nb+4)*2^-23 * sum|terms|.
func TestDotsAgainstDequantized(t *testing.T) {
	for _, seed := range testSeeds {
		for _, nb := range testNBlocks {
			rng := rand.New(rand.NewPCG(seed, 100+uint64(nb)))
			n := nb * 32
			a, b := randomRow(rng, nb), randomRow(rng, nb)
			tol := func(abs float64) float64 { return float64(nb+4) * math.Ldexp(1, -23) * abs }

			qa8 := make([]byte, nb*BlockQ8_0Size)
			qb8 := make([]byte, nb*BlockQ8_0Size)
			QuantizeRowQ8_0(a, qa8)
			QuantizeRowQ8_0(b, qb8)
			da, db := make([]float32, n), make([]float32, n)
			DequantizeRowQ8_0(qa8, da)
			DequantizeRowQ8_0(qb8, db)
			want, abs := dot64(da, db)
			if got := DotQ8_0Q8_0(n, qa8, qb8); math.Abs(float64(got)-want) > tol(abs) {
				t.Errorf("seed %d nb %d: DotQ8_0Q8_0 = %g, want %g (tol %g)", seed, nb, got, want, tol(abs))
			}

			qa4 := make([]byte, nb*BlockQ4_0Size)
			QuantizeRowQ4_0(a, qa4)
			DequantizeRowQ4_0(qa4, da)
			want, abs = dot64(da, db)
			if got := DotQ4_0Q8_0(n, qa4, qb8); math.Abs(float64(got)-want) > tol(abs) {
				t.Errorf("seed %d nb %d: DotQ4_0Q8_0 = %g, want %g (tol %g)", seed, nb, got, want, tol(abs))
			}

			// Q4_1 x Q8_1: the dot uses the stored s = f16(d_f32 * sum q) for the m term, where the
			// dequantized y uses f16(d) * q; add that known difference m_x*(s - f16(d)*sum q) per
			// block. The dequantized x (q*d + m) is itself rounded once to float32.
			qa41 := make([]byte, nb*BlockQ4_1Size)
			qb81 := make([]byte, nb*BlockQ8_1Size)
			QuantizeRowQ4_1(a, qa41)
			QuantizeRowQ8_1(b, qb81)
			DequantizeRowQ4_1(qa41, da)
			DequantizeRowQ8_1(qb81, db)
			want, abs = dot64(da, db)
			for i := range nb {
				bx, by := qa41[i*BlockQ4_1Size:], qb81[i*BlockQ8_1Size:]
				m := float64(FP16ToFP32(uint16(bx[2]) | uint16(bx[3])<<8))
				d := float64(FP16ToFP32(uint16(by[0]) | uint16(by[1])<<8))
				s := float64(FP16ToFP32(uint16(by[2]) | uint16(by[3])<<8))
				var sum int
				for j := range 32 {
					sum += int(int8(by[4+j]))
				}
				want += m * (s - d*float64(sum))
				abs += math.Abs(m * s)
			}
			if got := DotQ4_1Q8_1(n, qa41, qb81); math.Abs(float64(got)-want) > 2*tol(abs) {
				t.Errorf("seed %d nb %d: DotQ4_1Q8_1 = %g, want %g (tol %g)", seed, nb, got, want, 2*tol(abs))
			}
		}
	}
}

func TestDotLengthPanics(t *testing.T) {
	q8 := make([]byte, 2*BlockQ8_0Size)
	expectPanic(t, "DotQ8_0Q8_0", func() { DotQ8_0Q8_0(48, q8, q8) })
	expectPanic(t, "DotQ8_0Q8_0", func() { DotQ8_0Q8_0(96, q8, q8) })
	expectPanic(t, "DotQ4_0Q8_0", func() { DotQ4_0Q8_0(64, make([]byte, BlockQ4_0Size), q8) })
	expectPanic(t, "DotQ4_1Q8_1", func() { DotQ4_1Q8_1(64, make([]byte, 2*BlockQ4_1Size), q8) })
	if DotQ8_0Q8_0(0, nil, nil) != 0 {
		t.Errorf("empty dot is not 0")
	}
}
