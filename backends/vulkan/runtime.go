//go:build cgo && !novulkan

package vulkan

import (
	"errors"
	"fmt"
	"time"

	"github.com/tandem-ml/tandem/backends/internal/gpubackend"
	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/backends/vulkan/internal/vkrt"
	"github.com/tandem-ml/tandem/shaders"
)

// The Vulkan side of the shared backend (package gpubackend): device memory (vkMemory) and
// command buffers (vkDispatcher, vkQueue).

// A graph's dispatches go into command buffers submitted as they fill, so that the GPU runs the
// first ones while the host records the rest: the first holds firstNodesPerSubmit dispatches (the
// GPU starts early), each next one twice as many, up to maxNodesPerSubmit (as llama.cpp's Vulkan
// backend grows its batches by work estimate, bounded by 100 nodes).
const (
	firstNodesPerSubmit = 12
	maxNodesPerSubmit   = 100
)

// vkMemory is a device's memory: buffers of its logical device (opened on first use).
type vkMemory struct{ d *device }

var _ gpubackend.Memory = vkMemory{}

// Alloc allocates a *vkrt.Buffer: device-local memory, or pinned host memory for host.
func (m vkMemory) Alloc(size uint64, host bool) (gpubackend.Allocation, error) {
	vd, err := m.d.open()
	if err != nil {
		return nil, err
	}
	kind := vkrt.DeviceBuffer
	if host {
		kind = vkrt.HostBuffer
	}
	vb, err := vd.NewBuffer(size, kind)
	if err != nil {
		return nil, err
	}
	return vb, nil
}

// Copy copies between two buffers of the device with a transfer command.
func (m vkMemory) Copy(dst gpubackend.Allocation, dstOff uint64, src gpubackend.Allocation, srcOff, n uint64) error {
	db, ok1 := dst.(*vkrt.Buffer)
	sb, ok2 := src.(*vkrt.Buffer)
	if !ok1 || !ok2 {
		return fmt.Errorf("internal error: copying a %T to a %T, not Vulkan buffers", src, dst)
	}
	vd, err := m.d.open()
	if err != nil {
		return err
	}
	return vd.CopyBuffer(db, dstOff, sb, srcOff, n)
}

// vkDispatcher runs a backend's graphs on its logical device.
type vkDispatcher struct{ vd *vkrt.Device }

var _ gpubackend.Dispatcher = (*vkDispatcher)(nil)

