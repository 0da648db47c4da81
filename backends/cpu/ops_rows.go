package cpu

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// GET_ROWS and SET_ROWS (ggml_compute_forward_get_rows / _set_rows). An index outside the rows of
// the gathered (or written) tensor stops the graph with an error naming the op, the index and its
// position; ggml asserts instead.
//
// ggml runs both on one thread (its n_tasks is 1: with GPU offload, waking threads costs more
// than the copy). Here GET_ROWS splits dst rows among workers; SET_ROWS gives each destination row to
// one worker (by its flat index modulo the team size) and every worker walks all source rows in
// order, so repeated indices resolve as in a sequential loop — the last source row wins — whatever
// the thread count. In both, worker 0 itself meets every index, so a bad one is reported by it
// (deterministically the first in row-major order).

func init() {
	register(core.OpGetRows, opImpl{compute: computeGetRows, tasks: rowsTasks, work: getRowsWork, supports: getRowsSupports})
	register(core.OpSetRows, opImpl{compute: computeSetRows, tasks: setRowsTasks, work: setRowsWork, supports: setRowsSupports})
}

func eltIndexType(t core.Type) bool { return t == core.TypeI32 || t == core.TypeI64 }

// eltIndex returns the index at (i0, i1, i2) of the I32 or I64 tensor t.
func eltIndex(t *core.Tensor, data []byte, i0, i1, i2 int64) int64 {
	off := i0*t.Nb[0] + i1*t.Nb[1] + i2*t.Nb[2]
	if t.Type == core.TypeI64 {
		return i64s(data[off : off+8])[0]
	}
	return int64(i32s(data[off : off+4])[0])
}

func getRowsSupports(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	if a == nil || b == nil || !eltIndexType(b.Type) || !a.Type.CanDequantize() {
		return false
	}
	if dst.Ne != [4]int64{a.Ne[0], b.Ne[0], b.Ne[1], b.Ne[2]} || a.Ne[2] != b.Ne[1] || a.Ne[3] != b.Ne[2] || b.Ne[3] != 1 {
		return false
	}
	if a.Type == core.TypeI32 {
		return dst.Type == core.TypeI32
	}
	return eltIsFloat(dst.Type)
}

// getRowsWork: one f32 row per worker when dst is not a dense f32 row.
func getRowsWork(dst *core.Tensor, nTasks int) int64 {
	if _, _, ok := repackedOf(dst.Src[0]); ok {
		return getRowsRepackedWork(dst, nTasks) // repack_compute.go
	}
	return scratchBytes(dst.Ne[0], nTasks)
}

// computeGetRows: dst row (i, j, k) = src0 row (idx[i, j, k], j, k), converted to dst's type
// (dequantized to f32; I32 rows copied as I32).
func computeGetRows(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	if _, _, ok := repackedOf(a); ok {
		computeGetRowsRepacked(p, dst) // repack_compute.go
		return
	}
	da, db, dd := a.Data(), b.Data(), dst.Data()
	ne0 := dst.Ne[0]
	same := a.Type == dst.Type && !a.Type.IsQuantized()
	dstDirect := dst.Type == core.TypeF32 && dst.Nb[0] == 4
	var buf []float32
	if !same && !dstDirect {
		buf = scratch(p, ne0)
	}
	// Worker 0 checks every index first, so the error is the first bad index in row-major order
	// whatever the thread count, and it is recorded before worker 0 finishes the node.
	if p.ith == 0 {
		for ir := int64(0); ir < dst.NRows(); ir++ {
			i10, i11, i12 := unravel(ir, dst.Ne)
			if r := eltIndex(b, db, i10, i11, i12); r < 0 || r >= a.Ne[1] {
				p.fail(fmt.Errorf("GET_ROWS: index %d at [%d,%d,%d] of %v is out of range: %v has %d rows",
					r, i10, i11, i12, b, a, a.Ne[1]))
				return
			}
		}
	}
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i10, i11, i12 := unravel(ir, dst.Ne)
		r := eltIndex(b, db, i10, i11, i12)
		if r < 0 || r >= a.Ne[1] {
			return // worker 0 reports it
		}
		doff := eltRowOff(dst, i10, i11, i12)
		switch {
		case same:
			eltCopyElems(dd, doff, dst.Nb[0], da, eltRowOff(a, r, i11, i12), a.Nb[0], ne0, a.Type.Size())
		case dstDirect:
			loadRowStrided(a, da, r, i11, i12, f32s(dd[doff:])[:ne0])
		default:
			loadRowStrided(a, da, r, i11, i12, buf)
			storeRow(dst, dd, i10, i11, i12, buf)
		}
	}
}

