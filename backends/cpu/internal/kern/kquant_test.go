package kern

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core/quant"
)

// kqCase is one weight type of the K-quant/IQ4 dots with its reference (quant's port of
// ggml's generic kernel) and quantizers.
type kqCase struct {
	name      string
	qk, bs    int
	quantize  func([]float32, []byte)
	actQuant  func([]float32, []byte)
	actBs     int
	fast, ref func(int, []byte, []byte) float32
	exact     bool // equal to the generic kernel bit for bit
}

var kqCases = []kqCase{
	{"q4_K", 256, blockQ4_K, quant.QuantizeRowQ4_K, quant.QuantizeRowQ8_K, blockQ8_K, DotQ4_KQ8_K, quant.DotQ4_KQ8_K, false},
	{"q5_K", 256, blockQ5_K, quant.QuantizeRowQ5_K, quant.QuantizeRowQ8_K, blockQ8_K, DotQ5_KQ8_K, quant.DotQ5_KQ8_K, false},
	{"q6_K", 256, blockQ6_K, quant.QuantizeRowQ6_K, quant.QuantizeRowQ8_K, blockQ8_K, DotQ6_KQ8_K, quant.DotQ6_KQ8_K, false},
	{"iq4_xs", 256, blockIQ4XS, quant.QuantizeRowIQ4_XS, quant.QuantizeRowQ8_K, blockQ8_K, DotIQ4_XSQ8_K, quant.DotIQ4_XSQ8_K, true},
	{"iq4_nl", 32, blockIQ4NL, quant.QuantizeRowIQ4_NL, quant.QuantizeRowQ8_0, BlockQ8_0Size, DotIQ4_NLQ8_0, quant.DotIQ4_NLQ8_0, true},
}

// kqRow returns n values of one of several distributions (uniform, gaussian-like with
// outliers, all positive, all negative, zeros with spikes).
func kqRow(r *rand.Rand, n, fam int) []float32 {
	x := make([]float32, n)
	for i := range x {
		v := float32(r.NormFloat64())
		switch fam % 5 {
		case 0:
			v = r.Float32()*2 - 1
		case 1:
			if r.IntN(50) == 0 {
				v *= 40
			}
		case 2:
			v = r.Float32() + 0.1
		case 3:
			v = -r.Float32()*3 - 1
		case 4:
			if r.IntN(8) != 0 {
				v = 0
			}
		}
		x[i] = v
	}
	return x
}

// TestKQuantDots: the AVX2 integer kernels and their pure-Go twins give identical results
// (bit for bit, including the float part); IQ4 dots equal ggml's generic kernels exactly, the
// K-quant dots agree with them to float rounding; all agree with a float64 dot of the
// dequantized rows.
func TestKQuantDots(t *testing.T) {
	t.Logf("asm %v, AVX-512 VNNI %v", useASM, kqVNNI())
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range kqCases {
		for trial := range 40 {
			nblk := 1 + r.IntN(80) // crosses the 64-super-block chunk
			if c.qk == 32 {
				nblk = 1 + r.IntN(600)
			}
			n := nblk * c.qk
			x := kqRow(r, n, trial)
			yv := kqRow(r, n, trial+2)
			xq := make([]byte, nblk*c.bs)
			yq := make([]byte, n/32*c.actBs)
			if c.qk == 256 {
				yq = make([]byte, nblk*c.actBs)
			}
			c.quantize(x, xq)
			c.actQuant(yv, yq)
			fast := c.fast(n, xq, yq)
			var twin float32
			withASM(false, func() { twin = c.fast(n, xq, yq) })
			if math.Float32bits(fast) != math.Float32bits(twin) {
				t.Fatalf("%s n=%d: asm %v, twin %v", c.name, n, fast, twin)
			}
			if avx2 := withoutVNNI(func() float32 { return c.fast(n, xq, yq) }); math.Float32bits(avx2) != math.Float32bits(twin) {
				t.Fatalf("%s n=%d: AVX2 %v, twin %v", c.name, n, avx2, twin)
			}
			ref := c.ref(n, xq, yq)
			if c.exact {
				if math.Float32bits(fast) != math.Float32bits(ref) {
					t.Fatalf("%s n=%d: %v, generic %v", c.name, n, fast, ref)
				}
			}
			// Against float64 on the dequantized rows.
			xd := make([]float32, n)
			yd := make([]float32, n)
			dequant(c, xq, xd)
			if c.qk == 256 {
				quant.DequantizeRowQ8_K(yq, yd)
			} else {
				quant.DequantizeRowQ8_0(yq, yd)
			}
			var want, mag float64
			for i := range xd {
				want += float64(xd[i]) * float64(yd[i])
				mag += math.Abs(float64(xd[i]) * float64(yd[i]))
			}
			if d := math.Abs(float64(fast - ref)); d > 1e-5*mag {
				t.Fatalf("%s n=%d: %v, generic %v (|terms| %g)", c.name, n, fast, ref, mag)
			}
			if d := math.Abs(float64(fast) - want); d > 1e-5*mag+1e-6 {
				t.Fatalf("%s n=%d: %v, float64 %v", c.name, n, fast, want)
			}
		}
	}
}

