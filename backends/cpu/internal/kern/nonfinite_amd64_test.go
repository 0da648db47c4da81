//go:build amd64 && !purego

package kern

import (
	"math"
	"testing"
)

// TestAnyNonFinite: the AVX2 scan and its Go twin agree, and find a NaN, ±Inf or a NaN of
// another payload at every position of rows of 0 to 100 floats (whole vectors, the Go tail and
// both), and nothing in rows of finite values up to ±MaxFloat32, subnormals and -0.
func TestAnyNonFinite(t *testing.T) {
	r := newRand(9)
	bad := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0xff800001)}
	fine := []float32{math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Copysign(0, -1)), 1e-40}
	for n := 0; n <= 100; n++ {
		x := make([]float32, n)
		for i := range x {
			x[i] = fine[r.IntN(len(fine))]
			if r.IntN(2) == 0 {
				x[i] = float32(r.NormFloat64())
			}
		}
		for _, set := range []bool{true, false} {
			withASM(set, func() {
				if anyNonFinite(x) || anyNonFiniteGo(x) {
					t.Fatalf("n=%d asm=%v: a finite row reported non-finite", n, set)
				}
				for i := range x {
					for _, v := range bad {
						old := x[i]
						x[i] = v
						if !anyNonFinite(x) || !anyNonFiniteGo(x) {
							t.Fatalf("n=%d asm=%v: %v at %d not found", n, set, v, i)
						}
						x[i] = old
					}
				}
			})
		}
	}
}
