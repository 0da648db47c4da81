//go:build gl && cgo

package gl

import (
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	gogl "github.com/go-gl/gl/v4.3-core/gl"
	"github.com/tandem-ml/tandem/backends/internal/gputest"
	"github.com/tandem-ml/tandem/core"
)

func TestMain(m *testing.M) {
	// A debug context: any error message of the driver fails the call that caused it.
	if os.Getenv("TANDEM_GL_DEBUG") == "" {
		os.Setenv("TANDEM_GL_DEBUG", "1")
	}
	os.Exit(m.Run())
}

// newBackend returns a backend on GL0, skipping (or failing with TANDEM_REQUIRE_GL=1) without one.
func newBackend(t testing.TB) *Backend {
	t.Helper()
	if ok, why := Available(); !ok {
		if os.Getenv("TANDEM_REQUIRE_GL") == "1" {
			t.Fatalf("TANDEM_REQUIRE_GL=1 but OpenGL is unavailable: %s", why)
		}
		t.Skip("OpenGL unavailable: " + why)
	}
	be, err := New(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

// allocCtx places every tensor of ctx in one buffer of bt (views share their source's memory).
func allocCtx(t testing.TB, ctx *core.Context, bt core.BufferType) core.Buffer {
	return gputest.AllocCtx(t, ctx, bt)
}

func compute(t *testing.T, be *Backend, out ...*core.Tensor) {
	t.Helper()
	g := core.NewGraph(core.DefaultGraphSize)
	for _, o := range out {
		g.BuildForwardExpand(o)
	}
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
}

func TestRegistry(t *testing.T) {
	be := newBackend(t)
	found := false
	for _, d := range core.Devices() {
		if d.Name() == "GL0" {
			found = d == be.Device()
		}
	}
	if !found {
		t.Fatal("GL0 is not registered with core (or is another device than New's)")
	}
	d := be.Device()
	if strings.Contains(strings.ToLower(d.Description()), "llvmpipe") && d.Type() != core.DeviceAccel {
		t.Errorf("llvmpipe is %v, want ACCEL (never preferred over the CPU)", d.Type())
	}
	if !d.SupportsBufferType(be.DefaultBufferType()) || d.SupportsBufferType(core.HostBufferType()) {
		t.Error("GL0 must take its own buffers only")
	}
}

func TestBuffers(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	fresh := ctx.NewTensor1D(core.TypeF32, 100)
	allocCtx(t, ctx, be.DefaultBufferType())
	if got, _ := core.GetFloat32s(fresh); got[0] != 0 || got[99] != 0 {
		t.Fatalf("a fresh buffer is not zeroed: %v", got[:2])
	}
	buf, a, _ := gputest.DeviceBuffers(t, be)
	if _, err := be.DefaultBufferType().Alloc(-1); err == nil {
		t.Error("negative Alloc accepted")
	}
	if _, err := be.DefaultBufferType().Alloc(maxBufferSize + 1); err == nil {
		t.Error("Alloc above MaxSize accepted")
	}
	buf.Free()
	if err := core.TensorSet(a, make([]byte, 4), 0); err == nil || !strings.Contains(err.Error(), "freed") {
		t.Errorf("SetTensor on a freed buffer: %v", err)
	}
}

func TestBinaryGraph(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor2D(core.TypeF32, 3, 2)
	b := ctx.NewTensor1D(core.TypeF32, 3) // broadcast over rows
	s := ctx.Div(ctx.Mul(ctx.Add(a, b), a), b)
	allocCtx(t, ctx, be.DefaultBufferType())
	if err := core.SetFloat32s(a, []float32{1, 2, 3, 4, 5, 6}); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(b, []float32{1, 2, 4}); err != nil {
		t.Fatal(err)
	}
	before := be.Barriers()
	compute(t, be, s)
	got, _ := core.GetFloat32s(s)
	// ((a + b) * a) / b, by hand.
	want := []float32{2, 4, 5.25, 20, 17.5, 15}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if n := be.Barriers() - before; n != 2 {
		t.Errorf("%d barriers for a chain of 3 dependent nodes, want 2", n)
	}
}

func TestIndependentNodesNeedNoBarrier(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 64)
	b := ctx.NewTensor1D(core.TypeF32, 64)
	x, y, z := ctx.Add(a, b), ctx.Mul(a, b), ctx.Sub(a, b)
	allocCtx(t, ctx, be.DefaultBufferType())
	before, dispatches := be.Barriers(), be.Dispatches()
	compute(t, be, x, y, z)
	if n := be.Barriers() - before; n != 0 {
		t.Errorf("%d barriers between independent nodes", n)
	}
	if n := be.Dispatches() - dispatches; n != 3 {
		t.Errorf("%d dispatches for 3 nodes", n)
	}
}

// Neighbouring f16 tensors that share 32-bit words are written by different dispatches: each
// keeps its own halves (16-bit stores are atomics on whole words).
func TestHalfWordNeighbours(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	src := ctx.NewTensor1D(core.TypeF32, 7)
	dst := ctx.NewTensor1D(core.TypeF16, 8)
	lo := ctx.View1D(dst, 3, 0)   // halves 0..2
	hi := ctx.View1D(dst, 5, 3*2) // halves 3..7: word 1 is shared with lo
	c1 := ctx.Cpy(ctx.View1D(src, 3, 0), lo)
	c2 := ctx.Cpy(ctx.View1D(src, 5, 2*4), hi)
	allocCtx(t, ctx, be.DefaultBufferType())
	if err := core.SetFloat32s(src, []float32{1, 2, 3, 4, 5, 6, 7}); err != nil {
		t.Fatal(err)
	}
	compute(t, be, c1, c2)
	got, err := core.GetFloat32s(dst)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{1, 2, 3, 3, 4, 5, 6, 7}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}

// A cancelled or expired context stops the graph before its next node with an error wrapping
// the context's; the backend stays usable.
func TestGraphComputeContext(t *testing.T) {
	be := newBackend(t)
	gputest.GraphComputeContext(t, be)
	g := gputest.Graph(t, be, func(ctx *core.Context) *core.Tensor {
		a := ctx.NewTensor1D(core.TypeF32, 64)
		return ctx.Add(a, a)
	})
	if err := be.GraphCompute(nil); err == nil {
		t.Error("nil graph accepted")
	}
	be.Close()
	if err := be.GraphCompute(g); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("GraphCompute on a closed backend: %v", err)
	}
}

