package gpubackend

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/backends/internal/gputest"
	"github.com/tandem-ml/tandem/core"
)

// The shell over a fake API whose memory is Go slices and whose queue records what it is asked
// to do (nothing is computed): the bookkeeping, checks and errors that every GPU backend shares,
// tested without a GPU.

// fakeMem is an Allocation in a Go slice.
type fakeMem struct {
	data  []byte
	freed bool
}

func (m *fakeMem) Size() uint64 { return uint64(len(m.data)) }

func (m *fakeMem) live() error {
	if m.freed {
		return errors.New("freed buffer")
	}
	return nil
}

func (m *fakeMem) Write(off uint64, data []byte) error {
	if err := m.live(); err != nil {
		return err
	}
	copy(m.data[off:], data)
	return nil
}

func (m *fakeMem) Read(off uint64, dst []byte) error {
	if err := m.live(); err != nil {
		return err
	}
	copy(dst, m.data[off:])
	return nil
}

func (m *fakeMem) Memset(off, n uint64, v byte) error {
	if err := m.live(); err != nil {
		return err
	}
	for i := range m.data[off : off+n] {
		m.data[off+uint64(i)] = v
	}
	return nil
}

func (m *fakeMem) Destroy() { m.freed = true }

// fakeMapped is host memory.
type fakeMapped struct{ *fakeMem }

func (m fakeMapped) Mapped() []byte { return m.data }

// fakeMemory allocates fakeMems and counts device copies; noMap makes host allocations unmapped.
type fakeMemory struct {
	copies int
	noMap  bool
}

func (f *fakeMemory) Alloc(size uint64, host bool) (Allocation, error) {
	m := &fakeMem{data: make([]byte, size)}
	if host && !f.noMap {
		return fakeMapped{m}, nil
	}
	return m, nil
}

func raw(a Allocation) *fakeMem {
	if m, ok := a.(fakeMapped); ok {
		return m.fakeMem
	}
	return a.(*fakeMem)
}

func (f *fakeMemory) Copy(dst Allocation, dstOff uint64, src Allocation, srcOff, n uint64) error {
	f.copies++
	d, s := raw(dst), raw(src)
	if err := errors.Join(d.live(), s.live()); err != nil {
		return err
	}
	copy(d.data[dstOff:dstOff+n], s.data[srcOff:srcOff+n])
	return nil
}

// fakeDispatcher runs graphs on a fakeQueue; down makes Run refuse, as a closed device does.
type fakeDispatcher struct {
	down                error
	runs, nodes, groups int
	barriers            int
}

func (f *fakeDispatcher) Pipeline(name string, bindings int, push uint32, spec []uint32) (gpuops.Pipeline, error) {
	return name, nil
}

func (f *fakeDispatcher) Run(record func(Queue) error) error {
	if f.down != nil {
		return f.down
	}
	f.runs++
	return record(fakeQueue{f})
}

type fakeQueue struct{ f *fakeDispatcher }

func (q fakeQueue) Dispatch(p gpuops.Pipeline, groups [3]uint32, push []byte, bindings []gpuops.Binding) error {
	for i, b := range bindings {
		a, ok := b.Buf.(Allocation)
		if !ok {
			return fmt.Errorf("binding %d is a %T, not an Allocation", i, b.Buf)
		}
		if b.Off+b.Size > a.Size() {
			return fmt.Errorf("binding %d outside its buffer", i)
		}
	}
	q.f.groups++
	return nil
}

func (q fakeQueue) Barrier() error { q.f.barriers++; return nil }
func (q fakeQueue) EndNode() error { q.f.nodes++; return nil }

var fakeAPI = &API{Pkg: "fake", Title: "Fake"}

// fakeDevice is a package's device: the shell's part and nothing more.
type fakeDevice struct {
	*Device
	mem *fakeMemory
}

func (d *fakeDevice) Description() string               { return "fake" }
func (d *fakeDevice) Type() core.DeviceType             { return core.DeviceAccel }
func (d *fakeDevice) Memory() (int64, int64)            { return 0, 0 }
func (d *fakeDevice) NewBackend() (core.Backend, error) { return nil, errors.New("unused") }
func (d *fakeDevice) hostType(maxSize int64) *BufferType {
	return d.NewBufferType(d.Name()+"_Host", true, 32, maxSize)
}

