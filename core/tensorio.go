package core

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// checkRange checks that bytes [offset, offset+size) of t can be transferred: t non-nil, with
// memory that was not freed, a valid layout, and the range inside t's span without overflow.
func checkRange(op string, t *Tensor, offset, size int64) error {
	if t == nil {
		return fmt.Errorf("tandem: %s: nil tensor", op)
	}
	if t.Buffer == nil {
		return noMemory(op, t)
	}
	if bufferFreed(t.Buffer) {
		return fmt.Errorf("tandem: %s: tensor %v: its %w", op, t, ErrBufferFreed)
	}
	n, err := layoutBytes(t.Type, t.Ne, t.Nb)
	if err != nil {
		return fmt.Errorf("tandem: %s: tensor %v: %w", op, t, err)
	}
	if offset < 0 || size < 0 {
		return fmt.Errorf("tandem: %s: negative offset %d or size %d for tensor %v", op, offset, size, t)
	}
	end, ok := CheckedAdd(offset, size)
	if !ok {
		return overflowf("%s: offset %d + size %d for tensor %v", op, offset, size, t)
	}
	if end > n {
		return fmt.Errorf("tandem: %s: bytes [%d,%d) out of range for tensor %v of %d bytes", op, offset, end, t, n)
	}
	return nil
}

// TensorSet copies data into t's memory starting at byte offset, on whatever device holds it. A nil
// t, a tensor without memory or in a freed buffer, and a range outside t (overflowing sums
// included) are errors.
func TensorSet(t *Tensor, data []byte, offset int64) error {
	if err := checkRange("TensorSet", t, offset, int64(len(data))); err != nil {
		return err
	}
	if len(data) == 0 {
		return nil
	}
	if err := t.Buffer.SetTensor(t, data, offset); err != nil {
		return err
	}
	noteWrite(t)
	return nil
}

// TensorGet copies len(dst) bytes of t starting at byte offset into dst. A nil t is an error, and
// so are the other bad inputs TensorSet rejects.
func TensorGet(t *Tensor, dst []byte, offset int64) error {
	if err := checkRange("TensorGet", t, offset, int64(len(dst))); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	return t.Buffer.GetTensor(t, dst, offset)
}

// TensorGetF32 copies len(dst) values of the F32 tensor t, starting at byte offset, into dst:
// TensorGet for float32 values, without a byte buffer to decode. A nil t is an error, and so are a
// t of another type and the other bad inputs TensorGet rejects.
func TensorGetF32(t *Tensor, dst []float32, offset int64) error {
	if t != nil && t.Type != TypeF32 {
		return fmt.Errorf("tandem: TensorGetF32: tensor %v is %v, not F32", t, t.Type)
	}
	return TensorGet(t, float32Bytes(dst), offset)
}

// TensorMemset fills size bytes of t from offset with value. A nil t is an error, and so are the
// other bad inputs TensorSet rejects.
func TensorMemset(t *Tensor, value byte, offset, size int64) error {
	if err := checkRange("TensorMemset", t, offset, size); err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	if err := t.Buffer.MemsetTensor(t, value, offset, size); err != nil {
		return err
	}
	noteWrite(t)
	return nil
}

// float32Bytes views float32 values as bytes for transfers.
func float32Bytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	// Safe: the byte slice covers exactly the memory of v and is only read or written as bytes.
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*4)
}

// Int32Bytes views int32 values as bytes (little endian on the machines tandem supports).
func int32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return nil
	}
	// Safe: the byte slice covers exactly the memory of v.
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*4)
}

