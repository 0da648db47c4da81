package gpubackend

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/core"
)

// Backend is the shared part of a GPU backend: it runs graphs on one device through the op
// encoders and the API's Dispatcher. Its methods serialize (one goroutine at a time). A package's
// exported Backend wraps one; API.Backend stands in for a nil or zero one.
type Backend struct {
	api    *API
	unmade string // "nil" or "zero" for API.Backend's stand-ins; "" for a backend NewBackend made
	dev    *Device
	disp   Dispatcher

	mu         sync.Mutex
	closed     bool
	dispatches int
	enc        *gpuops.Encoder // the shared op encoders, recording through rt
	rt         opsRuntime
	q          Queue         // the queue of the graph being recorded
	prof       *core.OpTimes // SetOpProfile; nil: off
	kept       *kept         // the last graph's recording, where disp is a Replayer (replay.go)
	replays    int
}

// NewBackend returns a backend on d that runs graphs through disp.
func NewBackend(d *Device, disp Dispatcher) *Backend {
	api := d.cfg.API
	b := &Backend{api: api, dev: d, disp: disp}
	b.rt.b = b
	b.enc = gpuops.NewEncoder(&b.rt, d.cfg.Ops, api.Title, api.prefix()+d.cfg.Name)
	return b
}

// Backend returns b, or where b is nil a stand-in for a package Backend that is nil (isNil) or a
// zero value: Name is "", Device and DefaultBufferType nil, Barriers and Dispatches 0, SetLogger
// does nothing, and the methods that return an error say "Op on a nil *Backend" or how to make
// one ("zero Backend: create one with vulkan.New").
func (a *API) Backend(b *Backend, isNil bool) *Backend {
	switch {
	case isNil:
		return &Backend{api: a, unmade: "nil"}
	case b == nil:
		return &Backend{api: a, unmade: "zero"}
	}
	return b
}

// check returns the error of op on a stand-in or, with the lock held, a closed backend.
func (b *Backend) check(op string) error {
	switch b.unmade {
	case "nil":
		return fmt.Errorf("%s%s on a nil *Backend", b.api.prefix(), op)
	case "zero":
		return fmt.Errorf("%szero Backend: create one with %s.New", b.api.prefix(), b.api.Pkg)
	}
	if b.closed {
		return fmt.Errorf("%s%s: %s: backend is closed", b.api.prefix(), b.dev.cfg.Name, op)
	}
	return nil
}

// Name is the device's name; "" for a stand-in.
func (b *Backend) Name() string {
	if b.dev == nil {
		return ""
	}
	return b.dev.cfg.Name
}

// Device is the package's device (nil for a stand-in).
func (b *Backend) Device() core.Device {
	if b.dev == nil {
		return nil
	}
	return b.dev.cfg.Core
}

// DefaultBufferType is the device's memory (nil for a stand-in).
func (b *Backend) DefaultBufferType() core.BufferType {
	if b.dev == nil {
		return nil
	}
	return b.dev.buft
}

// Encoder returns the backend's op encoders (tests force kernels through it; nil for a stand-in).
func (b *Backend) Encoder() *gpuops.Encoder { return b.enc }

// Synchronize returns at once (GraphCompute waits for its work); on a closed backend it is an
// error.
func (b *Backend) Synchronize() error {
	if b.unmade != "" {
		return b.check("Synchronize")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.check("Synchronize")
}

// Close releases the backend; the device and its buffers stay usable. Closing twice is a no-op;
// every other method but Name, Device and DefaultBufferType returns an error afterwards.
func (b *Backend) Close() error {
	if b.unmade != "" {
		return b.check("Close")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.dropKept()
	b.enc.Close()
	return nil
}

// Barriers returns the number of barriers GraphCompute has recorded (0 for a stand-in).
func (b *Backend) Barriers() int {
	if b.unmade != "" {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enc.Barriers()
}

// Dispatches returns the number of dispatches (with workgroups to run) GraphCompute has issued
// (0 for a stand-in).
func (b *Backend) Dispatches() int {
	if b.unmade != "" {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dispatches
}

// SetFusion turns node fusion on (the default) or off: fused nodes give the same results bit for
// bit, in fewer dispatches (for tests that compare the two, and for tuning). A stand-in ignores it.
func (b *Backend) SetFusion(on bool) {
	if b.unmade != "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.enc.UseFusion(on)
}

// GraphCompute is GraphComputeContext with context.Background().
func (b *Backend) GraphCompute(g *core.Graph) error {
	return b.GraphComputeContext(context.Background(), g)
}

// GraphComputeContext issues every computing node of g (views, leafs and empty tensors cost
// nothing) through the Dispatcher and waits for the result; it stops once ctx is done: no node is
// issued after that, work already submitted is waited for, and the error wraps ctx.Err() (the
// graph's outputs are then undefined). A nil ctx means context.Background(); a nil g, a graph with
// a construction error or an input never set are errors. An index out of range in GET_ROWS or
// SET_ROWS (checked on the device) is reported after the graph has run, as the CPU backend words
// it.
func (b *Backend) GraphComputeContext(ctx context.Context, g *core.Graph) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if b.unmade != "" {
		return b.check("GraphCompute")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("%s%s: backend is closed", b.api.prefix(), b.dev.cfg.Name)
	}
	p := b.api.prefix() + b.dev.cfg.Name
	if g == nil {
		return fmt.Errorf("%s: GraphCompute: nil graph", p)
	}
	if err := g.Err(); err != nil {
		return err
	}
	if err := core.CheckInputsSet(g); err != nil {
		return err
	}
	rp, canKeep := b.disp.(Replayer)
	canKeep = canKeep && b.prof == nil
	var set gpuops.Setting
	if canKeep {
		set = b.enc.Setting()
	}
	if canKeep && b.kept != nil && b.kept.holds(g, set) {
		if err := ctx.Err(); err != nil {
			return core.Errorf("%s: stopped before the graph's first node: %w", p, err)
		}
		if err := b.enc.Rearm(); err != nil {
			return core.Errorf("%s: %w", p, err)
		}
		ok, err := b.kept.rec.Replay()
		if err != nil {
			b.dropKept()
			return core.Errorf("%s: GraphCompute: %w", p, err)
		}
		if ok {
			b.replays++
			b.dispatches += b.kept.dispatches
			b.enc.CountBarriers(b.kept.barriers)
			return b.enc.CheckIndices()
		}
	}
	b.dropKept()
	if err := b.enc.Start(g.Nodes()); err != nil {
		return core.Errorf("%s: %w", p, err)
	}
	d0, b0 := b.dispatches, b.enc.Barriers()
	recorded := false
	record := func(q Queue) error {
		recorded = true
		b.q = q
		defer func() { b.q = nil }()
		var timer NodeTimer
		if b.prof != nil {
			if timer, _ = q.(NodeTimer); timer != nil {
				timer.StartTiming()
			}
		}
		for i, n := range g.Nodes() {
			if gpuops.RecordsNothing(n) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return core.Errorf("%s: stopped before node %d %v: %w", p, i, n, err)
			}
			if err := b.enc.Encode(i, n); err != nil {
				return core.Errorf("%s: node %d %v: %w", p, i, n, err)
			}
			if timer != nil {
				prof := b.prof
				if timer.TimeNode(func(d time.Duration) { prof.Add(n, d) }) != nil {
					timer = nil // the device cannot time more nodes of this graph
				}
			}
			if err := q.EndNode(); err != nil {
				return core.Errorf("%s: node %d %v: %w", p, i, n, err)
			}
		}
		return nil
	}
	var err error
	if canKeep {
		var rec Recording
		if rec, err = rp.RunKept(record); rec != nil {
			b.kept = &kept{rec: rec, g: g, snap: snapshot(nil, g), set: set,
				dispatches: b.dispatches - d0, barriers: b.enc.Barriers() - b0}
		}
	} else {
		err = b.disp.Run(record)
	}
	if err != nil {
		if !recorded {
			return core.Errorf("%s: GraphCompute: %w", p, err)
		}
		return err
	}
	return b.enc.CheckIndices()
}

// opsRuntime is the shell's side of the op encoders (gpuops.Runtime): the device's memory, the
// Dispatcher's pipelines and the queue of the graph being recorded.
type opsRuntime struct{ b *Backend }

var _ gpuops.Runtime = (*opsRuntime)(nil)

// Locate returns t's Allocation and its size.
func (r *opsRuntime) Locate(t *core.Tensor) (any, int64, error) {
	d := r.b.dev
	tb, ok := bufferOf(t.Buffer)
	if !ok || tb.bt.dev.cfg.API != d.cfg.API {
		return nil, 0, fmt.Errorf("tensor %v is not in %s memory (buffer %v)", t, d.cfg.API.Title, bufName(t.Buffer))
	}
	if tb.bt.dev != d {
		return nil, 0, fmt.Errorf("tensor %v is in memory of %s, not %s", t, tb.bt.dev.cfg.Name, d.cfg.Name)
	}
	return tb.mem, tb.Size(), nil
}

// Pipeline returns the Dispatcher's pipeline for a shader variant.
func (r *opsRuntime) Pipeline(name string, bindings int, push uint32, spec []uint32) (gpuops.Pipeline, error) {
	return r.b.disp.Pipeline(name, bindings, push, spec)
}

// Dispatch issues p on the current queue.
func (r *opsRuntime) Dispatch(p gpuops.Pipeline, groups [3]uint32, push []byte, bindings []gpuops.Binding) error {
	if r.b.q == nil {
		return errors.New("internal error: dispatch outside GraphCompute")
	}
	if err := r.b.q.Dispatch(p, groups, push, bindings); err != nil {
		return err
	}
	if groups[0] != 0 && groups[1] != 0 && groups[2] != 0 {
		r.b.dispatches++
	}
	return nil
}

// Barrier records a barrier on the current queue.
func (r *opsRuntime) Barrier() error {
	if r.b.q == nil {
		return errors.New("internal error: barrier outside GraphCompute")
	}
	return r.b.q.Barrier()
}

// NewStatusBuffer allocates host memory for the index checks' status words.
func (r *opsRuntime) NewStatusBuffer(size uint64) (gpuops.StatusBuffer, error) {
	return r.b.dev.cfg.Memory.Alloc(size, true)
}

// NewScratchBuffer allocates device memory for the encoders' intermediate results. The encoder
// calls it from Start, before the graph is recorded, and keeps it until Close.
func (r *opsRuntime) NewScratchBuffer(size uint64) (gpuops.ScratchBuffer, error) {
	return r.b.dev.cfg.Memory.Alloc(size, false)
}

// SetOpProfile turns the per-op profile on (clearing what it held) or off. While it is on, a
// device that can time its work (Vulkan's timestamp queries) records the device time of every
// node; other devices record nothing.
func (b *Backend) SetOpProfile(on bool) {
	if b.unmade != "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prof = nil
	if on {
		b.prof = &core.OpTimes{}
	}
}

// OpProfile returns the device time per kind of node since SetOpProfile(true), the most costly
// first; nil while the profile is off.
func (b *Backend) OpProfile() []core.OpTime {
	if b.unmade != "" {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.prof == nil {
		return nil
	}
	return b.prof.Sorted()
}
