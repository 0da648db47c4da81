package quant

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func expectPanic(t *testing.T, substr string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if r == nil {
			t.Errorf("%s: expected a panic", substr)
			return
		}
		if msg := fmt.Sprint(r); !strings.Contains(msg, substr) {
			t.Errorf("panic message %q does not name %s", msg, substr)
		}
	}()
	f()
}

func TestQ4_0HandBlocks(t *testing.T) {
	var x []float32
	// Block A: x[j] = j-16. The largest magnitude is x[0] = -16, so d = -16/-8 = 2 (f16 0x4000)
	// and id = 0.5. Element j (low nibble of byte j, j < 16): (j-16)/2 + 8.5 = j/2 + 0.5,
	// truncated: 0,1,1,2,2,3,3,4,4,5,5,6,6,7,7,8. Element j+16 (high nibble of byte j): j/2 + 8.5,
	// truncated: 8,9,9,10,10,11,11,12,12,13,13,14,14,15,15,16 -> the last is clamped to 15.
	for j := range 32 {
		x = append(x, float32(j-16))
	}
	// Block B: the largest magnitude 8 is positive and comes before -8 (a tie keeps the first),
	// so d = 8/-8 = -1 (f16 0xBC00), id = -1, and q = trunc(8.5 - x):
	// 8 -> 0, -8 -> 16 clamped to 15, 4 -> 4, -4 -> 12, 1 -> 7, 0 -> 8.
	b := make([]float32, 32)
	copy(b, []float32{8, -8, 4, -4, 1})
	x = append(x, b...)
	// Block C: all zero -> max stays +0, so d = +0/-8 = -0 (f16 0x8000, as C computes it too),
	// id = 0, every quant trunc(8.5) = 8.
	x = append(x, make([]float32, 32)...)

	want := []byte{
		0x00, 0x40, // d = 2
		0x80, 0x91, 0x91, 0xa2, 0xa2, 0xb3, 0xb3, 0xc4, 0xc4, 0xd5, 0xd5, 0xe6, 0xe6, 0xf7, 0xf7, 0xf8,
		0x00, 0xbc, // d = -1
		0x80, 0x8f, 0x84, 0x8c, 0x87, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88,
		0x00, 0x80, // d = -0
		0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88, 0x88,
	}
	got := make([]byte, 3*BlockQ4_0Size)
	QuantizeRowQ4_0(x, got)
	if !bytes.Equal(got, want) {
		t.Fatalf("QuantizeRowQ4_0:\n got % x\nwant % x", got, want)
	}

	// Dequantize: (q-8)*d.
	y := make([]float32, 96)
	DequantizeRowQ4_0(want, y)
	for j := range 32 {
		lo := float32(j/2+j%2) - 8 // the low quants listed above, minus 8
		if j >= 16 {
			lo = float32(min(15, 8+(j-16)/2+(j-16)%2)) - 8
		}
		if y[j] != 2*lo {
			t.Errorf("block A element %d: %g, want %g", j, y[j], 2*lo)
		}
	}
	wantB := []float32{8, -7, 4, -4, 1}
	for j := range 32 {
		w := float32(0)
		if j < len(wantB) {
			w = wantB[j]
		}
		if y[32+j] != w || y[64+j] != 0 {
			t.Errorf("block B/C element %d: %g %g, want %g 0", j, y[32+j], y[64+j], w)
		}
	}
}

func TestQ4_1HandBlocks(t *testing.T) {
	x := make([]float32, 64)
	// Block A: x[j] = j-1 for j < 16 (min -1 at j=0, max 14 at j=15); x[16+j] = 13.5-j for
	// j < 15; x[31] = -0.75. So m = -1 (f16 0xBC00), d = 15/15 = 1 (0x3C00), id = 1 and
	// q = trunc(x + 1 + 0.5): low nibbles j (exact), high nibbles trunc(15-j) = 15-j for j < 15
	// (the .5 values round half up), and trunc(0.75) = 0 for x[31].
	for j := range 16 {
		x[j] = float32(j - 1)
		x[16+j] = 13.5 - float32(j)
	}
	x[31] = -0.75
	// Block B: constant 3 -> d = 0, id = 0, m = 3 (0x4200), every quant trunc(0.5) = 0.
	for j := 32; j < 64; j++ {
		x[j] = 3
	}
	want := []byte{
		0x00, 0x3c, 0x00, 0xbc, // d = 1, m = -1
		0xf0, 0xe1, 0xd2, 0xc3, 0xb4, 0xa5, 0x96, 0x87, 0x78, 0x69, 0x5a, 0x4b, 0x3c, 0x2d, 0x1e, 0x0f,
		0x00, 0x00, 0x00, 0x42, // d = 0, m = 3
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	}
	got := make([]byte, 2*BlockQ4_1Size)
	QuantizeRowQ4_1(x, got)
	if !bytes.Equal(got, want) {
		t.Fatalf("QuantizeRowQ4_1:\n got % x\nwant % x", got, want)
	}
	y := make([]float32, 64)
	DequantizeRowQ4_1(want, y)
	for j := range 16 {
		hi := float32(14 - j) // q = 15-j, times 1, minus 1
		if j == 15 {
			hi = -1
		}
		if y[j] != float32(j-1) || y[16+j] != hi || y[32+j] != 3 || y[48+j] != 3 {
			t.Errorf("element %d: %g %g %g %g", j, y[j], y[16+j], y[32+j], y[48+j])
		}
	}
}

