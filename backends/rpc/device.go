package rpc

import (
	"context"
	"fmt"
	"math"

	"github.com/tandem-ml/tandem/core"
)

// Device is one device of a remote server. The scheduler treats it like a GPU: its memory is not
// host-addressable and tensors move to it by copies.
type Device struct {
	c     *Client
	index uint32
	name  string
	bt    *BufferType
	// lastGraph is the GRAPH_COMPUTE payload last sent for this device, which the server keeps
	// for GRAPH_RECOMPUTE; nil when none may be relied on. Guarded by c.mu.
	lastGraph []byte
}

// Name is "RPC<index>[host:port]".
func (d *Device) Name() string { return d.name }

// Description is the server address.
func (d *Device) Description() string {
	if d.zero() {
		return ""
	}
	return d.c.addr
}

// Type is core.DeviceGPU: remote memory, reached by copies.
func (d *Device) Type() core.DeviceType { return core.DeviceGPU }

// Index is the device number on its server.
func (d *Device) Index() int { return int(d.index) }

// Client returns the connection the device belongs to.
func (d *Device) Client() *Client { return d.c }

// Memory asks the server for free and total bytes (0, 0 when the connection is lost).
func (d *Device) Memory() (free, total int64) {
	if d.zero() {
		return 0, 0
	}
	r, err := d.c.call(context.Background(), cmdGetDeviceMem, memRespSize, le.AppendUint32(nil, d.index))
	if err != nil {
		return 0, 0
	}
	f, t := le.Uint64(r), le.Uint64(r[8:])
	return int64(min(f, math.MaxInt64)), int64(min(t, math.MaxInt64))
}

// SupportsOp reports whether t can be serialized: its op has a ggml id and its parameters a ggml
// layout, and every shape and stride of t and its sources fits the protocol's 32-bit fields. The
// protocol cannot ask the remote backend, so a server may still refuse the graph. A nil t is not
// supported.
func (d *Device) SupportsOp(t *core.Tensor) bool {
	if t == nil || d.zero() {
		return false
	}
	if _, ok := toGGML[t.Op]; !ok || !supportedParams(t) {
		return false
	}
	if !fits32(t) || d.c.GGMLCompat && !ggmlCPUAccepts(t) {
		return false
	}
	for _, s := range t.Src {
		if s != nil && !fits32(s) {
			return false
		}
	}
	return true
}

func fits32(t *core.Tensor) bool {
	for i := 0; i < 4; i++ {
		if t.Ne[i] < 0 || t.Ne[i] > math.MaxUint32 || t.Nb[i] < 0 || t.Nb[i] > math.MaxUint32 {
			return false
		}
	}
	return true
}

// SupportsBufferType reports whether bt is this device's buffer type.
func (d *Device) SupportsBufferType(bt core.BufferType) bool {
	return d.bt != nil && bt == core.BufferType(d.bt)
}

// OffloadOp is false (for a nil t too): weights are not moved to a remote device for an op.
func (d *Device) OffloadOp(*core.Tensor) bool { return false }

// BufferType returns the device's buffer type.
func (d *Device) BufferType() core.BufferType {
	if d.bt == nil {
		return nil
	}
	return d.bt
}

// NewBackend returns a backend that computes graphs on the device.
func (d *Device) NewBackend() (core.Backend, error) {
	if d.zero() {
		return nil, errZeroDevice
	}
	if err := d.c.Err(); err != nil {
		return nil, err
	}
	return &Backend{d: d}, nil
}

// BufferType allocates memory on a remote device.
type BufferType struct {
	d       *Device
	align   int64
	maxSize int64
}

// Name is the device name.
func (bt *BufferType) Name() string {
	if bt.zero() {
		return ""
	}
	return bt.d.name
}

// Alignment is what the server reported (GET_ALIGNMENT).
func (bt *BufferType) Alignment() int64 { return bt.align }

// MaxSize is what the server reported (GET_MAX_SIZE); 0 means no limit.
func (bt *BufferType) MaxSize() int64 { return bt.maxSize }

// IsHost is false.
func (bt *BufferType) IsHost() bool { return false }

// Device returns the remote device.
func (bt *BufferType) Device() core.Device {
	if bt.zero() {
		return nil
	}
	return bt.d
}

// AllocSize asks the server (GET_ALLOC_SIZE) for quantized tensors whose rows are not a multiple
// of 512, which some backends pad, as ggml's client does; otherwise it is t.NBytes() (0 for a nil t).
func (bt *BufferType) AllocSize(t *core.Tensor) int64 {
	if t == nil {
		return 0
	}
	n := t.NBytes()
	if bt.zero() {
		return n
	}
	if !t.Type.IsQuantized() || t.Ne[0]%512 == 0 || !fits32(t) {
		return n
	}
	w := wireTensor{ID: 1, Type: uint32(t.Type)}
	for i := 0; i < 4; i++ {
		w.Ne[i], w.Nb[i] = uint32(t.Ne[i]), uint32(t.Nb[i])
	}
	p := make([]byte, allocSizeReqSize)
	le.PutUint32(p, bt.d.index)
	w.put(p[4:])
	r, err := bt.d.c.call(context.Background(), cmdGetAllocSize, 8, p)
	if err != nil {
		return n
	}
	return max(n, int64(min(le.Uint64(r), math.MaxInt64)))
}

// Alloc allocates size bytes on the server (ALLOC_BUFFER, then BUFFER_GET_BASE).
func (bt *BufferType) Alloc(size int64) (core.Buffer, error) {
	if bt.zero() {
		return nil, errZeroBufferType
	}
	if size < 0 {
		return nil, fmt.Errorf("tandem: rpc: %s: negative size %d", bt.d.name, size)
	}
	c := bt.d.c
	req := le.AppendUint32(nil, bt.d.index)
	req = le.AppendUint64(req, uint64(size))
	r, err := c.call(context.Background(), cmdAllocBuffer, allocRespSize, req)
	if err != nil {
		return nil, fmt.Errorf("tandem: rpc: %s: alloc %d bytes: %w", bt.d.name, size, err)
	}
	h, got := le.Uint64(r), le.Uint64(r[8:])
	if h == 0 {
		return nil, fmt.Errorf("tandem: rpc: %s: server could not allocate %d bytes", bt.d.name, size)
	}
	if got < uint64(size) || got > math.MaxInt64 {
		return nil, fmt.Errorf("tandem: rpc: %s: asked %d bytes, server gave %d", bt.d.name, size, got)
	}
	b := &Buffer{bt: bt, handle: h, size: int64(got)}
	base, err := c.call(context.Background(), cmdBufferGetBase, 8, u64(h))
	if err != nil {
		return nil, fmt.Errorf("tandem: rpc: %s: buffer base: %w", bt.d.name, err)
	}
	b.base = le.Uint64(base)
	if got > 0 && (b.base == 0 || b.base > math.MaxUint64-got) {
		return nil, fmt.Errorf("tandem: rpc: %s: server gave base %#x for %d bytes", bt.d.name, b.base, got)
	}
	return b, nil
}
