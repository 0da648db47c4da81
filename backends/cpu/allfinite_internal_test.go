package cpu

import (
	"math"
	"testing"
)

// TestAllFinite: every length up to 70 (vectors of 8 and the rest), each position holding +Inf, -Inf or NaN, and the largest
// and smallest finite values (whose products with 0 are ±0).
func TestAllFinite(t *testing.T) {
	bad := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for n := 0; n <= 70; n++ {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i) - 3.5
		}
		if n > 1 {
			v[0], v[n-1] = math.MaxFloat32, -math.SmallestNonzeroFloat32
		}
		if !allFinite(v) {
			t.Fatalf("%v: not all finite", v)
		}
		for i := range v {
			for _, b := range bad {
				old := v[i]
				v[i] = b
				if allFinite(v) {
					t.Fatalf("%v: all finite", v)
				}
				v[i] = old
			}
		}
	}
}
