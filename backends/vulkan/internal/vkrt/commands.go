//go:build cgo && !novulkan

package vkrt

import (
	"fmt"

	vk "github.com/vulkan-go/vulkan"
)

type cmdState int

const (
	cmdIdle cmdState = iota
	cmdRecording
	cmdSubmitted
	cmdDone
	cmdBroken // a submit or wait failed; destroyed on Release
	cmdDestroyed
)

// Commands is a command buffer being recorded, submitted or finished, with its
// own command pool, fence, descriptor pools and timestamp queries. Get one
// with Device.Begin, record, Submit, Wait, then Release it (which recycles it).
// A Commands is used by one goroutine at a time; different Commands may be
// recorded concurrently.
type Commands struct {
	d         *Device
	pool      vk.CommandPool
	cmd       vk.CommandBuffer
	fence     vk.Fence
	descPools []uint64
	descIdx   int    // current pool
	descUsed  uint32 // sets taken from the current pool
	queries   vk.QueryPool
	nQueries  uint32
	last      *Pipeline
	state     cmdState
	dispatch  int
	binds     [maxBindings]cBinding
	// reusable: begun by BeginReusable, so Resubmit may run it again; uses then holds every
	// buffer its commands reach, which must all be alive when it does.
	reusable bool
	uses     []*Buffer
}

// Binding is a range of a buffer bound to one storage-buffer binding.
type Binding struct {
	Buffer *Buffer
	Offset uint64 // multiple of Limits.MinStorageBufferOffsetAlignment
	Size   uint64 // 0: to the end of the buffer (clamped to MaxStorageBufferRange)
}

// Bind binds a whole buffer.
func Bind(b *Buffer) Binding { return Binding{Buffer: b} }

// BindRange binds size bytes of b at off.
func BindRange(b *Buffer, off, size uint64) Binding {
	return Binding{Buffer: b, Offset: off, Size: size}
}

func (d *Device) newCommands() (*Commands, error) {
	c := &Commands{d: d}
	pci := &vk.CommandPoolCreateInfo{
		SType:            vk.StructureTypeCommandPoolCreateInfo,
		Flags:            vk.CommandPoolCreateFlags(vk.CommandPoolCreateTransientBit),
		QueueFamilyIndex: d.qfam,
	}
	var pool vk.CommandPool
	r := vk.CreateCommandPool(d.dev, pci, nil, &pool)
	pci.Free()
	if err := resultError("vkCreateCommandPool", int32(r)); err != nil {
		return nil, err
	}
	c.pool = pool
	cai := &vk.CommandBufferAllocateInfo{
		SType:              vk.StructureTypeCommandBufferAllocateInfo,
		CommandPool:        pool,
		Level:              vk.CommandBufferLevelPrimary,
		CommandBufferCount: 1,
	}
	cmds := make([]vk.CommandBuffer, 1)
	r = vk.AllocateCommandBuffers(d.dev, cai, cmds)
	cai.Free()
	if err := resultError("vkAllocateCommandBuffers", int32(r)); err != nil {
		vk.DestroyCommandPool(d.dev, pool, nil)
		return nil, err
	}
	c.cmd = cmds[0]
	fci := &vk.FenceCreateInfo{SType: vk.StructureTypeFenceCreateInfo}
	var fence vk.Fence
	r = vk.CreateFence(d.dev, fci, nil, &fence)
	fci.Free()
	if err := resultError("vkCreateFence", int32(r)); err != nil {
		vk.DestroyCommandPool(d.dev, pool, nil)
		return nil, err
	}
	c.fence = fence
	return c, nil
}

// destroy frees the Vulkan objects; the device must be idle as far as c is
// concerned. d.mu is held by the caller or c is unreachable.
func (c *Commands) destroy() {
	if c.state == cmdDestroyed {
		return
	}
	d := c.d
	for _, p := range c.descPools {
		cDestroyDescriptorPool(d.fns, d.dev, p)
	}
	c.descPools = nil
	if c.queries != vk.NullQueryPool {
		vk.DestroyQueryPool(d.dev, c.queries, nil)
	}
	vk.DestroyFence(d.dev, c.fence, nil)
	vk.DestroyCommandPool(d.dev, c.pool, nil) // frees c.cmd
	c.state = cmdDestroyed
}

