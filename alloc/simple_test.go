package alloc_test

import (
	"math"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// Seed 002 (ggml's simple-backend example): the model's tensors live in a NoAlloc context placed
// by AllocCtxTensors, data goes in with TensorSet, a graph allocator reserves the compute buffer on
// a worst-case graph and then allocates each freshly built graph, the CPU backend computes it and
// TensorGet reads the result.
func TestSeed002SimpleBackend(t *testing.T) {
	const rowsA, colsA, rowsB, colsB = 4, 2, 3, 2
	matrixA := []float32{2, 8, 5, 1, 4, 2, 8, 6}
	matrixB := []float32{10, 5, 9, 9, 5, 4}
	want := []float32{60, 55, 50, 110, 90, 54, 54, 126, 42, 29, 28, 64}

	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()

	// the model: metadata in a NoAlloc context, memory from the backend's buffer type
	mctx := core.NewContext(core.ContextParams{MemSize: 2 * core.TensorOverhead, NoAlloc: true})
	a := mctx.NewTensor2D(core.TypeF32, colsA, rowsA)
	b := mctx.NewTensor2D(core.TypeF32, colsB, rowsB)
	buf, err := alloc.AllocCtxTensors(mctx, be)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	if a.Buffer != buf || b.Buffer != buf {
		t.Fatalf("model tensors not in the returned buffer")
	}
	if err := core.TensorSet(a, f32Bytes(matrixA), 0); err != nil {
		t.Fatal(err)
	}
	if err := core.TensorSet(b, f32Bytes(matrixB), 0); err != nil {
		t.Fatal(err)
	}

	buildGraph := func() *core.Graph {
		ctx0 := core.NewContext(core.ContextParams{MemSize: core.TensorOverhead*core.DefaultGraphSize + core.GraphOverhead, NoAlloc: true})
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(ctx0.MulMat(a, b)) // result = a·bᵀ
		return g
	}

	allocr := alloc.NewGraphAllocator(be.DefaultBufferType())
	defer allocr.Free()
	if err := allocr.Reserve(buildGraph()); err != nil {
		t.Fatal(err)
	}
	size := allocr.BufferSize(0)
	t.Logf("compute buffer size: %.4f KB", float64(size)/1024)
	if size != 64 { // 4x3 f32 = 48 bytes, rounded to the 32-byte alignment
		t.Errorf("compute buffer size %d, want 64", size)
	}
	if u := allocr.Buffers(0)[0].Usage(); u != core.BufferUsageCompute {
		t.Errorf("compute buffer usage %v, want compute", u)
	}

	for round := 0; round < 2; round++ {
		gf := buildGraph()
		if err := allocr.AllocGraph(gf); err != nil {
			t.Fatal(err)
		}
		if allocr.Replanned() {
			t.Errorf("round %d: a rebuilt graph of the same structure was re-planned", round)
		}
		if err := be.GraphCompute(gf); err != nil {
			t.Fatal(err)
		}
		result := gf.Node(-1)
		if result.Ne[0] != rowsA || result.Ne[1] != rowsB {
			t.Fatalf("result shape %v, want [%d %d 1 1]", result.Ne, rowsA, rowsB)
		}
		out := make([]byte, result.NBytes())
		if err := core.TensorGet(result, out, 0); err != nil {
			t.Fatal(err)
		}
		got := bytesF32(out)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("round %d: mul mat (%d x %d) (transposed result) = %v, want %v", round, result.Ne[0], result.Ne[1], got, want)
			}
		}
	}
	if allocr.Replans() != 1 {
		t.Errorf("%d plans, want 1", allocr.Replans())
	}
}

func f32Bytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		bits := math.Float32bits(x)
		out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
	}
	return out
}

func bytesF32(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24)
	}
	return out
}
