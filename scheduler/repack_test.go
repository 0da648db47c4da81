package scheduler_test

import (
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// A weight repacked on the CPU (CPU_REPACK) decides placement like host weights: its MUL_MAT runs
// on the CPU. Pinned to another backend, which cannot read CPU_REPACK memory, the MUL_MAT gets a
// standard copy of the weight (through TensorGet) and computes the same values.
func TestRepackedWeightOnAnotherBackend(t *testing.T) {
	const k, m, n = 64, 24, 3
	for _, pin := range []bool{false, true} {
		r := newRig(t, newFakeGPU("FakeGPU", core.OpMulMat), scheduler.Options{})
		wctx := core.NewContext(core.ContextParams{NoAlloc: true})
		w := wctx.NewTensor2D(core.TypeQ4_0, k, m).SetName("w")
		wbuf := weightsOn(t, wctx, core.HostBufferType())
		defer wbuf.Free()
		if w.Buffer.Type() != cpu.RepackBufferType() {
			t.Fatalf("weight placed in %s, want CPU_REPACK", w.Buffer.Type().Name())
		}
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		x := ctx.NewTensor2D(core.TypeF32, k, n).SetName("x").SetInput()
		y := ctx.MulMat(w, x).SetName("y").SetOutput()
		out := ctx.Silu(y).SetName("out").SetOutput()
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(out)
		if pin {
			if err := r.s.SetTensorBackend(y, r.gpu); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.s.AllocGraph(g); err != nil {
			t.Fatal(err)
		}
		fillPattern(t, x, 99)
		if err := r.s.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		wantBE := "CPU"
		if pin {
			wantBE = "FakeGPU"
		}
		if got := backendName(r.s, y); got != wantBE {
			t.Fatalf("pinned %v: MUL_MAT ran on %s, want %s", pin, got, wantBE)
		}
		if pin && (r.gpu.nodes == 0 || r.s.NCopies() == 0) {
			t.Fatalf("pinned: %d nodes on the fake GPU, %d copies", r.gpu.nodes, r.s.NCopies())
		}
		wv, err := core.GetFloat32s(w) // dequantized standard bytes
		if err != nil {
			t.Fatal(err)
		}
		xv, _ := core.GetFloat32s(x)
		got, err := core.GetFloat32s(y)
		if err != nil {
			t.Fatal(err)
		}
		var num, den float64
		for j := 0; j < n; j++ {
			for i := 0; i < m; i++ {
				var s float64
				for e := 0; e < k; e++ {
					s += float64(wv[i*k+e]) * float64(xv[j*k+e])
				}
				d := float64(got[j*m+i]) - s
				num += d * d
				den += s * s
			}
		}
		if den == 0 || num/den > 5e-4 {
			t.Fatalf("pinned %v: NMSE %g against f64 dots of the dequantized weight", pin, num/den)
		}
	}
}