// Begin returns a Commands in the recording state. Its first command is a
// global memory barrier, so it is ordered after all work submitted earlier.
func (d *Device) Begin() (*Commands, error) { return d.begin(false) }

// BeginReusable is Begin for commands that Resubmit may run again once they have
// finished (a graph run every token). They keep their descriptor sets until
// Release.
func (d *Device) BeginReusable() (*Commands, error) { return d.begin(true) }

func (d *Device) begin(reusable bool) (*Commands, error) {
	if err := d.acquire(); err != nil {
		return nil, err
	}
	defer d.release()
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil, ErrClosed
	}
	var c *Commands
	if n := len(d.freeCmds); n > 0 {
		c = d.freeCmds[n-1]
		d.freeCmds = d.freeCmds[:n-1]
	}
	d.mu.Unlock()
	if c == nil {
		var err error
		if c, err = d.newCommands(); err != nil {
			return nil, err
		}
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			c.destroy()
			return nil, ErrClosed
		}
		d.allCmds[c] = struct{}{}
		d.mu.Unlock()
	}
	c.reusable = reusable
	if err := resultError("vkBeginCommandBuffer", cBegin(d.fns, c.cmd, !reusable)); err != nil {
		c.state = cmdBroken
		c.Release()
		return nil, err
	}
	// Order this command buffer after everything submitted before it (a
	// barrier's first scope covers earlier submissions on the queue): work in
	// separate submissions then never races, whoever recorded it.
	cBarrier(d.fns, c.cmd, false)
	c.state = cmdRecording
	return c, nil
}

// Run records fn into a fresh Commands, submits it, waits for it and releases it.
func (d *Device) Run(fn func(c *Commands) error) error {
	if err := d.acquire(); err != nil {
		return err
	}
	defer d.release()
	c, err := d.Begin()
	if err != nil {
		return err
	}
	defer c.Release()
	if err := fn(c); err != nil {
		return err
	}
	if err := c.Submit(); err != nil {
		return err
	}
	return c.Wait()
}

func (c *Commands) recording(op string) error {
	if c.state != cmdRecording {
		return fmt.Errorf("vulkan: %s on a command buffer that is not recording: %w", op, ErrInvalid)
	}
	return nil
}

// Dispatches returns the number of dispatches recorded since Begin.
func (c *Commands) Dispatches() int { return c.dispatch }

// Dispatch records a dispatch of p with groups workgroups, push constants push
// (exactly p.PushSize() bytes) and one binding per storage buffer of p. A
// dispatch with a zero group count records nothing. Each dispatch gets a fresh
// descriptor set. Dispatches are not ordered against each other: call Barrier
// between a dispatch and one that reads what it wrote.
func (c *Commands) Dispatch(p *Pipeline, groups [3]uint32, push []byte, bindings ...Binding) error {
	if err := c.recording("Dispatch"); err != nil {
		return err
	}
	d := c.d
	if p == nil || p.d != d {
		return fmt.Errorf("vulkan: Dispatch of a pipeline from another device: %w", ErrInvalid)
	}
	if len(bindings) != p.bindings {
		return fmt.Errorf("vulkan: Dispatch %s with %d bindings, pipeline has %d: %w", p.name, len(bindings), p.bindings, ErrInvalid)
	}
	if uint32(len(push)) != p.pushSize {
		return fmt.Errorf("vulkan: Dispatch %s with %d push-constant bytes, pipeline has %d: %w", p.name, len(push), p.pushSize, ErrInvalid)
	}
	lim := &d.info.Limits
	for i, g := range groups {
		if g > lim.MaxComputeWorkGroupCount[i] {
			return fmt.Errorf("vulkan: Dispatch %s: %d workgroups in dimension %d (max %d): %w", p.name, g, i, lim.MaxComputeWorkGroupCount[i], ErrInvalid)
		}
	}
	if groups[0] == 0 || groups[1] == 0 || groups[2] == 0 {
		return nil
	}
	for i, b := range bindings {
		buf := b.Buffer
		if buf == nil || buf.d != d {
			return fmt.Errorf("vulkan: Dispatch %s binding %d: nil buffer or buffer of another device: %w", p.name, i, ErrInvalid)
		}
		if buf.destroyed.Load() {
			return fmt.Errorf("vulkan: Dispatch %s binding %d: %w", p.name, i, ErrClosed)
		}
		if align := lim.MinStorageBufferOffsetAlignment; align > 1 && b.Offset%align != 0 {
			return fmt.Errorf("vulkan: Dispatch %s binding %d: offset %d not a multiple of minStorageBufferOffsetAlignment %d: %w", p.name, i, b.Offset, align, ErrInvalid)
		}
		if b.Offset >= buf.allocSize {
			return fmt.Errorf("vulkan: Dispatch %s binding %d: offset %d outside a buffer of %d bytes: %w", p.name, i, b.Offset, buf.size, ErrOutOfRange)
		}
		rng := b.Size
		if rng == 0 {
			rng = min(buf.allocSize-b.Offset, uint64(lim.MaxStorageBufferRange))
		} else {
			if b.Size > buf.allocSize-b.Offset {
				return fmt.Errorf("vulkan: Dispatch %s binding %d: [%d, +%d) outside a buffer of %d bytes: %w", p.name, i, b.Offset, b.Size, buf.size, ErrOutOfRange)
			}
			if b.Size > uint64(lim.MaxStorageBufferRange) {
				return fmt.Errorf("vulkan: Dispatch %s binding %d: range %d exceeds maxStorageBufferRange %d: %w", p.name, i, b.Size, lim.MaxStorageBufferRange, ErrOutOfRange)
			}
		}
		c.binds[i] = makeBinding(buf.buf, b.Offset, rng)
		c.use(buf)
	}
	var set uint64
	if p.bindings > 0 {
		var err error
		if set, err = c.allocateSet(p.setLayout); err != nil {
			return fmt.Errorf("vulkan: Dispatch %s: %w", p.name, err)
		}
	}
	cDispatch(d.fns, d.dev, c.cmd, set, p.layout, p.pipe, p != c.last, c.binds[:p.bindings], push,
		groups[0], groups[1], groups[2])
	c.last = p
	c.dispatch++
	return nil
}