// q8Ramp are the quants of [0..31]: d = 31/127, so q_j = round(127*j/31); 127*j/31 is never
// within 0.016 of a half, so float rounding cannot matter. (Worked: 4.10, 8.19, 12.29, 16.39,
// 20.48, 24.58, 28.68, 32.77, ... 65.55 (j=16) ... 122.90, 127.)
var q8Ramp = []byte{
	0, 4, 8, 12, 16, 20, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61,
	66, 70, 74, 78, 82, 86, 90, 94, 98, 102, 107, 111, 115, 119, 123, 127,
}

// q8Ties: amax 127 gives d = 1 exactly, so quants are roundf(x): ties away from zero.
var q8TiesIn = []float32{127, 2.5, -2.5, 0.5, -0.5, -127, 1.4999999}
var q8TiesQ = []byte{0x7f, 0x03, 0xfd, 0x01, 0xff, 0x81, 0x01} // 127 3 -3 1 -1 -127 1, then zeros

func TestQ8_0HandBlocks(t *testing.T) {
	x := make([]float32, 96)
	for j := range 32 {
		x[j] = float32(j)
	}
	copy(x[32:], q8TiesIn)
	// Block C stays zero: d = 0, quants 0.
	// d of block A: 31/127 = 0.244094...; f16 units there are 2^-13 and 0.244094*8192 = 1999.62,
	// so it rounds to 2000*2^-13: exponent -3 (biased 12 -> 0x3000), mantissa 2000-1024 = 976
	// (0x3D0): 0x33D0.
	want := append([]byte{0xd0, 0x33}, q8Ramp...)
	want = append(want, 0x00, 0x3c) // d = 1
	want = append(want, q8TiesQ...)
	want = append(want, make([]byte, 32-len(q8TiesQ))...)
	want = append(want, make([]byte, BlockQ8_0Size)...)
	got := make([]byte, 3*BlockQ8_0Size)
	QuantizeRowQ8_0(x, got)
	if !bytes.Equal(got, want) {
		t.Fatalf("QuantizeRowQ8_0:\n got % x\nwant % x", got, want)
	}
	y := make([]float32, 96)
	DequantizeRowQ8_0(want, y)
	d := float32(2000.0 / 8192)
	for j := range 32 {
		if y[j] != float32(q8Ramp[j])*d || y[32+j] != float32(int8(want[BlockQ8_0Size+2+j])) || y[64+j] != 0 {
			t.Errorf("element %d: %g %g %g", j, y[j], y[32+j], y[64+j])
		}
	}
}

func TestQ8_1HandBlocks(t *testing.T) {
	x := make([]float32, 64)
	for j := range 32 {
		x[j] = float32(j)
	}
	copy(x[32:], q8TiesIn)
	// Block A: d as in Q8_0 (0x33D0). The quants sum to 490 + 1542 = 2032 = 16*127, so
	// s = 2032 * (31/127) = 496 (to float32 rounding) = 1.9375*2^8: exponent 23 (0x5C00),
	// mantissa 0.9375*1024 = 960 (0x3C0): 0x5FC0.
	// Block B: d = 1, quants sum to 127+3-3+1-1-127+1 = 1, s = 1 (0x3C00).
	want := append([]byte{0xd0, 0x33, 0xc0, 0x5f}, q8Ramp...)
	want = append(want, 0x00, 0x3c, 0x00, 0x3c)
	want = append(want, q8TiesQ...)
	want = append(want, make([]byte, 32-len(q8TiesQ))...)
	got := make([]byte, 2*BlockQ8_1Size)
	QuantizeRowQ8_1(x, got)
	if !bytes.Equal(got, want) {
		t.Fatalf("QuantizeRowQ8_1:\n got % x\nwant % x", got, want)
	}
	y := make([]float32, 64)
	DequantizeRowQ8_1(want, y)
	d := float32(2000.0 / 8192)
	for j := range 32 {
		if y[j] != float32(q8Ramp[j])*d || y[32+j] != float32(int8(want[BlockQ8_1Size+4+j])) {
			t.Errorf("element %d: %g %g", j, y[j], y[32+j])
		}
	}
}

