package kern

import (
	"math"
	"testing"
)

// TestKernel12x32BF16Twin: the pure-Go twin against a float64 reference, and the VDPBF16PS
// micro-kernel (where the CPU has it) against the twin, bit for bit, on random pairs with bf16 subnormals, zeros and a large range of magnitudes mixed in, for
// short and long k, overwriting and accumulating.
func TestKernel12x32BF16Twin(t *testing.T) {
	r := newRand(91)
	word := func() float32 {
		var h [2]uint16
		for i := range h {
			switch r.IntN(8) {
			case 0:
				h[i] = uint16(r.IntN(0x80)) | uint16(r.IntN(2))<<15 // subnormal or zero
			case 1:
				h[i] = uint16(r.IntN(0x10000))&^0x7f80 | 0x0080 // tiny normal
			default:
				f := float32(r.Float64()*4 - 2)
				h[i] = uint16(math.Float32bits(f) >> 16)
			}
		}
		return math.Float32frombits(uint32(h[0]) | uint32(h[1])<<16)
	}
	for _, kp := range []int{1, 3, 4, 5, 64, 131} {
		bs := bStride(kp)
		ap := make([]float32, 2*gemmNR*kp)
		bp := make([]float32, 2*bs)
		for i := range ap {
			ap[i] = word()
		}
		for i := range bp {
			bp[i] = word()
		}
		for _, accum := range []bool{false, true} {
			const ldc = 2*gemmNR + 3
			got := make([]float32, 2*gemmMR*ldc)
			want := make([]float32, len(got))
			for i := range got {
				got[i] = float32(i%7) - 3
				want[i] = got[i]
			}
			kernel12x32BF16Go(kp, ap, bp, bs, want, ldc, accum)
			// The twin against a float64 reference of the same pair products.
			for j := 0; j < 2*gemmMR; j++ {
				for i := 0; i < 2*gemmNR; i++ {
					var ref, mag float64
					if accum {
						ref = float64(got[j*ldc+i])
					}
					for q := 0; q < kp; q++ {
						aw := math.Float32bits(ap[(i/gemmNR)*gemmNR*kp+q*gemmNR+i%gemmNR])
						bw := math.Float32bits(bp[(j/gemmMR)*bs+q*gemmMR+j%gemmMR])
						for h := 0; h < 32; h += 16 {
							p := float64(bf16DAZ(uint16(aw>>h))) * float64(bf16DAZ(uint16(bw>>h)))
							ref += p
							mag += math.Abs(p)
						}
					}
					if d := math.Abs(float64(want[j*ldc+i]) - ref); d > 1e-6*mag+1e-30 {
						t.Fatalf("kp=%d accum=%v: twin C[%d,%d] = %g, reference %g", kp, accum, j, i, want[j*ldc+i], ref)
					}
				}
			}
			if !useBF16 {
				continue // no VDPBF16PS kernel on this CPU/build: the twin is all there is
			}
			kernel12x32BF16(kp, ap, bp, bs, got, ldc, accum)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("kp=%d accum=%v: C[%d] = %g, twin %g", kp, accum, i, got[i], want[i])
				}
			}
		}
	}
}

// TestPackPairs: pair packing by hand on a 3-row panel of 2 rows (the third is padding) with an
// odd k, and the assembly transpose path (a full 16-row panel) against the Go loop.
func TestPackPairs(t *testing.T) {
	src := []uint16{1, 2, 3, 4, 5, 0, 6, 7, 8, 9, 10, 0} // two rows of 5 (+1 padding), ld 6
	dst := make([]float32, 3*3)
	for i := range dst {
		dst[i] = float32(math.NaN())
	}
	packPairs(dst, src, 6, 0, 2, 3, 5)
	want := []uint32{1 | 2<<16, 6 | 7<<16, 0, 3 | 4<<16, 8 | 9<<16, 0, 5, 10, 0}
	for i, w := range want {
		if got := math.Float32bits(dst[i]); got != w {
			t.Fatalf("slot %d: %#x, want %#x", i, got, w)
		}
	}
	for _, s := range supportedSets() {
		withSet(s, func() {
			const ld, kb = 70, 67 // even stride, odd k: transpose for 32 pairs, the loop for 2
			r := newRand(5)
			a := make([]uint16, 17*ld)
			for i := range a {
				a[i] = uint16(r.IntN(0x10000))
			}
			for _, nr := range []int{gemmNR, gemmMR} {
				got := make([]float32, nr*pairSteps(kb)+2)
				want := make([]float32, len(got))
				packPairs(got, a, ld, 2, nr, nr, kb)
				for q := 0; q < pairSteps(kb); q++ {
					for row := 0; row < nr; row++ {
						w := uint32(a[2+row*ld+2*q])
						if 2*q+1 < kb {
							w |= uint32(a[2+row*ld+2*q+1]) << 16
						}
						want[q*nr+row] = math.Float32frombits(w)
					}
				}
				for i := 0; i < nr*pairSteps(kb); i++ {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%v nr=%d: slot %d = %#x, want %#x", s, nr, i, math.Float32bits(got[i]), math.Float32bits(want[i]))
					}
				}
			}
		})
	}
}
