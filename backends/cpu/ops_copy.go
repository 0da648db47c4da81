package cpu

import (
	"cmp"
	"slices"

	"github.com/tandem-ml/tandem/core"
)

// DUP, CONT and CPY copy src0's elements into dst in row-major element order (ggml_compute_forward_dup):
// when the shapes are equal that is element (i0,i1,i2,i3) to the same index; when they differ (CONT
// to a new shape, CPY into a tensor of another shape with the same element count) the k-th element
// of src0 in row-major order becomes the k-th of dst. Any strides work on either side (permuted
// sources, CPY into a strided view), except that a quantized dst must have dense rows.
//
//   - Same type: bytes are copied element by element (block by block for quantized types), so the
//     copy is exact for every type, integers and NaN payloads included.
//   - Different types: each dst row is gathered as f32 (dequantizing, widening f16/bf16, I32→F32)
//     and converted into dst (rounding, quantizing with the reference quantizer, F32→I32 truncating
//     as C's (int32_t) cast does). Quantization works block by block, so a quantized dst gets the
//     bytes Type.FromFloat gives for the same values in flat order.
//
// CPY's dst is a view of Src[1] (Cpy) or a tensor of its own (Cast, Src[1] nil); the kernel only
// writes dst. All workers share the rows of dst.

func init() {
	impl := opImpl{compute: computeCopy, tasks: copyTasks, work: copyWork, supports: copySupports}
	register(core.OpDup, impl)
	register(core.OpCont, impl)
	register(core.OpCpy, impl)
}

func copySupports(dst *core.Tensor) bool {
	src := dst.Src[0]
	if src == nil || src.NElements() != dst.NElements() || dst.Type.Size() == 0 {
		return false
	}
	if src.Type == dst.Type {
		return true
	}
	if !src.Type.CanDequantize() || !dst.Type.CanConvert() {
		return false
	}
	if src.Type.IsQuantized() && dst.Type.IsQuantized() {
		return false
	}
	if (src.Type == core.TypeI32 || dst.Type == core.TypeI32) && !(src.Type == core.TypeF32 || dst.Type == core.TypeF32) {
		return false
	}
	return !dst.Type.IsQuantized() || dst.IsContiguousRows()
}

// copyWork: a row of src0 and a row of dst in f32 per worker, for converting copies.
func copyWork(dst *core.Tensor, nTasks int) int64 {
	src := dst.Src[0]
	if src.Type == dst.Type {
		return 0
	}
	return scratchBytes(src.Ne[0]+dst.Ne[0], nTasks)
}

// copyTasks shares dst's rows among the workers, except for a copy whose bytes overlap (see
// copyAliased), which one worker runs in row-major order so the result does not depend on timing.
func copyTasks(dst *core.Tensor, nth int) int {
	if copyAliased(dst) || overlapsItself(dst) {
		return 1
	}
	return rowsTasks(dst, nth)
}

// copyAliased reports whether a copy's source shares bytes with its destination in another layout
// (as Cpy(Permute(x), x) does): workers would read elements that were already overwritten. Such a
// copy reads from a snapshot of the source, as if every element were read before any is written.
func copyAliased(dst *core.Tensor) bool { return aliases(dst, dst.Src[0]) }

// aliases reports whether src shares bytes with dst (a view) in another layout.
func aliases(dst, src *core.Tensor) bool {
	if src == nil || src.Buffer == nil || src.Buffer != dst.Buffer {
		return false
	}
	if src.Offset == dst.Offset && src.Type == dst.Type && src.Ne == dst.Ne && src.Nb == dst.Nb {
		return false // the same elements in the same places: an in-place copy is exact
	}
	return src.Offset < dst.Offset+dst.NBytes() && dst.Offset < src.Offset+src.NBytes()
}

// overlapsItself reports whether two elements (blocks) of t share bytes (a view whose strides are
// smaller than what they step over); writes to such a tensor must happen in one order.
func overlapsItself(t *core.Tensor) bool {
	type dim struct{ ne, nb int64 }
	ds := make([]dim, 0, core.MaxDims)
	unit := t.Type.Size()
	for i := range core.MaxDims {
		ne := t.Ne[i]
		if i == 0 {
			ne /= max(1, t.Type.BlockSize())
		}
		if ne > 1 {
			ds = append(ds, dim{ne, t.Nb[i]})
		}
	}
	slices.SortFunc(ds, func(a, b dim) int { return cmp.Compare(a.nb, b.nb) })
	ext := unit
	for _, d := range ds {
		if d.nb < ext {
			return true
		}
		ext += d.nb * (d.ne - 1)
	}
	return false
}

// snapshot returns a copy of t (same shape and strides) over a private copy of its bytes, or the
// error of a copy the host cannot hold.
func snapshot(t *core.Tensor) (*core.Tensor, error) {
	snap, err := core.NewHostBuffer(core.HostBufferType(), t.NBytes())
	if err != nil {
		return nil, err
	}
	copy(snap.Bytes(), t.Data())
	s := *t
	s.Buffer, s.Offset, s.ViewSrc = snap, 0, nil
	return &s, nil
}

