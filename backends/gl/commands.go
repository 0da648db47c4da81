//go:build gl && cgo

package gl

import (
	"fmt"

	"github.com/go-gl/gl/v4.3-core/gl"
)

// binding is a byte range of a buffer bound to one storage binding of a dispatch.
type binding struct {
	buf       *glBuffer
	off, size uint64
}

// bindRange binds size bytes of b from off.
func bindRange(b *glBuffer, off, size uint64) binding { return binding{buf: b, off: off, size: size} }

// commands issues one graph's dispatches on the GL thread (GL runs them in order; a fence at the
// end waits for them).
type commands struct {
	t          *glThread
	dispatches int
}

// Dispatch binds p, its parameters and its buffers (binding i = bindings[i]) and dispatches groups.
func (c *commands) Dispatch(p *program, groups [3]uint32, push []byte, bindings ...binding) error {
	if len(bindings) != p.bindings {
		return fmt.Errorf("shader %s takes %d buffers, got %d", p.name, p.bindings, len(bindings))
	}
	if uint32(len(push)) != p.push {
		return fmt.Errorf("shader %s takes %d bytes of parameters, got %d", p.name, p.push, len(push))
	}
	if groups[0] == 0 || groups[1] == 0 || groups[2] == 0 {
		return nil
	}
	t := c.t
	gl.UseProgram(p.id)
	if len(push) > 0 {
		align := int(t.info.uboAlign)
		off := (t.uboOff + align - 1) / align * align
		if off+len(push) > t.uboSize {
			off = 0 // GL orders the update after the dispatches that still read the old bytes
		}
		gl.BindBuffer(gl.UNIFORM_BUFFER, t.ubo)
		gl.BufferSubData(gl.UNIFORM_BUFFER, off, len(push), glPtr(&push[0]))
		gl.BindBufferRange(gl.UNIFORM_BUFFER, 0, t.ubo, off, len(push))
		t.uboOff = off + len(push)
	}
	for i, bnd := range bindings {
		if err := bnd.buf.live(); err != nil {
			return fmt.Errorf("shader %s binding %d: %w", p.name, i, err)
		}
		// Bind whole 32-bit words (16-bit arrays are read as words): the buffer is allocated in
		// 16-byte steps, so rounding up stays inside it.
		size := min((bnd.size+3)/4*4, bnd.buf.cap-bnd.off)
		if size == 0 {
			size = min(4, bnd.buf.cap-bnd.off)
		}
		gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(i), bnd.buf.id, int(bnd.off), int(size))
	}
	gl.DispatchCompute(groups[0], groups[1], groups[2])
	c.dispatches++
	return nil
}

// Barrier makes the storage writes of earlier dispatches visible to later ones.
func (c *commands) Barrier() error {
	gl.MemoryBarrier(gl.SHADER_STORAGE_BARRIER_BIT)
	return nil
}

// Dispatches is the number of dispatches issued.
func (c *commands) Dispatches() int { return c.dispatches }

// finish makes every write visible to later buffer reads and waits for the device.
func (c *commands) finish() error {
	gl.MemoryBarrier(gl.ALL_BARRIER_BITS)
	fence := gl.FenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0)
	if fence == 0 {
		return fmt.Errorf("glFenceSync failed")
	}
	defer gl.DeleteSync(fence)
	for {
		switch r := gl.ClientWaitSync(fence, gl.SYNC_FLUSH_COMMANDS_BIT, 1e9); r {
		case gl.ALREADY_SIGNALED, gl.CONDITION_SATISFIED:
			return nil
		case gl.WAIT_FAILED:
			return fmt.Errorf("glClientWaitSync failed")
		}
	}
}
