package tests

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// devicesUnderTest are every registered device but the CPU (the reference).
func devicesUnderTest() []core.Device {
	var out []core.Device
	for _, d := range core.Devices() {
		if d.Type() != core.DeviceCPU {
			out = append(out, d)
		}
	}
	return out
}

// expectedOps are, per device kind (the device name up to its number), the ops the device must
// run: each one needs at least one case of the table that the device supports and passes, so a
// device that stops claiming an op (or all of them) fails TestOps instead of counting cases as
// unsupported.
var expectedOps = map[string][]core.Op{
	"Vulkan": {
		core.OpAdd, core.OpSub, core.OpMul, core.OpDiv, core.OpAdd1, core.OpScale, core.OpClamp,
		core.OpLeakyRelu, core.OpSqr, core.OpSqrt, core.OpLog, core.OpSin, core.OpCos, core.OpUnary,
		core.OpGLU, core.OpSum, core.OpSumRows, core.OpMean, core.OpArgmax, core.OpArgsort,
		core.OpRepeat, core.OpConcat, core.OpCont, core.OpDup, core.OpCpy, core.OpGetRows,
		core.OpSetRows, core.OpNorm, core.OpRMSNorm, core.OpSoftMax, core.OpDiagMaskInf, core.OpRope,
		core.OpMulMat, core.OpOutProd, core.OpIm2Col, core.OpPool1D, core.OpPool2D, core.OpMulMatID,
		core.OpFlashAttnExt, core.OpAddID, core.OpL2Norm, core.OpCountEqual, core.OpSet, core.OpTopK,
		core.OpArange, core.OpFill, core.OpTri, core.OpDiag, core.OpCumsum, core.OpRoll, core.OpPad,
		core.OpPadReflect1D, core.OpTimestepEmbedding,
		// convolution nodes
		core.OpConvTranspose1D, core.OpIm2Col3D, core.OpCol2Im1D, core.OpConv2D, core.OpConv3D, core.OpConv2DDw,
		core.OpConvTranspose2D,
		// training
		core.OpSiluBack, core.OpRMSNormBack, core.OpSoftMaxBack, core.OpRopeBack, core.OpGetRowsBack,
		core.OpRepeatBack, core.OpDiagMaskZero, core.OpCrossEntropyLoss, core.OpCrossEntropyLossBack,
		core.OpOptStepAdamW, core.OpOptStepSGD,
	},
}

// expectedUnsupported lists, per device kind, the cases of the table the device is expected not to
// support, by exact name, each with the reason. A case the device reports unsupported and that is
// not listed fails TestOps, and so does a listed case that the device runs on a software driver
// (lavapipe, llvmpipe: the devices tests and CI run on, which register as core.DeviceAccel), so the
// list stays exact where it is checked. A real GPU may support more (other features, other shader
// variants): there a listed case that runs is checked like any other and logged, not failed. The
// CPU backend has no list: TestHarnessCPUSelf runs every case on it.
var expectedUnsupported = map[string]map[string]string{
	"Vulkan": gpuUnsupported,
	"GL":     gpuUnsupported,
}

// gpuUnsupported is the list for the Vulkan and GL backends, which share their encoders and
// shaders (backends/internal/gpuops).
var gpuUnsupported = map[string]string{
	"FILL(f16,inplace)": "FILL: the GPU shader (eltwise_index) writes 4-byte elements only",
}

// minPassed is the fewest cases any device under test must pass (a device with no entry in
// expectedOps included): a run of the table where nothing is supported is a failure.
const minPassed = 1

// deviceKind is a device's name without its trailing number ("Vulkan0" → "Vulkan").
func deviceKind(name string) string { return strings.TrimRight(name, "0123456789") }