// allocateSet takes a descriptor set from the current pool, moving on to the
// next (created when needed) when it has given out DescriptorPoolSets sets or
// reports that it is exhausted. (Vulkan 1.1 drivers may allocate past maxSets;
// counting keeps pool usage the same on every driver.)
func (c *Commands) allocateSet(layout vk.DescriptorSetLayout) (uint64, error) {
	d := c.d
	sets := d.opts.DescriptorPoolSets
	for {
		if c.descUsed >= sets {
			c.descIdx++
			c.descUsed = 0
		}
		created := false
		if c.descIdx == len(c.descPools) {
			pool, r := cCreateDescriptorPool(d.fns, d.dev, sets, sets*uint32(maxBindings))
			if err := resultError("vkCreateDescriptorPool", r); err != nil {
				return 0, err
			}
			c.descPools = append(c.descPools, pool)
			created = true
		}
		set, r := cAllocateDescriptorSet(d.fns, d.dev, c.descPools[c.descIdx], layout)
		switch {
		case r == 0:
			c.descUsed++
			return set, nil
		case (r == resultOutOfPoolMemory || r == resultFragmentedPool) && !created:
			c.descUsed = sets // exhausted: next pool
		default:
			return 0, resultError("vkAllocateDescriptorSets", r)
		}
	}
}

// Barrier records a global memory barrier: every compute or transfer write
// recorded before it is visible to every compute or transfer access after it.
func (c *Commands) Barrier() error {
	if err := c.recording("Barrier"); err != nil {
		return err
	}
	cBarrier(c.d.fns, c.cmd, false)
	return nil
}

// CopyBuffer records a copy of size bytes from src at srcOff to dst at dstOff.
func (c *Commands) CopyBuffer(dst *Buffer, dstOff uint64, src *Buffer, srcOff, size uint64) error {
	if err := c.recording("CopyBuffer"); err != nil {
		return err
	}
	if dst == nil || src == nil || dst.d != c.d || src.d != c.d {
		return fmt.Errorf("vulkan: CopyBuffer: nil buffer or buffer of another device: %w", ErrInvalid)
	}
	if err := src.check("CopyBuffer source", srcOff, size); err != nil {
		return err
	}
	if err := dst.check("CopyBuffer destination", dstOff, size); err != nil {
		return err
	}
	if src == dst && srcOff < dstOff+size && dstOff < srcOff+size {
		return fmt.Errorf("vulkan: CopyBuffer: overlapping ranges [%d,+%d) and [%d,+%d): %w", srcOff, size, dstOff, size, ErrInvalid)
	}
	if size == 0 {
		return nil
	}
	cCopyBuffer(c.d.fns, c.cmd, src.buf, dst.buf, srcOff, dstOff, size)
	c.use(src)
	c.use(dst)
	return nil
}

