package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// trainMLP is a two-layer perceptron training step built the way an optimizer drives it: weights,
// moments, data and optimizer parameters in a NoAlloc context placed once in a persistent buffer;
// forward + backward + AdamW steps in a compute context placed by the graph allocator.
type trainMLP struct {
	params, moments  []*core.Tensor
	x, labels, adamw *core.Tensor
	loss, logits     *core.Tensor
	gb               *core.Graph
	ga               *alloc.GraphAllocator
	be               *cpu.Backend
}

func newTrainMLP(t testing.TB, nIn, nHidden, nOut, batch int64, accumulate bool) *trainMLP {
	t.Helper()
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	m := &trainMLP{be: be}
	w1 := wctx.NewTensor2D(core.TypeF32, nIn, nHidden).SetName("w1")
	b1 := wctx.NewTensor1D(core.TypeF32, nHidden).SetName("b1")
	w2 := wctx.NewTensor2D(core.TypeF32, nHidden, nOut).SetName("w2")
	b2 := wctx.NewTensor1D(core.TypeF32, nOut).SetName("b2")
	m.params = []*core.Tensor{w1, b1, w2, b2}
	for _, p := range m.params {
		if err := wctx.SetParam(p); err != nil {
			t.Fatal(err)
		}
		m.moments = append(m.moments, wctx.NewTensorLike(p), wctx.NewTensorLike(p))
	}
	m.x = wctx.NewTensor2D(core.TypeF32, nIn, batch).SetInput()
	m.labels = wctx.NewTensor2D(core.TypeF32, nOut, batch).SetInput()
	m.adamw = wctx.NewTensor1D(core.TypeF32, core.AdamWNParams).SetInput()

	cctx := core.NewContext(core.ContextParams{NoAlloc: true})
	h := cctx.Relu(cctx.Add(cctx.MulMat(w1, m.x), b1))
	m.logits = cctx.Add(cctx.MulMat(w2, h), b2).SetOutput()
	m.loss = cctx.CrossEntropyLoss(m.logits, m.labels).SetOutput()
	if err := cctx.SetLoss(m.loss); err != nil {
		t.Fatal(err)
	}
	gf := core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(m.loss)
	var opts []core.BackwardOptions
	if accumulate {
		opts = append(opts, core.BackwardOptions{Accumulate: true, AccContext: wctx})
	}
	gb, err := core.BuildBackward(cctx, gf, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range m.params {
		gb.BuildForwardExpand(cctx.OptStepAdamW(p, gb.Grad(p), m.moments[2*i], m.moments[2*i+1], m.adamw))
	}
	if err := gb.Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := alloc.AllocCtxTensors(wctx, be); err != nil {
		t.Fatal(err)
	}
	m.gb = gb
	m.ga = alloc.NewGraphAllocator(be.DefaultBufferType())
	if err := m.ga.AllocGraph(gb); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for _, p := range m.params {
		d := p.Float32s()
		scale := 1 / math.Sqrt(float64(p.Ne[0]))
		for i := range d {
			d[i] = float32((rng.Float64()*2 - 1) * scale)
		}
	}
	for _, mm := range m.moments {
		clear(mm.Float32s())
	}
	for _, acc := range gb.GradAccs() {
		clear(acc.Float32s())
	}
	return m
}

// step sets the AdamW parameters for step it (from 1) and runs one training step.
func (m *trainMLP) step(it int) error { return m.stepLR(it, 0.05) }

// stepLR is step with learning rate alpha.
func (m *trainMLP) stepLR(it int, alpha float32) error {
	const beta1, beta2 = 0.9, 0.999
	p := m.adamw.Float32s()
	p[0], p[1], p[2], p[3], p[4] = alpha, beta1, beta2, 1e-8, 0
	p[5] = float32(1 / (1 - math.Pow(beta1, float64(it))))
	p[6] = float32(1 / (1 - math.Pow(beta2, float64(it))))
	if err := m.ga.AllocGraph(m.gb); err != nil {
		return err
	}
	return m.be.GraphCompute(m.gb)
}

// A two-layer MLP learns a fixed 3-class problem through the graph allocator; the plan is made
// once.
func TestTrainMLPThroughAllocator(t *testing.T) {
	const nIn, nOut, batch = 4, 3, 12
	m := newTrainMLP(t, nIn, 16, nOut, batch, false)
	rng := rand.New(rand.NewPCG(1, 2))
	x, y := m.x.Float32s(), m.labels.Float32s()
	clear(y)
	for i := 0; i < batch; i++ {
		c := i % nOut
		for j := 0; j < nIn; j++ {
			x[i*nIn+j] = float32(rng.NormFloat64()*0.3) + float32(c-1)*float32(j%2*2-1)
		}
		y[i*nOut+c] = 1
	}
	first := float32(0)
	for it := 1; it <= 150; it++ {
		if err := m.step(it); err != nil {
			t.Fatal(err)
		}
		if it == 1 {
			first = m.loss.Float32s()[0]
			if math.Abs(float64(first)-math.Log(3)) > 0.6 {
				t.Fatalf("initial loss %g, want about ln 3", first)
			}
		}
	}
	last := m.loss.Float32s()[0]
	if !(last < 0.05) {
		t.Fatalf("loss %g after 150 AdamW steps (first %g), want < 0.05", last, first)
	}
	if r := m.ga.Replans(); r > 1 {
		t.Errorf("graph allocator planned %d times, want 1", r)
	}
}

// Micro-batches with gradient accumulators: two runs of one graph without an optimizer step give
// twice the gradient of one run.
func TestAccumulatedGradientsThroughAllocator(t *testing.T) {
	m := newTrainMLP(t, 3, 5, 2, 4, true)
	// drop the optimizer steps: compute gradients only
	nodes := m.gb.Nodes()
	var keep []*core.Tensor
	for _, n := range nodes {
		if n.Op != core.OpOptStepAdamW {
			keep = append(keep, n)
		}
	}
	g := core.NewGraphFromLists(keep, m.gb.Leafs())
	for i := range m.x.Float32s() {
		m.x.Float32s()[i] = float32(math.Sin(float64(i)))
	}
	clear(m.labels.Float32s())
	for i := 0; i < 4; i++ {
		m.labels.Float32s()[i*2+i%2] = 1
	}
	ga := alloc.NewGraphAllocator(m.be.DefaultBufferType())
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if err := m.be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	one := make([][]float32, len(m.params))
	for i, p := range m.params {
		one[i] = append([]float32(nil), m.gb.GradAcc(p).Float32s()...)
	}
	if err := m.be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	nonzero := false
	for i, p := range m.params {
		for j, v := range m.gb.GradAcc(p).Float32s() {
			if math.Abs(float64(v-2*one[i][j])) > 1e-6*math.Max(1, math.Abs(float64(v))) {
				t.Fatalf("%v: accumulated %g after two runs, one run gave %g", p, v, one[i][j])
			}
			nonzero = nonzero || v != 0
		}
	}
	if !nonzero {
		t.Fatal("all gradients are zero")
	}
}

// After the first step, a training step (allocator + compute) allocates nothing on the heap.
func TestTrainStepAllocations(t *testing.T) {
	m := newTrainMLP(t, 4, 8, 3, 6, false)
	if err := m.step(1); err != nil {
		t.Fatal(err)
	}
	it := 2
	allocs := testing.AllocsPerRun(20, func() {
		if err := m.step(it); err != nil {
			t.Fatal(err)
		}
		it++
	})
	t.Logf("heap allocations per training step: %g", allocs)
	if allocs > 0 {
		t.Errorf("a training step allocates %g times, want 0", allocs)
	}
}

func BenchmarkTrainStepMLP(b *testing.B) {
	m := newTrainMLP(b, 32, 64, 10, 32, false)
	if err := m.step(1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.step(i + 2); err != nil {
			b.Fatal(err)
		}
	}
}

// A 2-layer MLP learns a synthetic 3-class spiral (fixed seed) to ≥ 95 % training accuracy, full
// batch, AdamW, on the CPU.
func TestTrainSpiral(t *testing.T) {
	const perClass, classes = 60, 3
	const n = perClass * classes
	m := newTrainMLP(t, 2, 48, classes, n, false)
	rng := rand.New(rand.NewPCG(2024, 11))
	x, y := m.x.Float32s(), m.labels.Float32s()
	clear(y)
	for c := 0; c < classes; c++ {
		for i := 0; i < perClass; i++ {
			r := float64(i) / perClass
			th := float64(c)*2*math.Pi/classes + 4*r + rng.NormFloat64()*0.1
			k := c*perClass + i
			x[2*k], x[2*k+1] = float32(r*math.Cos(th)), float32(r*math.Sin(th))
			y[classes*k+c] = 1
		}
	}
	acc := 0.0
	for it := 1; it <= 1500; it++ {
		if err := m.stepLR(it, 0.02); err != nil {
			t.Fatal(err)
		}
		if it%100 == 0 {
			// logits are those of the forward pass of this step (before its update)
			lg := m.logits.Float32s()
			correct := 0
			for k := 0; k < n; k++ {
				best := 0
				for c := 1; c < classes; c++ {
					if lg[k*classes+c] > lg[k*classes+best] {
						best = c
					}
				}
				if y[k*classes+best] == 1 {
					correct++
				}
			}
			acc = float64(correct) / n
			if acc >= 0.95 {
				t.Logf("step %d: loss %.4f, accuracy %.3f", it, m.loss.Float32s()[0], acc)
				return
			}
		}
	}
	t.Fatalf("accuracy %.3f after 1500 steps (loss %.4f), want ≥ 0.95", acc, m.loss.Float32s()[0])
}

// Through the graph allocator, the loss value and the gradients of parameters stay readable after
// the run even when nothing marked them as outputs (SetLoss marks the loss; BuildBackward marks
// parameter gradients), so memory reuse cannot overwrite them.
func TestLossAndGradsSurviveAllocator(t *testing.T) {
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w := wctx.NewTensor1D(core.TypeF32, 3)
	x := wctx.NewTensor1D(core.TypeF32, 3)
	wctx.SetParam(w)
	cctx := core.NewContext(core.ContextParams{NoAlloc: true})
	y := cctx.Mul(w, x)
	loss := cctx.Sum(cctx.Sqr(cctx.Scale(y, 1)))
	if err := cctx.SetLoss(loss); err != nil {
		t.Fatal(err)
	}
	gf := core.NewGraph(64)
	gf.BuildForwardExpand(loss)
	gb, err := core.BuildBackward(cctx, gf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alloc.AllocCtxTensors(wctx, be); err != nil {
		t.Fatal(err)
	}
	ga := alloc.NewGraphAllocator(be.DefaultBufferType())
	if err := ga.AllocGraph(gb); err != nil {
		t.Fatal(err)
	}
	copy(w.Float32s(), []float32{1, 2, -1})
	copy(x.Float32s(), []float32{0.5, -1, 3})
	if err := be.GraphCompute(gb); err != nil {
		t.Fatal(err)
	}
	// loss = 0.25 + 4 + 9; dL/dw = 2·w·x²
	if got := loss.Float32s()[0]; got != 13.25 {
		t.Errorf("loss = %g, want 13.25", got)
	}
	got, err := core.GetFloat32s(gb.Grad(w))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 0.5 || got[1] != 4 || got[2] != -18 {
		t.Errorf("dL/dw = %v, want [0.5 4 -18]", got)
	}
}
