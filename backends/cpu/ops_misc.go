package cpu

import "github.com/tandem-ml/tandem/core"

// REPEAT and CONCAT move element bytes without conversion, so they are exact for every
// non-quantized type (f32, f16, bf16, integers). Any strides work on either side.

func init() {
	register(core.OpRepeat, opImpl{compute: computeRepeat, tasks: rowsTasks, supports: repeatSupports})
	register(core.OpConcat, opImpl{compute: computeConcat, tasks: rowsTasks, supports: concatSupports})
}

func repeatSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	if a == nil || a.Type != dst.Type || a.Type.IsQuantized() || a.Type.Size() == 0 {
		return false
	}
	for i := 0; i < core.MaxDims; i++ {
		if a.Ne[i] == 0 || dst.Ne[i]%a.Ne[i] != 0 {
			return false
		}
	}
	return true
}

// computeRepeat tiles src0 over dst (ggml_compute_forward_repeat): dst[i0,i1,i2,i3] =
// src0[i0 % ne00, i1 % ne01, i2 % ne02, i3 % ne03]. ggml uses one thread; rows of dst are
// independent, so every worker takes a share.
func computeRepeat(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	es := a.Type.Size()
	ne00 := a.Ne[0]
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		doff := eltRowOff(dst, i1, i2, i3)
		soff := eltRowOff(a, i1%a.Ne[1], i2%a.Ne[2], i3%a.Ne[3])
		for k := int64(0); k < dst.Ne[0]; k += ne00 {
			eltCopyElems(dd, doff+k*dst.Nb[0], dst.Nb[0], da, soff, a.Nb[0], ne00, es)
		}
	}
}

func concatSupports(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	dim := core.ConcatDimOf(dst)
	if a == nil || b == nil || a.Type != b.Type || a.Type != dst.Type || a.Type.Size() == 0 ||
		dim < 0 || dim >= core.MaxDims {
		return false
	}
	if q := a.Type.Size(); a.Type.IsQuantized() && (a.Nb[0] != q || b.Nb[0] != q || dst.Nb[0] != q) {
		return false
	}
	for d := 0; d < core.MaxDims; d++ {
		want := a.Ne[d]
		if d == dim {
			want += b.Ne[d]
		} else if a.Ne[d] != b.Ne[d] {
			return false
		}
		if dst.Ne[d] != want {
			return false
		}
	}
	return true
}

// computeConcat joins src0 and src1 along dimension ConcatDimOf(dst) (ggml_compute_forward_concat):
// elements whose index along dim is below src0's extent come from src0, the rest from src1 at
// that index minus src0's extent.
func computeConcat(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	da, db, dd := a.Data(), b.Data(), dst.Data()
	dim := core.ConcatDimOf(dst)
	es := a.Type.Size()
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	if a.Type.IsQuantized() {
		// whole rows of blocks, as ggml_compute_forward_concat_any (concatSupports: rows dense)
		ra, rb := a.Type.RowSize(a.Ne[0]), b.Type.RowSize(b.Ne[0])
		for ir := r0; ir < r1; ir++ {
			i1, i2, i3 := unravel(ir, dst.Ne)
			doff := eltRowOff(dst, i1, i2, i3)
			idx := [4]int64{0, i1, i2, i3}
			switch {
			case dim == 0:
				copy(dd[doff:doff+ra], da[eltRowOff(a, i1, i2, i3):])
				copy(dd[doff+ra:doff+ra+rb], db[eltRowOff(b, i1, i2, i3):])
			case idx[dim] < a.Ne[dim]:
				copy(dd[doff:doff+ra], da[eltRowOff(a, i1, i2, i3):])
			default:
				idx[dim] -= a.Ne[dim]
				copy(dd[doff:doff+rb], db[eltRowOff(b, idx[1], idx[2], idx[3]):])
			}
		}
		return
	}
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		doff := eltRowOff(dst, i1, i2, i3)
		if dim == 0 {
			eltCopyElems(dd, doff, dst.Nb[0], da, eltRowOff(a, i1, i2, i3), a.Nb[0], a.Ne[0], es)
			eltCopyElems(dd, doff+a.Ne[0]*dst.Nb[0], dst.Nb[0], db, eltRowOff(b, i1, i2, i3), b.Nb[0], b.Ne[0], es)
			continue
		}
		idx := [4]int64{0, i1, i2, i3}
		if idx[dim] < a.Ne[dim] {
			eltCopyElems(dd, doff, dst.Nb[0], da, eltRowOff(a, i1, i2, i3), a.Nb[0], a.Ne[0], es)
			continue
		}
		idx[dim] -= a.Ne[dim]
		eltCopyElems(dd, doff, dst.Nb[0], db, eltRowOff(b, idx[1], idx[2], idx[3]), b.Nb[0], b.Ne[0], es)
	}
}
