//go:build amd64 && !purego

package kern

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// withoutVNNI runs f with the AVX-512 VNNI kernels switched off (the AVX2 forms run).
func withoutVNNI(f func() float32) float32 {
	old := useVNNI
	useVNNI = false
	defer func() { useVNNI = old }()
	return f()
}

func kqVNNI() bool { return useASM && useVNNI }

// TestQ8KBsums: the AVX2 bsums equal q8kBsumsGo's over random blocks and blocks of all -128,
// all 127 and alternating extremes, and write nothing else.
func TestQ8KBsums(t *testing.T) {
	if !useASM {
		t.Skip("no AVX2")
	}
	r := newRand(12)
	const nb = 9
	src := make([]byte, nb*blockQ8_K)
	for i := range src {
		src[i] = byte(r.Uint32())
	}
	for q := 0; q < qkK; q++ {
		src[4+q] = 0x80                             // block 0: -128
		src[blockQ8_K+4+q] = 0x7f                   // block 1: 127
		src[2*blockQ8_K+4+q] = byte(0x80 ^ (q & 1)) // block 2: -128, -127, ...
	}
	want := append([]byte(nil), src...)
	q8kBsumsGo(nb, want)
	for n := 1; n <= nb; n++ {
		got := append([]byte(nil), src...)
		q8kBsumsAVX2(n, &got[0])
		if !bytes.Equal(got[:n*blockQ8_K], want[:n*blockQ8_K]) || !bytes.Equal(got[n*blockQ8_K:], src[n*blockQ8_K:]) {
			t.Fatalf("%d blocks: bsums differ from q8kBsumsGo's (or wrote past them)", n)
		}
	}
}

// q8kBsumsGo writes the bsums of nb Q8_K blocks at dst from their quants: the oracle of
// TestQ8KBsums (core/quant's QuantizeRowQ8_K writes them the same way from its own codes).
func q8kBsumsGo(nb int, dst []byte) {
	for i := range nb {
		blk := dst[i*blockQ8_K : (i+1)*blockQ8_K]
		for g := range 16 {
			var s int32
			for _, q := range blk[4+16*g : 4+16*g+16] {
				s += int32(int8(q))
			}
			binary.LittleEndian.PutUint16(blk[260+2*g:], uint16(int16(s)))
		}
	}
}
