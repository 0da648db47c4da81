package cpu

import "github.com/tandem-ml/tandem/core"

// OUT_PROD, after ggml_compute_forward_out_prod_f32 / _q_f32 (ggml/src/ggml-cpu/ops.cpp):
// dst[i0, i1, i2, i3] = Σ_l a[i0, l, i2/dps2, i3/dps3] · b[i1, l, i2, i3], with dps2 = ne2/ne02 and
// dps3 = ne3/ne03 — a is broadcast over the batch dimensions by division (group-query style, as
// ggml's out_prod and mul_mat do), not by tiling. Quantized, f16 and bf16 rows of a are dequantized
// to f32 (ggml: the F32 row per task in wdata); accumulation is in f32 as in ggml_vec_mad_f32.
// Rows (i1, i2, i3) of dst are split among all workers (ggml: n_threads); any strides work for a
// and b (transposed b included).

func init() {
	register(core.OpOutProd, opImpl{compute: computeOutProd, work: outProdWork, supports: outProdSupports})
}

func outProdSupports(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	switch {
	case a == nil || b == nil || !a.Type.CanDequantize() || a.Type == core.TypeI32:
		return false
	case b.Type != core.TypeF32 || dst.Type != core.TypeF32:
		return false
	case a.Ne[1] != b.Ne[1] || dst.Ne != [4]int64{a.Ne[0], b.Ne[0], b.Ne[2], b.Ne[3]}:
		return false
	}
	return a.Ne[2] > 0 && a.Ne[3] > 0 && b.Ne[2]%a.Ne[2] == 0 && b.Ne[3]%a.Ne[3] == 0
}

// outProdWork: an accumulator row and a converted row of a per worker.
func outProdWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(2*dst.Ne[0], nTasks) }

func computeOutProd(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	da, db, dd := a.Data(), b.Data(), dst.Data()
	ne0 := dst.Ne[0]
	buf := scratch(p, 2*ne0)
	acc, arow := buf[:ne0], buf[ne0:2*ne0]
	nk := a.Ne[1]
	dps2, dps3 := dst.Ne[2]/a.Ne[2], dst.Ne[3]/a.Ne[3]
	direct := a.Type == core.TypeF32 && a.Nb[0] == 4
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		i02, i03 := i2/dps2, i3/dps3
		for i := range acc {
			acc[i] = 0
		}
		ob := i1*b.Nb[0] + i2*b.Nb[2] + i3*b.Nb[3]
		for l := int64(0); l < nk; l++ {
			v := getF32(db, ob+l*b.Nb[1])
			x := arow
			if direct {
				x = f32s(da[l*a.Nb[1]+i02*a.Nb[2]+i03*a.Nb[3]:])[:ne0]
			} else {
				loadRow(a, da, l, i02, i03, arow)
			}
			for i, xv := range x {
				acc[i] += xv * v
			}
		}
		storeRow(dst, dd, i1, i2, i3, acc)
	}
}