func setRowsSupports(dst *core.Tensor) bool {
	a, b, idx := dst.Src[0], dst.Src[1], dst.Src[2]
	if a == nil || b == nil || idx == nil || !eltIndexType(idx.Type) || !eltIsFloat(b.Type) {
		return false
	}
	if !dst.Type.CanConvert() || dst.Type == core.TypeI32 || (dst.Type.IsQuantized() && !dst.IsContiguousRows()) {
		return false
	}
	return dst.Ne[0] == b.Ne[0] && dst.Ne[2] == b.Ne[2] && dst.Ne[3] == b.Ne[3] && idx.Ne[0] == b.Ne[1] &&
		idx.Ne[1] > 0 && idx.Ne[2] > 0 && b.Ne[2]%idx.Ne[1] == 0 && b.Ne[3]%idx.Ne[2] == 0 && idx.Ne[3] == 1
}

// setRowsTasks: at most one worker per source row; one when the source rows share bytes with the
// destination or the destination's rows overlap each other (the writes then happen in one order).
func setRowsTasks(dst *core.Tensor, nth int) int {
	if aliases(dst, dst.Src[1]) || aliases(dst, dst.Src[2]) || overlapsItself(dst) {
		return 1
	}
	return rowsTasks(dst.Src[1], nth)
}

// setRowsWork: one f32 row per worker for source rows that are not dense f32.
func setRowsWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(dst.Ne[0], nTasks) }

// computeSetRows: dst row (idx[i, j % ni1, k % ni2], j, k) = src1 row (i, j, k), converted to
// dst's type (quantized with the reference quantizer). dst is a view of src0.
func computeSetRows(p *params, dst *core.Tensor) {
	b, idx := dst.Src[1], dst.Src[2]
	var err error
	if aliases(dst, b) {
		// one worker (setRowsTasks): rows are read as they were before the node
		if b, err = snapshot(b); err != nil {
			p.fail(err)
			return
		}
	}
	if aliases(dst, idx) {
		if idx, err = snapshot(idx); err != nil {
			p.fail(err)
			return
		}
	}
	db, di, dd := b.Data(), idx.Data(), dst.Data()
	ne0 := dst.Ne[0]
	buf := scratch(p, ne0)
	nth, ith := int64(p.nth), int64(p.ith)
	for i3 := int64(0); i3 < b.Ne[3]; i3++ {
		for i2 := int64(0); i2 < b.Ne[2]; i2++ {
			for i1 := int64(0); i1 < b.Ne[1]; i1++ {
				r := eltIndex(idx, di, i1, i2%idx.Ne[1], i3%idx.Ne[2])
				if r < 0 || r >= dst.Ne[1] {
					p.fail(fmt.Errorf("SET_ROWS: index %d at [%d,%d,%d] of %v is out of range: %v has %d rows",
						r, i1, i2%idx.Ne[1], i3%idx.Ne[2], idx, dst.Src[0], dst.Ne[1]))
					return
				}
				if ((i3*dst.Ne[2]+i2)*dst.Ne[1]+r)%nth != ith {
					continue
				}
				storeRow(dst, dd, r, i2, i3, eltSrcRow(b, db, i1, i2, i3, buf))
			}
		}
	}
}
