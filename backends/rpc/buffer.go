package rpc

import (
	"context"
	"fmt"
	"math"

	"github.com/tandem-ml/tandem/core"
)

// Buffer is memory on a remote device, named by the server's handle.
type Buffer struct {
	bt     *BufferType
	handle uint64
	base   uint64
	size   int64
	usage  core.BufferUsage
	freed  bool
}

// Type returns the buffer's type.
func (b *Buffer) Type() core.BufferType {
	if b.zero() {
		return nil
	}
	return b.bt
}

// Size is the size the server reported.
func (b *Buffer) Size() int64 { return b.size }

// Usage and SetUsage record what the buffer holds.
func (b *Buffer) Usage() core.BufferUsage { return b.usage }

// SetUsage records what the buffer holds.
func (b *Buffer) SetUsage(u core.BufferUsage) { b.usage = u }

// Handle is the server's handle of the buffer.
func (b *Buffer) Handle() uint64 { return b.handle }

func (b *Buffer) client() *Client { return b.bt.d.c }

// wireFor serializes t (which must live in b) for a data command.
func (b *Buffer) wireFor(op string, t *core.Tensor, offset, size int64) (wireTensor, error) {
	if b.zero() {
		return wireTensor{}, errZeroBuffer
	}
	if t == nil {
		return wireTensor{}, fmt.Errorf("tandem: rpc: %s: %s: nil tensor", b.bt.d.name, op)
	}
	if b.freed {
		return wireTensor{}, fmt.Errorf("tandem: rpc: %s: %s %v: buffer was freed", b.bt.d.name, op, t)
	}
	if t.Buffer != core.Buffer(b) {
		return wireTensor{}, fmt.Errorf("tandem: rpc: %s: %s %v: tensor is not in this buffer", b.bt.d.name, op, t)
	}
	n := t.NBytes()
	if offset < 0 || size < 0 || offset > n || size > n-offset {
		return wireTensor{}, fmt.Errorf("tandem: rpc: %s: %s %v: bytes [%d,+%d) are outside its %d bytes", b.bt.d.name, op, t, offset, size, n)
	}
	if t.Offset < 0 || t.Offset > b.size || n > b.size-t.Offset {
		return wireTensor{}, fmt.Errorf("tandem: rpc: %s: %s %v: tensor at %d+%d is outside the %d-byte buffer", b.bt.d.name, op, t, t.Offset, n, b.size)
	}
	if !fits32(t) {
		return wireTensor{}, fmt.Errorf("tandem: rpc: %s: %s %v: shape or strides do not fit 32 bits", b.bt.d.name, op, t)
	}
	w := wireTensor{ID: 1, Type: uint32(t.Type), Buffer: b.handle, Data: b.base + uint64(t.Offset)}
	for i := 0; i < 4; i++ {
		w.Ne[i], w.Nb[i] = uint32(t.Ne[i]), uint32(t.Nb[i])
	}
	w.setName(t.Name)
	return w, nil
}

// SetTensor uploads data into t from byte offset (SET_TENSOR; above 10 MiB it first offers the
// FNV-1a hash with SET_TENSOR_HASH in case the server has the bytes cached). A nil t is an error.
func (b *Buffer) SetTensor(t *core.Tensor, data []byte, offset int64) error {
	return b.SetTensorContext(context.Background(), t, data, offset)
}

// SetTensorContext is SetTensor bounded by ctx. A nil t is an error.
func (b *Buffer) SetTensorContext(ctx context.Context, t *core.Tensor, data []byte, offset int64) error {
	if ctx == nil {
		ctx = context.Background()
	}
	w, err := b.wireFor("set", t, offset, int64(len(data)))
	if err != nil {
		return err
	}
	if len(data) == 0 {
		return nil
	}
	c := b.client()
	hdr := make([]byte, setHeaderSize, setHashReqSize)
	w.put(hdr)
	le.PutUint64(hdr[tensorSize:], uint64(offset))
	if len(data) > hashMinBytes {
		r, err := c.call(ctx, cmdSetTensorHash, 1, le.AppendUint64(hdr, fnv1a64(data)))
		if err != nil {
			return fmt.Errorf("tandem: rpc: %s: set %v: %w", b.bt.d.name, t, err)
		}
		if r[0] == 1 {
			return nil
		}
		hdr = hdr[:setHeaderSize]
	}
	if _, err := c.call(ctx, cmdSetTensor, -1, hdr, data); err != nil {
		return fmt.Errorf("tandem: rpc: %s: set %v: %w", b.bt.d.name, t, err)
	}
	return nil
}

// GetTensor downloads len(dst) bytes of t from byte offset (GET_TENSOR). A nil t is an error.
func (b *Buffer) GetTensor(t *core.Tensor, dst []byte, offset int64) error {
	return b.GetTensorContext(context.Background(), t, dst, offset)
}

