//go:build cgo && !novulkan

package vulkan

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gputest"
	"github.com/tandem-ml/tandem/core"
)

// TestGraphReplay: a graph that runs again unchanged is replayed from its recording (the same
// dispatches counted again) and computes from its inputs' new values; a bad GET_ROWS index set
// between runs is reported by the replay and a good one afterwards is not (the status words are
// zeroed each run); a changed op parameter, encoder setting, another graph in between, the op
// profile and a freed buffer each make it record again, with the right results.
func TestGraphReplay(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor(core.TypeF32, 64, 3)
	w := ctx.NewTensor(core.TypeF32, 64, 5)
	idx := ctx.NewTensor(core.TypeI32, 2)
	y := ctx.MulMat(w, x)    // [5, 3]
	r := ctx.GetRows(y, idx) // [5, 2]
	out := ctx.Scale(r, 2)   // [5, 2]
	buf := gputest.AllocCtx(t, ctx, be.DefaultBufferType())
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)

	xs, ws := make([]float32, 64*3), make([]float32, 64*5)
	for i := range ws {
		ws[i] = float32(i%7) - 3
	}
	set := func(seed float32, rows ...int32) {
		t.Helper()
		for i := range xs {
			xs[i] = float32(i%5)*seed - 1
		}
		if err := core.SetFloat32s(x, xs); err != nil {
			t.Fatal(err)
		}
		if err := core.SetFloat32s(w, ws); err != nil {
			t.Fatal(err)
		}
		if err := core.SetInt32s(idx, rows); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, scale float32, rows ...int32) {
		t.Helper()
		got, err := core.GetFloat32s(out)
		if err != nil {
			t.Fatal(err)
		}
		for j, row := range rows {
			for i := range 5 {
				var dot float32
				for k := range 64 {
					dot += ws[i*64+k] * xs[int(row)*64+k]
				}
				if want := scale * dot; got[j*5+i] != want {
					t.Fatalf("%s: out[%d,%d] = %v, want %v", what, i, j, got[j*5+i], want)
				}
			}
		}
	}
	run := func(what string) error {
		t.Helper()
		return be.GraphCompute(g)
	}
	mustRun := func(what string) {
		t.Helper()
		if err := run(what); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	replays := func() int { return be.sh.Replays() }

	set(1, 2, 0)
	d0 := be.sh.Dispatches()
	mustRun("first run")
	check("first run", 2, 2, 0)
	perRun := be.sh.Dispatches() - d0
	if replays() != 0 || perRun == 0 {
		t.Fatalf("first run: %d replays, %d dispatches", replays(), perRun)
	}

	set(0.5, 1, 1)
	mustRun("second run")
	check("second run", 2, 1, 1)
	if replays() != 1 || be.sh.Dispatches()-d0 != 2*perRun {
		t.Fatalf("second run: %d replays (want 1), %d dispatches (want %d)", replays(), be.sh.Dispatches()-d0, 2*perRun)
	}

	set(0.5, 2, 7)
	err := run("bad index")
	if err == nil || !strings.Contains(err.Error(), "index 7") {
		t.Fatalf("bad index on a replay: error %v", err)
	}
	set(0.25, 0, 2)
	mustRun("good index again")
	check("good index again", 2, 0, 2)
	if replays() != 3 {
		t.Fatalf("%d replays after four runs of one graph, want 3", replays())
	}

	out.SetParamF32(0, 3) // SCALE's factor
	mustRun("new parameter")
	check("new parameter", 3, 0, 2)
	mustRun("new parameter, again")
	if replays() != 4 {
		t.Fatalf("a changed parameter: %d replays, want 3 then 4", replays())
	}

	be.sh.Encoder().UseFlashAttnSplit(false) // any setting of the encoder
	mustRun("new setting")
	be.sh.Encoder().UseFlashAttnSplit(true)
	mustRun("setting back")
	if replays() != 4 {
		t.Fatalf("changed settings: %d replays, want 4", replays())
	}

	g2 := core.NewGraph(core.DefaultGraphSize)
	g2.BuildForwardExpand(y)
	if err := be.GraphCompute(g2); err != nil {
		t.Fatal(err)
	}
	set(2, 1, 0)
	mustRun("after another graph")
	check("after another graph", 3, 1, 0)
	if replays() != 4 {
		t.Fatalf("after another graph: %d replays, want 4", replays())
	}

	be.SetOpProfile(true)
	mustRun("profiled")
	be.SetOpProfile(false)
	if replays() != 4 {
		t.Fatalf("profiled run: %d replays, want 4", replays())
	}
	mustRun("unprofiled")
	mustRun("unprofiled, again")
	if replays() != 5 {
		t.Fatalf("%d replays, want 5", replays())
	}

	if err := buf.Free(); err != nil {
		t.Fatal(err)
	}
	if err := run("freed buffer"); err == nil {
		t.Fatal("a graph whose buffer was freed ran")
	}
	if replays() != 5 {
		t.Fatalf("freed buffer: %d replays, want 5", replays())
	}
}
