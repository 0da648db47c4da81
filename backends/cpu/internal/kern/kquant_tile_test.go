package kern

import (
	"math"
	"testing"

	"github.com/tandem-ml/tandem/core/quant"
)

// kqTiles pairs each kqCases entry with its tile function.
var kqTiles = map[string]KTile{
	"q4_K":   TileQ4_KQ8_K,
	"q5_K":   TileQ5_KQ8_K,
	"q6_K":   TileQ6_KQ8_K,
	"iq4_xs": TileIQ4_XSQ8_K,
	"iq4_nl": TileIQ4_NLQ8_0,
}

// TestKQuantTiles: the tile kernels against the row dots and ggml's generic kernels for odd
// m and n (1 to 9 activation rows: the 4-row and 1-row kernels), k across the k-blocking,
// row strides with padding and operands at odd addresses; per entry within 1e-5 of Σ|x·y|.
func TestKQuantTiles(t *testing.T) {
	r := newRand(21)
	for _, c := range kqCases {
		tile := kqTiles[c.name]
		for trial := range 12 {
			nblk := 1 + r.IntN(40)
			if trial == 0 {
				nblk = 2*kTileKC + 3
			}
			if c.qk == 32 {
				nblk = 1 + r.IntN(300)
			}
			k := nblk * c.qk
			m, n := 1+r.IntN(9), 1+r.IntN(9)
			xs, ys := nblk*c.bs, k/32*c.actBs
			if c.qk == 256 {
				ys = nblk * c.actBs
			}
			ldx, ldy := xs+r.IntN(7), ys+r.IntN(7)
			ldc := m + r.IntN(3)
			// Odd offsets: the kernels must not assume any alignment.
			xbuf := make([]byte, 1+(m-1)*ldx+xs)[1:]
			ybuf := make([]byte, 3+(n-1)*ldy+ys)[3:]
			xd := make([][]float32, m)
			yd := make([][]float32, n)
			for i := range m {
				v := kqRow(r, k, trial+i)
				c.quantize(v, xbuf[i*ldx:i*ldx+xs])
				xd[i] = make([]float32, k)
				dequant(c, xbuf[i*ldx:], xd[i])
			}
			for j := range n {
				v := kqRow(r, k, trial+j+1)
				c.actQuant(v, ybuf[j*ldy:j*ldy+ys])
				yd[j] = make([]float32, k)
				if c.qk == 256 {
					quant.DequantizeRowQ8_K(ybuf[j*ldy:j*ldy+ys], yd[j])
				} else {
					quant.DequantizeRowQ8_0(ybuf[j*ldy:j*ldy+ys], yd[j])
				}
			}
			check := func(impl string) {
				cs := make([]float32, (n-1)*ldc+m)
				for i := range cs {
					cs[i] = float32(math.NaN()) // every entry must be written
				}
				tile(k, xbuf, ldx, m, ybuf, ldy, n, cs, ldc)
				for j := range n {
					for i := range m {
						got := cs[j*ldc+i]
						dot := c.fast(k, xbuf[i*ldx:], ybuf[j*ldy:])
						ref := c.ref(k, xbuf[i*ldx:], ybuf[j*ldy:])
						var mag float64
						for e := range k {
							mag += math.Abs(float64(xd[i][e]) * float64(yd[j][e]))
						}
						if d := math.Abs(float64(got - dot)); !(d <= 1e-5*mag+1e-6) {
							t.Fatalf("%s %s k=%d m=%d n=%d (%d,%d): tile %v, row dot %v (|terms| %g)", impl, c.name, k, m, n, i, j, got, dot, mag)
						}
						if d := math.Abs(float64(got - ref)); !(d <= 1e-5*mag+1e-6) {
							t.Fatalf("%s %s k=%d m=%d n=%d (%d,%d): tile %v, generic %v", impl, c.name, k, m, n, i, j, got, ref)
						}
					}
				}
			}
			check("fast")
			withASM(false, func() { check("go") })
		}
	}
}

func TestKQuantTileKernelsActive(t *testing.T) {
	for name, s := range map[string]*kTileSpec{
		"q4_K": q4kTile, "q5_K": q5kTile, "q6_K": q6kTile, "iq4_xs": iq4xsTile, "iq4_nl": iq4nlTile,
	} {
		k1, k4 := s.kernels()
		t.Logf("%s tile kernels: 1-row %v, 4-row %v (VNNI %v)", name, k1 != nil, k4 != nil, kqVNNI())
		want := kqVNNI() && (name != "iq4_nl" || hasVBMI) && (name != "iq4_xs" || hasBMI2)
		if want && (k1 == nil || k4 == nil) {
			t.Fatalf("the AVX-512 VNNI set has no %s tile kernels", name)
		}
	}
}
