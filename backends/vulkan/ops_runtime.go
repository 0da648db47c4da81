//go:build cgo && !novulkan

package vulkan

import (
	"fmt"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/backends/vulkan/internal/vkrt"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/shaders"
)

// opsRuntime is the Vulkan side of the shared op encoders (gpuops.Runtime): the device's buffers
// and pipelines and the command buffer being recorded.
type opsRuntime struct {
	b     *Backend
	cmd   *vkrt.Commands // set by GraphCompute before each node
	binds [vkrt.MaxBindings]vkrt.Binding
}

var _ gpuops.Runtime = (*opsRuntime)(nil)

// Locate returns t's Vulkan buffer (a *vkrt.Buffer) and its size.
func (r *opsRuntime) Locate(t *core.Tensor) (any, int64, error) {
	vb, ok := vkBuffer(t.Buffer)
	if !ok {
		return nil, 0, fmt.Errorf("tensor %v is not in Vulkan memory (buffer %v)", t, bufName(t.Buffer))
	}
	if vb.bt.dev != r.b.dev {
		return nil, 0, fmt.Errorf("tensor %v is in memory of %s, not %s", t, vb.bt.dev.name, r.b.dev.name)
	}
	return vb.vb, vb.Size(), nil
}

// Pipeline returns the device's cached pipeline for the shader variant name.
func (r *opsRuntime) Pipeline(name string, bindings int, push uint32, spec []uint32) (gpuops.Pipeline, error) {
	spv, err := shaders.Get(name)
	if err != nil {
		return nil, err
	}
	p, err := r.b.vd.Pipeline(vkrt.PipelineDesc{Name: name, SPIRV: spv, Bindings: bindings, PushSize: push, Spec: spec})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Dispatch records p into the current command buffer.
func (r *opsRuntime) Dispatch(p gpuops.Pipeline, groups [3]uint32, push []byte, bindings []gpuops.Binding) error {
	if len(bindings) > len(r.binds) {
		return fmt.Errorf("%d bindings, more than %d", len(bindings), len(r.binds))
	}
	for i, bnd := range bindings {
		buf, ok := bnd.Buf.(*vkrt.Buffer)
		if !ok {
			return fmt.Errorf("internal error: binding %d is a %T, not a Vulkan buffer", i, bnd.Buf)
		}
		r.binds[i] = vkrt.BindRange(buf, bnd.Off, bnd.Size)
	}
	vp, ok := p.(*vkrt.Pipeline)
	if !ok {
		return fmt.Errorf("internal error: pipeline is a %T, not a Vulkan pipeline", p)
	}
	return r.cmd.Dispatch(vp, groups, push, r.binds[:len(bindings)]...)
}

// Barrier records a compute-to-compute barrier into the current command buffer.
func (r *opsRuntime) Barrier() error { return r.cmd.Barrier() }

// NewStatusBuffer allocates a host-visible buffer (a *vkrt.Buffer).
func (r *opsRuntime) NewStatusBuffer(size uint64) (gpuops.StatusBuffer, error) {
	sb, err := r.b.vd.NewBuffer(size, vkrt.HostBuffer)
	if err != nil {
		return nil, err
	}
	return sb, nil
}