// TestOps runs the whole op table on every non-CPU device against the CPU reference. It fails on
// any failing case, on a case the device does not support unless expectedUnsupported lists it, on
// a listed case that a software device supports, when a device passes fewer than minPassed cases,
// and when an op the device is expected to run (expectedOps) has no passing case.
func TestOps(t *testing.T) {
	devs := devicesUnderTest()
	if len(devs) == 0 {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but no GPU device is registered: %s", vulkanWhy())
		}
		t.Skipf("no device besides the CPU: %s", vulkanWhy())
	}
	for _, d := range devs {
		be, err := d.NewBackend()
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		software := d.Type() == core.DeviceAccel
		summary, notes, problems := runTable(be, Cases(), expectedUnsupported[deviceKind(be.Name())], software)
		t.Logf("%s (%s, software driver: %v)", summary, d.Description(), software)
		for _, n := range notes {
			t.Log(n)
		}
		for _, p := range problems {
			t.Error(p)
		}
		be.Close()
	}
}

// runTable runs cases on be and returns a summary line, notes to log and every problem: failing
// cases, unsupported cases that unsupported does not list, listed cases that the device supports
// (a problem when strict, a note otherwise), listed names that are no case, fewer than minPassed
// passes, expected ops (by the backend's name) without a passing case.
func runTable(be core.Backend, cases []Case, unsupported map[string]string, strict bool) (summary string, notes, problems []string) {
	passed, failed, skipped := 0, 0, 0
	ran := map[core.Op]bool{}
	names := map[string]bool{}
	for i, c := range cases {
		names[c.Name] = true
		r := Run(c, be, uint64(i+1))
		if r.Note != "" { // a pass only with f32 denormals flushed to zero
			notes = append(notes, r.Note)
		}
		why, listed := unsupported[c.Name]
		switch {
		case !r.Supported && r.Problem == "" && listed:
			skipped++
		case !r.Supported && r.Problem == "":
			problems = append(problems, fmt.Sprintf("%s %s: unsupported, and not in its expectedUnsupported list", be.Name(), c.Name))
		case r.Passed:
			passed++
			for _, op := range r.Ops {
				ran[op] = true
			}
		default:
			failed++
			problems = append(problems, fmt.Sprintf("%s %s: %s", be.Name(), c.Name, r.Problem))
		}
		if r.Supported && listed {
			msg := fmt.Sprintf("%s %s: supported (passed: %v), though listed as unsupported (%s)", be.Name(), c.Name, r.Passed, why)
			if strict {
				problems = append(problems, msg+": take it off the list")
			} else {
				notes = append(notes, msg)
			}
		}
	}
	for name := range unsupported {
		if !names[name] {
			problems = append(problems, fmt.Sprintf("%s: expectedUnsupported lists %q, which is no case of the table", be.Name(), name))
		}
	}
	if passed < minPassed {
		problems = append(problems, fmt.Sprintf("%s passed %d cases, want at least %d: the device runs none of the table", be.Name(), passed, minPassed))
	}
	var missing []string
	for _, op := range expectedOps[deviceKind(be.Name())] {
		if !ran[op] {
			missing = append(missing, op.String())
		}
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%s: no passing case for the ops it is expected to run: %s", be.Name(), strings.Join(missing, ", ")))
	}
	summary = fmt.Sprintf("%s: %d passed, %d failed, %d unsupported as listed, of %d", be.Name(), passed, failed, skipped, len(cases))
	return summary, notes, problems
}

// picky is a device that supports only the ops in ok.
type picky struct {
	core.Device
	ok map[core.Op]bool
}

func (p picky) SupportsOp(t *core.Tensor) bool {
	return t.Op.IsView() || t.Op == core.OpNone || p.ok[t.Op]
}

// pickyBackend is the CPU backend under another name, on a picky device.
type pickyBackend struct {
	*cpu.Backend
	name string
	dev  picky
}

func (p *pickyBackend) Name() string        { return p.name }
func (p *pickyBackend) Device() core.Device { return p.dev }

