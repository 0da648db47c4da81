//go:build cgo && !novulkan

package vkrt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/shaders"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
)

func TestDeviceInfo(t *testing.T) {
	d := testDevice(t)
	for _, info := range d.Instance().Devices() {
		t.Logf("device %d: %s", info.Index, info)
	}
	info := d.Info()
	l := info.Limits
	t.Logf("using %s: vendor %#x, %d heaps (%d MiB device-local), %d memory types",
		info.Name, info.VendorID, len(info.MemoryHeaps), info.DeviceLocalMemory()>>20, len(info.MemoryTypes))
	t.Logf("limits: maxStorageBufferRange %d, shared %d, wg count %v, wg size %v (%d inv), push %d, min offset align %d, maxAlloc %d",
		l.MaxStorageBufferRange, l.MaxComputeSharedMemorySize, l.MaxComputeWorkGroupCount, l.MaxComputeWorkGroupSize,
		l.MaxComputeWorkGroupInvocations, l.MaxPushConstantsSize, l.MinStorageBufferOffsetAlignment, l.MaxMemoryAllocationSize)
	t.Logf("subgroup %+v, features %+v, timestamps %d bits", info.Subgroup, info.Features, info.TimestampValidBits)
	if l.MaxStorageBufferRange == 0 || l.MaxComputeWorkGroupCount[0] == 0 || l.MaxPushConstantsSize < 128 {
		t.Errorf("implausible limits %+v", l)
	}
	if info.Subgroup.Size == 0 {
		t.Error("subgroup size not reported (vkGetPhysicalDeviceProperties2)")
	}
	if len(info.MemoryTypes) == 0 || len(info.MemoryHeaps) == 0 {
		t.Error("no memory types or heaps")
	}
	if info.Type == DeviceTypeCPU && !strings.Contains(strings.ToLower(info.Name), "llvmpipe") {
		t.Logf("CPU device that is not llvmpipe: %s", info.Name)
	}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func checkBufferIO(t *testing.T, b *Buffer) {
	t.Helper()
	r := rand.New(rand.NewPCG(1, uint64(b.Size())))
	size := int(b.Size())
	data := randBytes(r, size)
	if err := b.Write(0, data); err != nil {
		t.Fatal(err)
	}
	// Partial overwrite at odd offsets.
	part := randBytes(r, 777)
	if err := b.Write(1001, part); err != nil {
		t.Fatal(err)
	}
	copy(data[1001:], part)
	got := make([]byte, size)
	if err := b.Read(0, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("read back differs from written data")
	}
	sub := make([]byte, 333)
	if err := b.Read(3, sub); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sub, data[3:336]) {
		t.Fatal("sub-range read differs")
	}

	// Memset with unaligned edges, then Fill.
	if err := b.Memset(5, 4099, 0xAB); err != nil {
		t.Fatal(err)
	}
	for i := 5; i < 5+4099; i++ {
		data[i] = 0xAB
	}
	if err := b.Fill(8192, 1024, 0x04030201); err != nil {
		t.Fatal(err)
	}
	for i := 8192; i < 8192+1024; i += 4 {
		copy(data[i:], []byte{1, 2, 3, 4})
	}
	if err := b.Read(0, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		for i := range got {
			if got[i] != data[i] {
				t.Fatalf("after Memset/Fill: byte %d is %#x, want %#x", i, got[i], data[i])
			}
		}
	}
}

func TestBufferReadWrite(t *testing.T) {
	d := testDevice(t)
	for _, kind := range []BufferKind{DeviceBuffer, HostBuffer} {
		t.Run(kind.String(), func(t *testing.T) {
			b, err := d.NewBuffer(10000, kind)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Destroy()
			t.Logf("memory flags %#x, mapped %v", b.MemoryFlags(), b.HostVisible())
			if kind == HostBuffer && !b.HostVisible() {
				t.Fatal("host buffer not mapped")
			}
			checkBufferIO(t, b)
		})
	}
}

