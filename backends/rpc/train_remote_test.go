package rpc_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/opt"
	"github.com/tandem-ml/tandem/tests"
)

// trainOps are the training ops that travel with ggml's ids (issue 22).
var trainOps = map[core.Op]bool{core.OpAcc: true, core.OpRepeatBack: true, core.OpSiluBack: true,
	core.OpRMSNormBack: true, core.OpGetRowsBack: true, core.OpDiagMaskZero: true, core.OpSoftMaxBack: true,
	core.OpRopeBack: true, core.OpIm2ColBack: true, core.OpPool2DBack: true, core.OpCrossEntropyLoss: true,
	core.OpCrossEntropyLossBack: true, core.OpOptStepAdamW: true, core.OpOptStepSGD: true}

// trainExtraCases cover the training ops the tests/ table has no case of (ACC, IM2COL_BACK,
// POOL_2D_BACK) and layouts it lacks (batched GET_ROWS_BACK, in-place variants).
func trainExtraCases() []tests.Case {
	f32 := core.TypeF32
	idx := func(rows float32) func(t *core.Tensor, r *rand.Rand) error {
		return func(t *core.Tensor, r *rand.Rand) error {
			if t.Name == "idx" {
				return tests.Uniform(t, r, 0, rows)
			}
			return tests.Uniform(t, r, -1, 1)
		}
	}
	var cs []tests.Case
	add := func(name string, build func(c *core.Context) *core.Tensor) {
		cs = append(cs, tests.Case{Name: "rpc-train/" + name, Build: build})
	}
	add("ACC(rows)", func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 8, 6, 3)
		return c.Acc(a, c.NewTensor(f32, 5, 2, 3), a.Nb[1], a.Nb[2], a.Nb[3], 3*a.Nb[0]+2*a.Nb[1])
	})
	add("ACC(1d at an offset)", func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 7, 5)
		return c.Acc(a, c.NewTensor(f32, 9), a.Nb[1], a.Nb[2], a.Nb[3], 11*4)
	})
	add("ACC(transposed b)", func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 6, 6)
		return c.Acc(a, c.Transpose(c.NewTensor(f32, 4, 3)), a.Nb[1], a.Nb[2], a.Nb[3], 4)
	})
	for _, is2D := range []bool{false, true} {
		is2D := is2D
		add(fmt.Sprintf("IM2COL_BACK(2d=%v)", is2D), func(c *core.Context) *core.Tensor {
			if is2D {
				ker := c.NewTensor(f32, 3, 2, 3, 4)
				p := core.Im2ColParams{S0: 2, S1: 1, P0: 1, P1: 1, D0: 1, D1: 2, Is2D: true}
				img := [4]int64{9, 7, 3, 2}
				probe := core.NewContext(core.ContextParams{NoAlloc: true})
				im := probe.Im2Col(ker, probe.NewTensor(f32, img[:]...), p, f32)
				return c.Im2ColBack(c.NewTensor(f32, im.Ne[:]...), ker, img, p)
			}
			ker := c.NewTensor(f32, 3, 4, 5)
			p := core.Im2ColParams{S0: 2, P0: 1, D0: 2}
			img := [4]int64{11, 4, 2, 1}
			probe := core.NewContext(core.ContextParams{NoAlloc: true})
			im := probe.Im2Col(ker, probe.NewTensor(f32, img[:3]...), p, f32)
			return c.Im2ColBack(c.NewTensor(f32, im.Ne[:]...), ker, img, p)
		})
	}
	for _, op := range []core.PoolOp{core.PoolMax, core.PoolAvg} {
		op := op
		add(fmt.Sprintf("POOL_2D_BACK(op=%d)", op), func(c *core.Context) *core.Tensor {
			x := c.NewTensor(f32, 9, 7, 3)
			probe := core.NewContext(core.ContextParams{NoAlloc: true})
			pf := probe.Pool2D(x, op, 3, 2, 2, 2, 1, 1)
			return c.Pool2DBack(c.NewTensor(f32, pf.Ne[:]...), x, op, 3, 2, 2, 2, 1, 1)
		})
	}
	cs = append(cs, tests.Case{Name: "rpc-train/GET_ROWS_BACK(batched)", Init: idx(5), Build: func(c *core.Context) *core.Tensor {
		return c.GetRowsBack(c.NewTensor(f32, 6, 8, 2, 3), c.NewTensor(core.TypeI32, 8, 2, 3).SetName("idx"), c.NewTensor(f32, 6, 5, 2, 3))
	}})
	add("DIAG_MASK_ZERO(n_past=0)", func(c *core.Context) *core.Tensor {
		return c.DiagMaskZero(c.NewTensor(f32, 6, 6, 2), 0)
	})
	add("REPEAT_BACK(strided)", func(c *core.Context) *core.Tensor {
		return c.RepeatBack(c.Transpose(c.NewTensor(f32, 6, 8)), c.NewTensor(f32, 4, 3))
	})
	return cs
}

// TestRemoteTrainOps runs every case of tests/ whose graph holds a training op, and the cases of
// trainExtraCases, on a tandem server over loopback against the local CPU result. Each training op
// must have run in at least one case.
func TestRemoteTrainOps(t *testing.T) {
	addr, _ := startServer(t, 1)
	c := dial(t, addr)
	be, err := c.Devices()[0].NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	ran := map[core.Op]bool{}
	cases := trainExtraCases()
	for _, tc := range tests.Cases() {
		for _, op := range caseOps(t, tc) {
			if trainOps[op] {
				cases = append(cases, tc)
				break
			}
		}
	}
	for i, tc := range cases {
		r := tests.Run(tc, be, uint64(i+1))
		switch {
		case r.Passed:
			for _, op := range r.Ops {
				ran[op] = true
			}
		case !r.Supported && r.Problem == "":
			t.Errorf("%s: unsupported", tc.Name)
		default:
			t.Errorf("%s: %s", tc.Name, r.Problem)
		}
		if err := c.Err(); err != nil {
			t.Fatalf("after %s: %v", tc.Name, err)
		}
	}
	for op := range trainOps {
		if !ran[op] {
			t.Errorf("%v: no case ran it remotely", op)
		}
	}
	t.Logf("%d training cases passed remotely", len(cases))
}

