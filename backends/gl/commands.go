//go:build gl && cgo

package gl

import (
	"fmt"

	"github.com/go-gl/gl/v4.3-core/gl"
	"github.com/tandem-ml/tandem/backends/internal/gpubackend"
	"github.com/tandem-ml/tandem/backends/internal/gpuops"
)

// commands issues one graph's dispatches on the GL thread (GL runs them in order; a fence at the
// end waits for them): the gpubackend.Queue of glThread.Run.
type commands struct {
	t *glThread
}

var _ gpubackend.Queue = (*commands)(nil)

// maxBindings is the most storage buffers one dispatch binds (the device guarantees 8).
const maxBindings = 8

// Dispatch binds p (a *program), its parameters and its buffers (binding i = bindings[i], each a
// *glBuffer range) and dispatches groups.
func (c *commands) Dispatch(pl gpuops.Pipeline, groups [3]uint32, push []byte, bindings []gpuops.Binding) error {
	p, ok := pl.(*program)
	if !ok {
		return fmt.Errorf("internal error: pipeline is a %T, not a GL program", pl)
	}
	if len(bindings) > maxBindings {
		return fmt.Errorf("%d bindings, more than %d", len(bindings), maxBindings)
	}
	for i, bnd := range bindings {
		if _, ok := bnd.Buf.(*glBuffer); !ok {
			return fmt.Errorf("internal error: binding %d is a %T, not a GL buffer", i, bnd.Buf)
		}
	}
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
		buf := bnd.Buf.(*glBuffer)
		if err := buf.live(); err != nil {
			return fmt.Errorf("shader %s binding %d: %w", p.name, i, err)
		}
		// Bind whole 32-bit words (16-bit arrays are read as words): the buffer is allocated in
		// 16-byte steps, so rounding up stays inside it.
		size := min((bnd.Size+3)/4*4, buf.cap-bnd.Off)
		if size == 0 {
			size = min(4, buf.cap-bnd.Off)
		}
		gl.BindBufferRange(gl.SHADER_STORAGE_BUFFER, uint32(i), buf.id, int(bnd.Off), int(size))
	}
	gl.DispatchCompute(groups[0], groups[1], groups[2])
	return nil
}

// Barrier makes the storage writes of earlier dispatches visible to later ones.
func (c *commands) Barrier() error {
	gl.MemoryBarrier(gl.SHADER_STORAGE_BARRIER_BIT)
	return nil
}

// EndNode does nothing: GL submits as it goes.
func (c *commands) EndNode() error { return nil }

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