// SetFloat32s writes row-major float32 values into t, wherever it lives, converting them to t's
// type with the reference conversions: F32 as is, F16 and BF16 rounded, I32 truncated, and the
// block-quantized types (Q4_0, Q8_0, the K-quants ...) quantized, giving the bytes ggml's
// quantizers give — the way to produce quantized weights. GetFloat32s reads them back. t may be a
// view with any strides: only its elements are written, the bytes between them are kept. It needs
// exactly one value per element; fewer or more values, a nil tensor, a type without a float
// conversion (CanConvert), a tensor without memory or in a freed buffer are errors, and nothing is
// written then.
func SetFloat32s(t *Tensor, values []float32) error {
	if t == nil {
		return fmt.Errorf("tandem: SetFloat32s: nil tensor")
	}
	if t.Buffer == nil {
		return noMemory("SetFloat32s", t)
	}
	if int64(len(values)) != t.NElements() {
		return fmt.Errorf("tandem: SetFloat32s: %d values for tensor %v of %d elements (counts must match)", len(values), t, t.NElements())
	}
	if !t.Type.CanConvert() && t.Type != TypeF64 {
		return fmt.Errorf("tandem: SetFloat32s: type %v has no float conversion", t.Type)
	}
	if err := checkRange("SetFloat32s", t, 0, t.NBytes()); err != nil {
		return err
	}
	if t.Type == TypeF64 {
		return setF64(t, values)
	}
	if t.Type == TypeF32 && t.IsContiguous() {
		return TensorSet(t, float32Bytes(values), 0)
	}
	if t.NElements() == 0 {
		return nil // nothing to write (an empty tensor may still have many rows of nothing)
	}
	raw := make([]byte, t.NBytes())
	if !t.IsContiguous() { // keep the bytes between t's elements
		if err := TensorGet(t, raw, 0); err != nil {
			return err
		}
	}
	bs := t.Type.BlockSize()
	i := int64(0)
	forEachRow(t, func(off int64) {
		if t.IsContiguousRows() {
			t.Type.traits().fromFloat(values[i:i+t.Ne[0]], raw[off:off+t.Type.RowSize(t.Ne[0])])
			i += t.Ne[0]
			return
		}
		for i0 := int64(0); i0 < t.Ne[0]; i0 += bs {
			p := off + i0/bs*t.Nb[0]
			t.Type.traits().fromFloat(values[i:i+bs], raw[p:p+t.Type.Size()])
			i += bs
		}
	})
	return TensorSet(t, raw, 0)
}

// GetFloat32s reads the elements of any tensor as float32 in row-major order, converting from its
// type (dequantizing) and walking its strides, so views and permuted tensors work. A nil tensor, a
// tensor without memory or in a freed buffer, and a type without a float conversion are errors.
func GetFloat32s(t *Tensor) ([]float32, error) {
	if t == nil {
		return nil, fmt.Errorf("tandem: GetFloat32s: nil tensor")
	}
	if t.Buffer == nil {
		return nil, noMemory("GetFloat32s", t)
	}
	if t.Type != TypeI64 && t.Type != TypeF64 && !t.Type.CanDequantize() {
		return nil, fmt.Errorf("tandem: GetFloat32s: type %v has no float conversion", t.Type)
	}
	n, err := layoutBytes(t.Type, t.Ne, t.Nb)
	if err != nil {
		return nil, fmt.Errorf("tandem: GetFloat32s: tensor %v: %w", t, err)
	}
	if err := checkRange("GetFloat32s", t, 0, n); err != nil {
		return nil, err
	}
	if err := checkHostAlloc("GetFloat32s", t); err != nil {
		return nil, err
	}
	raw := make([]byte, n)
	if err := TensorGet(t, raw, 0); err != nil {
		return nil, err
	}
	out := make([]float32, t.NElements())
	if t.NElements() == 0 {
		return out, nil
	}
	switch t.Type {
	case TypeF64:
		getF64(t, raw, out)
		return out, nil
	case TypeI64:
		i := 0
		forEachRow(t, func(off int64) {
			for i0 := int64(0); i0 < t.Ne[0]; i0++ {
				p := off + i0*t.Nb[0]
				v := int64(0)
				for k := int64(7); k >= 0; k-- {
					v = v<<8 | int64(raw[p+k])
				}
				out[i] = float32(v)
				i++
			}
		})
		return out, nil
	}
	if !t.Type.CanDequantize() {
		return nil, fmt.Errorf("tandem: GetFloat32s: type %v has no float conversion", t.Type)
	}
	bs := t.Type.BlockSize()
	i := int64(0)
	forEachRow(t, func(off int64) {
		if t.IsContiguousRows() {
			t.Type.traits().toFloat(raw[off:off+t.Type.RowSize(t.Ne[0])], out[i:i+t.Ne[0]])
			i += t.Ne[0]
			return
		}
		for i0 := int64(0); i0 < t.Ne[0]; i0 += bs {
			p := off + i0/bs*t.Nb[0]
			t.Type.traits().toFloat(raw[p:p+t.Type.Size()], out[i:i+bs])
			i += bs
		}
	})
	return out, nil
}

// SetInt32s writes row-major values into an I32 tensor of any layout (a view writes only its
// elements), wherever it lives. Like SetFloat32s it needs exactly one value per element; a nil
// tensor, another type, a tensor without memory or in a freed buffer are errors.
func SetInt32s(t *Tensor, values []int32) error {
	if t == nil {
		return fmt.Errorf("tandem: SetInt32s: nil tensor")
	}
	if t.Buffer == nil {
		return noMemory("SetInt32s", t)
	}
	if int64(len(values)) != t.NElements() {
		return fmt.Errorf("tandem: SetInt32s: %d values for tensor %v of %d elements (counts must match)", len(values), t, t.NElements())
	}
	if t.Type != TypeI32 {
		return fmt.Errorf("tandem: SetInt32s: tensor %v has type %v, not i32", t, t.Type)
	}
	if err := checkRange("SetInt32s", t, 0, t.NBytes()); err != nil {
		return err
	}
	if t.IsContiguous() {
		return TensorSet(t, int32Bytes(values), 0)
	}
	if t.NElements() == 0 {
		return nil
	}
	raw := make([]byte, t.NBytes())
	if err := TensorGet(t, raw, 0); err != nil {
		return err
	}
	i := 0
	forEachRow(t, func(off int64) {
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			binary.LittleEndian.PutUint32(raw[off+i0*t.Nb[0]:], uint32(values[i]))
			i++
		}
	})
	return TensorSet(t, raw, 0)
}