// use notes that the commands of a reusable c reach b.
func (c *Commands) use(b *Buffer) {
	if !c.reusable {
		return
	}
	for _, u := range c.uses[max(0, len(c.uses)-8):] { // bindings repeat from dispatch to dispatch
		if u == b {
			return
		}
	}
	c.uses = append(c.uses, b)
}

// FillBuffer records vkCmdFillBuffer: size bytes at off (both multiples of 4)
// set to the repeated 32-bit word.
func (c *Commands) FillBuffer(b *Buffer, off, size uint64, word uint32) error {
	if err := c.recording("FillBuffer"); err != nil {
		return err
	}
	if b == nil || b.d != c.d {
		return fmt.Errorf("vulkan: FillBuffer: nil buffer or buffer of another device: %w", ErrInvalid)
	}
	if off%4 != 0 || size%4 != 0 {
		return fmt.Errorf("vulkan: FillBuffer: offset %d and size %d must be multiples of 4: %w", off, size, ErrInvalid)
	}
	// The tail of a buffer whose size is not a multiple of 4 is padding, so a
	// fill may run to allocSize.
	if b.destroyed.Load() {
		return fmt.Errorf("vulkan: FillBuffer on a destroyed buffer: %w", ErrClosed)
	}
	if off > b.allocSize || size > b.allocSize-off || (off+size > b.size && off+size != b.allocSize) {
		return fmt.Errorf("vulkan: FillBuffer of [%d, %d+%d) outside a buffer of %d bytes: %w", off, off, size, b.size, ErrOutOfRange)
	}
	if size == 0 {
		return nil
	}
	cFillBuffer(c.d.fns, c.cmd, b.buf, off, size, word)
	c.use(b)
	return nil
}

// Timestamp records a timestamp after all previous commands complete and
// returns its index for Timestamps.
func (c *Commands) Timestamp() (int, error) {
	if err := c.recording("Timestamp"); err != nil {
		return 0, err
	}
	d := c.d
	if d.info.TimestampValidBits == 0 {
		return 0, fmt.Errorf("vulkan: %s has no timestamps on its compute queue: %w", d.info.Name, ErrInvalid)
	}
	if c.nQueries >= d.opts.MaxTimestamps {
		return 0, fmt.Errorf("vulkan: more than %d timestamps in one command buffer: %w", d.opts.MaxTimestamps, ErrOutOfRange)
	}
	if c.queries == vk.NullQueryPool {
		qci := &vk.QueryPoolCreateInfo{
			SType:      vk.StructureTypeQueryPoolCreateInfo,
			QueryType:  vk.QueryTypeTimestamp,
			QueryCount: d.opts.MaxTimestamps,
		}
		var qp vk.QueryPool
		r := vk.CreateQueryPool(d.dev, qci, nil, &qp)
		qci.Free()
		if err := resultError("vkCreateQueryPool", int32(r)); err != nil {
			return 0, err
		}
		c.queries = qp
	}
	if c.nQueries == 0 {
		cResetQueries(d.fns, c.cmd, c.queries, 0, d.opts.MaxTimestamps)
	}
	q := c.nQueries
	cWriteTimestamp(d.fns, c.cmd, c.queries, q)
	c.nQueries++
	return int(q), nil
}

// Timestamps returns the recorded timestamps in nanoseconds (on the device's
// clock, so only differences are meaningful). Call it after Wait.
func (c *Commands) Timestamps() ([]float64, error) {
	if c.state != cmdDone {
		return nil, fmt.Errorf("vulkan: Timestamps before Wait: %w", ErrInvalid)
	}
	raw := make([]uint64, c.nQueries)
	if err := resultError("vkGetQueryPoolResults", cQueryResults(c.d.fns, c.d.dev, c.queries, 0, raw)); err != nil {
		return nil, err
	}
	bits := c.d.info.TimestampValidBits
	period := float64(c.d.info.Limits.TimestampPeriod)
	out := make([]float64, len(raw))
	for i, t := range raw {
		if bits < 64 {
			t &= 1<<bits - 1
		}
		out[i] = float64(t) * period
	}
	return out, nil
}

