package cpu

import (
	"unsafe"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

// Kernels reach tensor memory through byte slices of host buffers. The casts below are safe because
// host buffers are 32-byte aligned, tensor offsets and strides of a type are multiples of its element
// size, and each cast slice stays inside the byte slice it came from.

func f32s(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	// Safe: see the note above; the slice covers len(b)/4 whole values of b.
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func u16s(b []byte) []uint16 {
	if len(b) < 2 {
		return nil
	}
	// Safe: see the note above.
	return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), len(b)/2)
}

func i32s(b []byte) []int32 {
	if len(b) < 4 {
		return nil
	}
	// Safe: see the note above.
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4)
}

func i64s(b []byte) []int64 {
	if len(b) < 8 {
		return nil
	}
	// Safe: see the note above.
	return unsafe.Slice((*int64)(unsafe.Pointer(&b[0])), len(b)/8)
}

// getF32 reads the f32 at byte offset off.
func getF32(b []byte, off int64) float32 {
	// Safe: off addresses a whole float32 inside b (callers compute it from the tensor's strides).
	return *(*float32)(unsafe.Pointer(&b[off : off+4][0]))
}

// setF32 writes the f32 at byte offset off.
func setF32(b []byte, off int64, v float32) {
	// Safe: as getF32.
	*(*float32)(unsafe.Pointer(&b[off : off+4][0])) = v
}

// toF32 converts n = len(dst) elements of type typ from src (contiguous) into dst.
func toF32(typ core.Type, src []byte, dst []float32) {
	switch typ {
	case core.TypeF32:
		copy(dst, f32s(src))
	case core.TypeF16:
		quant.FP16ToFP32Row(u16s(src)[:len(dst)], dst)
	case core.TypeBF16:
		quant.BF16ToFP32Row(u16s(src)[:len(dst)], dst)
	case core.TypeI32:
		for i, v := range i32s(src)[:len(dst)] {
			dst[i] = float32(v)
		}
	default:
		if err := typ.ToFloat(src, dst); err != nil {
			panic(err) // unreachable: constructors and supports checks admit only convertible types
		}
	}
}

// fromF32 converts src into len(src) elements of type typ in dst (contiguous), quantizing.
func fromF32(typ core.Type, src []float32, dst []byte) {
	switch typ {
	case core.TypeF32:
		copy(f32s(dst), src)
	case core.TypeF16:
		quant.FP32ToFP16Row(src, u16s(dst)[:len(src)])
	case core.TypeBF16:
		quant.FP32ToBF16Row(src, u16s(dst)[:len(src)])
	case core.TypeI32:
		d := i32s(dst)
		for i, v := range src {
			d[i] = int32(v)
		}
	default:
		if err := typ.FromFloat(src, dst); err != nil {
			panic(err) // unreachable: constructors and supports checks admit only convertible types
		}
	}
}

// loadRow converts row (i1, i2, i3) of t (any convertible type, any stride in dim 0 for element
// types) into dst[:t.Ne[0]].
func loadRow(t *core.Tensor, data []byte, i1, i2, i3 int64, dst []float32) {
	off := i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
	n := t.Ne[0]
	if t.Nb[0] == t.Type.Size() || t.Type.IsQuantized() {
		toF32(t.Type, data[off:off+t.Type.RowSize(n)], dst[:n])
		return
	}
	if t.Type == core.TypeF32 {
		for i := int64(0); i < n; i++ {
			dst[i] = getF32(data, off+i*t.Nb[0])
		}
		return
	}
	es := t.Type.Size()
	for i := int64(0); i < n; i++ {
		p := off + i*t.Nb[0]
		toF32(t.Type, data[p:p+es], dst[i:i+1])
	}
}

// storeRow converts src[:t.Ne[0]] into row (i1, i2, i3) of t.
func storeRow(t *core.Tensor, data []byte, i1, i2, i3 int64, src []float32) {
	off := i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
	n := t.Ne[0]
	if t.Nb[0] == t.Type.Size() || t.Type.IsQuantized() {
		fromF32(t.Type, src[:n], data[off:off+t.Type.RowSize(n)])
		return
	}
	if t.Type == core.TypeF32 {
		for i := int64(0); i < n; i++ {
			setF32(data, off+i*t.Nb[0], src[i])
		}
		return
	}
	es := t.Type.Size()
	for i := int64(0); i < n; i++ {
		p := off + i*t.Nb[0]
		fromF32(t.Type, src[i:i+1], data[p:p+es])
	}
}

// rowRange splits nr rows among nth workers and returns worker ith's half-open range.
func rowRange(nr int64, ith, nth int) (int64, int64) {
	dr := (nr + int64(nth) - 1) / int64(nth)
	r0 := min(dr*int64(ith), nr)
	return r0, min(r0+dr, nr)
}

// unravel turns a flat row index into (i1, i2, i3) for shape ne.
func unravel(ir int64, ne [4]int64) (int64, int64, int64) {
	i3 := ir / (ne[2] * ne[1])
	i2 := (ir - i3*ne[2]*ne[1]) / ne[1]
	i1 := ir - i3*ne[2]*ne[1] - i2*ne[1]
	return i1, i2, i3
}

// scratch returns worker ith's slice of n float32 values in the work buffer laid out as nth equal
// parts of n (plus cache-line padding).
func scratch(p *params, n int64) []float32 {
	stride := (n*4 + 63) / 64 * 64
	b := p.work[int64(p.ith)*stride : int64(p.ith)*stride+n*4]
	return f32s(b)[:n]
}

// scratchBytes is the work size scratch needs for nTasks workers.
func scratchBytes(n int64, nTasks int) int64 { return (n*4 + 63) / 64 * 64 * int64(nTasks) }

// uintptrOf is the address of b's first byte, for alignment arithmetic only.
func uintptrOf(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	// Safe: the address is only used to compute an alignment offset.
	return uintptr(unsafe.Pointer(&b[0]))
}