// randomRow makes nb blocks of test data: each block has its own magnitude (10^-3..10^3) and
// some blocks an offset, so scales, signs and the q4_1 minimum all vary.
func randomRow(rng *rand.Rand, nb int) []float32 {
	x := make([]float32, nb*32)
	for b := range nb {
		scale := math.Pow(10, rng.Float64()*6-3)
		offset := 0.0
		if rng.IntN(3) == 0 {
			offset = (rng.Float64()*2 - 1) * scale * 3
		}
		for j := range 32 {
			x[b*32+j] = float32(offset + (rng.Float64()*2-1)*scale)
		}
	}
	return x
}

var (
	testSeeds   = []uint64{1, 2, 3, 42, 1234}
	testNBlocks = []int{1, 3, 7, 33}
)

const tiny = 1e-6 // relative slack for float32 rounding of the dequantized product/sum

func TestQ4_0RoundTrip(t *testing.T) {
	for _, seed := range testSeeds {
		for _, nb := range testNBlocks {
			rng := rand.New(rand.NewPCG(seed, uint64(nb)))
			x := randomRow(rng, nb)
			q := make([]byte, nb*BlockQ4_0Size)
			QuantizeRowQ4_0(x, q)
			y := make([]float32, len(x))
			DequantizeRowQ4_0(q, y)
			for b := range nb {
				xb := x[b*32 : b*32+32]
				var amax, vmax float32
				for _, v := range xb {
					if float32(math.Abs(float64(v))) > amax {
						amax, vmax = float32(math.Abs(float64(v))), v
					}
				}
				d := float64(vmax / -8)
				dh := float64(FP16ToFP32(uint16(q[b*BlockQ4_0Size]) | uint16(q[b*BlockQ4_0Size+1])<<8))
				if FP32ToFP16(float32(d)) != uint16(q[b*BlockQ4_0Size])|uint16(q[b*BlockQ4_0Size+1])<<8 {
					t.Fatalf("seed %d block %d: stored d is not f16(max/-8)", seed, b)
				}
				for j, v := range xb {
					// Within half a step, plus the f16 rounding of d (at most 8 steps of it).
					// The one exception: x/d in (7.5, 8] (the opposite sign of max, nearly as
					// large) would need quant 16, gets 15, and is off by up to one full step.
					bound := math.Abs(d) / 2
					if float64(v)/d > 7.5 {
						bound = math.Abs(d)
					}
					bound += 8*math.Abs(dh-d) + tiny*math.Abs(d)
					if err := math.Abs(float64(v) - float64(y[b*32+j])); err > bound {
						t.Fatalf("seed %d nb %d block %d elem %d: x=%g deq=%g err=%g > %g (d=%g)",
							seed, nb, b, j, v, y[b*32+j], err, bound, d)
					}
				}
			}
		}
	}
}

func TestQ4_1RoundTrip(t *testing.T) {
	for _, seed := range testSeeds {
		for _, nb := range testNBlocks {
			rng := rand.New(rand.NewPCG(seed, uint64(nb)))
			x := randomRow(rng, nb)
			q := make([]byte, nb*BlockQ4_1Size)
			QuantizeRowQ4_1(x, q)
			y := make([]float32, len(x))
			DequantizeRowQ4_1(q, y)
			for b := range nb {
				xb := x[b*32 : b*32+32]
				lo, hi := xb[0], xb[0]
				for _, v := range xb {
					lo, hi = min(lo, v), max(hi, v)
				}
				d := float64((hi - lo) / 15)
				blk := q[b*BlockQ4_1Size:]
				dh := float64(FP16ToFP32(uint16(blk[0]) | uint16(blk[1])<<8))
				mh := float64(FP16ToFP32(uint16(blk[2]) | uint16(blk[3])<<8))
				for j, v := range xb {
					// Half a step, plus the f16 rounding of m and of d (up to 15 steps of it).
					bound := d/2 + math.Abs(mh-float64(lo)) + 15*math.Abs(dh-d) +
						tiny*(math.Abs(float64(v))+d)
					if err := math.Abs(float64(v) - float64(y[b*32+j])); err > bound {
						t.Fatalf("seed %d nb %d block %d elem %d: x=%g deq=%g err=%g > %g (d=%g m=%g)",
							seed, nb, b, j, v, y[b*32+j], err, bound, d, lo)
					}
				}
			}
		}
	}
}