func TestMulMatTypes(t *testing.T) {
	be := newBackend(t)
	for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeQ4_0, core.TypeQ8_0} {
		for _, n := range []int64{1, 5, 40} { // mat-vec, small tiled, tiled
			r := rand.New(rand.NewPCG(5, uint64(typ)))
			const k, m = 64, 33
			ctx := core.NewContext(core.ContextParams{NoAlloc: true})
			a := ctx.NewTensor2D(typ, k, m)
			x := ctx.NewTensor2D(core.TypeF32, k, n)
			out := ctx.MulMat(a, x)
			allocCtx(t, ctx, be.DefaultBufferType())
			av := make([]float32, k*m)
			xv := make([]float32, k*n)
			for i := range av {
				av[i] = 2*r.Float32() - 1
			}
			for i := range xv {
				xv[i] = 2*r.Float32() - 1
			}
			if err := core.SetFloat32s(a, av); err != nil {
				t.Fatal(err)
			}
			if err := core.SetFloat32s(x, xv); err != nil {
				t.Fatal(err)
			}
			aq, _ := core.GetFloat32s(a) // the weights as stored
			compute(t, be, out)
			got, _ := core.GetFloat32s(out)
			var num, den float64
			for j := range n {
				for i := range int64(m) {
					var want float64
					for l := range int64(k) {
						want += float64(aq[i*k+l]) * float64(xv[j*k+l])
					}
					d := float64(got[j*m+i]) - want
					num += d * d
					den += want * want
				}
			}
			if e := num / den; !(e < 1e-10) {
				t.Errorf("%v n=%d: NMSE %g against the float64 product of the stored weights", typ, n, e)
			}
		}
	}
}

// A shader that does not compile is an error carrying the compiler's log, and a GL error raised
// inside a call is returned by it (glGetError and, on a debug context, the debug log).
func TestErrorsAreReturned(t *testing.T) {
	be := newBackend(t)
	err := be.dev.t.do(func() error {
		_, err := compileCompute("#version 430 core\nlayout(local_size_x = 1) in;\nvoid main() { undefined_thing(); }\n")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "compile") {
		t.Errorf("bad shader: %v", err)
	}
	err = be.dev.t.do(func() error {
		gogl.BindBuffer(gogl.SHADER_STORAGE_BUFFER, math.MaxUint32) // not a buffer name
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "GL_INVALID_OPERATION") {
		t.Errorf("invalid GL call: %v", err)
	}
	// The context is still usable.
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 4)
	s := ctx.Sqr(a)
	allocCtx(t, ctx, be.DefaultBufferType())
	if err := core.SetFloat32s(a, []float32{1, -2, 3, 0.5}); err != nil {
		t.Fatal(err)
	}
	compute(t, be, s)
	got, _ := core.GetFloat32s(s)
	if got[0] != 1 || got[1] != 4 || got[2] != 9 || got[3] != 0.25 {
		t.Errorf("SQR after an error: %v", got)
	}
}
