package core_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/tandem-ml/tandem/core"
)

// placeIn gives a NoAlloc tensor of type typ and shape ne memory of buffer type bt.
func placeIn(t *testing.T, bt core.BufferType, typ core.Type, ne ...int64) *core.Tensor {
	t.Helper()
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	x := c.NewTensor(typ, ne...)
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	buf, err := bt.Alloc(x.NBytes())
	if err != nil {
		t.Fatal(err)
	}
	if err := core.TensorAlloc(buf, x, 0); err != nil {
		t.Fatal(err)
	}
	return x
}

// SetFloat32s converts to the tensor's type wherever it lives, giving the reference quantizer's
// bytes, and GetFloat32s reads back what those bytes hold (issue 21: set and get are symmetric).
func TestSetGetFloat32sEveryType(t *testing.T) {
	const n = 64 // two blocks of 32; one K-quant block needs 256
	vals := make([]float32, 256)
	for i := range vals {
		vals[i] = float32(math.Sin(float64(i)*0.37)) * 3
	}
	for _, bt := range []core.BufferType{core.HostBufferType(), devBufType{}} {
		for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ4_1,
			core.TypeQ8_0, core.TypeQ4_K, core.TypeQ6_K, core.TypeI32} {
			ne := int64(n)
			if typ.BlockSize() > n {
				ne = typ.BlockSize()
			}
			v := vals[:ne]
			x := placeIn(t, bt, typ, ne)
			if err := core.SetFloat32s(x, v); err != nil {
				t.Fatalf("%s %v: SetFloat32s: %v", bt.Name(), typ, err)
			}
			want := make([]byte, typ.RowSize(ne))
			if err := typ.FromFloat(v, want); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, x.NBytes())
			if err := core.TensorGet(x, got, 0); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s %v: bytes differ from Type.FromFloat", bt.Name(), typ)
			}
			back, err := core.GetFloat32s(x)
			if err != nil {
				t.Fatalf("%s %v: GetFloat32s: %v", bt.Name(), typ, err)
			}
			wantBack := make([]float32, ne)
			if err := typ.ToFloat(want, wantBack); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back, wantBack) {
				t.Fatalf("%s %v: GetFloat32s = %v, want %v", bt.Name(), typ, back[:4], wantBack[:4])
			}
			// The values come back close to what was written (exactly for f32).
			var num, den float64
			for i := range v {
				d := float64(back[i] - v[i])
				num, den = num+d*d, den+float64(v[i])*float64(v[i])
			}
			limit := map[core.Type]float64{core.TypeF32: 0, core.TypeF16: 1e-6, core.TypeBF16: 1e-4,
				core.TypeQ4_0: 0.02, core.TypeQ4_1: 0.02, core.TypeQ4_K: 0.02, core.TypeQ6_K: 0.002, core.TypeQ8_0: 1e-4,
				core.TypeI32: 0.2}[typ]
			if num/den > limit {
				t.Fatalf("%s %v: NMSE %g > %g", bt.Name(), typ, num/den, limit)
			}
		}
	}
}

// A strided view writes only its elements: the bytes between them keep their values, on the host
// and on a device.
func TestSetFloat32sStridedView(t *testing.T) {
	for _, bt := range []core.BufferType{core.HostBufferType(), devBufType{}} {
		x := placeIn(t, bt, core.TypeF16, 4, 3) // 3 rows of 4
		if err := core.SetFloat32s(x, []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}); err != nil {
			t.Fatal(err)
		}
		c := x.Context()
		col := c.View2D(x, 1, 3, x.Nb[1], 2*x.Nb[0]) // column 2: ne [1 3], nb[1] = a row
		if err := core.ViewInit(col); err != nil {
			t.Fatal(err)
		}
		if err := core.SetFloat32s(col, []float32{-1, -2, -3}); err != nil {
			t.Fatal(err)
		}
		got, err := core.GetFloat32s(x)
		if err != nil {
			t.Fatal(err)
		}
		want := []float32{0, 1, -1, 3, 4, 5, -2, 7, 8, 9, -3, 11}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: after writing column 2: %v, want %v", bt.Name(), got, want)
		}
		colGot, err := core.GetFloat32s(col)
		if err != nil || !slices.Equal(colGot, []float32{-1, -2, -3}) {
			t.Fatalf("%s: column 2 reads %v, %v", bt.Name(), colGot, err)
		}
	}
}