// Submit ends recording (adding a barrier that makes device writes visible to
// the host) and submits the command buffer with its fence.
func (c *Commands) Submit() error {
	if err := c.recording("Submit"); err != nil {
		return err
	}
	d := c.d
	cBarrier(d.fns, c.cmd, true)
	if err := resultError("vkEndCommandBuffer", cEnd(d.fns, c.cmd)); err != nil {
		c.state = cmdBroken
		return err
	}
	return c.submit()
}

// submit submits the ended command buffer with its fence.
func (c *Commands) submit() error {
	d := c.d
	d.queueMu.Lock()
	r := cSubmit(d.fns, d.queue, c.cmd, c.fence)
	d.queueMu.Unlock()
	if err := resultError("vkQueueSubmit", r); err != nil {
		c.state = cmdBroken
		return err
	}
	c.state = cmdSubmitted
	return nil
}

// BuffersAlive reports whether every buffer the commands of a reusable c reach
// is still alive (none destroyed since recording).
func (c *Commands) BuffersAlive() bool {
	for _, b := range c.uses {
		if b.destroyed.Load() {
			return false
		}
	}
	return true
}

// Resubmit submits a finished reusable command buffer again, as recorded. It
// fails (ErrClosed) without submitting when a buffer its commands reach has
// been destroyed since, and (ErrInvalid) for commands not begun with
// BeginReusable or not finished.
func (c *Commands) Resubmit() error {
	if !c.reusable || c.state != cmdDone {
		return fmt.Errorf("vulkan: Resubmit of a command buffer that is not reusable and finished: %w", ErrInvalid)
	}
	if !c.BuffersAlive() {
		return fmt.Errorf("vulkan: Resubmit: a buffer its commands use was destroyed: %w", ErrClosed)
	}
	return c.submit()
}

// Done reports whether a submitted command buffer has finished, without waiting.
func (c *Commands) Done() (bool, error) {
	switch c.state {
	case cmdDone:
		return true, nil
	case cmdSubmitted:
	default:
		return false, fmt.Errorf("vulkan: Done on a command buffer that was not submitted: %w", ErrInvalid)
	}
	switch r := cFenceStatus(c.d.fns, c.d.dev, c.fence); r {
	case 0:
		return true, c.Wait()
	case resultNotReady:
		return false, nil
	default:
		c.state = cmdBroken
		return false, resultError("vkGetFenceStatus", r)
	}
}

// Wait waits until the submitted command buffer has finished.
func (c *Commands) Wait() error {
	switch c.state {
	case cmdDone:
		return nil
	case cmdSubmitted:
	default:
		return fmt.Errorf("vulkan: Wait on a command buffer that was not submitted: %w", ErrInvalid)
	}
	if err := c.d.wait(c.fence); err != nil {
		c.state = cmdBroken
		return err
	}
	c.state = cmdDone
	return nil
}

// Release waits for the command buffer if it was submitted, resets it and
// returns it to the device for reuse. c must not be used afterwards.
func (c *Commands) Release() {
	d := c.d
	if c.state == cmdSubmitted {
		if c.Wait() != nil {
			c.state = cmdBroken
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c.state == cmdDestroyed || d.closed { // Device.Close destroys (or destroyed) it
		return
	}
	if c.state == cmdBroken {
		// The GPU may still use it: wait for the queue before destroying.
		d.mu.Unlock()
		_ = d.WaitIdle()
		d.mu.Lock()
		if c.state != cmdDestroyed {
			c.destroy()
			delete(d.allCmds, c)
		}
		return
	}
	ok := cResetCommandPool(d.fns, d.dev, c.pool) == 0
	for i := 0; i <= c.descIdx && i < len(c.descPools); i++ {
		ok = cResetDescriptorPool(d.fns, d.dev, c.descPools[i]) == 0 && ok
	}
	if !ok {
		c.destroy()
		delete(d.allCmds, c)
		return
	}
	c.descIdx, c.descUsed, c.nQueries, c.last, c.dispatch = 0, 0, 0, nil, 0
	c.reusable, c.uses = false, c.uses[:0]
	c.state = cmdIdle
	d.freeCmds = append(d.freeCmds, c)
}
