//go:build amd64 && !purego

package kern

import (
	"bytes"
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