// SetInt32s and GetInt32s move exact int32 values (beyond float32's 2²⁴) in any layout, wherever
// the tensor lives.
func TestSetGetInt32s(t *testing.T) {
	big := []int32{1<<24 + 1, -7, math.MaxInt32, math.MinInt32, 0, 42}
	for _, bt := range []core.BufferType{core.HostBufferType(), devBufType{}} {
		x := placeIn(t, bt, core.TypeI32, 3, 2)
		if err := core.SetInt32s(x, big); err != nil {
			t.Fatal(err)
		}
		got, err := core.GetInt32s(x)
		if err != nil || !slices.Equal(got, big) {
			t.Fatalf("%s: GetInt32s = %v, %v; want %v", bt.Name(), got, err, big)
		}
		c := x.Context()
		tr := c.Transpose(x) // ne [2 3]: the columns of x as rows
		if err := core.ViewInit(tr); err != nil {
			t.Fatal(err)
		}
		got, err = core.GetInt32s(tr)
		if want := []int32{1<<24 + 1, math.MinInt32, -7, 0, math.MaxInt32, 42}; err != nil || !slices.Equal(got, want) {
			t.Fatalf("%s: transposed GetInt32s = %v, %v; want %v", bt.Name(), got, err, want)
		}
		if err := core.SetInt32s(tr, []int32{1, 2, 3, 4, 5, 6}); err != nil {
			t.Fatal(err)
		}
		got, err = core.GetInt32s(x)
		if want := []int32{1, 3, 5, 2, 4, 6}; err != nil || !slices.Equal(got, want) {
			t.Fatalf("%s: after the transposed write: %v, %v; want %v", bt.Name(), got, err, want)
		}
	}
}

// Float32s and Int32s are views of host memory: writes through them are the tensor's bytes, and a
// device tensor has none (nil, while GetFloat32s works).
func TestHostViews(t *testing.T) {
	c := core.NewContext(core.ContextParams{MemSize: 1 << 12})
	x := c.NewTensor1D(core.TypeF32, 3)
	copy(x.Float32s(), []float32{1, 2, 3})
	if got, err := core.GetFloat32s(x); err != nil || !slices.Equal(got, []float32{1, 2, 3}) {
		t.Fatalf("GetFloat32s after copy(Float32s) = %v, %v", got, err)
	}
	ids := c.NewTensor1D(core.TypeI32, 2)
	copy(ids.Int32s(), []int32{5, -5})
	if got, err := core.GetInt32s(ids); err != nil || !slices.Equal(got, []int32{5, -5}) {
		t.Fatalf("GetInt32s after copy(Int32s) = %v, %v", got, err)
	}
	d := placeIn(t, devBufType{}, core.TypeF32, 3)
	if d.Float32s() != nil {
		t.Fatal("Float32s of a device tensor is not nil")
	}
	if err := core.SetFloat32s(d, []float32{4, 5, 6}); err != nil {
		t.Fatal(err)
	}
	if got, err := core.GetFloat32s(d); err != nil || !slices.Equal(got, []float32{4, 5, 6}) {
		t.Fatalf("device GetFloat32s = %v, %v", got, err)
	}
	if v := c.NewF32(2.5).Float32s(); len(v) != 1 || v[0] != 2.5 {
		t.Fatalf("NewF32(2.5) holds %v", v)
	}
}

// A context whose arena cannot be made records the error like an op's: Err, every tensor, and the
// graph built from them report it (issue 21: one constructor form, no NewContextErr).
func TestNewContextErrorIsRecorded(t *testing.T) {
	c := core.NewContext(core.ContextParams{MemSize: -5})
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "negative MemSize -5") {
		t.Fatalf("Err = %v", err)
	}
	x := c.NewTensor1D(core.TypeF32, 4)
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(c.Scale(x, 2))
	if err := g.Err(); err == nil || !strings.Contains(err.Error(), "negative MemSize -5") {
		t.Fatalf("graph Err = %v", err)
	}
	if err := core.SetFloat32s(x, make([]float32, 4)); err == nil || !strings.Contains(err.Error(), "negative MemSize -5") {
		t.Fatalf("SetFloat32s = %v", err)
	}
}