func TestBufferBounds(t *testing.T) {
	d := testDevice(t)
	b, err := d.NewBuffer(100, DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		err  error
	}{
		{"write past end", b.Write(99, []byte{1, 2})},
		{"write at end+1", b.Write(101, nil)},
		{"read past end", b.Read(50, make([]byte, 51))},
		{"read huge offset", b.Read(math.MaxUint64, make([]byte, 2))},
		{"memset past end", b.Memset(0, 101, 0)},
		{"fill unaligned", b.Fill(2, 8, 0)},
		{"fill past end", b.Fill(96, 8, 0)},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: no error", c.name)
		} else if c.name != "fill unaligned" && !errors.Is(c.err, ErrOutOfRange) {
			t.Errorf("%s: %v, want ErrOutOfRange", c.name, c.err)
		}
	}
	if err := b.Write(100, nil); err != nil {
		t.Errorf("empty write at end: %v", err)
	}
	if err := b.Fill(96, 4, 0); err != nil {
		t.Errorf("fill of the last word: %v", err)
	}
	if _, err := d.NewBuffer(d.Info().Limits.MaxMemoryAllocationSize+1, DeviceBuffer); err == nil {
		t.Error("buffer above maxMemoryAllocationSize created")
	}
	zero, err := d.NewBuffer(0, DeviceBuffer)
	if err != nil {
		t.Fatalf("zero-size buffer: %v", err)
	}
	if zero.Size() != 0 || zero.Write(0, []byte{1}) == nil {
		t.Error("zero-size buffer accepts data")
	}
	zero.Destroy()
	b.Destroy()
	b.Destroy() // idempotent
	if err := b.Write(0, []byte{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("write after destroy: %v, want ErrClosed", err)
	}
}

func TestCopyBuffer(t *testing.T) {
	d := testDevice(t)
	src, err := d.NewBuffer(4096, DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Destroy()
	dst, err := d.NewBuffer(4096, HostBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Destroy()
	data := randBytes(rand.New(rand.NewPCG(2, 3)), 4096)
	if err := src.Write(0, data); err != nil {
		t.Fatal(err)
	}
	if err := d.CopyBuffer(dst, 7, src, 100, 3000); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dst.Mapped()[7:3007], data[100:3100]) {
		t.Fatal("copied range differs")
	}
	if err := d.CopyBuffer(dst, 2000, src, 0, 3000); !errors.Is(err, ErrOutOfRange) {
		t.Errorf("copy past end: %v, want ErrOutOfRange", err)
	}
	if err := d.CopyBuffer(src, 10, src, 0, 20); !errors.Is(err, ErrInvalid) {
		t.Errorf("overlapping copy: %v, want ErrInvalid", err)
	}
}

// ---- the add shader -------------------------------------------------------

// tensor is a minimal 4-D f32 tensor description for the shader tests:
// element strides nb (in elements) and an element offset into its buffer.
type tensor struct {
	ne, nb [4]uint32
	offs   uint32
}

func contiguous(ne [4]uint32) tensor {
	t := tensor{ne: ne}
	t.nb[0] = 1
	for i := 1; i < 4; i++ {
		t.nb[i] = t.nb[i-1] * ne[i-1]
	}
	return t
}

func (t tensor) n() int { return int(t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]) }

// span is the number of elements from the first to one past the last.
func (t tensor) span() int {
	s := 1
	for i := range 4 {
		s += int((t.ne[i] - 1) * t.nb[i])
	}
	return int(t.offs) + s
}