func computeCopy(p *params, dst *core.Tensor) {
	src := dst.Src[0]
	if copyAliased(dst) {
		var err error
		if src, err = snapshot(src); err != nil { // one worker (copyTasks)
			p.fail(err)
			return
		}
	}
	if src.Type == dst.Type {
		copySameType(p, src, dst)
		return
	}
	copyConvert(p, src, dst)
}

// eltRowOff is the byte offset of row (i1, i2, i3) of t.
func eltRowOff(t *core.Tensor, i1, i2, i3 int64) int64 { return i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3] }

// eltCopyElems copies n elements (or blocks) of es bytes from sd at soff, stride snb, to dd at doff,
// stride dnb.
func eltCopyElems(dd []byte, doff, dnb int64, sd []byte, soff, snb int64, n, es int64) {
	if n <= 0 {
		return
	}
	if (dnb == es && snb == es) || n == 1 {
		copy(dd[doff:doff+n*es], sd[soff:soff+n*es])
		return
	}
	switch es {
	case 4:
		for i := int64(0); i < n; i++ {
			d, s := doff+i*dnb, soff+i*snb
			dd[d], dd[d+1], dd[d+2], dd[d+3] = sd[s], sd[s+1], sd[s+2], sd[s+3]
		}
	case 2:
		for i := int64(0); i < n; i++ {
			d, s := doff+i*dnb, soff+i*snb
			dd[d], dd[d+1] = sd[s], sd[s+1]
		}
	default:
		for i := int64(0); i < n; i++ {
			d, s := doff+i*dnb, soff+i*snb
			copy(dd[d:d+es], sd[s:s+es])
		}
	}
}

// copySameType copies units (elements, or blocks of quantized types) in row-major order.
func copySameType(p *params, src, dst *core.Tensor) {
	bs, es := dst.Type.BlockSize(), dst.Type.Size()
	su, du := src.Ne[0]/bs, dst.Ne[0]/bs // units per row
	sd, dd := src.Data(), dst.Data()
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		doff := eltRowOff(dst, i1, i2, i3)
		if su == du {
			j1, j2, j3 := unravel(ir, src.Ne)
			eltCopyElems(dd, doff, dst.Nb[0], sd, eltRowOff(src, j1, j2, j3), src.Nb[0], du, es)
			continue
		}
		k := ir * du // flat index of the row's first unit
		sr, sc := k/su, k%su
		for j := int64(0); j < du; {
			n := min(su-sc, du-j)
			j1, j2, j3 := unravel(sr, src.Ne)
			eltCopyElems(dd, doff+j*dst.Nb[0], dst.Nb[0], sd, eltRowOff(src, j1, j2, j3)+sc*src.Nb[0], src.Nb[0], n, es)
			j += n
			if sc += n; sc == su {
				sc, sr = 0, sr+1
			}
		}
	}
}

// copyConvert gathers each dst row as f32 from src (converting) and stores it into dst.
func copyConvert(p *params, src, dst *core.Tensor) {
	sne0, dne0 := src.Ne[0], dst.Ne[0]
	buf := scratch(p, sne0+dne0)
	srow, drow := buf[:sne0], buf[sne0:sne0+dne0]
	sd, dd := src.Data(), dst.Data()
	dstDirect := dst.Type == core.TypeF32 && dst.Nb[0] == 4
	loaded := int64(-1) // the src row now in srow
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		out := drow
		if dstDirect {
			out = f32s(dd[eltRowOff(dst, i1, i2, i3):])[:dne0]
		}
		if sne0 == dne0 {
			j1, j2, j3 := unravel(ir, src.Ne)
			loadRowStrided(src, sd, j1, j2, j3, out)
		} else {
			k := ir * dne0
			sr, sc := k/sne0, k%sne0
			for j := int64(0); j < dne0; {
				if loaded != sr {
					j1, j2, j3 := unravel(sr, src.Ne)
					loadRowStrided(src, sd, j1, j2, j3, srow)
					loaded = sr
				}
				n := min(sne0-sc, dne0-j)
				copy(out[j:j+n], srow[sc:sc+n])
				j += n
				if sc += n; sc == sne0 {
					sc, sr = 0, sr+1
				}
			}
		}
		if !dstDirect {
			storeRow(dst, dd, i1, i2, i3, out)
		}
	}
}

// loadRowStrided is loadRow that also reads quantized rows whose blocks are not adjacent (block j
// of a row at j*Nb[0], the convention core.GetFloat32s uses).
func loadRowStrided(t *core.Tensor, data []byte, i1, i2, i3 int64, dst []float32) {
	bs, es := t.Type.BlockSize(), t.Type.Size()
	if !t.Type.IsQuantized() || t.Nb[0] == es || t.Ne[0] == bs {
		loadRow(t, data, i1, i2, i3, dst)
		return
	}
	off := eltRowOff(t, i1, i2, i3)
	for j := int64(0); j < t.Ne[0]/bs; j++ {
		b := off + j*t.Nb[0]
		toF32(t.Type, data[b:b+es], dst[j*bs:(j+1)*bs])
	}
}