// computeOnly is a CPU backend whose device runs no op, so that a scheduler given it last must put
// every computing node on the backends before it (it still holds the inputs).
type computeOnly struct{ core.Backend }

func (b computeOnly) Device() core.Device { return noOpsDevice{b.Backend.Device()} }

type noOpsDevice struct{ core.Device }

func (noOpsDevice) SupportsOp(*core.Tensor) bool { return false }

// trainRun trains a tiny classifier for steps optimizer steps on a scheduler of bes (a CPU backend
// last), its parameters on bes[0], and returns the loss of every batch and the final weights.
func trainRun(t *testing.T, bes []core.Backend, o opt.Optimizer, accumulate, steps int) ([]float32, []float32) {
	t.Helper()
	const nIn, dim, hid, classes = 6, 16, 24, 5
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	w0 := c.NewTensor2D(core.TypeF32, nIn, dim).SetName("w0")
	gamma := c.NewTensor1D(core.TypeF32, dim).SetName("norm")
	w1 := c.NewTensor2D(core.TypeF32, dim, hid).SetName("w1")
	b1 := c.NewTensor1D(core.TypeF32, hid).SetName("b1")
	w2 := c.NewTensor2D(core.TypeF32, hid, classes).SetName("w2")
	params := []*core.Tensor{w0, gamma, w1, b1, w2}
	buf, err := alloc.AllocCtxTensors(c, bes[0])
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	buf.SetUsage(core.BufferUsageWeights)
	for i, w := range params {
		v := make([]float32, w.NElements())
		for k := range v {
			v[k] = float32(math.Sin(float64(k*7+i*3))) * 0.3
			if w == gamma {
				v[k] += 1
			}
		}
		if err := core.SetFloat32s(w, v); err != nil {
			t.Fatal(err)
		}
	}
	model := opt.Model{NIn: nIn, NOut: classes, Params: params,
		Build: func(ctx *core.Context, x *core.Tensor) *core.Tensor {
			h := ctx.Mul(ctx.RMSNorm(ctx.MulMat(w0, x), 1e-5), gamma) // [dim, batch]; the broadcast gives REPEAT_BACK
			h = ctx.Silu(ctx.Add(ctx.MulMat(w1, h), b1))              // [hid, batch]
			return ctx.SoftMaxExt(ctx.MulMat(w2, h), nil, 2, 0)       // probabilities: SOFT_MAX_BACK runs
		}}
	h := opt.DefaultHyper()
	h.Alpha, h.WD = 0.02, 0.01
	if o == opt.SGD {
		h.Alpha = 0.5
	}
	tr, err := opt.New(opt.Config{Backends: bes, Model: model, BatchSize: 4,
		Loss: opt.LossCrossEntropy, Optimizer: o, Hyper: h, Accumulate: accumulate})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var data, labels []float32
	for i := range 16 {
		data = append(data, float32(i%5)*0.5, float32(i%3), 1, float32(i%2), float32(i%4)*-0.25, float32(i%7)*0.1)
		l := make([]float32, classes)
		l[(i*2)%classes] = 1
		labels = append(labels, l...)
	}
	ds, err := opt.NewDataset(data, nIn, labels, classes)
	if err != nil {
		t.Fatal(err)
	}
	var losses []float32
	for i := range steps * max(accumulate, 1) {
		l, err := tr.Step(ds, i%4)
		if err != nil {
			t.Fatal(err)
		}
		losses = append(losses, l)
	}
	var ws []float32
	for _, w := range params {
		v, err := core.GetFloat32s(w)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, v...)
	}
	return losses, ws
}

// A tiny model trains with its parameters and all of its compute (forward, backward, loss and
// optimizer steps) on an RPC device served in-process by tandem's server, and gets the losses and
// weights of the same training run on the local CPU.
func TestRemoteTraining(t *testing.T) {
	addr, _ := startServer(t, 1)
	c := dial(t, addr)
	rbe, err := c.Devices()[0].NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	host, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	local, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	for _, tc := range []struct {
		name       string
		o          opt.Optimizer
		accumulate int
	}{{"AdamW", opt.AdamW, 1}, {"SGD", opt.SGD, 1}, {"AdamW,accumulate 2", opt.AdamW, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			const steps = 6
			want, wantW := trainRun(t, []core.Backend{local}, tc.o, tc.accumulate, steps)
			got, gotW := trainRun(t, []core.Backend{rbe, computeOnly{host}}, tc.o, tc.accumulate, steps)
			if err := c.Err(); err != nil {
				t.Fatal(err)
			}
			if again := want[4]; again == want[0] || math.IsNaN(float64(again)) { // batch 0 after an optimizer step
				t.Errorf("local losses %v: training changed nothing", want)
			}
			for i := range want {
				if d := math.Abs(float64(got[i] - want[i])); !(d <= 1e-6*math.Abs(float64(want[i]))) {
					t.Errorf("step %d: loss %v remotely, %v locally", i+1, got[i], want[i])
				}
			}
			for i := range wantW {
				if d := math.Abs(float64(gotW[i] - wantW[i])); !(d <= 1e-6) {
					t.Fatalf("weight %d: %v remotely, %v locally", i, gotW[i], wantW[i])
				}
			}
			t.Logf("losses %v", got)
		})
	}
}
