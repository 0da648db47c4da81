package quant

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// TestQuantizeQ8NonFinite: blocks holding NaN get d = NaN (s = NaN) and zero quants, blocks holding
// ±Inf get d = +Inf and ±127 at the infinities, finite blocks are untouched; a dot product with
// a NaN block is NaN and one with an Inf block has the sign IEEE gives w·x.
func TestQuantizeQ8NonFinite(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	x := make([]float32, 3*QK8_0)
	for i := range x {
		x[i] = float32(i%7) - 3
	}
	finite := append([]float32(nil), x[:QK8_0]...)
	x[QK8_0+4] = nan
	x[QK8_0+9] = inf // a NaN wins over an Inf in the same block
	x[2*QK8_0+1] = inf
	x[2*QK8_0+30] = -inf
	q0 := make([]byte, 3*BlockQ8_0Size)
	QuantizeRowQ8_0(x, q0)
	want0 := make([]byte, BlockQ8_0Size)
	QuantizeRowQ8_0(finite, want0)
	if !bytes.Equal(q0[:BlockQ8_0Size], want0) {
		t.Error("a finite block changed")
	}
	nanBlk, infBlk := q0[BlockQ8_0Size:2*BlockQ8_0Size], q0[2*BlockQ8_0Size:]
	if d := binary.LittleEndian.Uint16(nanBlk); d != 0x7e00 || !bytes.Equal(nanBlk[2:], make([]byte, 32)) {
		t.Errorf("NaN block: d %#04x, quants %v", d, nanBlk[2:])
	}
	if d := binary.LittleEndian.Uint16(infBlk); d != 0x7c00 {
		t.Errorf("Inf block: d %#04x, want +Inf", d)
	}
	for j := range 32 {
		want := int8(0)
		switch j {
		case 1:
			want = 127
		case 30:
			want = -127
		}
		if got := int8(infBlk[2+j]); got != want {
			t.Errorf("Inf block quant %d = %d, want %d", j, got, want)
		}
	}

	q1 := make([]byte, 3*BlockQ8_1Size)
	QuantizeRowQ8_1(x, q1)
	b := q1[BlockQ8_1Size:]
	if d, s := binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:]); d != 0x7e00 || s != 0x7e00 {
		t.Errorf("Q8_1 NaN block: d %#04x s %#04x", d, s)
	}
	b = q1[2*BlockQ8_1Size:]
	if d, s := binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:]); d != 0x7c00 || s&0x7c00 != 0x7c00 || s&0x3ff == 0 {
		t.Errorf("Q8_1 Inf block (+Inf and -Inf cancel in the quant sum): d %#04x, s %#04x, want +Inf and NaN", d, s)
	}

	// Dots with a Q8_0 weight row of ones (d = 1/127 · 127): the NaN block gives NaN; the Inf
	// block gives Inf·(127 − 127)·… = NaN too (+Inf and −Inf); a single +Inf against weight −1
	// gives −Inf.
	w := make([]float32, 32)
	for i := range w {
		w[i] = 1
	}
	wq := make([]byte, BlockQ8_0Size)
	QuantizeRowQ8_0(w, wq)
	if v := DotQ8_0Q8_0(32, wq, nanBlk); !math.IsNaN(float64(v)) {
		t.Errorf("dot with the NaN block = %v", v)
	}
	if v := DotQ8_0Q8_0(32, wq, infBlk); !math.IsNaN(float64(v)) {
		t.Errorf("dot with +Inf and -Inf = %v, want NaN", v)
	}
	one := make([]float32, 32)
	one[5] = inf
	oq := make([]byte, BlockQ8_0Size)
	QuantizeRowQ8_0(one, oq)
	w[5] = -1
	QuantizeRowQ8_0(w, wq)
	if v := DotQ8_0Q8_0(32, wq, oq); !math.IsInf(float64(v), -1) {
		t.Errorf("dot of weight -1 with +Inf = %v, want -Inf", v)
	}
}

// TestQuantizeQ4NonFinite: a Q4_0/Q4_1 block holding NaN or ±Inf becomes a NaN block (every
// element dequantizes to NaN); finite blocks are untouched.
func TestQuantizeQ4NonFinite(t *testing.T) {
	x := make([]float32, 3*QK4_0)
	for i := range x {
		x[i] = float32(i%5) - 2
	}
	x[QK4_0+3] = float32(math.Inf(-1))
	x[2*QK4_0+31] = float32(math.NaN())
	y := make([]float32, len(x))
	q0 := make([]byte, 3*BlockQ4_0Size)
	QuantizeRowQ4_0(x, q0)
	DequantizeRowQ4_0(q0, y)
	q1 := make([]byte, 3*BlockQ4_1Size)
	QuantizeRowQ4_1(x, q1)
	y1 := make([]float32, len(x))
	DequantizeRowQ4_1(q1, y1)
	for i := range x {
		finite := i < QK4_0
		for _, v := range []float32{y[i], y1[i]} {
			if finite && math.Abs(float64(v-x[i])) > 0.3 || !finite && !math.IsNaN(float64(v)) {
				t.Fatalf("element %d (%v): dequantized %v / %v", i, x[i], y[i], y1[i])
			}
		}
	}
}