// GetTensorContext is GetTensor bounded by ctx: a dead server is an error once ctx is done (or
// after the client's Timeout), not a hang. A nil t is an error.
func (b *Buffer) GetTensorContext(ctx context.Context, t *core.Tensor, dst []byte, offset int64) error {
	if ctx == nil {
		ctx = context.Background()
	}
	w, err := b.wireFor("get", t, offset, int64(len(dst)))
	if err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	if len(dst) > math.MaxInt32*4 {
		return fmt.Errorf("tandem: rpc: %s: get %v: %d bytes in one request is too many", b.bt.d.name, t, len(dst))
	}
	p := make([]byte, getTensorReqSize)
	w.put(p)
	le.PutUint64(p[tensorSize:], uint64(offset))
	le.PutUint64(p[tensorSize+8:], uint64(len(dst)))
	r, err := b.client().call(ctx, cmdGetTensor, len(dst), p)
	if err != nil {
		return fmt.Errorf("tandem: rpc: %s: get %v: %w", b.bt.d.name, t, err)
	}
	copy(dst, r)
	return nil
}

// MemsetTensor fills size bytes of t from offset with value (MEMSET_TENSOR). A nil t is an error.
func (b *Buffer) MemsetTensor(t *core.Tensor, value byte, offset, size int64) error {
	w, err := b.wireFor("memset", t, offset, size)
	if err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	p := make([]byte, memsetReqSize)
	w.put(p)
	le.PutUint64(p[tensorSize:], uint64(offset))
	le.PutUint64(p[tensorSize+8:], uint64(size))
	p[tensorSize+16] = value
	if _, err := b.client().call(context.Background(), cmdMemsetTensor, 0, p); err != nil {
		return fmt.Errorf("tandem: rpc: %s: memset %v: %w", b.bt.d.name, t, err)
	}
	return nil
}

// CopyTensor copies src into dst (in b) on the server when both live on the same connection and
// have the same type and contiguous layout (COPY_TENSOR); otherwise ok is false. A nil src or dst
// is an error.
func (b *Buffer) CopyTensor(src, dst *core.Tensor) (bool, error) {
	if b.zero() {
		return false, errZeroBuffer
	}
	if src == nil || dst == nil {
		return false, fmt.Errorf("tandem: rpc: %s: copy: nil tensor", b.bt.d.name)
	}
	sb, ok := src.Buffer.(*Buffer)
	if !ok || sb.client() != b.client() || src.Type != dst.Type || !src.IsContiguous() || !dst.IsContiguous() ||
		src.NBytes() != dst.NBytes() {
		return false, nil
	}
	ws, err := sb.wireFor("copy", src, 0, 0)
	if err != nil {
		return false, err
	}
	wd, err := b.wireFor("copy", dst, 0, 0)
	if err != nil {
		return false, err
	}
	p := make([]byte, copyReqSize)
	ws.put(p)
	wd.ID = 2
	wd.put(p[tensorSize:])
	r, err := b.client().call(context.Background(), cmdCopyTensor, 1, p)
	if err != nil {
		return false, fmt.Errorf("tandem: rpc: %s: copy %v to %v: %w", b.bt.d.name, src, dst, err)
	}
	return r[0] == 1, nil
}

// Clear fills the whole buffer with value (BUFFER_CLEAR).
func (b *Buffer) Clear(value byte) error {
	if b.zero() {
		return errZeroBuffer
	}
	if b.freed {
		return fmt.Errorf("tandem: rpc: %s: clear: buffer was freed", b.bt.d.name)
	}
	p := le.AppendUint64(nil, b.handle)
	if _, err := b.client().call(context.Background(), cmdBufferClear, 0, append(p, value)); err != nil {
		return fmt.Errorf("tandem: rpc: %s: clear: %w", b.bt.d.name, err)
	}
	return nil
}

// Free releases the buffer on the server (FREE_BUFFER). Freeing twice is an error.
func (b *Buffer) Free() error {
	if b.zero() {
		return errZeroBuffer
	}
	if b.freed {
		return fmt.Errorf("tandem: rpc: %s: buffer %#x freed twice", b.bt.d.name, b.handle)
	}
	b.freed = true
	c := b.client()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, d := range c.devices {
		d.lastGraph = nil // a stored graph may use this buffer: the next compute resends its graph
	}
	if _, err := c.callLocked(context.Background(), cmdFreeBuffer, 0, u64(b.handle)); err != nil {
		return fmt.Errorf("tandem: rpc: %s: free: %w", b.bt.d.name, err)
	}
	return nil
}

// InitTensor tells the server about a tensor placed in b (INIT_TENSOR) in the one case ggml's
// client does: quantized, not a view, rows not a multiple of 512 (CUDA servers pad those rows). A nil
// t is an error.
func (b *Buffer) InitTensor(t *core.Tensor) error {
	if b.zero() {
		return errZeroBuffer
	}
	if t == nil {
		return fmt.Errorf("tandem: rpc: %s: init: nil tensor", b.bt.d.name)
	}
	if t.ViewSrc != nil || !t.Type.IsQuantized() || t.Ne[0]%512 == 0 {
		return nil
	}
	w, err := b.wireFor("init", t, 0, 0)
	if err != nil {
		return err
	}
	p := make([]byte, tensorSize)
	w.put(p)
	if _, err := b.client().call(context.Background(), cmdInitTensor, 0, p); err != nil {
		return fmt.Errorf("tandem: rpc: %s: init %v: %w", b.bt.d.name, t, err)
	}
	return nil
}