func newFakeDevice(api *API, name string) *fakeDevice {
	d := &fakeDevice{mem: &fakeMemory{}}
	d.Device = NewDevice(DeviceConfig{
		API: api, Name: name, Physical: "fakepipe", Core: d, Memory: d.mem,
		Ops: &gpuops.Device{
			Storage16Bit:                    true,
			MaxComputeWorkGroupCount:        [3]uint32{65535, 65535, 65535},
			MaxComputeWorkGroupSize:         [3]uint32{1024, 1024, 64},
			MaxComputeWorkGroupInvocations:  1024,
			MaxComputeSharedMemorySize:      32768,
			MaxStorageBufferRange:           1 << 27,
			MinStorageBufferOffsetAlignment: 16,
		},
		Alignment: 16, MaxSize: 1 << 20,
		LogAttrs: func() []slog.Attr { return []slog.Attr{slog.Int("extra", 1)} },
		Messages: func() []string { return []string{"a validation message"} },
	})
	return d
}

func TestStandIns(t *testing.T) {
	for _, c := range []struct {
		isNil bool
		want  string
	}{{true, "tandem: fake: GraphCompute on a nil *Backend"}, {false, "tandem: fake: zero Backend: create one with fake.New"}} {
		b := fakeAPI.Backend(nil, c.isNil)
		if err := b.GraphCompute(core.NewGraph(0)); err == nil || err.Error() != c.want {
			t.Errorf("nil %v: GraphCompute: %v, want %q", c.isNil, err, c.want)
		}
		if err := b.GraphComputeContext(nil, nil); err == nil {
			t.Errorf("nil %v: GraphComputeContext(nil, nil): no error", c.isNil)
		}
		if b.Synchronize() == nil || b.Close() == nil {
			t.Errorf("nil %v: Synchronize or Close gave no error", c.isNil)
		}
		if b.Name() != "" || b.Device() != nil || b.DefaultBufferType() != nil || b.Barriers() != 0 || b.Dispatches() != 0 {
			t.Errorf("nil %v: stand-in reports a device", c.isNil)
		}
		b.SetLogger(nil) // does nothing
	}
	b := NewBackend(newFakeDevice(fakeAPI, "Fake0").Device, &fakeDispatcher{})
	if got := fakeAPI.Backend(b, false); got != b {
		t.Error("API.Backend replaced a made backend")
	}
}

func TestBuffers(t *testing.T) {
	d := newFakeDevice(fakeAPI, "Fake0")
	bt := d.BufferType()
	if bt.Device() != core.Device(d) || bt.Alignment() != 16 || bt.MaxSize() != 1<<20 || bt.IsHost() || bt.Name() != "Fake0" {
		t.Fatalf("buffer type %v: device %v, alignment %d, max %d, host %v", bt.Name(), bt.Device(), bt.Alignment(), bt.MaxSize(), bt.IsHost())
	}
	if _, err := bt.Alloc(-1); err == nil || !strings.Contains(err.Error(), "negative size") {
		t.Errorf("Alloc(-1): %v", err)
	}
	if _, err := bt.Alloc(1<<20 + 1); err == nil || !strings.Contains(err.Error(), "exceeds the maximum of 1048576 (device fakepipe)") {
		t.Errorf("Alloc(max+1): %v", err)
	}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 4)
	c := ctx.NewTensor1D(core.TypeF32, 4)
	buf := gputest.AllocCtx(t, ctx, bt)
	if err := core.SetFloat32s(a, []float32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if ok, err := buf.(core.TensorCopier).CopyTensor(a, c); !ok || err != nil || d.mem.copies != 1 {
		t.Fatalf("CopyTensor on one device: ok %v, err %v, %d device copies", ok, err, d.mem.copies)
	}
	if got, err := core.GetFloat32s(c); err != nil || got[3] != 4 {
		t.Fatalf("copied tensor: %v, %v", got, err)
	}
	other := gputest.AllocCtx(t, core.NewContext(core.ContextParams{NoAlloc: true}), bt)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"SetTensor(nil)", buf.SetTensor(nil, nil, 0), "tandem: fake: SetTensor: nil tensor"},
		{"GetTensor past the end", buf.GetTensor(a, make([]byte, 8), buf.Size()-4), "lie outside"},
		{"MemsetTensor negative offset", buf.MemsetTensor(a, 0, -1, 1), "lie outside"},
		{"tensor of another buffer", other.SetTensor(a, make([]byte, 4), 0), "not in this Fake0 buffer"},
		{"CopyTensor(nil, c)", func() error { _, err := buf.(core.TensorCopier).CopyTensor(nil, c); return err }(), "nil tensor"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	buf.SetUsage(core.BufferUsageWeights)
	if buf.Usage() != core.BufferUsageWeights {
		t.Errorf("Usage %v after SetUsage(weights)", buf.Usage())
	}
	buf.Free()
	if err := buf.Clear(0); err == nil || !strings.Contains(err.Error(), "tandem: fake: clearing a Fake0 buffer: freed buffer") {
		t.Errorf("Clear on a freed buffer: %v", err)
	}

	hb, err := d.hostType(64).Alloc(48)
	if err != nil {
		t.Fatal(err)
	}
	if h, ok := hb.(core.HostBuffer); !ok || len(h.Bytes()) != 48 || !hb.Type().IsHost() {
		t.Errorf("host buffer: %T", hb)
	}
	d.mem.noMap = true
	if _, err := d.hostType(64).Alloc(48); err == nil || !strings.Contains(err.Error(), "not mapped") {
		t.Errorf("host memory that is not mapped: %v", err)
	}
}