func (t tensor) at(i0, i1, i2, i3 uint32) int {
	return int(t.offs + i0*t.nb[0] + i1*t.nb[1] + i2*t.nb[2] + i3*t.nb[3])
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func bytesf32(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func pipeline(t testing.TB, d *Device, name string, bindings int, push uint32, spec ...uint32) *Pipeline {
	t.Helper()
	spv, err := shaders.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Pipeline(PipelineDesc{Name: name, SPIRV: spv, Bindings: bindings, PushSize: push, Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const binaryPush = 24 * 4

func binaryPushConstants(a, b, dst tensor) []byte {
	var p gpuops.Push
	p.U32(a.ne[:]...).U32(a.nb[:]...).U32(b.ne[:]...).U32(b.nb[:]...).U32(dst.nb[:]...)
	p.U32(a.offs, b.offs, dst.offs, uint32(a.n()))
	return p.Bytes()
}

// runAdd computes dst = a + b on the device with a, b and dst in one buffer
// each at byte offsets aOff, bOff, dOff (bound there) and checks it exactly.
func runAdd(t *testing.T, d *Device, a, b, dst tensor, groups uint32) {
	t.Helper()
	r := rand.New(rand.NewPCG(4, 5))
	av := make([]float32, a.span())
	bv := make([]float32, b.span())
	for i := range av {
		av[i] = r.Float32()*200 - 100
	}
	for i := range bv {
		bv[i] = r.Float32()*200 - 100
	}
	const dOffBytes = 64 // bind dst at a nonzero aligned offset
	ab, err := d.NewBuffer(uint64(4*len(av)), DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer ab.Destroy()
	bb, err := d.NewBuffer(uint64(4*len(bv)), DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Destroy()
	db, err := d.NewBuffer(uint64(dOffBytes+4*dst.span()), DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Destroy()
	if err := ab.Write(0, f32bytes(av)); err != nil {
		t.Fatal(err)
	}
	if err := bb.Write(0, f32bytes(bv)); err != nil {
		t.Fatal(err)
	}
	sentinel := float32(-12345)
	fill := make([]float32, dst.span())
	for i := range fill {
		fill[i] = sentinel
	}
	if err := db.Write(dOffBytes, f32bytes(fill)); err != nil {
		t.Fatal(err)
	}

	p := pipeline(t, d, "add_f32", 3, binaryPush, 64)
	err = d.Run(func(c *Commands) error {
		return c.Dispatch(p, [3]uint32{groups, 1, 1}, binaryPushConstants(a, b, dst),
			Bind(ab), Bind(bb), BindRange(db, dOffBytes, uint64(4*dst.span())))
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 4*dst.span())
	if err := db.Read(dOffBytes, out); err != nil {
		t.Fatal(err)
	}
	got := bytesf32(out)

	want := slices.Clone(fill)
	for i3 := range a.ne[3] {
		for i2 := range a.ne[2] {
			for i1 := range a.ne[1] {
				for i0 := range a.ne[0] {
					x := av[a.at(i0, i1, i2, i3)]
					y := bv[b.at(i0%b.ne[0], i1%b.ne[1], i2%b.ne[2], i3%b.ne[3])]
					want[dst.at(i0, i1, i2, i3)] = x + y
				}
			}
		}
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func TestAddShader(t *testing.T) {
	d := testDevice(t)
	t.Run("same shape", func(t *testing.T) {
		s := contiguous([4]uint32{37, 5, 3, 2})
		runAdd(t, d, s, s, s, 4)
	})
	t.Run("broadcast", func(t *testing.T) {
		a := contiguous([4]uint32{8, 6, 3, 2})
		b := contiguous([4]uint32{8, 1, 3, 1})
		runAdd(t, d, a, b, contiguous(a.ne), 1) // one workgroup: exercises the grid-stride loop
	})
	t.Run("row broadcast", func(t *testing.T) {
		a := contiguous([4]uint32{16, 9, 1, 1})
		b := contiguous([4]uint32{16, 1, 1, 1})
		runAdd(t, d, a, b, contiguous(a.ne), 3)
	})
	t.Run("permuted views with offsets", func(t *testing.T) {
		// a is a transposed view (dims 0 and 1 swapped) starting 3 elements in;
		// b is a strided view (every other row) of a larger tensor.
		base := contiguous([4]uint32{7, 10, 2, 1})
		a := tensor{ne: [4]uint32{10, 7, 2, 1}, nb: [4]uint32{7, 1, 70, 140}, offs: 3}
		b := tensor{ne: [4]uint32{10, 7, 1, 1}, nb: [4]uint32{1, 20, 140, 140}, offs: 5}
		_ = base
		runAdd(t, d, a, b, contiguous(a.ne), 2)
	})
}

func TestBinaryOps(t *testing.T) {
	d := testDevice(t)
	n := uint32(1000)
	s := contiguous([4]uint32{n, 1, 1, 1})
	av, bv := make([]float32, n), make([]float32, n)
	r := rand.New(rand.NewPCG(7, 8))
	for i := range av {
		av[i], bv[i] = r.Float32()*10-5, r.Float32()*10+1
	}
	ab, _ := d.NewBuffer(uint64(4*n), DeviceBuffer)
	bb, _ := d.NewBuffer(uint64(4*n), DeviceBuffer)
	db, _ := d.NewBuffer(uint64(4*n), DeviceBuffer)
	defer ab.Destroy()
	defer bb.Destroy()
	defer db.Destroy()
	if err := errors.Join(ab.Write(0, f32bytes(av)), bb.Write(0, f32bytes(bv))); err != nil {
		t.Fatal(err)
	}
	ops := map[string]func(x, y float32) float32{
		"add_f32": func(x, y float32) float32 { return x + y },
		"sub_f32": func(x, y float32) float32 { return x - y },
		"mul_f32": func(x, y float32) float32 { return x * y },
		"div_f32": func(x, y float32) float32 { return x / y },
	}
	for name, f := range ops {
		p := pipeline(t, d, name, 3, binaryPush, 128)
		err := d.Run(func(c *Commands) error {
			return c.Dispatch(p, [3]uint32{(n + 127) / 128, 1, 1}, binaryPushConstants(s, s, s), Bind(ab), Bind(bb), Bind(db))
		})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, 4*n)
		if err := db.Read(0, out); err != nil {
			t.Fatal(err)
		}
		for i, g := range bytesf32(out) {
			want := f(av[i], bv[i])
			// Division may differ from IEEE by an ulp or two on some devices.
			if g != want && !(name == "div_f32" && math.Abs(float64(g-want)) <= 3e-7*math.Abs(float64(want))) {
				t.Fatalf("%s element %d: got %v, want %v", name, i, g, want)
			}
		}
	}
}

// A chain of dependent dispatches with barriers: x = x + x ten times.
func TestBarrierChain(t *testing.T) {
	d := testDevice(t)
	const n = 4096
	s := contiguous([4]uint32{n, 1, 1, 1})
	buf, err := d.NewBuffer(4*n, DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Destroy()
	tmp, err := d.NewBuffer(4*n, DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Destroy()
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)
	}
	if err := buf.Write(0, f32bytes(v)); err != nil {
		t.Fatal(err)
	}
	p := pipeline(t, d, "add_f32", 3, binaryPush, 64)
	push := binaryPushConstants(s, s, s)
	err = d.Run(func(c *Commands) error {
		for range 5 {
			if err := c.Dispatch(p, [3]uint32{16, 1, 1}, push, Bind(buf), Bind(buf), Bind(tmp)); err != nil {
				return err
			}
			if err := c.Barrier(); err != nil {
				return err
			}
			if err := c.Dispatch(p, [3]uint32{16, 1, 1}, push, Bind(tmp), Bind(tmp), Bind(buf)); err != nil {
				return err
			}
			if err := c.Barrier(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]byte, 4*n)
	if err := buf.Read(0, out); err != nil {
		t.Fatal(err)
	}
	for i, g := range bytesf32(out) {
		if want := float32(i) * 1024; g != want {
			t.Fatalf("element %d: got %v, want %v", i, g, want)
		}
	}
}

func TestPipelineCache(t *testing.T) {
	d := testDevice(t)
	spv, err := shaders.Get("mul_f32")
	if err != nil {
		t.Fatal(err)
	}
	desc := PipelineDesc{Name: "mul_f32", SPIRV: spv, Bindings: 3, PushSize: binaryPush, Spec: []uint32{32}}
	before := d.PipelineStats()
	p1, err := d.Pipeline(desc)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := d.Pipeline(desc)
	if err != nil {
		t.Fatal(err)
	}
	if p1 != p2 {
		t.Error("second lookup returned a different pipeline")
	}
	desc.Spec = []uint32{16}
	p3, err := d.Pipeline(desc)
	if err != nil {
		t.Fatal(err)
	}
	if p3 == p1 {
		t.Error("different specialization constants share a pipeline")
	}
	after := d.PipelineStats()
	if hits, compiled := after.Hits-before.Hits, after.Compiled-before.Compiled; hits != 1 || compiled != 2 {
		t.Errorf("cache: %d hits, %d compiled; want 1, 2", hits, compiled)
	}
	desc.Bindings = 2
	if _, err := d.Pipeline(desc); !errors.Is(err, ErrInvalid) {
		t.Errorf("cached pipeline requested with other bindings: %v, want ErrInvalid", err)
	}
	if _, err := d.Pipeline(PipelineDesc{Name: "junk", SPIRV: []byte("not spir-v at all!!!"), Bindings: 1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("junk SPIR-V: %v, want ErrInvalid", err)
	}
	if _, err := d.Pipeline(PipelineDesc{Name: "push", SPIRV: spv, Bindings: 3, PushSize: 132}); !errors.Is(err, ErrInvalid) {
		t.Errorf("132 push bytes: %v, want ErrInvalid", err)
	}
}

func TestDispatchErrors(t *testing.T) {
	d := testDevice(t)
	p := pipeline(t, d, "add_f32", 3, binaryPush, 64)
	b, err := d.NewBuffer(1024, DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Destroy()
	push := make([]byte, binaryPush)
	c, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	lim := d.Info().Limits
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"two bindings", c.Dispatch(p, [3]uint32{1, 1, 1}, push, Bind(b), Bind(b)), ErrInvalid},
		{"short push", c.Dispatch(p, [3]uint32{1, 1, 1}, push[:8], Bind(b), Bind(b), Bind(b)), ErrInvalid},
		{"too many groups", c.Dispatch(p, [3]uint32{lim.MaxComputeWorkGroupCount[0] + 1, 1, 1}, push, Bind(b), Bind(b), Bind(b)), ErrInvalid},
		{"range past end", c.Dispatch(p, [3]uint32{1, 1, 1}, push, Bind(b), Bind(b), BindRange(b, 512, 1024)), ErrOutOfRange},
		{"offset past end", c.Dispatch(p, [3]uint32{1, 1, 1}, push, Bind(b), Bind(b), BindRange(b, 2048, 0)), ErrOutOfRange},
		{"nil buffer", c.Dispatch(p, [3]uint32{1, 1, 1}, push, Bind(b), Bind(nil), Bind(b)), ErrInvalid},
	}
	if lim.MinStorageBufferOffsetAlignment > 1 {
		cases = append(cases, struct {
			name string
			err  error
			want error
		}{"misaligned offset", c.Dispatch(p, [3]uint32{1, 1, 1}, push, Bind(b), Bind(b), BindRange(b, lim.MinStorageBufferOffsetAlignment/2, 64)), ErrInvalid})
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
	if c.Dispatches() != 0 {
		t.Errorf("%d dispatches recorded by failing calls", c.Dispatches())
	}
	if err := c.Dispatch(p, [3]uint32{0, 1, 1}, push, Bind(b), Bind(b), Bind(b)); err != nil || c.Dispatches() != 0 {
		t.Errorf("empty dispatch: %v, %d recorded", err, c.Dispatches())
	}
	if err := c.Wait(); !errors.Is(err, ErrInvalid) {
		t.Errorf("Wait before Submit: %v, want ErrInvalid", err)
	}
}

// Many dispatches in one command buffer with tiny descriptor pools: pools are
// added as they fill and reset on Release.
func TestDescriptorPoolGrowth(t *testing.T) {
	d := openDevice(t, DeviceOptions{DescriptorPoolSets: 4})
	const n = 256
	s := contiguous([4]uint32{n, 1, 1, 1})
	x, _ := d.NewBuffer(4*n, DeviceBuffer)
	one, _ := d.NewBuffer(4*n, DeviceBuffer)
	ones := make([]float32, n)
	for i := range ones {
		ones[i] = 1
	}
	if err := errors.Join(x.Memset(0, 4*n, 0), one.Write(0, f32bytes(ones))); err != nil {
		t.Fatal(err)
	}
	p := pipeline(t, d, "add_f32", 3, binaryPush, 64)
	push := binaryPushConstants(s, s, s)
	for round := range 2 {
		c, err := d.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for range 19 {
			if err := c.Dispatch(p, [3]uint32{4, 1, 1}, push, Bind(x), Bind(one), Bind(x)); err != nil {
				t.Fatal(err)
			}
			if err := c.Barrier(); err != nil {
				t.Fatal(err)
			}
		}
		if got := len(c.descPools); got != 5 {
			t.Errorf("round %d: %d descriptor pools for 19 sets of 4 per pool, want 5", round, got)
		}
		if err := errors.Join(c.Submit(), c.Wait()); err != nil {
			t.Fatal(err)
		}
		c.Release()
	}
	out := make([]byte, 4*n)
	if err := x.Read(0, out); err != nil {
		t.Fatal(err)
	}
	for i, g := range bytesf32(out) {
		if g != 38 {
			t.Fatalf("element %d: %v, want 38", i, g)
		}
	}
}

// ForceStaging: device buffers are never mapped; transfers are chunked through
// a small staging buffer; shaders still work.
func TestForcedStaging(t *testing.T) {
	d := openDevice(t, DeviceOptions{ForceStaging: true, StagingSize: 4096})
	b, err := d.NewBuffer(10000, DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	if b.HostVisible() || b.Mapped() != nil {
		t.Fatal("ForceStaging device buffer is mapped")
	}
	checkBufferIO(t, b)
	runAdd(t, d, contiguous([4]uint32{33, 4, 3, 1}), contiguous([4]uint32{33, 1, 3, 1}), contiguous([4]uint32{33, 4, 3, 1}), 2)
	if d.staging == nil || d.staging.Size() > 4096 {
		t.Errorf("staging buffer %v exceeds StagingSize", d.staging)
	}
}

func TestTimestamps(t *testing.T) {
	d := testDevice(t)
	if d.Info().TimestampValidBits == 0 {
		t.Skip("no timestamps on this queue")
	}
	const n = 1 << 16
	s := contiguous([4]uint32{n, 1, 1, 1})
	a, _ := d.NewBuffer(4*n, DeviceBuffer)
	defer a.Destroy()
	p := pipeline(t, d, "add_f32", 3, binaryPush, 256)
	c, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	t0, err := c.Timestamp()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Dispatch(p, [3]uint32{n / 256, 1, 1}, binaryPushConstants(s, s, s), Bind(a), Bind(a), Bind(a)); err != nil {
		t.Fatal(err)
	}
	t1, err := c.Timestamp()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Timestamps(); err == nil {
		t.Error("Timestamps before Wait succeeded")
	}
	if err := errors.Join(c.Submit(), c.Wait()); err != nil {
		t.Fatal(err)
	}
	ts, err := c.Timestamps()
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[t1] < ts[t0] {
		t.Fatalf("timestamps %v", ts)
	}
	t.Logf("add of %d floats: %.1f µs on the device clock", n, (ts[t1]-ts[t0])/1e3)
}

// Async use: submit, poll Done, wait; several Commands in flight.
func TestAsyncSubmit(t *testing.T) {
	d := testDevice(t)
	const n = 1024
	s := contiguous([4]uint32{n, 1, 1, 1})
	p := pipeline(t, d, "add_f32", 3, binaryPush, 64)
	var cmds []*Commands
	var bufs []*Buffer
	for i := range 3 {
		b, err := d.NewBuffer(4*n, DeviceBuffer)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Destroy()
		v := make([]float32, n)
		for j := range v {
			v[j] = float32(i + j)
		}
		if err := b.Write(0, f32bytes(v)); err != nil {
			t.Fatal(err)
		}
		c, err := d.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Dispatch(p, [3]uint32{16, 1, 1}, binaryPushConstants(s, s, s), Bind(b), Bind(b), Bind(b)); err != nil {
			t.Fatal(err)
		}
		if err := c.Submit(); err != nil {
			t.Fatal(err)
		}
		cmds, bufs = append(cmds, c), append(bufs, b)
	}
	if _, err := cmds[0].Done(); err != nil {
		t.Fatal(err)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
		if done, err := c.Done(); !done || err != nil {
			t.Errorf("Done after Wait: %v, %v", done, err)
		}
		c.Release()
		out := make([]byte, 4*n)
		if err := bufs[i].Read(0, out); err != nil {
			t.Fatal(err)
		}
		for j, g := range bytesf32(out) {
			if want := 2 * float32(i+j); g != want {
				t.Fatalf("buffer %d element %d: %v, want %v", i, j, g, want)
			}
		}
	}
}

// Close with live buffers, pipelines and unreleased Commands must destroy
// everything (the validation layer reports leaked children at
// vkDestroyDevice; openDevice's cleanup fails the test on any message).
func TestCloseCleansUp(t *testing.T) {
	d := openDevice(t, DeviceOptions{})
	p := pipeline(t, d, "add_f32", 3, binaryPush, 64)
	pipeline(t, d, "mul_mat_vec_f32_f32", 3, mmvPush, 32)
	b, err := d.NewBuffer(4096, DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.NewBuffer(100, HostBuffer); err != nil {
		t.Fatal(err)
	}
	if err := b.Memset(1, 1000, 7); err != nil { // creates Commands
		t.Fatal(err)
	}
	c, err := d.Begin() // recording, never submitted
	if err != nil {
		t.Fatal(err)
	}
	s := contiguous([4]uint32{64, 1, 1, 1})
	if err := c.Dispatch(p, [3]uint32{1, 1, 1}, binaryPushConstants(s, s, s), Bind(b), Bind(b), Bind(b)); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	c.Release() // after Close: no effect
	if err := b.Write(0, []byte{1}); !errors.Is(err, ErrClosed) {
		t.Errorf("write after device close: %v, want ErrClosed", err)
	}
	if _, err := d.NewBuffer(16, DeviceBuffer); !errors.Is(err, ErrClosed) {
		t.Errorf("NewBuffer after close: %v, want ErrClosed", err)
	}
	if _, err := d.Begin(); !errors.Is(err, ErrClosed) {
		t.Errorf("Begin after close: %v, want ErrClosed", err)
	}
}

// With validation on, the messenger must actually deliver messages: a
// pipeline layout with fewer bindings than the shader declares is invalid.
func TestValidationReportsErrors(t *testing.T) {
	if !ValidateFromEnv() {
		t.Skip("TANDEM_VK_VALIDATE is not set")
	}
	in, err := newInstance()
	if err != nil {
		noDevice(t, err)
	}
	expectValidation(in)
	defer in.Close()
	idx, err := pickDevice(in)
	if err != nil {
		noDevice(t, err)
	}
	d, err := in.NewDevice(idx, DeviceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spv, _ := shaders.Get("add_f32")
	_, _ = d.Pipeline(PipelineDesc{Name: "bad", SPIRV: spv, Bindings: 2, PushSize: binaryPush})
	d.Close()
	msgs := in.ValidationMessages()
	if len(msgs) == 0 {
		t.Fatal("no validation message for a pipeline layout missing a binding")
	}
	t.Logf("expected validation message: %.200s", msgs[0])
}

// With validation on, synchronization validation must flag two dependent
// dispatches recorded without a Barrier between them (NewInstance enables it
// with VK_EXT_validation_features; a layer without it fails this test).
func TestSyncValidationCatchesMissingBarrier(t *testing.T) {
	if !ValidateFromEnv() {
		t.Skip("TANDEM_VK_VALIDATE is not set")
	}
	in, err := newInstance()
	if err != nil {
		noDevice(t, err)
	}
	expectValidation(in)
	defer in.Close()
	idx, err := pickDevice(in)
	if err != nil {
		noDevice(t, err)
	}
	d, err := in.NewDevice(idx, DeviceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := pipeline(t, d, "add_f32", 3, binaryPush, 64)
	s := contiguous([4]uint32{64, 1, 1, 1})
	a, _ := d.NewBuffer(256, DeviceBuffer)
	b, _ := d.NewBuffer(256, DeviceBuffer)
	push := binaryPushConstants(s, s, s)
	err = d.Run(func(c *Commands) error {
		return errors.Join(
			c.Dispatch(p, [3]uint32{1, 1, 1}, push, Bind(a), Bind(a), Bind(b)),
			c.Dispatch(p, [3]uint32{1, 1, 1}, push, Bind(b), Bind(b), Bind(a))) // reads b: needs a barrier
	})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	found := false
	for _, m := range in.ValidationMessages() {
		found = found || strings.Contains(m, "SYNC-HAZARD")
	}
	if !found {
		t.Fatal("synchronization validation did not report a read-after-write hazard between two dispatches without a barrier")
	}
}

// TestReadsStaged: reads of 1 KiB and more from device-local memory the host does not cache (a
// discrete GPU's resizable BAR) go through a staging copy; every other read is a plain copy.
func TestReadsStaged(t *testing.T) {
	bar := MemoryDeviceLocal | MemoryHostVisible | MemoryHostCoherent
	for _, c := range []struct {
		kind  BufferKind
		flags uint32
		n     int
		want  bool
	}{
		{DeviceBuffer, bar, stagedReadMin, true},
		{DeviceBuffer, bar, 128000, true},
		{DeviceBuffer, bar, stagedReadMin - 1, false},
		{DeviceBuffer, bar | MemoryHostCached, 128000, false},                 // integrated GPU, lavapipe
		{DeviceBuffer, MemoryHostVisible | MemoryHostCoherent, 128000, false}, // system memory
		{HostBuffer, bar, 128000, false},
	} {
		if got := readsStaged(c.kind, c.flags, c.n); got != c.want {
			t.Errorf("readsStaged(%v, %#x, %d) = %v, want %v", c.kind, c.flags, c.n, got, c.want)
		}
	}
}

// TestUncachedReadThroughStaging reads a mapped device buffer whose memory is taken for uncached:
// the bytes come back through the staging buffer, equal to those written through the mapping.
func TestUncachedReadThroughStaging(t *testing.T) {
	d := openDevice(t, DeviceOptions{})
	b, err := d.NewBuffer(8192, DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Destroy()
	if !b.HostVisible() || b.memFlags&MemoryDeviceLocal == 0 {
		t.Skipf("device buffer memory %#x is not mapped device-local memory", b.memFlags)
	}
	b.memFlags &^= MemoryHostCached // as a discrete GPU's BAR
	src := make([]byte, 8192)
	for i := range src {
		src[i] = byte(i*7 + i>>8)
	}
	if err := b.Write(0, src); err != nil {
		t.Fatal(err)
	}
	small := make([]byte, 16)
	if err := b.Read(100, small); err != nil {
		t.Fatal(err)
	}
	if d.staging != nil {
		t.Fatal("a 16-byte read went through staging")
	}
	got := make([]byte, 5000)
	if err := b.Read(3000, got); err != nil {
		t.Fatal(err)
	}
	if d.staging == nil {
		t.Fatal("a 5000-byte read from uncached memory did not go through staging")
	}
	if !bytes.Equal(got, src[3000:8000]) || !bytes.Equal(small, src[100:116]) {
		t.Fatal("bytes read differ from those written")
	}
}

// TestResubmit: reusable commands run again as recorded (a fill of a word counted up by a copy
// chain would show one run only), commands begun with Begin refuse, and once a buffer they reach
// is destroyed they report it and submit nothing.
func TestResubmit(t *testing.T) {
	d := openDevice(t, DeviceOptions{})
	a, err := d.NewBuffer(64, DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.NewBuffer(64, DeviceBuffer)
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.BeginReusable()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if err := c.FillBuffer(a, 0, 64, 0x01020304); err != nil {
		t.Fatal(err)
	}
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
	if err := c.CopyBuffer(b, 0, a, 0, 64); err != nil {
		t.Fatal(err)
	}
	if err := c.Submit(); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	for run := range 2 {
		if err := b.Write(0, make([]byte, 64)); err != nil {
			t.Fatal(err)
		}
		if run > 0 {
			if err := c.Resubmit(); err != nil {
				t.Fatal(err)
			}
			if err := c.Wait(); err != nil {
				t.Fatal(err)
			}
		}
		got := make([]byte, 64)
		if err := b.Read(0, got); err != nil {
			t.Fatal(err)
		}
		want := byte(0)
		if run > 0 {
			want = 4
		}
		if got[0] != want || got[63] != want/4 {
			t.Fatalf("run %d: bytes %v, want %d..%d", run, got[:4], want, want/4)
		}
	}
	once, err := d.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := once.Submit(); err != nil {
		t.Fatal(err)
	}
	if err := once.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := once.Resubmit(); !errors.Is(err, ErrInvalid) {
		t.Errorf("Resubmit of one-time commands: %v, want ErrInvalid", err)
	}
	once.Release()
	a.Destroy()
	if c.BuffersAlive() {
		t.Error("BuffersAlive after a buffer was destroyed")
	}
	if err := c.Resubmit(); !errors.Is(err, ErrClosed) {
		t.Errorf("Resubmit after a buffer was destroyed: %v, want ErrClosed", err)
	}
}
