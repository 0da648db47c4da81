//go:build cgo && !novulkan

package vulkan

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gputest"
	"github.com/tandem-ml/tandem/core"
)

// Environment: TANDEM_VK_VALIDATE=1 (validation layer; any message fails),
// TANDEM_REQUIRE_VULKAN=1 (fail instead of skip without a device).

// TestMain fails the run on every validation message the package's tests raised, wherever they
// were raised (a test that does not go through newBackend's per-test check, a Shutdown inside a
// test, the final Shutdown that reports leaked objects): ValidationMessages keeps the messages of
// every instance since the process started.
func TestMain(m *testing.M) {
	code := m.Run()
	if !ShutdownAndReport(os.Stderr) {
		code = 1
	}
	os.Exit(code)
}

// newBackend returns a backend on device 0 and fails the test on validation
// messages that appear while it runs.
func newBackend(t *testing.T) *Backend {
	t.Helper()
	if ok, why := Available(); !ok {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but Vulkan is unavailable: %s", why)
		}
		t.Skip("Vulkan unavailable: " + why)
	}
	be, err := New(0)
	if err != nil {
		t.Fatal(err)
	}
	before := len(ValidationMessages())
	t.Cleanup(func() {
		be.Close()
		for _, m := range ValidationMessages()[before:] {
			t.Errorf("validation: %s", m)
		}
	})
	return be
}

// allocCtx places every tensor of ctx in one buffer of bt (views share their
// source's memory).
func allocCtx(t *testing.T, ctx *core.Context, bt core.BufferType) core.Buffer {
	return gputest.AllocCtx(t, ctx, bt)
}

func randomize(t *testing.T, r *rand.Rand, x *core.Tensor, lo, hi float32) []float32 {
	t.Helper()
	if !x.Type.CanConvert() && x.Type.CanDequantize() {
		return randomBlocks(t, r, x)
	}
	v := make([]float32, x.NElements())
	for i := range v {
		v[i] = lo + (hi-lo)*r.Float32()
	}
	if err := core.SetFloat32s(x, v); err != nil {
		t.Fatal(err)
	}
	got, err := core.GetFloat32s(x) // the values as stored (quantized, rounded)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// randomBlocks fills x, of a type read but never written from floats (the IQ3, IQ2 and IQ1 types:
// their f16 block scale leads the block, but for IQ1_M's, spread over the top nibbles of its four
// u16 scale words at bytes 48 … 55), with random bytes and a scale in ±[2^-5, 2^-4), and returns
// the values as stored. Every byte pattern of the other fields decodes.
func randomBlocks(t *testing.T, r *rand.Rand, x *core.Tensor) []float32 {
	t.Helper()
	raw := make([]byte, x.NBytes())
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	for off, size := 0, int(x.Type.Size()); off+size <= len(raw); off += size {
		d := uint16(r.Uint32()&0x8000) | 10<<10 | uint16(r.IntN(1024))
		if x.Type == core.TypeIQ1_M {
			for k := range 4 {
				raw[off+49+2*k] = raw[off+49+2*k]&0x0f | byte(d>>(4*k)&0xf)<<4
			}
		} else {
			raw[off], raw[off+1] = byte(d), byte(d>>8)
		}
	}
	if err := core.TensorSet(x, raw, 0); err != nil {
		t.Fatal(err)
	}
	got, err := core.GetFloat32s(x)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func compute(t *testing.T, be *Backend, out *core.Tensor) {
	t.Helper()
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
}

func TestAvailableAndRegistry(t *testing.T) {
	be := newBackend(t)
	ok, why := Available()
	if !ok || why != "" {
		t.Fatalf("Available() = %v, %q", ok, why)
	}
	d, err := core.DeviceByName("vulkan0")
	if err != nil {
		t.Fatal(err)
	}
	if d != be.Device() || be.Name() != "Vulkan0" || DeviceCount() < 1 {
		t.Errorf("registry device %v, backend device %v (%s), %d devices", d.Name(), be.Device().Name(), be.Name(), DeviceCount())
	}
	t.Logf("%s: %s, type %v", d.Name(), d.Description(), d.Type())
	free, total := d.Memory()
	if total <= 0 || free <= 0 {
		t.Errorf("memory %d/%d", free, total)
	}
	if !d.SupportsBufferType(be.DefaultBufferType()) || d.SupportsBufferType(core.HostBufferType()) {
		t.Error("SupportsBufferType: want own buffer type only")
	}
	if hb, ok := d.(core.HostBufferTyper); !ok || !hb.HostBufferType().IsHost() {
		t.Error("no host buffer type")
	}
	if _, err := New(DeviceCount()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("New(out of range): %v", err)
	}
}

func TestBuffers(t *testing.T) {
	be := newBackend(t)
	_, a, vals := gputest.DeviceBuffers(t, be)

	// Pinned host memory: addressable bytes.
	hbt := be.Device().(core.HostBufferTyper).HostBufferType()
	hctx := core.NewContext(core.ContextParams{NoAlloc: true})
	h := hctx.NewTensor1D(core.TypeF32, 100)
	allocCtx(t, hctx, hbt)
	if h.Float32s() == nil {
		t.Fatal("host buffer tensor has no host data")
	}
	copy(h.Float32s(), vals)
	if err := core.TensorCopy(h, a); err != nil {
		t.Fatal(err)
	}
	got, _ := core.GetFloat32s(a)
	if got[7] != vals[7] {
		t.Fatal("copy from pinned host memory")
	}
}

func TestBinaryGraph(t *testing.T) {
	be := newBackend(t)
	r := rand.New(rand.NewPCG(1, 2))
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor4D(core.TypeF32, 37, 5, 3, 2)
	b := ctx.NewTensor4D(core.TypeF32, 37, 1, 3, 1)
	c := ctx.NewTensor4D(core.TypeF32, 37, 5, 3, 2)
	e := ctx.NewTensor2D(core.TypeF32, 5, 37)
	s1 := ctx.Add(a, b)
	s2 := ctx.Mul(s1, c)
	s3 := ctx.Sub(s2, ctx.Permute(ctx.Reshape4D(e, 5, 37, 1, 1), 1, 0, 2, 3)) // transposed view, broadcast
	s4 := ctx.Div(s3, a)
	allocCtx(t, ctx, be.DefaultBufferType())
	av := randomize(t, r, a, 1, 2)
	bv := randomize(t, r, b, -1, 1)
	cv := randomize(t, r, c, -2, 2)
	ev := randomize(t, r, e, -1, 1)
	compute(t, be, s4)
	got, err := core.GetFloat32s(s4)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for i3 := range 2 {
		for i2 := range 3 {
			for i1 := range 5 {
				for i0 := range 37 {
					x := av[((i3*3+i2)*5+i1)*37+i0]
					y := bv[i2*37+i0]
					z := cv[((i3*3+i2)*5+i1)*37+i0]
					w := ev[i0*5+i1]
					want := ((x+y)*z - w) / x
					if d := math.Abs(float64(got[i] - want)); d > 1e-6*math.Abs(float64(want)) {
						t.Fatalf("element %d (%d,%d,%d,%d): got %v, want %v", i, i0, i1, i2, i3, got[i], want)
					}
					i++
				}
			}
		}
	}
	if be.Barriers() != 3 {
		t.Errorf("%d barriers for a chain of 4 dependent nodes, want 3", be.Barriers())
	}
}

func TestIndependentNodesNeedNoBarrier(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 64)
	b := ctx.NewTensor1D(core.TypeF32, 64)
	x := ctx.Add(a, b)
	y := ctx.Mul(a, b)
	z := ctx.Sub(a, b)
	allocCtx(t, ctx, be.DefaultBufferType())
	r := rand.New(rand.NewPCG(3, 4))
	randomize(t, r, a, -1, 1)
	randomize(t, r, b, -1, 1)
	g := core.NewGraph(16)
	g.BuildForwardExpand(x)
	g.BuildForwardExpand(y)
	g.BuildForwardExpand(z)
	before := be.Barriers()
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	if n := be.Barriers() - before; n != 0 {
		t.Errorf("%d barriers between independent nodes", n)
	}
}

func nmse(got []float32, want []float64) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	return num / den
}