func dequant(c kqCase, q []byte, dst []float32) {
	switch c.name {
	case "q4_K":
		quant.DequantizeRowQ4_K(q, dst)
	case "q5_K":
		quant.DequantizeRowQ5_K(q, dst)
	case "q6_K":
		quant.DequantizeRowQ6_K(q, dst)
	case "iq4_xs":
		quant.DequantizeRowIQ4_XS(q, dst)
	case "iq4_nl":
		quant.DequantizeRowIQ4_NL(q, dst)
	}
}

// BenchmarkKQuantDot: one 4096-element row (a 4096-wide weight row against its activations)
// per iteration, for each path: the default (VNNI or AVX2), AVX2, the pure-Go twin and the
// reference port of ggml's generic kernel.
func BenchmarkKQuantDot(b *testing.B) {
	const n = 4096
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range kqCases {
		x := kqRow(r, n, 1)
		y := kqRow(r, n, 0)
		xq := make([]byte, n/c.qk*c.bs)
		yq := make([]byte, n/32*c.actBs)
		if c.qk == 256 {
			yq = make([]byte, n/256*c.actBs)
		}
		c.quantize(x, xq)
		c.actQuant(y, yq)
		run := func(name string, f func() float32) {
			b.Run(c.name+"/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(xq)))
				for b.Loop() {
					f()
				}
			})
		}
		run("default", func() float32 { return c.fast(n, xq, yq) })
		run("avx2", func() float32 { return withoutVNNI(func() float32 { return c.fast(n, xq, yq) }) })
		run("twin", func() float32 {
			var v float32
			withASM(false, func() { v = c.fast(n, xq, yq) })
			return v
		})
		run("reference", func() float32 { return c.ref(n, xq, yq) })
	}
}

// TestQuantizeRowQ8_K: the AVX2 quantizer equals quant's reference port bit for bit on the
// families of kqRow plus zero, constant, tiny and huge blocks and exact rounding ties.
func TestQuantizeRowQ8_K(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 60 {
		nb := 1 + r.IntN(9)
		x := kqRow(r, nb*256, trial)
		switch trial % 6 {
		case 1:
			clear(x[256*(nb-1):]) // a zero block
		case 2:
			for i := range x {
				x[i] = float32(int(x[i]*10)) * 0.5 // ties when scaled
			}
		case 3:
			for i := range x {
				x[i] *= 1e-30
			}
		case 4:
			for i := range x {
				x[i] *= 1e30
			}
		case 5:
			for i := range x[:256] {
				x[i] = -2.5 // constant negative block
			}
		}
		want := make([]byte, nb*blockQ8_K)
		quant.QuantizeRowQ8_K(x, want)
		got := make([]byte, nb*blockQ8_K)
		for i := range got {
			got[i] = 0xAA // bsums and codes must all be written
		}
		QuantizeRowQ8_K(x, got)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("trial %d: byte %d (block %d offset %d) = %#x, reference %#x", trial, i, i/blockQ8_K, i%blockQ8_K, got[i], want[i])
			}
		}
	}
}

// TestDotK45NoAllocs: the Q4_K and Q5_K dots (a generic set's mat-vec calls one per row)
// allocate nothing.
func TestDotK45NoAllocs(t *testing.T) {
	const n = 512
	y := make([]byte, n/256*blockQ8_K)
	for _, c := range []struct {
		name string
		bs   int
		dot  func(n int, x, y []byte) float32
	}{{"Q4_K", blockQ4_K, DotQ4_KQ8_K}, {"Q5_K", blockQ5_K, DotQ5_KQ8_K}} {
		x := make([]byte, n/256*c.bs)
		if allocs := testing.AllocsPerRun(20, func() { c.dot(n, x, y) }); allocs != 0 {
			t.Errorf("%s: %v allocations per dot", c.name, allocs)
		}
	}
}