func TestQ8RoundTrip(t *testing.T) {
	for _, seed := range testSeeds {
		for _, nb := range testNBlocks {
			rng := rand.New(rand.NewPCG(seed, uint64(nb)))
			x := randomRow(rng, nb)
			q0 := make([]byte, nb*BlockQ8_0Size)
			q1 := make([]byte, nb*BlockQ8_1Size)
			QuantizeRowQ8_0(x, q0)
			QuantizeRowQ8_1(x, q1)
			y0 := make([]float32, len(x))
			y1 := make([]float32, len(x))
			DequantizeRowQ8_0(q0, y0)
			DequantizeRowQ8_1(q1, y1)
			for b := range nb {
				xb := x[b*32 : b*32+32]
				var amax float32
				for _, v := range xb {
					amax = max(amax, float32(math.Abs(float64(v))))
				}
				d32 := amax / 127
				d := float64(d32)
				b0, b1 := q0[b*BlockQ8_0Size:], q1[b*BlockQ8_1Size:]
				dh := FP32ToFP16(d32)
				if uint16(b0[0])|uint16(b0[1])<<8 != dh || uint16(b1[0])|uint16(b1[1])<<8 != dh {
					t.Fatalf("seed %d block %d: stored d is not f16(amax/127)", seed, b)
				}
				// Q8_1 carries the same quants, and s = f16(d * sum of quants) from the f32 d.
				var sum int32
				for j := range 32 {
					if b0[2+j] != b1[4+j] {
						t.Fatalf("seed %d block %d: Q8_0 and Q8_1 quants differ at %d", seed, b, j)
					}
					sum += int32(int8(b1[4+j]))
				}
				if s := uint16(b1[2]) | uint16(b1[3])<<8; s != FP32ToFP16(float32(sum)*d32) {
					t.Fatalf("seed %d block %d: s = %#04x, want f16(%d*%g)", seed, b, s, sum, d)
				}
				dhf := float64(FP16ToFP32(dh))
				for j, v := range xb {
					bound := d/2 + 127*math.Abs(dhf-d) + tiny*d
					if err := math.Abs(float64(v) - float64(y0[b*32+j])); err > bound {
						t.Fatalf("seed %d nb %d block %d elem %d: x=%g deq=%g err=%g > %g",
							seed, nb, b, j, v, y0[b*32+j], err, bound)
					}
					if y0[b*32+j] != y1[b*32+j] {
						t.Fatalf("Q8_0 and Q8_1 dequantize differently at %d", b*32+j)
					}
				}
			}
		}
	}
}

func TestBlockLengthPanics(t *testing.T) {
	x := make([]float32, 64)
	expectPanic(t, "QuantizeRowQ4_0", func() { QuantizeRowQ4_0(x[:31], make([]byte, 100)) })
	expectPanic(t, "QuantizeRowQ4_0", func() { QuantizeRowQ4_0(x, make([]byte, 2*BlockQ4_0Size-1)) })
	expectPanic(t, "DequantizeRowQ4_0", func() { DequantizeRowQ4_0(make([]byte, BlockQ4_0Size), x) })
	expectPanic(t, "QuantizeRowQ4_1", func() { QuantizeRowQ4_1(x[:33], make([]byte, 100)) })
	expectPanic(t, "DequantizeRowQ4_1", func() { DequantizeRowQ4_1(make([]byte, 10), x[:32]) })
	expectPanic(t, "QuantizeRowQ8_0", func() { QuantizeRowQ8_0(x, make([]byte, BlockQ8_0Size)) })
	expectPanic(t, "DequantizeRowQ8_0", func() { DequantizeRowQ8_0(make([]byte, 100), x[:40]) })
	expectPanic(t, "QuantizeRowQ8_1", func() { QuantizeRowQ8_1(x, make([]byte, BlockQ8_1Size)) })
	expectPanic(t, "DequantizeRowQ8_1", func() { DequantizeRowQ8_1(make([]byte, 2*BlockQ8_1Size-1), x) })

	// A longer dst is fine and its tail is left alone.
	dst := bytes.Repeat([]byte{0xee}, BlockQ8_0Size+3)
	QuantizeRowQ8_0(x[:32], dst)
	if !bytes.Equal(dst[BlockQ8_0Size:], []byte{0xee, 0xee, 0xee}) {
		t.Errorf("QuantizeRowQ8_0 wrote past its blocks")
	}
	if RowSize(96, QK4_0, BlockQ4_0Size) != 54 || RowSize(64, QK8_1, BlockQ8_1Size) != 72 {
		t.Errorf("RowSize")
	}
}
