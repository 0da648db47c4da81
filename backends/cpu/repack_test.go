package cpu_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

var repackTypes = []core.Type{core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0, core.TypeQ4_K}

// repackK is a row length of the tests' shapes for typ: k as it is when it holds whole blocks of
// typ, else 8k for Q4_K (whose rows are 256-element super-blocks; the tests' k are multiples of 32).
func repackK(typ core.Type, k int64) int64 {
	if k%typ.BlockSize() == 0 {
		return k
	}
	return k * typ.BlockSize() / 32
}

// repackPlaced is the buffer type AcceptsWeight gives a MUL_MAT weight of typ: CPU_REPACK, except
// for Q4_K where the kernel set lacks its repacked micro-kernels (they are avx2's).
func repackPlaced(typ core.Type) string {
	if typ == core.TypeQ4_K && !kern.HasQ4_KStd() {
		return "CPU"
	}
	return cpu.RepackBufferTypeName
}

// quantBytes returns n standard bytes of typ quantized from uniform [-1, 1) values.
func quantBytes(t testing.TB, typ core.Type, nElems int64, seed uint64) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 11))
	v := make([]float32, nElems)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	out := make([]byte, typ.RowSize(nElems))
	if err := typ.FromFloat(v, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// newRepacked places one tensor of typ and shape ne in a fresh CPU_REPACK buffer.
func newRepacked(t testing.TB, typ core.Type, ne ...int64) (*core.Tensor, core.Buffer) {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w := ctx.NewTensor(typ, ne...)
	bt := cpu.RepackBufferType()
	buf, err := bt.Alloc(bt.AllocSize(w))
	if err != nil {
		t.Fatal(err)
	}
	if err := core.TensorAlloc(buf, w, 0); err != nil {
		t.Fatal(err)
	}
	return w, buf
}

func TestRepackBufferType(t *testing.T) {
	bt := cpu.RepackBufferType()
	if bt.Name() != "CPU_REPACK" || bt.IsHost() || bt.Device() != cpu.NewDevice() {
		t.Fatalf("name %q, IsHost %v, device %v", bt.Name(), bt.IsHost(), bt.Device())
	}
	x, ok := cpu.NewDevice().(core.ExtraBufferTyper)
	if !ok || len(x.ExtraBufferTypes()) != 1 || x.ExtraBufferTypes()[0] != bt {
		t.Fatal("the CPU device does not list CPU_REPACK as its extra buffer type")
	}
	if !cpu.NewDevice().SupportsBufferType(bt) {
		t.Fatal("the CPU device does not support CPU_REPACK")
	}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	// 17 rows pad to 32: 32 rows × 2 blocks × 18 bytes per slice, 3 slices.
	if got := bt.AllocSize(ctx.NewTensor(core.TypeQ4_0, 64, 17, 3)); got != 3456 {
		t.Errorf("AllocSize(Q4_0 64×17×3) = %d, want 3456", got)
	}
	// Q4_1: 16 rows × 1 block × 20 bytes; Q8_0: 48 rows × 3 blocks × 34 bytes.
	if got := bt.AllocSize(ctx.NewTensor(core.TypeQ4_1, 32, 16)); got != 320 {
		t.Errorf("AllocSize(Q4_1 32×16) = %d, want 320", got)
	}
	if got := bt.AllocSize(ctx.NewTensor(core.TypeQ8_0, 96, 33)); got != 48*3*34 {
		t.Errorf("AllocSize(Q8_0 96×33) = %d, want %d", got, 48*3*34)
	}
	// Q4_K: 32 rows × 2 super-blocks × 144 bytes, plus 4 bytes per row and super-block of
	// unpacked scales and mins (2368 per group and super-block)
	if got := bt.AllocSize(ctx.NewTensor(core.TypeQ4_K, 512, 17)); got != 2*2*2368 {
		t.Errorf("AllocSize(Q4_K 512×17) = %d, want %d", got, 2*2*2368)
	}
	// other types are stored as they are; so is a Q4_K row that is not whole super-blocks
	if f := ctx.NewTensor(core.TypeF32, 5, 3); bt.AllocSize(f) != 60 || bt.AllocSize(nil) != 0 {
		t.Errorf("AllocSize(F32 5×3) = %d, AllocSize(nil) = %d", bt.AllocSize(f), bt.AllocSize(nil))
	}
	// AcceptsWeight takes Q4_K where the kernel set has its repacked kernels (avx2), and the
	// 32-element types everywhere.
	aw, ok := bt.(interface {
		AcceptsWeight(w *core.Tensor, uses []*core.Tensor) bool
	})
	if !ok {
		t.Fatal("CPU_REPACK has no AcceptsWeight")
	}
	if got := aw.AcceptsWeight(ctx.NewTensor(core.TypeQ4_K, 512, 17), nil); got != kern.HasQ4_KStd() {
		t.Errorf("AcceptsWeight(Q4_K) = %v on kernel set %v", got, kern.ActiveKernelSet())
	}
	if !aw.AcceptsWeight(ctx.NewTensor(core.TypeQ4_0, 64, 17), nil) {
		t.Error("AcceptsWeight(Q4_0) = false")
	}
}

func TestRepackRoundTrip(t *testing.T) {
	// the last shape is repacked by several goroutines (over 256 KiB a slice)
	shapes := [][]int64{{64, 17}, {96, 33, 3}, {32, 1}, {128, 16, 2, 2}, {4096, 301}}
	for _, typ := range repackTypes {
		for si, ne := range shapes {
			ne = append([]int64{repackK(typ, ne[0])}, ne[1:]...)
			t.Run(fmt.Sprint(typ, ne), func(t *testing.T) {
				w, buf := newRepacked(t, typ, ne...)
				defer buf.Free()
				n := w.NBytes()
				got := make([]byte, n)
				if err := core.TensorGet(w, got, 0); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, make([]byte, n)) {
					t.Fatal("a fresh tensor does not read as zero bytes")
				}
				mirror := quantBytes(t, typ, w.NElements(), uint64(si)+1)
				if err := core.TensorSet(w, mirror, 0); err != nil {
					t.Fatal(err)
				}
				if err := core.TensorGet(w, got, 0); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, mirror) {
					t.Fatal("whole round trip differs")
				}
				// in chunks of 24 rows (groups of 16 repacked whole where a chunk holds them)
				rb := w.Type.RowSize(w.Ne[0])
				chunked := quantBytes(t, typ, w.NElements(), uint64(si)+50)
				for off := int64(0); off < n; off += 24 * rb {
					if err := core.TensorSet(w, chunked[off:min(n, off+24*rb)], off); err != nil {
						t.Fatal(err)
					}
				}
				if err := core.TensorGet(w, got, 0); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, chunked) {
					t.Fatal("round trip of a tensor set in chunks of 24 rows differs")
				}
				copy(mirror, chunked)
				r := rand.New(rand.NewPCG(uint64(si), 3))
				other := quantBytes(t, typ, w.NElements(), uint64(si)+100)
				for it := 0; it < 60; it++ {
					off := r.Int64N(n)
					size := r.Int64N(n - off + 1)
					switch it % 3 {
					case 0:
						if err := core.TensorSet(w, other[off:off+size], off); err != nil {
							t.Fatal(err)
						}
						copy(mirror[off:], other[off:off+size])
					case 1:
						if err := core.TensorMemset(w, 0x11, off, size); err != nil {
							t.Fatal(err)
						}
						for i := off; i < off+size; i++ {
							mirror[i] = 0x11
						}
					}
					o2 := r.Int64N(n)
					s2 := r.Int64N(n - o2 + 1)
					part := make([]byte, s2)
					if err := core.TensorGet(w, part, o2); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(part, mirror[o2:o2+s2]) {
						t.Fatalf("step %d: bytes [%d,%d) differ from what was written", it, o2, o2+s2)
					}
				}
				if err := core.TensorGet(w, got, 0); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, mirror) {
					t.Fatal("final round trip differs")
				}
			})
		}
	}
}

