package kern

import (
	"math"
	"sync/atomic"
	"testing"
)

// TestRpTile2MatchesRpTile: where a kernel set has a two-group kernel, rpTile2 gives bit for bit
// what rpTile gives on each of the two groups (the same operations in the same order), fresh and
// accumulating, over random and extreme quants (nibbles 0 and 15 against ±127), scales from 2^-8
// to 2^4 and an output stride past the 32 rows it writes, which it leaves alone.
func TestRpTile2MatchesRpTile(t *testing.T) {
	const m, nb, ldc = 2 * RepackRows, 7, 2*RepackRows + 3
	k := nb * QK
	ran := false
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, rt := range repackTypes {
				if rt == RepackQ4_K {
					continue
				}
				q := rpDot(rt)
				r := newRand(uint64(rt) + 40)
				scale := func() uint16 { return f32ToF16Go(float32(math.Ldexp(0.5+r.Float64(), r.IntN(12)-8))) }
				a := make([]byte, 0, m*nb*q.xs)
				for i := 0; i < m; i++ {
					a = append(a, q.genX(r, nb, scale)...)
				}
				b := make([]byte, 0, rpNR*nb*q.ys)
				for j := 0; j < rpNR; j++ {
					b = append(b, q.genY(r, nb, scale)...)
				}
				// Row 5's weights and activation row 2 at the extremes.
				for bl := 0; bl < nb; bl++ {
					for e := q.xs - QK/2; e < q.xs; e++ {
						a[(5*nb+bl)*q.xs+e] = 0xf0
					}
					for e := q.ys - QK; e < q.ys; e++ {
						b[(2*nb+bl)*q.ys+e] = 0x81
					}
				}
				ra := make([]byte, RepackedSize(rt, m, k))
				Repack(rt, ra, a, m, k)
				prep := make([]byte, nb*rpNR*rpRec)
				rpPrepPhase(rt, new(atomic.Int64), rpNR, nb, rpNR, b, nb*q.ys, prep)
				gs := nb * rt.tileFormat().super
				for _, accum := range []bool{false, true} {
					want := make([]float32, rpNR*ldc)
					got := make([]float32, rpNR*ldc)
					for i := range want {
						want[i] = float32(i%13) - 6.5
						got[i] = want[i]
					}
					if !rpTile2(rt, nb, ra, gs, prep, got, ldc, accum) {
						continue
					}
					ran = true
					rpTile(rt, rpNR, nb, ra[:gs], prep, want, ldc, accum)
					rpTile(rt, rpNR, nb, ra[gs:], prep, want[RepackRows:], ldc, accum)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%v %v accum=%v: c[%d][%d] = %v, rpTile gives %v", s, rt, accum, i/ldc, i%ldc, got[i], want[i])
						}
					}
				}
			}
		})
	}
	if !ran && useVNNI {
		t.Fatal("no two-group kernel ran on a machine with AVX-512 VNNI")
	}
}
