package kern

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// TestPrepRec1: the one-row activation records of the repacked Q4_0/Q8_0 mat-vec, written by the
// kernel set's prepRec1 where it has one, are prepRepackRow's bytes: random blocks, the extreme
// quants (all -128, all 127), and scales that are NaN, ±Inf, subnormal and zero.
func TestPrepRec1(t *testing.T) {
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
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, rt := range []RepackType{RepackQ4_0, RepackQ8_0} {
				for _, n := range []int{1, 2, nb} {
					want := make([]byte, n*rpRec)
					prepRepackRow(rt, n, 1, 0, y[:n*BlockQ8_0Size], want)
					got := bytes.Repeat([]byte{0xee}, n*rpRec+1)
					if !prepRec1(rt, n, y[:n*BlockQ8_0Size], got[:n*rpRec]) {
						prepRepackRow(rt, n, 1, 0, y[:n*BlockQ8_0Size], got[:n*rpRec])
					}
					if !bytes.Equal(got[:n*rpRec], want) || got[n*rpRec] != 0xee {
						t.Fatalf("%v type %d, %d blocks: records differ from prepRepackRow's (or wrote past them)", s, rt, n)
					}
				}
			}
			if prepRec1(RepackQ4_1, 1, y, make([]byte, rpRec)) {
				t.Fatalf("%v: prepRec1 took Q4_1 (Q8_1 activations)", s)
			}
		})
	}
}
