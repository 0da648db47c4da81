//go:build gl && cgo

package gl

import (
	"fmt"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/core"
)

// opsRuntime is the OpenGL side of the shared op encoders (gpuops.Runtime): the device's buffers
// and programs and the graph's dispatches. Its methods run on the GL thread, except
// NewStatusBuffer (GraphCompute starts the encoder before it hands the graph to the thread).
type opsRuntime struct {
	b     *Backend
	cmd   *commands // set by GraphCompute for each graph
	binds [maxBindings]binding
}

// maxBindings is the most storage buffers one dispatch binds (the device guarantees 8).
const maxBindings = 8

var _ gpuops.Runtime = (*opsRuntime)(nil)

// Locate returns t's GL buffer (a *glBuffer) and its size.
func (r *opsRuntime) Locate(t *core.Tensor) (any, int64, error) {
	gb, ok := t.Buffer.(*buffer)
	if !ok {
		return nil, 0, fmt.Errorf("tensor %v is not in OpenGL memory (buffer %v)", t, bufName(t.Buffer))
	}
	if gb.bt.dev != r.b.dev {
		return nil, 0, fmt.Errorf("tensor %v is in memory of %s, not %s", t, gb.bt.dev.name, r.b.dev.name)
	}
	return gb.gb, gb.Size(), nil
}

// Pipeline returns the cached program for the shader variant name.
func (r *opsRuntime) Pipeline(name string, bindings int, push uint32, spec []uint32) (gpuops.Pipeline, error) {
	p, err := r.b.vd.program(name, bindings, push, spec)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Dispatch issues p with its bindings.
func (r *opsRuntime) Dispatch(p gpuops.Pipeline, groups [3]uint32, push []byte, bindings []gpuops.Binding) error {
	if len(bindings) > len(r.binds) {
		return fmt.Errorf("%d bindings, more than %d", len(bindings), len(r.binds))
	}
	for i, bnd := range bindings {
		buf, ok := bnd.Buf.(*glBuffer)
		if !ok {
			return fmt.Errorf("internal error: binding %d is a %T, not a GL buffer", i, bnd.Buf)
		}
		r.binds[i] = bindRange(buf, bnd.Off, bnd.Size)
	}
	prog, ok := p.(*program)
	if !ok {
		return fmt.Errorf("internal error: pipeline is a %T, not a GL program", p)
	}
	return r.cmd.Dispatch(prog, groups, push, r.binds[:len(bindings)]...)
}

// Barrier makes earlier storage writes visible to later dispatches.
func (r *opsRuntime) Barrier() error { return r.cmd.Barrier() }

// NewStatusBuffer allocates a storage buffer (a *glBuffer), read back with glGetBufferSubData.
func (r *opsRuntime) NewStatusBuffer(size uint64) (gpuops.StatusBuffer, error) {
	gb, err := r.b.vd.newBuffer(size)
	if err != nil {
		return nil, err
	}
	return gb, nil
}