// GetInt32s reads the elements of an I32 tensor of any layout in row-major order, wherever it
// lives. A nil tensor, another type (GetFloat32s reads those), a tensor without memory or in a
// freed buffer are errors.
func GetInt32s(t *Tensor) ([]int32, error) {
	if t == nil {
		return nil, fmt.Errorf("tandem: GetInt32s: nil tensor")
	}
	if t.Buffer == nil {
		return nil, noMemory("GetInt32s", t)
	}
	if t.Type != TypeI32 {
		return nil, fmt.Errorf("tandem: GetInt32s: tensor %v has type %v, not i32 (GetFloat32s reads any type)", t, t.Type)
	}
	if err := checkRange("GetInt32s", t, 0, t.NBytes()); err != nil {
		return nil, err
	}
	if err := checkHostAlloc("GetInt32s", t); err != nil {
		return nil, err
	}
	out := make([]int32, t.NElements())
	if t.IsContiguous() {
		if err := TensorGet(t, int32Bytes(out), 0); err != nil {
			return nil, err
		}
		return out, nil
	}
	raw := make([]byte, t.NBytes())
	if err := TensorGet(t, raw, 0); err != nil {
		return nil, err
	}
	i := 0
	forEachRow(t, func(off int64) {
		for i0 := int64(0); i0 < t.Ne[0]; i0++ {
			out[i] = int32(binary.LittleEndian.Uint32(raw[off+i0*t.Nb[0]:]))
			i++
		}
	})
	return out, nil
}

// checkHostAlloc refuses a conversion whose float32 copy of t's elements the machine cannot hold (a
// view with zero strides may have far more elements than bytes): the Go runtime would abort the
// process instead of returning an error.
func checkHostAlloc(op string, t *Tensor) error {
	need, ok := CheckedMul(t.NElements(), 4)
	if !ok || need > maxHostBufferSize {
		return overflowf("%s: %d elements of %v as float32", op, t.NElements(), t)
	}
	if phys := physicalMemory(); phys > 0 && need > phys {
		return fmt.Errorf("tandem: %s: %d elements of %v need %d bytes as float32, the machine has %d", op, t.NElements(), t, need, phys)
	}
	return nil
}

// forEachRow calls f with the byte offset of every row (i1, i2, i3 in row-major order).
func forEachRow(t *Tensor, f func(off int64)) {
	for i3 := int64(0); i3 < t.Ne[3]; i3++ {
		for i2 := int64(0); i2 < t.Ne[2]; i2++ {
			for i1 := int64(0); i1 < t.Ne[1]; i1++ {
				f(t.rowOffset(i1, i2, i3))
			}
		}
	}
}

// TensorCopy copies src's bytes into dst; both must have the same layout. It uses the cheapest path
// the buffers allow: host to device, device to host, device to device, or a bounce through host memory.
// A nil src or dst, a tensor without memory or in a freed buffer are errors.
func TensorCopy(src, dst *Tensor) error {
	if src == nil || dst == nil {
		return fmt.Errorf("tandem: TensorCopy: nil tensor (src %v, dst %v)", src, dst)
	}
	if !SameLayout(src, dst) {
		return fmt.Errorf("tandem: TensorCopy: layouts differ: %v nb %v vs %v nb %v", src, src.Nb, dst, dst.Nb)
	}
	if err := checkRange("TensorCopy (src)", src, 0, src.NBytes()); err != nil {
		return err
	}
	if err := checkRange("TensorCopy (dst)", dst, 0, dst.NBytes()); err != nil {
		return err
	}
	if src == dst || src.NBytes() == 0 {
		return nil
	}
	if err := copyBytes(src, dst); err != nil {
		return err
	}
	noteWrite(dst)
	return nil
}

