package kern

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestPrepRec: an activation row's slots in the prepared records of the repacked Q4_0/Q8_0
// kernels, written by the kernel set's prepRec where it has one, are prepRepackRowGo's bytes, in
// one-row records and as rows 0, 3 and 7 of 8-row ones (the other rows' slots untouched): random
// blocks, the extreme quants (all -128, all 127), and scales that are NaN, ±Inf, subnormal and
// zero.
func TestPrepRec(t *testing.T) {
	r := newRand(21)
	const nb = 37
	y := randQ8(r, nb, BlockQ8_0Size, 2, func() uint16 { return uint16(r.Uint64()) })
	for i, d := range []uint16{0x7e00, 0x7c00, 0xfc00, 0x0001, 0x8000, 0x0000} {
		binary.LittleEndian.PutUint16(y[i*BlockQ8_0Size:], d)
	}
	for q := range QK {
		y[6*BlockQ8_0Size+2+q] = 0x80 // -128
		y[7*BlockQ8_0Size+2+q] = 0x7f
	}
	ran := false
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, rt := range []RepackType{RepackQ4_0, RepackQ8_0} {
				for _, tr := range [][2]int{{1, 0}, {8, 0}, {8, 3}, {8, 7}} {
					nr, row := tr[0], tr[1]
					for _, n := range []int{1, 2, nb} {
						size := n * nr * rpRec
						want := bytes.Repeat([]byte{0xee}, size+1)
						prepRepackRowGo(rt, n, nr, row, y[:n*BlockQ8_0Size], want[:size])
						got := bytes.Repeat([]byte{0xee}, size+1)
						if !prepRec(rt, n, nr, row, y[:n*BlockQ8_0Size], got[:size]) {
							continue
						}
						ran = true
						if !bytes.Equal(got, want) {
							t.Fatalf("%v type %d, row %d of %d, %d blocks: records differ from prepRepackRowGo's", s, rt, row, nr, n)
						}
					}
				}
			}
			if prepRec(RepackQ4_1, 1, 1, 0, y, make([]byte, rpRec)) {
				t.Fatalf("%v: prepRec took Q4_1 (Q8_1 activations)", s)
			}
		})
	}
	if !ran && hasRepackASM() {
		t.Fatal("no set ran the assembly prepRec")
	}
}