// NewHostBuffer returns the memory or an error, never a nil buffer without one.
func TestNewHostBuffer(t *testing.T) {
	b, err := core.NewHostBuffer(nil, 100)
	if err != nil || b == nil || b.Size() != 100 || len(b.Bytes()) != 100 || b.Type() != nil {
		t.Fatalf("NewHostBuffer(nil, 100) = %v, %v", b, err)
	}
	if p := uintptrOf(b.Bytes()); p%32 != 0 {
		t.Fatalf("host buffer at %#x is not 32-byte aligned", p)
	}
	for _, size := range []int64{-1, 1 << 50} {
		if b, err := core.NewHostBuffer(core.HostBufferType(), size); err == nil || b != nil {
			t.Fatalf("NewHostBuffer(%d) = %v, %v; want only an error", size, b, err)
		}
	}
}

// plainBackend is a Backend without GraphComputeContext or SetLogger, counting its computes.
type plainBackend struct{ computes int }

func (b *plainBackend) Name() string                       { return "plain" }
func (b *plainBackend) Device() core.Device                { return nil }
func (b *plainBackend) DefaultBufferType() core.BufferType { return core.HostBufferType() }
func (b *plainBackend) GraphCompute(g *core.Graph) error   { b.computes++; return nil }
func (b *plainBackend) Synchronize() error                 { return nil }
func (b *plainBackend) Close() error                       { return nil }

// ctxBackend has GraphComputeContext: the wrapper hands it the context.
type ctxBackend struct {
	plainBackend
	got context.Context
}

func (b *ctxBackend) GraphComputeContext(ctx context.Context, g *core.Graph) error {
	b.got = ctx
	return ctx.Err()
}

// core.GraphComputeContext works for every Backend: a ContextComputer gets the context; for the
// others a done context stops the graph before it starts, and a live one runs GraphCompute.
func TestGraphComputeContextDefault(t *testing.T) {
	g := core.NewGraph(core.DefaultGraphSize)
	done, cancel := context.WithCancel(context.Background())
	cancel()

	p := &plainBackend{}
	if err := core.GraphComputeContext(context.Background(), p, g); err != nil || p.computes != 1 {
		t.Fatalf("plain backend, live context: %v, %d computes", err, p.computes)
	}
	if err := core.GraphComputeContext(nil, p, g); err != nil || p.computes != 2 { // a nil ctx is Background
		t.Fatalf("plain backend, nil context: %v, %d computes", err, p.computes)
	}
	err := core.GraphComputeContext(done, p, g)
	if !errors.Is(err, context.Canceled) || p.computes != 2 || !strings.Contains(err.Error(), "plain") {
		t.Fatalf("plain backend, cancelled context: %v, %d computes", err, p.computes)
	}
	if err := core.GraphComputeContext(context.Background(), p, nil); !errors.Is(err, core.ErrNilGraph) {
		t.Fatalf("nil graph: %v", err)
	}
	if err := core.GraphComputeContext(context.Background(), nil, g); err == nil || !strings.Contains(err.Error(), "nil backend") {
		t.Fatalf("nil backend: %v", err)
	}

	cb := &ctxBackend{}
	if err := core.GraphComputeContext(done, cb, g); !errors.Is(err, context.Canceled) || cb.got != done || cb.computes != 0 {
		t.Fatalf("ContextComputer: %v, got ctx %v, %d plain computes", err, cb.got, cb.computes)
	}
	var _ core.ContextComputer = cb
	if _, ok := core.Backend(p).(core.LoggerSetter); ok {
		t.Fatal("plainBackend is a LoggerSetter")
	}
	var _ core.LoggerSetter = logBackend{}
}

type logBackend struct{ plainBackend }

func (logBackend) SetLogger(*slog.Logger) {}

// uintptrOf is the address of b's first byte.
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }
