package cpu

import "github.com/tandem-ml/tandem/core"

// Non-finite MUL_MAT results with f16, bf16 or quantized weights. The fast and reference paths
// convert the activations to the weights' vec-dot type (f16, or Q8 blocks whose scales multiply):
// an activation beyond f16's range becomes ±Inf, and with a weight block whose scale is ±Inf or
// NaN (weights holding Inf), or an activation that is ±Inf, the product of scales and integer sums
// gives ±Inf or NaN by other rules than float arithmetic on the dequantized weights, which is what
// the Vulkan backend computes. tandem's rule: a non-finite MUL_MAT result is the float32 dot
// product of the dequantized weight row and the float32 activation row (IEEE: finite if it fits,
// ±Inf, or NaN where an infinity meets a zero or one of the opposite sign). A non-finite result
// is rare, and each of these causes always makes the converted result non-finite, so after the
// node has run each worker recomputes exactly its share of the non-finite outputs that way (NaN
// activations give NaN both ways: core/quant's Q8 rule keeps them).

// fixNonFiniteDots recomputes the non-finite outputs of a MUL_MAT node whose weights are not f32.
// Every worker calls it after the node's main computation.
func fixNonFiniteDots(p *params, dst *core.Tensor) {
	p.barrier() // every worker's outputs are written
	a, b := dst.Src[0], dst.Src[1]
	da, db, dd := a.Data(), b.Data(), dst.Data()
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	k := a.Ne[0]
	var w, x []float32
	raw, rl, repacked := repackedOf(a)
	var wrow []byte
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		row := f32s(dd[i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3]:])
		loaded := false
		for i0 := int64(0); i0 < dst.Ne[0]; i0++ {
			if v := row[i0]; v-v == 0 { // finite
				continue
			}
			if !loaded {
				if x == nil {
					w, x = make([]float32, k), make([]float32, k)
				}
				loadRow(b, db, i1, i2, i3, x)
				loaded = true
			}
			if repacked {
				if wrow == nil {
					wrow = make([]byte, rl.rowBytes())
				}
				loadRepackedRow(a, raw, rl, i0, i2/r2, i3/r3, wrow, w)
			} else {
				loadRow(a, da, i0, i2/r2, i3/r3, w)
			}
			var s float32
			for j := range w {
				s += w[j] * x[j]
			}
			row[i0] = s
		}
	}
}
