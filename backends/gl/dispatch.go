//go:build gl && cgo

package gl

import (
	"errors"
	"fmt"

	"github.com/tandem-ml/tandem/backends/internal/gpubackend"
	"github.com/tandem-ml/tandem/backends/internal/gpuops"
)

// The OpenGL side of the shared backend (package gpubackend): the GL thread is both the device's
// memory and its dispatcher; commands is the queue of one graph.

var (
	_ gpubackend.Memory     = (*glThread)(nil)
	_ gpubackend.Dispatcher = (*glThread)(nil)
)

// Alloc allocates a zeroed shader storage buffer (a *glBuffer). host is ignored: OpenGL has no
// host memory of its own, and every buffer is read back with glGetBufferSubData.
func (t *glThread) Alloc(size uint64, host bool) (gpubackend.Allocation, error) {
	gb, err := t.newBuffer(size)
	if err != nil {
		return nil, err
	}
	return gb, nil
}

// Copy copies n bytes between two buffers of the context with glCopyBufferSubData.
func (t *glThread) Copy(dst gpubackend.Allocation, dstOff uint64, src gpubackend.Allocation, srcOff, n uint64) error {
	db, ok1 := dst.(*glBuffer)
	sb, ok2 := src.(*glBuffer)
	if !ok1 || !ok2 {
		return fmt.Errorf("internal error: copying a %T to a %T, not GL buffers", src, dst)
	}
	return db.copyFrom(dstOff, sb, srcOff, n)
}

// Pipeline returns the cached program for the shader variant name. It runs on the GL thread
// (inside Run).
func (t *glThread) Pipeline(name string, bindings int, push uint32, spec []uint32) (gpuops.Pipeline, error) {
	p, err := t.program(name, bindings, push, spec)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Run hands the graph to the GL thread: record issues its dispatches there, then a fence waits for
// them. A context already closed is errClosed, without calling record.
func (t *glThread) Run(record func(gpubackend.Queue) error) error {
	c := &commands{t: t}
	return t.do(func() error { return errors.Join(record(c), c.finish()) })
}
