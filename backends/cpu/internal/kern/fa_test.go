package kern

import (
	"math"
	"testing"
)

// The assembly against the Go loop: bit for bit (each column's additions run in key order with
// one fused multiply-add each, as math.FMA does), widths of one and several 32-column chunks (the
// AVX2 kernel) and 64-column chunks (the AVX-512 one), and an odd width taking the Go path.
func TestWeightedSumF16Rows(t *testing.T) {
	r := newRand(3)
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, c := range []struct{ nk, dv, ldv int }{{1, 32, 32}, {5, 64, 160}, {64, 128, 256}, {3, 96, 96}, {9, 192, 200}, {7, 40, 40}} {
				v := make([]uint16, (c.nk-1)*c.ldv+c.dv)
				for i := range v {
					v[i] = f32ToF16Go(float32(r.NormFloat64()))
				}
				w := make([]float32, c.nk)
				for i := range w {
					w[i] = float32(r.Float64())
				}
				acc := make([]float32, c.dv)
				want := make([]float32, c.dv)
				for i := range acc {
					acc[i] = float32(r.NormFloat64())
					want[i] = acc[i]
				}
				for k := 0; k < c.nk; k++ {
					for d := range want {
						x := f16ToF32Go(v[k*c.ldv+d])
						if useASM && c.dv%32 == 0 {
							want[d] = float32(math.FMA(float64(w[k]), float64(x), float64(want[d])))
						} else {
							want[d] += w[k] * x
						}
					}
				}
				WeightedSumF16Rows(c.nk, v, c.ldv, w, acc)
				for d := range acc {
					if acc[d] != want[d] {
						t.Fatalf("%v %+v: acc[%d] = %v, want %v", s, c, d, acc[d], want[d])
					}
				}
			}
		})
	}
}

// TestWeightedSumF16RowsHeads: every head's sums are exactly those of a WeightedSumF16Rows call of
// its own, on every kernel set, for head counts that fill the four-head kernel, leave a rest, or
// are under four, and head widths it takes (multiples of 64) or leaves to the one-head kernels;
// the weights and accumulators of other heads and the slack between them stay untouched.
func TestWeightedSumF16RowsHeads(t *testing.T) {
	r := newRand(4)
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, c := range []struct{ nk, dv, ldv, ldw, nh int }{
				{1, 64, 64, 1, 4}, {5, 64, 160, 8, 8}, {37, 128, 256, 40, 5}, {3, 64, 64, 3, 3},
				{9, 192, 200, 16, 6}, {7, 32, 40, 7, 4}, {256, 64, 256, 256, 8},
			} {
				v := make([]uint16, (c.nk-1)*c.ldv+c.dv)
				for i := range v {
					v[i] = f32ToF16Go(float32(r.NormFloat64()))
				}
				w := make([]float32, (c.nh-1)*c.ldw+c.nk)
				for i := range w {
					w[i] = float32(r.Float64())
				}
				acc := make([]float32, c.nh*c.dv+5)
				for i := range acc {
					acc[i] = float32(r.NormFloat64())
				}
				want := append([]float32(nil), acc...)
				for h := range c.nh {
					WeightedSumF16Rows(c.nk, v, c.ldv, w[h*c.ldw:h*c.ldw+c.nk], want[h*c.dv:(h+1)*c.dv])
				}
				WeightedSumF16RowsHeads(c.nk, v, c.ldv, w, c.ldw, acc, c.dv, c.nh)
				for i := range acc {
					if acc[i] != want[i] {
						t.Fatalf("%v %+v: acc[%d] = %v, want %v", s, c, i, acc[i], want[i])
					}
				}
			}
		})
	}
	for _, bad := range []func(){
		func() {
			WeightedSumF16RowsHeads(2, make([]uint16, 128), 64, make([]float32, 3), 2, make([]float32, 128), 64, 2)
		},
		func() {
			WeightedSumF16RowsHeads(2, make([]uint16, 128), 64, make([]float32, 4), 2, make([]float32, 127), 64, 2)
		},
		func() {
			WeightedSumF16RowsHeads(2, make([]uint16, 127), 64, make([]float32, 4), 2, make([]float32, 128), 64, 2)
		},
		func() {
			WeightedSumF16RowsHeads(3, make([]uint16, 192), 64, make([]float32, 6), 2, make([]float32, 128), 64, 2)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("a short operand did not panic")
				}
			}()
			bad()
		}()
	}
}

// TestScoresF32: every length and offset, masked keys (-Inf) with finite, infinite and NaN dots,
// NaN and finite masks; each set's kernel gives the twin's bits, which are float32(d·scale)+m or
// -Inf; in place over d as well.
func TestScoresF32(t *testing.T) {
	r := newRand(5)
	negInf, inf, nan := float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN())
	for _, s := range supportedSets() {
		withSet(s, func() {
			for _, n := range testLengths {
				for _, off := range testOffsets {
					d := randF32(r, n+off, -8, 8)[off:]
					m := randF32(r, n+off, -2, 0)[off:]
					for i := range n {
						switch i % 7 {
						case 1:
							m[i] = negInf
						case 2:
							m[i], d[i] = negInf, nan
						case 3:
							m[i], d[i] = negInf, inf
						case 4:
							d[i] = inf
						case 5:
							m[i] = nan
						}
					}
					const scale = 0.125
					df, dst := guarded(n, off)
					ScoresF32(dst, d, m, scale)
					checkGuards(t, "ScoresF32", df, off, n)
					for i := range n {
						want := float32(d[i]*scale) + m[i]
						if m[i] == negInf {
							want = negInf
						}
						if math.Float32bits(dst[i]) != math.Float32bits(want) && !(want != want && dst[i] != dst[i]) {
							t.Fatalf("%v n=%d off=%d: [%d] d=%v m=%v: %v, want %v", s, n, off, i, d[i], m[i], dst[i], want)
						}
					}
					in := append([]float32(nil), d...)
					ScoresF32(in, in, m, scale)
					for i := range n {
						if math.Float32bits(in[i]) != math.Float32bits(dst[i]) {
							t.Fatalf("%v n=%d: in place [%d] %v, want %v", s, n, i, in[i], dst[i])
						}
					}
				}
			}
		})
	}
}