// A tensor placed where another one was written reads as zeros (the buffer skips clearing only
// memory never written since it was allocated).
func TestRepackReusedMemoryReadsZero(t *testing.T) {
	for _, typ := range repackTypes {
		w, buf := newRepacked(t, typ, repackK(typ, 64), 40)
		if err := core.TensorSet(w, quantBytes(t, typ, w.NElements(), 9), 0); err != nil {
			t.Fatal(err)
		}
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		w2 := ctx.NewTensor(typ, repackK(typ, 64), 40)
		if err := core.TensorAlloc(buf, w2, 0); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, w2.NBytes())
		if err := core.TensorGet(w2, got, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, make([]byte, len(got))) {
			t.Errorf("%v: a tensor placed over written memory does not read as zero bytes", typ)
		}
		buf.Free()
	}
}

func TestRepackClearAndAsIs(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w := ctx.NewTensor(core.TypeQ4_0, 64, 17)
	f := ctx.NewTensor(core.TypeF32, 7, 3)
	buf, err := alloc.AllocCtxTensorsFromBufferType(ctx, cpu.RepackBufferType())
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	if w.Buffer.Type().Name() != "CPU_REPACK" || f.Buffer.Type().Name() != "CPU_REPACK" {
		t.Fatalf("placed in %s and %s", w.Buffer.Type().Name(), f.Buffer.Type().Name())
	}
	vals := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}
	if err := core.SetFloat32s(f, vals); err != nil {
		t.Fatal(err)
	}
	got, err := core.GetFloat32s(f)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(vals) {
		t.Fatalf("as-is f32 tensor reads %v, %v", got, err)
	}
	if err := buf.Clear(0x22); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*core.Tensor{w, f} {
		b := make([]byte, x.NBytes())
		if err := core.TensorGet(x, b, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, bytes.Repeat([]byte{0x22}, len(b))) {
			t.Errorf("%v after Clear(0x22) does not read as 0x22 bytes", x)
		}
	}
	if w.Data() != nil {
		t.Error("a repacked tensor has host data in the standard layout")
	}
}

