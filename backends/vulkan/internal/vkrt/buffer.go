//go:build cgo && !novulkan

package vkrt

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// BufferKind selects a buffer's memory.
type BufferKind int

const (
	// DeviceBuffer is a storage buffer in device-local memory when there is
	// some (host-visible device-local, i.e. ReBAR/UMA, first); it is mapped
	// when its memory is host-visible and coherent (and ForceStaging is off),
	// otherwise reached through staging copies.
	DeviceBuffer BufferKind = iota
	// HostBuffer is host-visible, coherent (cached if possible) memory, always
	// mapped: staging buffers and pinned host memory.
	HostBuffer
)

func (k BufferKind) String() string {
	if k == HostBuffer {
		return "host"
	}
	return "device"
}

// Buffer is a VkBuffer bound to its own VkDeviceMemory.
//
// Write, Read, Memset and Fill are synchronous. They do not wait for
// Commands that are recorded or in flight: finish (Wait) those first when they
// touch the same bytes. A Buffer may be used from several goroutines for
// disjoint ranges.
type Buffer struct {
	d         *Device
	kind      BufferKind
	buf       vk.Buffer
	mem       vk.DeviceMemory
	size      uint64 // requested size
	allocSize uint64 // size of the VkBuffer (>= size, multiple of 4, at least 4)
	memType   int
	memFlags  uint32
	mapped    []byte // the whole VkBuffer when mapped, else nil
	destroyed atomic.Bool
}

// NewBuffer creates a buffer of size bytes (0 is allowed) with usage storage +
// transfer source + transfer destination.
func (d *Device) NewBuffer(size uint64, kind BufferKind) (*Buffer, error) {
	if err := d.acquire(); err != nil {
		return nil, err
	}
	defer d.release()
	if err := d.checkOpen(); err != nil {
		return nil, err
	}
	if lim := d.info.Limits.MaxMemoryAllocationSize; lim != 0 && size > lim {
		return nil, fmt.Errorf("vulkan: %s buffer of %d bytes exceeds maxMemoryAllocationSize (%d): %w", kind, size, lim, ErrOutOfDeviceMemory)
	}
	allocSize := (max(size, 4) + 3) &^ 3
	if allocSize < size { // overflow
		return nil, fmt.Errorf("vulkan: buffer of %d bytes: %w", size, ErrInvalid)
	}
	bci := &vk.BufferCreateInfo{
		SType: vk.StructureTypeBufferCreateInfo,
		Size:  vk.DeviceSize(allocSize),
		Usage: vk.BufferUsageFlags(vk.BufferUsageStorageBufferBit | vk.BufferUsageTransferSrcBit |
			vk.BufferUsageTransferDstBit),
		SharingMode: vk.SharingModeExclusive,
	}
	var buf vk.Buffer
	r := vk.CreateBuffer(d.dev, bci, nil, &buf)
	bci.Free()
	if err := resultError("vkCreateBuffer", int32(r)); err != nil {
		return nil, fmt.Errorf("%s buffer of %d bytes: %w", kind, size, err)
	}
	var req vk.MemoryRequirements
	vk.GetBufferMemoryRequirements(d.dev, buf, &req)
	req.Deref()
	reqSize, reqBits := uint64(req.Size), req.MemoryTypeBits
	req.Free()

	b := &Buffer{d: d, kind: kind, buf: buf, size: size, allocSize: allocSize, memType: -1}
	var allocErr error
	for _, t := range d.memoryTypeCandidates(reqBits, kind) {
		mai := &vk.MemoryAllocateInfo{
			SType:           vk.StructureTypeMemoryAllocateInfo,
			AllocationSize:  vk.DeviceSize(reqSize),
			MemoryTypeIndex: uint32(t),
		}
		var mem vk.DeviceMemory
		r := vk.AllocateMemory(d.dev, mai, nil, &mem)
		mai.Free()
		if allocErr = resultError("vkAllocateMemory", int32(r)); allocErr == nil {
			b.mem, b.memType, b.memFlags = mem, t, d.info.MemoryTypes[t].Flags
			break
		}
	}
	if b.memType < 0 {
		vk.DestroyBuffer(d.dev, buf, nil)
		if allocErr == nil {
			allocErr = fmt.Errorf("vulkan: no memory type fits a %s buffer (type bits %#x): %w", kind, reqBits, ErrOutOfDeviceMemory)
		}
		return nil, fmt.Errorf("%s buffer of %d bytes: %w", kind, size, allocErr)
	}
	if err := resultError("vkBindBufferMemory", int32(vk.BindBufferMemory(d.dev, buf, b.mem, 0))); err != nil {
		b.release()
		return nil, err
	}
	mappable := b.memFlags&(MemoryHostVisible|MemoryHostCoherent) == MemoryHostVisible|MemoryHostCoherent
	if mappable && (kind == HostBuffer || !d.opts.ForceStaging) {
		var p unsafe.Pointer
		if err := resultError("vkMapMemory", int32(vk.MapMemory(d.dev, b.mem, 0, vk.DeviceSize(allocSize), 0, &p))); err != nil {
			b.release()
			return nil, err
		}
		// Safe: vkMapMemory returned a host mapping of allocSize bytes of C
		// (driver) memory that stays valid until vkUnmapMemory in release, which
		// drops this slice first. The GC never scans or moves it.
		b.mapped = unsafe.Slice((*byte)(p), allocSize)
	} else if kind == HostBuffer {
		b.release()
		return nil, fmt.Errorf("vulkan: host buffer got memory type %d (flags %#x) that is not host-visible and coherent: %w", b.memType, b.memFlags, ErrOutOfDeviceMemory)
	}

	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		b.release()
		return nil, ErrClosed
	}
	d.buffers[b] = struct{}{}
	d.mu.Unlock()
	return b, nil
}

// memoryTypeCandidates lists the memory types allowed by bits, best first.
func (d *Device) memoryTypeCandidates(bits uint32, kind BufferKind) []int {
	var prefs []uint32
	if kind == HostBuffer {
		prefs = []uint32{MemoryHostVisible | MemoryHostCoherent | MemoryHostCached, MemoryHostVisible | MemoryHostCoherent}
	} else {
		prefs = []uint32{MemoryDeviceLocal | MemoryHostVisible | MemoryHostCoherent, MemoryDeviceLocal,
			MemoryHostVisible | MemoryHostCoherent, 0}
	}
	var out []int
	seen := map[int]bool{}
	for _, want := range prefs {
		for i, t := range d.info.MemoryTypes {
			if bits&(1<<uint(i)) != 0 && t.Flags&want == want && !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	return out
}

// Size returns the buffer's size in bytes, as requested.
func (b *Buffer) Size() uint64 { return b.size }

// Kind returns the kind the buffer was created with.
func (b *Buffer) Kind() BufferKind { return b.kind }

// Device returns the device the buffer belongs to.
func (b *Buffer) Device() *Device { return b.d }

// MemoryFlags returns the property flags (Memory*) of the buffer's memory.
func (b *Buffer) MemoryFlags() uint32 { return b.memFlags }

// HostVisible reports whether the buffer is mapped (Write/Read are memcpy).
func (b *Buffer) HostVisible() bool { return b.mapped != nil }

// Mapped returns the buffer's mapped bytes (len Size()), or nil when it is not
// mapped. The slice is valid until Destroy or Device.Close; GPU writes are
// visible in it once the Commands that made them have been waited for.
func (b *Buffer) Mapped() []byte {
	if b.mapped == nil {
		return nil
	}
	return b.mapped[:b.size:b.size]
}

// check validates that [off, off+n) lies within the buffer.
func (b *Buffer) check(op string, off, n uint64) error {
	if b.destroyed.Load() {
		return fmt.Errorf("vulkan: %s on a destroyed buffer: %w", op, ErrClosed)
	}
	if off > b.size || n > b.size-off {
		return fmt.Errorf("vulkan: %s of [%d, %d+%d) outside a buffer of %d bytes: %w", op, off, off, n, b.size, ErrOutOfRange)
	}
	return nil
}

// Write copies src into the buffer at byte offset off.
func (b *Buffer) Write(off uint64, src []byte) error {
	if err := b.d.acquire(); err != nil {
		return fmt.Errorf("vulkan: Write on a destroyed buffer (its device is closed): %w", err)
	}
	defer b.d.release()
	if err := b.check("Write", off, uint64(len(src))); err != nil {
		return err
	}
	if len(src) == 0 {
		return nil
	}
	if b.mapped != nil {
		copy(b.mapped[off:], src)
		return nil
	}
	return b.d.stagedWrite(b, off, src)
}

// Read copies len(dst) bytes at byte offset off into dst.
func (b *Buffer) Read(off uint64, dst []byte) error {
	if err := b.d.acquire(); err != nil {
		return fmt.Errorf("vulkan: Read on a destroyed buffer (its device is closed): %w", err)
	}
	defer b.d.release()
	if err := b.check("Read", off, uint64(len(dst))); err != nil {
		return err
	}
	if len(dst) == 0 {
		return nil
	}
	if b.mapped != nil && !readsStaged(b.kind, b.memFlags, len(dst)) {
		copy(dst, b.mapped[off:])
		return nil
	}
	return b.d.stagedRead(b, off, dst)
}

// stagedReadMin is the read from uncached device memory from which Read goes through a staging
// copy. A discrete GPU with resizable BAR maps its device-local memory uncached: the host reads it
// across the bus at tens of MB/s (TinyLlama's 125 KiB of logits took 4.5 ms a token on an H200),
// where a device copy into cached host memory and a fence cost tens of µs.
const stagedReadMin = 1 << 10

// readsStaged reports whether a Read of n bytes from a mapped buffer of kind and memory flags goes
// through staging: device-local memory that the host does not cache, n at least stagedReadMin.
func readsStaged(kind BufferKind, flags uint32, n int) bool {
	return kind == DeviceBuffer && flags&MemoryDeviceLocal != 0 && flags&MemoryHostCached == 0 && n >= stagedReadMin
}

// Memset sets size bytes at off to v.
func (b *Buffer) Memset(off, size uint64, v byte) error {
	if err := b.d.acquire(); err != nil {
		return fmt.Errorf("vulkan: Memset on a destroyed buffer (its device is closed): %w", err)
	}
	defer b.d.release()
	if err := b.check("Memset", off, size); err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	if b.mapped != nil {
		m := b.mapped[off : off+size]
		for i := range m {
			m[i] = v
		}
		return nil
	}
	// vkCmdFillBuffer needs 4-byte aligned offsets and sizes: fill the aligned
	// middle on the device and write the (at most 3-byte) edges through staging.
	head := min(size, (4-off%4)%4)
	mid := (size - head) &^ 3
	tail := size - head - mid
	edge := []byte{v, v, v}
	if head > 0 {
		if err := b.d.stagedWrite(b, off, edge[:head]); err != nil {
			return err
		}
	}
	if mid > 0 {
		word := uint32(v) * 0x01010101
		if err := b.d.Run(func(c *Commands) error { return c.FillBuffer(b, off+head, mid, word) }); err != nil {
			return err
		}
	}
	if tail > 0 {
		return b.d.stagedWrite(b, off+head+mid, edge[:tail])
	}
	return nil
}

// Fill sets size bytes at off (both multiples of 4) to the repeated 32-bit
// little-endian word, with vkCmdFillBuffer.
func (b *Buffer) Fill(off, size uint64, word uint32) error {
	return b.d.Run(func(c *Commands) error { return c.FillBuffer(b, off, size, word) })
}

// Destroy frees the buffer. It is idempotent; using the buffer afterwards
// returns ErrClosed. The caller must not destroy a buffer that in-flight
// Commands still use.
func (b *Buffer) Destroy() {
	if b.destroyed.Load() {
		return
	}
	if b.d.acquire() != nil {
		return // the device is closing: Close releases the buffer
	}
	defer b.d.release()
	b.d.mu.Lock()
	_, live := b.d.buffers[b]
	delete(b.d.buffers, b)
	b.d.mu.Unlock()
	if live { // otherwise Device.Close released it
		b.release()
	}
}

// release frees the Vulkan objects.
func (b *Buffer) release() {
	if b.destroyed.Swap(true) {
		return
	}
	if b.mapped != nil {
		b.mapped = nil
		vk.UnmapMemory(b.d.dev, b.mem)
	}
	vk.DestroyBuffer(b.d.dev, b.buf, nil)
	if b.memType >= 0 {
		vk.FreeMemory(b.d.dev, b.mem, nil)
	}
}

// CopyBuffer copies size bytes from src at srcOff to dst at dstOff on the
// device and waits for it.
func (d *Device) CopyBuffer(dst *Buffer, dstOff uint64, src *Buffer, srcOff, size uint64) error {
	return d.Run(func(c *Commands) error { return c.CopyBuffer(dst, dstOff, src, srcOff, size) })
}

// stagingBuffer returns a mapped host buffer of at least n bytes (n <=
// StagingSize); stagingMu must be held.
func (d *Device) stagingBuffer(n uint64) (*Buffer, error) {
	if d.staging != nil && !d.staging.destroyed.Load() && d.staging.size >= n {
		return d.staging, nil
	}
	size := n
	if d.staging != nil {
		size = max(n, min(2*d.staging.size, d.opts.StagingSize))
		d.staging.Destroy()
		d.staging = nil
	}
	st, err := d.NewBuffer(size, HostBuffer)
	if err != nil {
		return nil, fmt.Errorf("vulkan: staging buffer: %w", err)
	}
	d.staging = st
	return st, nil
}

func (d *Device) stagedWrite(dst *Buffer, off uint64, src []byte) error {
	d.stagingMu.Lock()
	defer d.stagingMu.Unlock()
	for len(src) > 0 {
		n := min(uint64(len(src)), d.opts.StagingSize)
		st, err := d.stagingBuffer(n)
		if err != nil {
			return err
		}
		copy(st.mapped, src[:n])
		if err := d.Run(func(c *Commands) error { return c.CopyBuffer(dst, off, st, 0, n) }); err != nil {
			return err
		}
		src = src[n:]
		off += n
	}
	return nil
}

func (d *Device) stagedRead(src *Buffer, off uint64, dst []byte) error {
	d.stagingMu.Lock()
	defer d.stagingMu.Unlock()
	for len(dst) > 0 {
		n := min(uint64(len(dst)), d.opts.StagingSize)
		st, err := d.stagingBuffer(n)
		if err != nil {
			return err
		}
		if err := d.Run(func(c *Commands) error { return c.CopyBuffer(st, 0, src, off, n) }); err != nil {
			return err
		}
		copy(dst[:n], st.mapped)
		dst = dst[n:]
		off += n
	}
	return nil
}
