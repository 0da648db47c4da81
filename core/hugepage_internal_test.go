package core

import "testing"

// TestHugeRange: the advised part of a buffer is the whole huge pages inside it, none when none
// fits.
func TestHugeRange(t *testing.T) {
	const h = hugePageSize
	for _, c := range []struct {
		p        uintptr
		n        int
		off, len uintptr
	}{
		{h, 2 * h, 0, 2 * h},         // aligned
		{h, 2*h + 100, 0, 2 * h},     // a partial page at the end is left out
		{h + 1, 3 * h, h - 1, 2 * h}, // starts one byte past a boundary
		{h + 1, 2 * h, h - 1, h},     // one page fits
		{h + 1, h, 0, 0},             // none fits
		{h - 64, 64, 0, 0},           // ends at a boundary without a whole page
		{h - 64, h + 64, 64, h},      // exactly one page after 64 bytes
		{0x7f0000001000, 10 << 20, h - 0x1000, 4 * h},
	} {
		off, n := hugeRange(c.p, c.n)
		if off != c.off || n != c.len {
			t.Errorf("hugeRange(%#x, %d) = %d, %d; want %d, %d", c.p, c.n, off, n, c.off, c.len)
		}
		if n > 0 && ((c.p+off)%h != 0 || off+n > uintptr(c.n)) {
			t.Errorf("hugeRange(%#x, %d): [%d, %d) is not whole pages inside", c.p, c.n, off, off+n)
		}
	}
}
