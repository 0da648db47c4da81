package quant

import (
	"math"
	"testing"
)

// TestKQuantRoundTrip checks quantize→dequantize and the quantized dot products on ggml's
// test-quantize-fns data (0.1 + 2·cos(i + offset)) against that test's limits: total error
// sqrt(Σ(a−b)²)/n under 0.002 (0.0075 for Q2_K, 0.004 for Q3_K), dot error |dot−ref|/n under
// 0.02 (0.04 for the 2/3-bit types).
func TestKQuantRoundTrip(t *testing.T) {
	const n = 4096
	x := make([]float32, n)
	y := make([]float32, n)
	for i := range x {
		x[i] = float32(0.1 + 2*math.Cos(float64(i)))
		y[i] = float32(0.1 + 2*math.Cos(float64(i)+1))
	}
	var ref float64
	for i := range x {
		ref += float64(x[i]) * float64(y[i])
	}
	for _, id := range []int{6, 7, 10, 11, 12, 13, 14, 15, 20, 23} {
		gt := goldenTypes[id]
		q := make([]byte, n/gt.blck*gt.size)
		gt.quantize(x, q)
		d := make([]float32, n)
		gt.dequantize(q, d)
		var se float64
		for i := range x {
			e := float64(x[i] - d[i])
			se += e * e
		}
		limit, dotLimit := 0.002, 0.02
		switch id {
		case 10:
			limit, dotLimit = 0.0075, 0.04
		case 11:
			limit, dotLimit = 0.004, 0.04
		}
		if e := math.Sqrt(se) / n; e > limit {
			t.Errorf("type %d: round-trip error %g > %g", id, e, limit)
		}
		if gt.dot == nil {
			continue
		}
		act := make([]byte, n/gt.vecDotBlck*gt.vecDotSize)
		gt.vecDot(y, act)
		if e := math.Abs(float64(gt.dot(n, q, act))-ref) / n; e > dotLimit {
			t.Errorf("type %d: dot error %g > %g", id, e, dotLimit)
		}
	}
}

// TestKQuantHandCases checks hand-computed blocks: a Q5_0 zero block (ggml stores d = −0,
// qh all ones), a Q8_K block with a negative maximum, an all-zero IQ4_XS super-block.
func TestKQuantHandCases(t *testing.T) {
	b := make([]byte, BlockQ5_0Size)
	QuantizeRowQ5_0(make([]float32, 32), b)
	if getU16(b[0:2]) != 0x8000 || getU32(b[2:6]) != 0xFFFFFFFF || b[6] != 0 {
		t.Errorf("q5_0 zero block = % x", b)
	}
	x := make([]float32, QK_K)
	x[3], x[17] = -2, 1
	q := make([]byte, BlockQ8_KSize)
	QuantizeRowQ8_K(x, q)
	// iscale = −127/−2 = 63.5: x[3] → −127, x[17] → nearest_int(63.5) = 64 (ties to even).
	if int8(q[4+3]) != -127 || int8(q[4+17]) != 64 || q8kD(q) != float32(1/float32(63.5)) {
		t.Errorf("q8_K: q[3] %d q[17] %d d %g", int8(q[4+3]), int8(q[4+17]), q8kD(q))
	}
	if q8kBsum(q, 0) != -127 || q8kBsum(q, 1) != 64 || q8kBsum(q, 2) != 0 {
		t.Errorf("q8_K bsums %d %d %d", q8kBsum(q, 0), q8kBsum(q, 1), q8kBsum(q, 2))
	}
	z := make([]byte, BlockIQ4_XSSize)
	QuantizeRowIQ4_XS(make([]float32, QK_K), z)
	if getU16(z[0:2]) != 0x8000 || getU16(z[2:4]) != 0xAAAA || z[4] != 0 || z[8] != 0x88 {
		t.Errorf("iq4_xs zero block = % x", z[:10])
	}
}