// Pipeline returns the device's cached pipeline for the shader variant name.
func (v *vkDispatcher) Pipeline(name string, bindings int, push uint32, spec []uint32) (gpuops.Pipeline, error) {
	spv, err := shaders.Get(name)
	if err != nil {
		return nil, err
	}
	p, err := v.vd.Pipeline(vkrt.PipelineDesc{Name: name, SPIRV: spv, Bindings: bindings, PushSize: push, Spec: spec})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Run records the graph into command buffers, submitted as they fill (firstNodesPerSubmit) and at
// the end, and waits for all of them. The device counts the graph as an operation in progress:
// Shutdown waits for it instead of destroying the device under it.
func (v *vkDispatcher) Run(record func(gpubackend.Queue) error) error {
	done, err := v.vd.Use()
	if err != nil {
		return err
	}
	defer done()
	q := &vkQueue{vd: v.vd, batch: firstNodesPerSubmit}
	_, err = q.finish(record(q))
	return err
}

// RunKept is Run whose command buffers are kept for Replay (recorded reusable).
func (v *vkDispatcher) RunKept(record func(gpubackend.Queue) error) (gpubackend.Recording, error) {
	done, err := v.vd.Use()
	if err != nil {
		return nil, err
	}
	defer done()
	q := &vkQueue{vd: v.vd, batch: firstNodesPerSubmit, keep: true}
	kept, err := q.finish(record(q))
	if err != nil || len(kept) == 0 {
		return nil, err
	}
	return &vkRecording{vd: v.vd, cmds: kept}, nil
}

// vkRecording is a graph's command buffers, finished and kept to be submitted again.
type vkRecording struct {
	vd   *vkrt.Device
	cmds []*vkrt.Commands
}

var _ gpubackend.Recording = (*vkRecording)(nil)

// Replay submits the command buffers again, in order, and waits for them. Where one reaches a
// buffer destroyed since, nothing is submitted and ok is false.
func (r *vkRecording) Replay() (ok bool, err error) {
	done, err := r.vd.Use()
	if err != nil {
		return false, err
	}
	defer done()
	for _, c := range r.cmds {
		if !c.BuffersAlive() {
			return false, nil
		}
	}
	for i, c := range r.cmds {
		if err := c.Resubmit(); err != nil {
			for _, s := range r.cmds[:i] {
				err = errors.Join(err, s.Wait())
			}
			return false, err
		}
	}
	for _, c := range r.cmds {
		err = errors.Join(err, c.Wait())
	}
	return err == nil, err
}

// Release returns the command buffers to the device.
func (r *vkRecording) Release() {
	for _, c := range r.cmds {
		c.Release()
	}
	r.cmds = nil
}

// vkQueue records one graph: the command buffer being recorded (begun on first use) and those
// submitted.
type vkQueue struct {
	vd        *vkrt.Device
	cur       *vkrt.Commands
	submitted []*vkrt.Commands
	binds     [vkrt.MaxBindings]vkrt.Binding
	batch     int                           // dispatches the command buffer being recorded is submitted at
	timing    bool                          // StartTiming: each command buffer begins with a timestamp
	keep      bool                          // RunKept: command buffers recorded reusable and kept
	marks     map[*vkrt.Commands][]nodeMark // TimeNode's marks per command buffer
}

// nodeMark is a node's timestamp in its command buffer and who gets its time.
type nodeMark struct {
	query int
	done  func(time.Duration)
}

var _ gpubackend.NodeTimer = (*vkQueue)(nil)

// StartTiming makes every command buffer of the graph begin with a timestamp (on a device whose
// compute queue has timestamps; elsewhere TimeNode fails and nothing is timed).
func (q *vkQueue) StartTiming() {
	q.timing = q.vd.Info().TimestampValidBits > 0
	q.marks = map[*vkrt.Commands][]nodeMark{}
}

// TimeNode writes a timestamp after the work issued so far; finish hands done the time since the
// command buffer's previous timestamp.
func (q *vkQueue) TimeNode(done func(time.Duration)) error {
	if !q.timing {
		return errors.New("vulkan: TimeNode before StartTiming")
	}
	c, err := q.commands()
	if err != nil {
		return err
	}
	i, err := c.Timestamp()
	if err != nil {
		return err
	}
	q.marks[c] = append(q.marks[c], nodeMark{query: i, done: done})
	return nil
}

// deliverTimes hands each node of c its time; c has finished.
func (q *vkQueue) deliverTimes(c *vkrt.Commands) error {
	marks := q.marks[c]
	if len(marks) == 0 {
		return nil
	}
	delete(q.marks, c)
	ts, err := c.Timestamps()
	if err != nil {
		return err
	}
	for _, m := range marks {
		if m.query > 0 && m.query < len(ts) {
			m.done(time.Duration(ts[m.query] - ts[m.query-1]))
		}
	}
	return nil
}

// commands returns the command buffer being recorded, beginning one when there is none.
func (q *vkQueue) commands() (*vkrt.Commands, error) {
	if q.cur == nil {
		begin := q.vd.Begin
		if q.keep {
			begin = q.vd.BeginReusable
		}
		c, err := begin()
		if err != nil {
			return nil, err
		}
		if q.timing {
			if _, err := c.Timestamp(); err != nil {
				c.Release()
				return nil, err
			}
		}
		q.cur = c
	}
	return q.cur, nil
}

// Dispatch records p with its bindings (each a *vkrt.Buffer range).
func (q *vkQueue) Dispatch(p gpuops.Pipeline, groups [3]uint32, push []byte, bindings []gpuops.Binding) error {
	if len(bindings) > len(q.binds) {
		return fmt.Errorf("%d bindings, more than %d", len(bindings), len(q.binds))
	}
	for i, bnd := range bindings {
		buf, ok := bnd.Buf.(*vkrt.Buffer)
		if !ok {
			return fmt.Errorf("internal error: binding %d is a %T, not a Vulkan buffer", i, bnd.Buf)
		}
		q.binds[i] = vkrt.BindRange(buf, bnd.Off, bnd.Size)
	}
	vp, ok := p.(*vkrt.Pipeline)
	if !ok {
		return fmt.Errorf("internal error: pipeline is a %T, not a Vulkan pipeline", p)
	}
	c, err := q.commands()
	if err != nil {
		return err
	}
	return c.Dispatch(vp, groups, push, q.binds[:len(bindings)]...)
}

// Barrier records a compute-to-compute barrier (at the start of a new command buffer it orders the
// work of those submitted before).
func (q *vkQueue) Barrier() error {
	c, err := q.commands()
	if err != nil {
		return err
	}
	return c.Barrier()
}

// EndNode submits the command buffer once it holds the batch's dispatches; the next batch is twice
// as large, up to maxNodesPerSubmit.
func (q *vkQueue) EndNode() error {
	if q.cur == nil || q.cur.Dispatches() < q.batch {
		return nil
	}
	q.batch = min(2*q.batch, maxNodesPerSubmit)
	if err := q.cur.Submit(); err != nil {
		return err
	}
	q.submitted = append(q.submitted, q.cur)
	q.cur = nil
	return nil
}

// finish submits the command buffer being recorded (or drops it when recording failed with err),
// waits for every submitted one and releases them; a keep queue returns them instead when all
// went well.
func (q *vkQueue) finish(err error) ([]*vkrt.Commands, error) {
	if c := q.cur; c != nil {
		q.cur = nil
		if err == nil {
			err = c.Submit()
		}
		if err == nil {
			q.submitted = append(q.submitted, c)
		} else {
			c.Release()
		}
	}
	for _, c := range q.submitted {
		werr := c.Wait()
		if werr == nil && q.timing {
			werr = q.deliverTimes(c)
		}
		err = errors.Join(err, werr)
	}
	kept := q.submitted
	q.submitted = nil
	if q.keep && err == nil {
		return kept, nil
	}
	for _, c := range kept {
		c.Release()
	}
	return nil, err
}
