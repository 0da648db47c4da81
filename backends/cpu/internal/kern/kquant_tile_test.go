package kern

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
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

// TestKQuantTiles: the tile kernels of every kernel set this CPU runs against the row dots and
// ggml's generic kernels for odd m and n (1 to 9 activation rows: the 4-row and 1-row
// kernels), k across the k-blocking, row strides with padding and operands at odd addresses;
// per entry within 1e-5 of Σ|x·y|.
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
			for _, set := range supportedSets() {
				withSet(set, func() { check(set.String()) })
			}
		}
	}
}

// kqSpecs pairs each kqCases entry with its tile spec.
var kqSpecs = map[string]*kTileSpec{
	"q4_K": q4kTile, "q5_K": q5kTile, "q6_K": q6kTile, "iq4_xs": iq4xsTile, "iq4_nl": iq4nlTile,
}

func TestKQuantTileKernelsActive(t *testing.T) {
	for name, s := range kqSpecs {
		k1, k4, _ := s.kernels()
		t.Logf("%s tile kernels: 1-row %v, 4-row %v (VNNI %v)", name, k1 != nil, k4 != nil, kqVNNI())
		want := kqVNNI() && (name[:3] != "iq4" || hasVBMI) && (name != "iq4_xs" || hasBMI2)
		if want && (k1 == nil || k4 == nil) {
			t.Fatalf("the AVX-512 VNNI set has no %s tile kernels", name)
		}
	}
}

// TestKQuantTileFullRange: the tile kernels of every kernel set against ggml's generic dots
// for activations that use every int8 value, −128 included (a Q8_0 or Q8_K operand may come
// from outside the quantizers, which stop at ±127): the kernels' offsets and int16 pair sums
// must stay exact there too. Only where the tile kernels run: the AVX2 IQ4 row dots they fall
// back to use a sign trick (as ggml's do) that assumes |q8| ≤ 127.
func TestKQuantTileFullRange(t *testing.T) {
	for _, set := range supportedSets() {
		withSet(set, func() { kqTileFullRange(t, set) })
	}
}

func kqTileFullRange(t *testing.T, set KernelSet) {
	r := newRand(5)
	for _, c := range kqCases {
		if k1, _, _ := kqSpecs[c.name].kernels(); k1 == nil {
			t.Logf("%v, %s: no tile kernels", set, c.name)
			continue
		}
		k := 3 * 256
		if c.qk == 32 {
			k = 24 * 32 // whole groups of eight blocks: a tail block would take the row dot
		}
		m, n := 3, 5 // the 4-row and the 1-row kernels
		xs, ys := k/c.qk*c.bs, k/32*c.actBs
		if c.qk == 256 {
			ys = k / 256 * c.actBs
		}
		x := make([]byte, m*xs)
		xd := make([][]float32, m)
		for i := range m {
			c.quantize(kqRow(r, k, i), x[i*xs:(i+1)*xs])
			xd[i] = make([]float32, k)
			dequant(c, x[i*xs:], xd[i])
		}
		y := make([]byte, n*ys)
		yd := make([][]float32, n)
		for j := range n {
			row := y[j*ys : (j+1)*ys]
			for b := 0; b < len(row); b += c.actBs {
				blk := row[b : b+c.actBs]
				if c.qk == 32 {
					binary.LittleEndian.PutUint16(blk, 0x2c00) // d = 1/16
					for e := range 32 {
						blk[2+e] = kqFullRangeByte(r)
					}
					continue
				}
				binary.LittleEndian.PutUint32(blk, math.Float32bits(1.0/64))
				for g := range 16 {
					var sum int16
					for e := range 16 {
						v := kqFullRangeByte(r)
						blk[4+16*g+e] = v
						sum += int16(int8(v))
					}
					binary.LittleEndian.PutUint16(blk[260+2*g:], uint16(sum))
				}
			}
			yd[j] = make([]float32, k)
			if c.qk == 256 {
				quant.DequantizeRowQ8_K(row, yd[j])
			} else {
				quant.DequantizeRowQ8_0(row, yd[j])
			}
		}
		cs := make([]float32, n*m)
		kqTiles[c.name](k, x, xs, m, y, ys, n, cs, m)
		for j := range n {
			for i := range m {
				ref := c.ref(k, x[i*xs:], y[j*ys:])
				var mag float64
				for e := range k {
					mag += math.Abs(float64(xd[i][e]) * float64(yd[j][e]))
				}
				if d := math.Abs(float64(cs[j*m+i] - ref)); !(d <= 1e-5*mag+1e-6) {
					t.Fatalf("%v, %s (%d,%d): tile %v, generic %v (|terms| %g)", set, c.name, i, j, cs[j*m+i], ref, mag)
				}
			}
		}
	}
}

// kqFullRangeByte is a random int8 that is −128 or −127 one time in four.
func kqFullRangeByte(r *rand.Rand) byte {
	switch r.IntN(8) {
	case 0:
		return 0x80
	case 1:
		return 0x81
	}
	return byte(r.Uint32())
}