// TestOps cannot pass a device that runs nothing, that stops running an op it is expected to,
// that stops supporting a case or that supports a case listed as unsupported: runTable reports
// each.
func TestHarnessCatchesUnsupportedDevice(t *testing.T) {
	inner, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	cases := Cases()[:8] // the ADD cases and SUB's first: enough to run ADD and SUB
	all := map[string]string{}
	notAdd := map[string]string{}
	for _, c := range cases {
		all[c.Name] = "test"
		if !strings.HasPrefix(c.Name, "ADD") {
			notAdd[c.Name] = "test"
		}
	}
	if len(notAdd) == 0 || len(notAdd) == len(cases) {
		t.Fatalf("the first cases %d are not ADD's then others'", len(cases))
	}
	none := &pickyBackend{inner, "Other0", picky{inner.Device(), nil}}
	if _, _, problems := runTable(none, cases, all, true); len(problems) != 1 || !strings.Contains(problems[0], "passed 0 cases") {
		t.Errorf("a device that supports nothing: problems %q, want one saying it passed 0 cases", problems)
	}
	addOnly := &pickyBackend{inner, "Vulkan7", picky{inner.Device(), map[core.Op]bool{core.OpAdd: true}}}
	_, _, problems := runTable(addOnly, cases, notAdd, true)
	if len(problems) != 1 || !strings.Contains(problems[0], "expected to run: SUB, MUL,") || strings.Contains(problems[0], " ADD,") {
		t.Errorf("a Vulkan device that runs ADD only: problems %q, want one listing SUB, MUL, ... but not ADD", problems)
	}

	// Unsupported cases must be listed: without a list every case of the device that supports
	// nothing is a problem, besides its 0 passes.
	_, _, problems = runTable(none, cases, nil, true)
	if len(problems) != len(cases)+1 {
		t.Errorf("a device that supports nothing, no list: %d problems %q, want %d", len(problems), problems, len(cases)+1)
	}
	for i, p := range problems[:min(len(problems), len(cases))] {
		if !strings.Contains(p, cases[i].Name+": unsupported, and not in its expectedUnsupported list") {
			t.Errorf("problem %d = %q, want one naming %s as unlisted", i, p, cases[i].Name)
		}
	}

	// A listed case that runs: a problem on a software device, a note elsewhere.
	addSub := &pickyBackend{inner, "Other3", picky{inner.Device(), map[core.Op]bool{core.OpAdd: true, core.OpSub: true}}}
	listed := map[string]string{cases[0].Name: "test reason", "NO SUCH CASE": "stale"}
	_, notes, problems := runTable(addSub, cases, listed, true)
	if len(notes) != 0 || len(problems) != 2 || !strings.Contains(problems[0], cases[0].Name+": supported (passed: true), though listed as unsupported (test reason): take it off the list") ||
		!strings.Contains(problems[1], `lists "NO SUCH CASE", which is no case`) {
		t.Errorf("software device, a listed case runs: notes %q, problems %q, want the case and the stale name as problems", notes, problems)
	}
	_, notes, problems = runTable(addSub, cases, listed, false)
	if len(notes) != 1 || !strings.Contains(notes[0], cases[0].Name+": supported (passed: true)") || len(problems) != 1 {
		t.Errorf("other device, a listed case runs: notes %q, problems %q, want the case as a note and only the stale name as a problem", notes, problems)
	}
}