func TestRepackBadInput(t *testing.T) {
	w, buf := newRepacked(t, core.TypeQ8_0, 64, 5)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	h := ctx.NewTensor(core.TypeQ8_0, 64, 5)
	hb, err := alloc.AllocCtxTensorsWithOptions(ctx, core.HostBufferType(), alloc.CtxAllocOptions{NoExtraBufferTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	n := w.NBytes()
	for _, x := range []*core.Tensor{w, h} {
		if err := core.TensorSet(x, make([]byte, 10), n-5); err == nil {
			t.Errorf("%s: TensorSet past the end succeeded", x.Buffer.Type().Name())
		}
		if err := core.TensorGet(x, make([]byte, 1), -1); err == nil {
			t.Errorf("%s: TensorGet at -1 succeeded", x.Buffer.Type().Name())
		}
	}
	buf.Free()
	hb.Free()
	for _, x := range []*core.Tensor{w, h} {
		if err := core.TensorSet(x, make([]byte, 4), 0); !errors.Is(err, core.ErrBufferFreed) {
			t.Errorf("TensorSet after Free: %v, want ErrBufferFreed", err)
		}
		if err := core.TensorGet(x, make([]byte, 4), 0); !errors.Is(err, core.ErrBufferFreed) {
			t.Errorf("TensorGet after Free: %v, want ErrBufferFreed", err)
		}
	}
	if err := buf.Clear(0); !errors.Is(err, core.ErrBufferFreed) {
		t.Errorf("Clear after Free: %v", err)
	}
}
