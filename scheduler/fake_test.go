package scheduler_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// fakeGPU is a device whose memory is not host memory as far as the CPU backend knows (IsHost
// false, so every crossing needs a copy), whose supported ops are a table, and whose kernels are
// the CPU kernels run on that memory. It lets scheduler logic and copies be tested without a GPU.
type fakeGPU struct {
	name    string
	ops     map[core.Op]bool
	bt      *fakeBufType
	offload bool
}

type fakeBufType struct {
	dev     *fakeGPU
	align   int64
	counter *bufCounter // non-nil: count the buffers handed out and freed
}

func newFakeGPU(name string, ops ...core.Op) *fakeGPU {
	d := &fakeGPU{name: name, ops: map[core.Op]bool{}}
	for _, op := range ops {
		d.ops[op] = true
	}
	d.bt = &fakeBufType{dev: d, align: 64}
	return d
}

func (d *fakeGPU) Name() string                { return d.name }
func (d *fakeGPU) Description() string         { return "fake GPU for tests" }
func (d *fakeGPU) Type() core.DeviceType       { return core.DeviceGPU }
func (d *fakeGPU) Memory() (int64, int64)      { return 1 << 30, 1 << 30 }
func (d *fakeGPU) BufferType() core.BufferType { return d.bt }
func (d *fakeGPU) OffloadOp(*core.Tensor) bool { return d.offload }
func (d *fakeGPU) SupportsOp(t *core.Tensor) bool {
	return t.Op == core.OpNone || t.Op.IsView() || d.ops[t.Op]
}
func (d *fakeGPU) SupportsBufferType(bt core.BufferType) bool { return bt == core.BufferType(d.bt) }
func (d *fakeGPU) NewBackend() (core.Backend, error) {
	c, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		return nil, err
	}
	return &fakeBackend{dev: d, cpu: c}, nil
}

func (bt *fakeBufType) Name() string                   { return bt.dev.name }
func (bt *fakeBufType) Alignment() int64               { return bt.align }
func (bt *fakeBufType) MaxSize() int64                 { return 0 }
func (bt *fakeBufType) AllocSize(t *core.Tensor) int64 { return t.NBytes() }
func (bt *fakeBufType) IsHost() bool                   { return false }
func (bt *fakeBufType) Device() core.Device            { return bt.dev }
func (bt *fakeBufType) Alloc(size int64) (core.Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("negative size")
	}
	b, err := core.NewHostBuffer(bt, size)
	if err != nil {
		return nil, err
	}
	return bt.counter.wrap(b), nil
}

// bufCounter counts the buffers of a buffer type: handed out, freed, and freed twice.
type bufCounter struct {
	mu                         sync.Mutex
	allocs, frees, doubleFrees int
}

func (c *bufCounter) counts() (live, allocs, doubleFrees int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.allocs - c.frees, c.allocs, c.doubleFrees
}

// wrap counts b (a nil counter returns b as it is).
func (c *bufCounter) wrap(b core.HostBuffer) core.Buffer {
	if c == nil {
		return b
	}
	c.mu.Lock()
	c.allocs++
	c.mu.Unlock()
	return &countedBuf{HostBuffer: b, c: c}
}

type countedBuf struct {
	core.HostBuffer
	c     *bufCounter
	freed bool
}

func (b *countedBuf) Free() error {
	b.c.mu.Lock()
	if b.freed {
		b.c.doubleFrees++
	} else {
		b.c.frees++
	}
	b.freed = true
	b.c.mu.Unlock()
	return b.HostBuffer.Free()
}

func (b *countedBuf) Freed() bool { return b.freed }

// countedHostType is host memory whose buffers are counted.
type countedHostType struct {
	core.BufferType
	c *bufCounter
}

func (bt countedHostType) Alloc(size int64) (core.Buffer, error) {
	b, err := core.NewHostBuffer(bt, size)
	if err != nil {
		return nil, err
	}
	return bt.c.wrap(b), nil
}

type fakeBackend struct {
	dev    *fakeGPU
	cpu    *cpu.Backend
	nodes  int // nodes computed, for tests
	reused int // graphs computed through GraphComputeReused, for tests
}

// GraphComputeReused counts the scheduler's promise and computes g as GraphCompute does.
func (b *fakeBackend) GraphComputeReused(_ context.Context, g *core.Graph) error {
	b.reused++
	return b.GraphCompute(g)
}

func (b *fakeBackend) Name() string                       { return b.dev.name }
func (b *fakeBackend) Device() core.Device                { return b.dev }
func (b *fakeBackend) DefaultBufferType() core.BufferType { return b.dev.bt }
func (b *fakeBackend) Synchronize() error                 { return nil }
func (b *fakeBackend) Close() error                       { return b.cpu.Close() }
func (b *fakeBackend) GraphCompute(g *core.Graph) error {
	for _, n := range g.Nodes() {
		if n.Op != core.OpNone && !n.Op.IsView() {
			if !b.dev.SupportsOp(n) {
				return fmt.Errorf("fake GPU asked to run unsupported %v", n)
			}
			for _, s := range n.Src {
				if s != nil && s.Buffer != nil && !b.dev.SupportsBufferType(s.Buffer.Type()) {
					return fmt.Errorf("fake GPU asked to read %v from %s memory", s, s.Buffer.Type().Name())
				}
			}
			b.nodes++
		}
	}
	return b.cpu.GraphCompute(g)
}
