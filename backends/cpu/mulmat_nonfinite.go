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
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	var f *nonFiniteFixer
	fixNonFiniteChunk(&f, dst, dst.Data(), 0, dst.Ne[0], r0, r1)
}

// fixNonFiniteChunk recomputes the non-finite outputs among rows [ir1s, ir1e) (flat src1 row
// indices) x columns [ir0s, ir0e) of a MUL_MAT node whose weights are not f32: a dot route's
// chunk, fixed by the worker that computed it. *f is made at the first non-finite output.
func fixNonFiniteChunk(f **nonFiniteFixer, dst *core.Tensor, dd []byte, ir0s, ir0e, ir1s, ir1e int64) {
	a, b := dst.Src[0], dst.Src[1]
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	for ir := ir1s; ir < ir1e; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		row := f32s(dd[i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3]:])[ir0s:ir0e]
		if allFinite(row) {
			continue
		}
		if *f == nil {
			*f = newNonFiniteFixer(a)
		}
		(*f).fixRow(row, ir0s, i2/r2, i3/r3, b, b.Data(), i1, i2, i3)
	}
}

// nonFiniteFixer recomputes one worker's non-finite outputs against the weights a (repacked or
// standard), its scratch rows made on first use (a non-finite output is rare).
type nonFiniteFixer struct {
	a        *core.Tensor
	da, raw  []byte
	rl       repackLayout
	repacked bool
	w, x     []float32
	wrow     []byte
}

func newNonFiniteFixer(a *core.Tensor) *nonFiniteFixer {
	f := &nonFiniteFixer{a: a, da: a.Data()}
	f.raw, f.rl, f.repacked = repackedOf(a)
	return f
}

// fixRow replaces each non-finite row[i] by the float32 dot of weight row first+i of a's slice
// (a2, a3) with the activation row (j1, j2, j3) of b.
func (f *nonFiniteFixer) fixRow(row []float32, first, a2, a3 int64, b *core.Tensor, db []byte, j1, j2, j3 int64) {
	k := f.a.Ne[0]
	loaded := false
	for i, v := range row {
		if v-v == 0 { // finite
			continue
		}
		i0 := first + int64(i)
		if !loaded {
			if f.x == nil {
				f.w, f.x = make([]float32, k), make([]float32, k)
			}
			loadRow(b, db, j1, j2, j3, f.x)
			loaded = true
		}
		if f.repacked {
			if f.wrow == nil {
				f.wrow = make([]byte, f.rl.rowBytes())
			}
			loadRepackedRow(f.a, f.raw, f.rl, i0, a2, a3, f.wrow, f.w)
		} else {
			loadRow(f.a, f.da, i0, a2, a3, f.w)
		}
		var s float32
		for j := range f.w {
			s += f.w[j] * f.x[j]
		}
		row[i] = s
	}
}