func TestGraphCompute(t *testing.T) {
	d := newFakeDevice(fakeAPI, "Fake0")
	disp := &fakeDispatcher{}
	b := NewBackend(d.Device, disp)
	build := func(bt core.BufferType) *core.Graph {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		x := ctx.NewTensor1D(core.TypeF32, 64)
		out := ctx.Add(ctx.Scale(x, 2), x)
		gputest.AllocCtx(t, ctx, bt)
		if err := core.SetFloat32s(x, make([]float32, 64)); err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(16)
		g.BuildForwardExpand(out)
		return g
	}
	g := build(d.BufferType())
	if err := b.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	if disp.runs != 1 || disp.nodes != 2 || disp.groups != 2 || b.Dispatches() != 2 || b.Barriers() != 1 || disp.barriers != 1 {
		t.Errorf("runs %d, nodes %d, dispatches %d (%d counted), barriers %d (%d counted); want 1, 2, 2, 1",
			disp.runs, disp.nodes, disp.groups, b.Dispatches(), disp.barriers, b.Barriers())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := b.GraphComputeContext(ctx, g); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "tandem: fake: Fake0: stopped before node") {
		t.Errorf("cancelled: %v", err)
	}

	// Tensors the backend cannot reach: another API's memory, another device's.
	other := newFakeDevice(&API{Pkg: "other", Title: "Other"}, "Other0")
	og := build(other.BufferType())
	if err := b.GraphCompute(og); err == nil || !strings.Contains(err.Error(), "not in Fake memory (buffer Other0)") {
		t.Errorf("another API's memory: %v", err)
	}
	sg := build(newFakeDevice(fakeAPI, "Fake1").BufferType())
	if err := b.GraphCompute(sg); err == nil || !strings.Contains(err.Error(), "is in memory of Fake1, not Fake0") {
		t.Errorf("another device's memory: %v", err)
	}

	if err := b.GraphCompute(nil); err == nil || !strings.Contains(err.Error(), "nil graph") {
		t.Errorf("nil graph: %v", err)
	}
	down := errors.New("device lost")
	disp.down = down
	if err := b.GraphCompute(g); !errors.Is(err, down) || err.Error() != "tandem: fake: Fake0: GraphCompute: device lost" {
		t.Errorf("device that cannot run: %v", err)
	}
	disp.down = nil
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := b.GraphCompute(g); err == nil || !strings.Contains(err.Error(), "backend is closed") {
		t.Errorf("closed: %v", err)
	}
	if err := b.Synchronize(); err == nil || err.Error() != "tandem: fake: Fake0: Synchronize: backend is closed" {
		t.Errorf("Synchronize when closed: %v", err)
	}
	if b.Name() != "Fake0" || b.Device() != core.Device(d) || b.DefaultBufferType() != d.BufferType() {
		t.Errorf("closed backend: Name %q, Device %v, DefaultBufferType %v", b.Name(), b.Device(), b.DefaultBufferType())
	}
}

func TestSetLogger(t *testing.T) {
	b := NewBackend(newFakeDevice(fakeAPI, "Fake0").Device, &fakeDispatcher{})
	gputest.Logger(t, b.SetLogger, `msg="tandem fake backend" device=Fake0 extra=1`,
		`msg="tandem fake validation" message="a validation message"`)
}