// The harness itself, on a second CPU backend: everything must pass.
func TestHarnessCPUSelf(t *testing.T) {
	be, err := cpu.New(cpu.Options{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	for i, c := range Cases() {
		r := Run(c, be, uint64(i+1))
		if !r.Supported || !r.Passed {
			t.Errorf("%s: supported %v: %s", c.Name, r.Supported, r.Problem)
		}
	}
}

// liar wraps the CPU backend and damages its results, to show the harness catches it.
type liar struct {
	*cpu.Backend
	damage func(g *core.Graph)
}

func (l *liar) GraphCompute(g *core.Graph) error {
	if err := l.Backend.GraphCompute(g); err != nil {
		return err
	}
	l.damage(g)
	return nil
}

func TestHarnessCatchesWrongResults(t *testing.T) {
	inner, _ := cpu.New(cpu.Options{Threads: 1})
	defer inner.Close()
	c := Case{Name: "ADD", Build: func(ctx *core.Context) *core.Tensor {
		return ctx.Add(ctx.NewTensor(core.TypeF32, 5, 7), ctx.NewTensor(core.TypeF32, 5, 7))
	}}
	cases := map[string]func(g *core.Graph){
		"wrong value": func(g *core.Graph) { g.Node(-1).Float32s()[3] += 0.5 },
		"NaN":         func(g *core.Graph) { g.Node(-1).Float32s()[0] = float32(nan()) },
		"out of bounds": func(g *core.Graph) {
			n := g.Node(-1)
			buf := n.Buffer.(core.HostBuffer).Bytes()
			buf[n.Offset+n.NBytes()+1] ^= 0xff
		},
	}
	for name, damage := range cases {
		r := Run(c, &liar{inner, damage}, 1)
		if r.Passed {
			t.Errorf("%s: the harness did not notice", name)
		} else if name == "out of bounds" && !strings.Contains(r.Problem, "sentinel") {
			t.Errorf("%s: reported %q, want a sentinel failure", name, r.Problem)
		}
	}
	if r := Run(c, &liar{inner, func(*core.Graph) {}}, 1); !r.Passed {
		t.Fatalf("honest run failed: %s", r.Problem)
	}
}

func nan() float64 { var z float64; return z / z }

// TestBadIndicesAgree: GET_ROWS and SET_ROWS with an index past the end or negative fail on every
// device with the CPU's error (from the op's name on: the index, its position, the limit), so
// the outcome does not depend on where the scheduler places the node.
func TestBadIndicesAgree(t *testing.T) {
	devs := devicesUnderTest()
	if len(devs) == 0 {
		t.Skipf("no device besides the CPU: %s", vulkanWhy())
	}
	cases := []struct {
		op  string
		idx []int32
		c   Case
	}{
		{"GET_ROWS", []int32{0, 2, 5, 1}, Case{Build: func(c *core.Context) *core.Tensor {
			return c.GetRows(c.NewTensor(core.TypeF32, 8, 3), c.NewTensor(core.TypeI32, 4))
		}}},
		{"GET_ROWS", []int32{1, -2, 0, 9}, Case{Build: func(c *core.Context) *core.Tensor {
			return c.GetRows(c.NewTensor(core.TypeQ8_0, 32, 3), c.NewTensor(core.TypeI32, 4))
		}}},
		{"SET_ROWS", []int32{0, 1, 3, -1}, Case{Build: func(c *core.Context) *core.Tensor {
			return c.SetRows(c.NewTensor(core.TypeF32, 32, 3), c.NewTensor(core.TypeF32, 32, 4), c.NewTensor(core.TypeI32, 4))
		}}},
		{"MUL_MAT_ID", []int32{0, 3, 1, 4, 2, -1}, Case{Build: func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor(core.TypeQ8_0, 32, 3, 4), c.NewTensor(core.TypeF32, 32, 1, 3), c.NewTensor(core.TypeI32, 2, 3))
		}}},
	}
	ref, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	run := func(c Case, be core.Backend, idx []int32) error {
		in, err := newInstance(c, be.DefaultBufferType())
		if err != nil {
			t.Fatal(err)
		}
		defer in.free()
		for _, l := range in.inputs {
			var err error
			if l.Type == core.TypeI32 {
				err = core.SetInt32s(l, idx)
			} else {
				err = core.SetFloat32s(l, make([]float32, l.NElements()))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		return be.GraphCompute(in.g)
	}
	part := func(err error, op string) string {
		if err == nil {
			return "<nil>"
		}
		// Unnamed tensors print with their context's number (c3#1), which differs between the
		// two runs' contexts: compare without it.
		s := ctxNumber.ReplaceAllString(err.Error(), "c#")
		if i := strings.Index(s, op+": "); i >= 0 {
			return s[i:]
		}
		return s
	}
	for _, d := range devs {
		be, err := d.NewBackend()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			want := run(c.c, ref, c.idx)
			got := run(c.c, be, c.idx)
			if want == nil || !strings.Contains(want.Error(), "out of range") {
				t.Fatalf("CPU: %v, want an out-of-range error", want)
			}
			if part(got, c.op) != part(want, c.op) {
				t.Errorf("%s %s %v:\n got  %v\n want %v", d.Name(), c.op, c.idx, got, want)
			}
		}
		be.Close()
	}
}

// ctxNumber matches the context number in an unnamed tensor's name ("c3#" in "c3#1").
var ctxNumber = regexp.MustCompile(`\bc[0-9]+#`)

// TestCompareNonFinite: compare accepts the same non-finite pattern and rejects any other.
func TestCompareNonFinite(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	ok := [][2][]float32{
		{{1, nan, inf, -inf}, {1, nan, inf, -inf}},
		{{1, math.MaxFloat32}, {1, inf}},
	}
	for _, c := range ok {
		if _, p := Compare(c[0], c[1]); p != "" {
			t.Errorf("Compare(%v, %v): %s", c[0], c[1], p)
		}
	}
	bad := [][2][]float32{
		{{1, 2}, {1, nan}},
		{{1, nan}, {1, 2}},
		{{inf}, {-inf}},
		{{inf}, {nan}},
		{{3}, {inf}},
		{{1, 2}, {1, 2, 3}},
	}
	for _, c := range bad {
		if _, p := Compare(c[0], c[1]); p == "" {
			t.Errorf("Compare(%v, %v) accepted", c[0], c[1])
		}
	}
	if e, _ := Compare([]float32{1, 2, nan}, []float32{1, 2.5, nan}); math.Abs(e-0.25/7.25) > 1e-12 {
		t.Errorf("NMSE of the finite rest = %v, want 0.25/7.25", e)
	}
}

// TestBadIndexThroughScheduler: a GET_ROWS with an index past the end fails through the
// scheduler with the CPU's words whether the node runs on a device or on the CPU.
func TestBadIndexThroughScheduler(t *testing.T) {
	devs := devicesUnderTest()
	if len(devs) == 0 {
		t.Skipf("no device besides the CPU: %s", vulkanWhy())
	}
	cpuBe, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cpuBe.Close()
	dev, err := devs[0].NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	run := func(on core.Backend) error {
		s, err := scheduler.New([]core.Backend{dev, cpuBe}, scheduler.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		a := ctx.NewTensor2D(core.TypeF32, 8, 3).SetName("a")
		idx := ctx.NewTensor1D(core.TypeI32, 3).SetName("idx")
		out := ctx.GetRows(a, idx).SetName("rows")
		g := core.NewGraph(16)
		g.BuildForwardExpand(out)
		if err := s.SetTensorBackend(out, on); err != nil {
			t.Fatal(err)
		}
		if err := s.AllocGraph(g); err != nil {
			t.Fatal(err)
		}
		if got := s.TensorBackend(out); got != on {
			t.Fatalf("GET_ROWS placed on %v, want %s", got, on.Name())
		}
		if err := core.SetFloat32s(a, make([]float32, 24)); err != nil {
			t.Fatal(err)
		}
		if err := core.SetInt32s(idx, []int32{0, 7, 1}); err != nil {
			t.Fatal(err)
		}
		return s.GraphCompute(g)
	}
	onDev, onCPU := run(dev), run(cpuBe)
	const want = "GET_ROWS: index 7 at [1,0,0] of idx(NONE i32 [3,1,1,1]) is out of range: a(NONE f32 [8,3,1,1]) has 3 rows"
	for _, err := range []error{onDev, onCPU} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors on %s: %v\non CPU: %v\nwant both to contain %q", dev.Name(), onDev, onCPU, want)
			break
		}
	}
}