// copyBytes is TensorCopy's transfer, on checked tensors.
func copyBytes(src, dst *Tensor) error {
	if data, _ := src.hostData(); data != nil {
		return dst.Buffer.SetTensor(dst, data, 0)
	}
	if data, _ := dst.hostData(); data != nil {
		return src.Buffer.GetTensor(src, data, 0)
	}
	if c, ok := dst.Buffer.(TensorCopier); ok {
		done, err := c.CopyTensor(src, dst)
		if err != nil || done {
			return err
		}
	}
	tmp := make([]byte, src.NBytes())
	if err := src.Buffer.GetTensor(src, tmp, 0); err != nil {
		return err
	}
	return dst.Buffer.SetTensor(dst, tmp, 0)
}

// TensorAlloc places t (not a view, not yet allocated) in buf at byte offset, then lets a buffer
// that is a TensorInitializer prepare it. A nil buf or t, a freed buffer, an invalid layout, a range
// outside the buffer (overflowing sums included) and an initializer's error are errors.
func TensorAlloc(buf Buffer, t *Tensor, offset int64) error {
	if t == nil {
		return fmt.Errorf("tandem: TensorAlloc: nil tensor")
	}
	if buf == nil {
		return fmt.Errorf("tandem: TensorAlloc: nil buffer for tensor %v", t)
	}
	if bufferFreed(buf) {
		return fmt.Errorf("tandem: TensorAlloc: tensor %v: the %w", t, ErrBufferFreed)
	}
	if t.Buffer != nil {
		return fmt.Errorf("tandem: TensorAlloc: tensor %v already has memory", t)
	}
	if t.ViewSrc != nil {
		return fmt.Errorf("tandem: TensorAlloc: tensor %v is a view; use ViewInit", t)
	}
	if _, err := layoutBytes(t.Type, t.Ne, t.Nb); err != nil {
		return fmt.Errorf("tandem: TensorAlloc: tensor %v: %w", t, err)
	}
	if buf.Type() == nil {
		return fmt.Errorf("tandem: TensorAlloc: buffer for tensor %v has no buffer type", t)
	}
	size := buf.Type().AllocSize(t)
	if size < 0 {
		return fmt.Errorf("tandem: TensorAlloc: buffer type %s reports a negative size %d for %v", buf.Type().Name(), size, t)
	}
	end, ok := CheckedAdd(offset, size)
	if !ok {
		return overflowf("TensorAlloc: tensor %v at offset %d + size %d", t, offset, size)
	}
	if offset < 0 || end > buf.Size() {
		return fmt.Errorf("tandem: TensorAlloc: tensor %v needs bytes [%d,%d) but buffer %s holds %d",
			t, offset, end, buf.Type().Name(), buf.Size())
	}
	t.Buffer, t.Offset = buf, offset
	if ti, ok := buf.(TensorInitializer); ok {
		if err := ti.InitializeTensor(t); err != nil {
			t.Buffer, t.Offset = nil, 0
			return fmt.Errorf("tandem: TensorAlloc: tensor %v in %s: %w", t, buf.Type().Name(), err)
		}
	}
	return nil
}

// ViewInit gives a view the memory of its source (which must be allocated). A nil t, a tensor that
// is not a view, a source without memory or in a freed buffer, and a view outside its source are
// errors.
func ViewInit(t *Tensor) error {
	if t == nil {
		return fmt.Errorf("tandem: ViewInit: nil tensor")
	}
	src := t.ViewSrc
	if src == nil {
		return fmt.Errorf("tandem: ViewInit: tensor %v is not a view", t)
	}
	if src.Buffer == nil {
		return fmt.Errorf("tandem: ViewInit: source %v of view %v has no memory", src, t)
	}
	if bufferFreed(src.Buffer) {
		return fmt.Errorf("tandem: ViewInit: source %v of view %v: its %w", src, t, ErrBufferFreed)
	}
	n, err := layoutBytes(t.Type, t.Ne, t.Nb)
	if err != nil {
		return fmt.Errorf("tandem: ViewInit: view %v: %w", t, err)
	}
	if err := checkViewExtent(src, t.ViewOffs, n); err != nil {
		return fmt.Errorf("tandem: ViewInit: view %v: %w", t, err)
	}
	off, ok := CheckedAdd(src.Offset, t.ViewOffs)
	if !ok {
		return overflowf("ViewInit: view %v at offset %d + %d", t, src.Offset, t.ViewOffs)
	}
	t.Buffer, t.Offset = src.Buffer, off
	return nil
}

// noMemory is the error of reading or writing t, which has no memory. A placeholder left by a
// failed op has none because the op failed: the error says so and wraps the op's *OpError, rather
// than sending the caller to allocate it.
func noMemory(op string, t *Tensor) error {
	if t.err != nil {
		return Errorf("tandem: %s: the tensor is the placeholder of a failed op: %w", op, t.err)
	}
	return fmt.Errorf("tandem: %s: tensor %v has no memory (allocate it first)", op, t)
}