func TestMulMat(t *testing.T) {
	be := newBackend(t)
	for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0} {
		for _, strided := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/strided=%v", typ, strided), func(t *testing.T) {
				r := rand.New(rand.NewPCG(5, uint64(typ)))
				const k, m, n = 96, 9, 3
				ctx := core.NewContext(core.ContextParams{NoAlloc: true})
				a := ctx.NewTensor4D(typ, k, m, 2, 1)
				var x *core.Tensor
				if strided {
					// Activations as a view with padded rows, 4 batches (broadcast 2x over a).
					big := ctx.NewTensor4D(core.TypeF32, k+8, n, 4, 1)
					x = ctx.View4D(big, k, n, 4, 1, big.Nb[1], big.Nb[2], big.Nb[3], 3*4) // misaligned start
				} else {
					x = ctx.NewTensor4D(core.TypeF32, k, n, 4, 1)
				}
				out := ctx.MulMat(a, x)
				allocCtx(t, ctx, be.DefaultBufferType())
				av := randomize(t, r, a, -1, 1)
				var xv []float32
				if strided {
					randomize(t, r, x.ViewSrc, -1, 1)
					xv, _ = core.GetFloat32s(x)
				} else {
					xv = randomize(t, r, x, -1, 1)
				}
				compute(t, be, out)
				got, err := core.GetFloat32s(out)
				if err != nil {
					t.Fatal(err)
				}
				want := make([]float64, 0, len(got))
				for b2 := range 4 {
					for col := range n {
						for row := range m {
							var s float64
							for i := range k {
								s += float64(av[((b2/2)*m+row)*k+i]) * float64(xv[(b2*n+col)*k+i])
							}
							want = append(want, s)
						}
					}
				}
				if e := nmse(got, want); !(e < 1e-9) {
					t.Fatalf("NMSE %g", e)
				}
			})
		}
	}
}

func TestUnsupported(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 8)
	sq := ctx.Sqr(a)
	sq.Op = core.OpCount // an op no backend implements
	if be.Device().SupportsOp(sq) {
		t.Fatal("an unknown op reported as supported")
	}
	if !be.Device().SupportsOp(ctx.Reshape2D(a, 4, 2)) {
		t.Error("views must be supported")
	}
	allocCtx(t, ctx, be.DefaultBufferType())
	g := core.NewGraph(8)
	g.BuildForwardExpand(sq)
	if err := be.GraphCompute(g); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("GraphCompute with an unsupported op: %v", err)
	}

	// Tensors in plain host memory are not reachable by the backend.
	hctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
	x := hctx.NewTensor1D(core.TypeF32, 8)
	y := hctx.Add(x, x)
	g = core.NewGraph(8)
	g.BuildForwardExpand(y)
	if err := be.GraphCompute(g); err == nil || !strings.Contains(err.Error(), "not in Vulkan memory") {
		t.Errorf("GraphCompute on host tensors: %v", err)
	}
}
