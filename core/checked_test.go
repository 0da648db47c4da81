package core_test

import (
	"errors"
	"math"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

func TestCheckedArithmetic(t *testing.T) {
	const mx, mn = math.MaxInt64, math.MinInt64
	adds := []struct {
		a, b, sum int64
		ok        bool
	}{
		{1, 2, 3, true}, {mx, 0, mx, true}, {mx, 1, 0, false}, {mn, -1, 0, false}, {mn, mx, -1, true},
		{-5, 3, -2, true}, {mx - 1, 1, mx, true}, {mn + 1, -1, mn, true},
	}
	for _, c := range adds {
		if s, ok := core.CheckedAdd(c.a, c.b); ok != c.ok || (ok && s != c.sum) {
			t.Errorf("CheckedAdd(%d, %d) = %d, %v; want %d, %v", c.a, c.b, s, ok, c.sum, c.ok)
		}
	}
	muls := []struct {
		a, b, p int64
		ok      bool
	}{
		{0, mx, 0, true}, {1 << 31, 1 << 31, 1 << 62, true}, {1 << 32, 1 << 31, 0, false}, {-1, mn, 0, false},
		{mn, 1, mn, true}, {-(1 << 31), 1 << 32, mn, true}, {3, -4, -12, true}, {mx, 2, 0, false},
		{-3, -(mx / 2), 0, false}, {1<<62 + 1, 4, 0, false},
	}
	for _, c := range muls {
		if p, ok := core.CheckedMul(c.a, c.b); ok != c.ok || (ok && p != c.p) {
			t.Errorf("CheckedMul(%d, %d) = %d, %v; want %d, %v", c.a, c.b, p, ok, c.p, c.ok)
		}
	}
	aligns := []struct {
		n, a, r int64
		ok      bool
	}{
		{0, 32, 0, true}, {1, 32, 32, true}, {32, 32, 32, true}, {33, 32, 64, true}, {mx, 32, 0, false},
		{mx - 31, 32, mx - 31, true}, {mx - 30, 32, 0, false}, {mx - 6, 8, 0, false}, {-1, 32, 0, false}, {5, 0, 0, false}, {7, 3, 9, true},
	}
	for _, c := range aligns {
		if r, ok := core.CheckedAlignUp(c.n, c.a); ok != c.ok || (ok && r != c.r) {
			t.Errorf("CheckedAlignUp(%d, %d) = %d, %v; want %d, %v", c.n, c.a, r, ok, c.r, c.ok)
		}
	}
	// AlignUp never wraps to a small or negative value, and a ≤ 0 does not divide by zero.
	if r := core.AlignUp(mx, 32); r != mx/32*32 {
		t.Errorf("AlignUp(MaxInt64, 32) = %d", r)
	}
	if r := core.AlignUp(5, 0); r != 5 {
		t.Errorf("AlignUp(5, 0) = %d", r)
	}
}

// A tensor right at the cap is accepted, one element more is not, and the error wraps ErrOverflow.
func TestMaxTensorBytes(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	x := c.NewTensor1D(core.TypeI8, core.MaxTensorBytes)
	if err := c.Err(); err != nil || x.NBytes() != core.MaxTensorBytes {
		t.Fatalf("tensor of MaxTensorBytes: %v, nbytes %d", err, x.NBytes())
	}
	c.NewTensor1D(core.TypeI8, core.MaxTensorBytes+1)
	if err := c.Err(); !errors.Is(err, core.ErrOverflow) {
		t.Fatalf("one byte past the cap: %v", err)
	}
	// NBytes of a layout made invalid by hand is MaxInt64, which no range check accepts.
	x.Ne[1] = 1 << 40
	if x.NBytes() != math.MaxInt64 {
		t.Fatalf("NBytes of a hand-grown tensor = %d", x.NBytes())
	}
	if _, err := x.CheckedBytes(); !errors.Is(err, core.ErrOverflow) {
		t.Fatalf("CheckedBytes: %v", err)
	}
}
