package main

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"time"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// Status of one case on one target.
type Status string

const (
	StatusOK      Status = "ok"
	StatusSkipped Status = "skipped"
	StatusError   Status = "error"
)

// Result is one case on one target: a row of the table.
type Result struct {
	Family   *Family
	Case     *Case
	Target   string
	Kind     TargetKind
	Baseline bool // the CPU target the others are compared with
	Status   Status
	Reason   string // why skipped, or the error

	Warmup []time.Duration
	Times  []time.Duration // timed repeats
	Median time.Duration
	Min    time.Duration

	VsCPU   float64 // baseline median / this median; 0 when unknown
	HasNMSE bool
	NMSE    float64
	Wrong   bool // NMSE above the family's limit

	// scheduler runs: splits and copies of the plan, copies and bytes per timed run
	Splits, Copies int
	CopiesPerRun   float64
	CopyBytes      float64

	// model rows (-model): the layers offloaded (-ngl) and the model's offloadable layers (its
	// blocks and the output layer); NGL is -1 on the other families' rows
	NGL, Layers int
	FlashAttn   bool // the model row's session used FLASH_ATTN_EXT
}

// Device is the row's device column: the target, and for a model's split rows the layers
// offloaded ("Vulkan0+CPU ngl 12").
func (r *Result) Device() string {
	if r.Kind == KindSched && r.NGL >= 0 {
		return fmt.Sprintf("%s ngl %d", r.Target, r.NGL)
	}
	return r.Target
}

// Throughput in the family's unit (GFLOPS or GB/s) at the median time.
func (r *Result) Throughput() float64 {
	if r.Status != StatusOK {
		return 0
	}
	return Throughput(r.Case.Work(), r.Median) * 1e9 / r.Family.Metric.scale()
}

// Runner runs families on targets under a policy.
type Runner struct {
	Policy   Policy
	Sizes    SizeSpec
	Quick    bool
	Targets  []*Target
	Progress *Progress
	Logger   *slog.Logger // the backends' settings and the scheduler rows' plans (nil: none)
	NGL      []int        // -ngl: the model's split rows (nil: 0 and quarter steps)
	CloseErr error        // closing the loaded models at the end of Run failed

	est    map[*Target]*Estimator
	spent  map[*Target]time.Duration
	broken map[*Target]string
	models map[*Target]*loadedModel // the model each target has loaded (model families)
}

// Cases returns the cases of a family this run makes: the quick or full ladder, or -sizes,
// rounded to valid sizes and deduplicated.
func (r *Runner) Cases(f *Family) []*Case {
	ladder := f.Ladder
	if r.Quick {
		ladder = f.Quick
	}
	var out []*Case
	seen := map[int64]bool{}
	for _, n := range r.Sizes.Apply(ladder) {
		c := f.make(n)
		if !seen[c.N] {
			seen[c.N] = true
			out = append(out, c)
		}
	}
	return out
}

// applies reports whether target t runs family f (scheduler targets run only scheduler families).
func applies(t *Target, f *Family) bool { return t.Kind != KindSched || f.Sched }

// Run runs every case of every family on every target and returns the shown rows, grouped by case
// with the baseline first.
func (r *Runner) Run(fams []*Family) []*Result {
	r.reset()
	type famCases struct {
		f  *Family
		cs []*Case
	}
	var plan []famCases
	total := 0
	for _, f := range fams {
		cs := r.Cases(f)
		plan = append(plan, famCases{f, cs})
		for _, c := range cs {
			for _, j := range r.jobs(c) {
				if !j.t.Hidden {
					total++
				}
			}
		}
	}
	r.Progress.Begin(total)
	var results []*Result
	for _, p := range plan {
		start := time.Now()
		for _, c := range p.cs {
			results = append(results, r.runCase(c)...)
		}
		r.Progress.FamilyDone(p.f, len(p.cs), time.Since(start))
	}
	r.Progress.End()
	r.CloseErr = r.closeModels()
	return results
}

// job is one row of a case: a target, and for a model case the layers it offloads (-1 otherwise).
type job struct {
	t   *Target
	ngl int
}

// jobs lists the rows of case c in target order: every target that runs the family once, and for
// a model case the CPU at ngl 0, each device with every layer, and each scheduler target at each
// split value.
func (r *Runner) jobs(c *Case) []job {
	var out []job
	for _, t := range r.Targets {
		if !applies(t, c.Family) {
			continue
		}
		if c.Family.model == nil {
			out = append(out, job{t, -1})
			continue
		}
		layers := c.Family.model.Layers
		switch t.Kind {
		case KindCPU:
			out = append(out, job{t, 0})
		case KindDevice:
			out = append(out, job{t, layers})
		case KindSched:
			for _, n := range splitLayers(r.NGL, layers) {
				out = append(out, job{t, n})
			}
		}
	}
	return out
}

// runJob runs one row of case c.
func (r *Runner) runJob(c *Case, j job, in *inputCache, refOnly bool) (*Result, []float32) {
	if c.Family.model != nil {
		return r.runModelOn(c, j.t, j.ngl, refOnly)
	}
	return r.runOn(c, j.t, in, refOnly)
}

// reset forgets the estimates, the time spent and the broken targets of an earlier run.
func (r *Runner) reset() {
	r.est = map[*Target]*Estimator{}
	r.spent = map[*Target]time.Duration{}
	r.broken = map[*Target]string{}
	r.models = map[*Target]*loadedModel{}
	for _, t := range r.Targets {
		r.est[t] = &Estimator{}
	}
}

// runCase runs one case on every target, the baseline first (its output is the reference). When
// the baseline did not run it (its -device-budget spent, a size too slow for it) but another target
// did, the baseline computes the reference once more, untimed, so that every row that ran is
// checked.
func (r *Runner) runCase(c *Case) []*Result {
	in := &inputCache{seed: seedOf(c)}
	type row struct {
		res *Result
		got []float32
	}
	var (
		rows    []row
		ref     []float32
		base    time.Duration
		baseJ   *job
		baseRes *Result
		others  bool // a target other than the baseline ran the case
	)
	for _, j := range r.jobs(c) {
		t := j.t
		if !t.Hidden {
			r.Progress.Case(c, t)
		}
		res, got := r.runJob(c, j, in, false)
		if t.Baseline {
			baseJ, ref = &j, got
			if res.Status == StatusOK && !t.Hidden { // a hidden baseline runs once, untimed
				base = res.Median
			}
			if t.Hidden {
				continue
			}
			baseRes = res
		} else if res.Status == StatusOK {
			others = true
		}
		rows = append(rows, row{res, got})
	}
	if ref == nil && others && baseJ != nil {
		res, got := r.runJob(c, *baseJ, in, true)
		if got != nil {
			ref = got
			if baseRes != nil {
				baseRes.Reason += "; reference computed untimed"
			}
		} else if baseRes != nil && res.Reason != baseRes.Reason {
			baseRes.Reason += "; no reference: " + res.Reason
		}
	}
	out := make([]*Result, 0, len(rows))
	for _, rw := range rows {
		res := rw.res
		if res.Status == StatusOK {
			if base > 0 {
				res.VsCPU = float64(base) / float64(res.Median)
			}
			if ref != nil && !res.Baseline {
				res.HasNMSE = true
				res.NMSE = NMSE(rw.got, ref)
				res.Wrong = !(res.NMSE <= c.Family.Limit)
			}
		}
		out = append(out, res)
	}
	return out
}

// seedOf derives the inputs' seed from the family and size, so every target gets the same data.
func seedOf(c *Case) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", c.Family.ID, c.N)
	return h.Sum64()
}

// inputCache keeps each input's bytes once made, so later targets copy them instead of generating
// and quantizing again.
type inputCache struct {
	seed uint64
	raw  map[int][]byte
}

func (ic *inputCache) set(i int, in Input) error {
	if ic.raw == nil {
		ic.raw = map[int][]byte{}
	}
	t := in.T
	if raw, ok := ic.raw[i]; ok {
		return core.TensorSet(t, raw, 0)
	}
	var err error
	switch v := in.Fill.Data(ic.seed+uint64(i)*0x9e3779b97f4a7c15, t.NElements(), t.Ne[0]).(type) {
	case []int32:
		err = core.SetInt32s(t, v)
	case []float32:
		if t.Type == core.TypeF32 && t.IsContiguous() {
			err = core.SetFloat32s(t, v)
		} else {
			err = core.SetFloat32s(t, v)
		}
	}
	if err != nil {
		return err
	}
	raw := make([]byte, t.NBytes())
	if err := core.TensorGet(t, raw, 0); err != nil {
		return err
	}
	ic.raw[i] = raw
	return nil
}

// runOn runs case c on target t and returns its row and its output (nil unless it ran). With
// refOnly it computes the output once, untimed, whatever the target's budget and estimates say, and
// without counting the time against the budget: the reference for the other targets.
func (r *Runner) runOn(c *Case, t *Target, in *inputCache, refOnly bool) (*Result, []float32) {
	res := &Result{Family: c.Family, Case: c, Target: t.Name, Kind: t.Kind, Baseline: t.Baseline, NGL: -1}
	skip := func(format string, args ...any) (*Result, []float32) {
		res.Status, res.Reason = StatusSkipped, fmt.Sprintf(format, args...)
		return res, nil
	}
	if why, ok := r.broken[t]; ok {
		return skip("%s", why)
	}
	pol := r.Policy
	untimed := t.Hidden || refOnly
	if !refOnly {
		if r.spent[t] > pol.Device {
			return skip("device time budget spent (-device-budget %v)", pol.Device)
		}
		if why := r.skipEstimate(c, t, c.Family.ID); why != "" {
			return skip("%s", why)
		}
		start := time.Now()
		defer func() { r.spent[t] += time.Since(start) }()
	}
	if err := t.open(r.Logger); err != nil {
		r.broken[t] = "device failed to start"
		res.Status, res.Reason = StatusError, fmt.Sprintf("starting %s: %v", t.Name, err)
		return res, nil
	}

	w := core.NewContext(core.ContextParams{NoAlloc: true})
	x := w
	if t.Kind == KindSched {
		x = core.NewContext(core.ContextParams{NoAlloc: true})
	}
	outT, ins := c.Build(w, x)
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(outT)
	if err := errors.Join(w.Err(), x.Err(), g.Err()); err != nil {
		res.Status, res.Reason = StatusError, "building the graph: "+err.Error()
		return res, nil
	}
	if t.Kind != KindSched {
		if ops := unsupported(t.Dev, g); len(ops) > 0 {
			return skip("%s does not support %s", t.Dev.Name(), strings.Join(ops, ", "))
		}
	}

	fail := func(what string, err error) (*Result, []float32) {
		res.Status, res.Reason = StatusError, what+": "+err.Error()
		return res, nil
	}
	var compute func() error
	var sched *scheduler.Scheduler
	wbuf, err := alloc.AllocCtxTensors(w, t.Backend)
	if err != nil {
		return skip("cannot allocate %s on %s: %v", fmtBytes(float64(ctxBytes(w))), t.Backend.Name(), err)
	}
	if wbuf != nil {
		defer wbuf.Free()
		wbuf.SetUsage(core.BufferUsageWeights)
	}
	if t.Kind == KindSched {
		sched, err = scheduler.New([]core.Backend{t.Backend, t.CPU}, scheduler.Options{Logger: r.Logger})
		if err != nil {
			return fail("scheduler", err)
		}
		defer sched.Close()
		if err := sched.AllocGraph(g); err != nil {
			return fail("scheduler: allocating the graph", err)
		}
		compute = func() error { return sched.GraphCompute(g) }
	} else {
		be := t.Backend
		compute = func() error { return be.GraphCompute(g) }
	}
	for i, input := range ins {
		if err := in.set(i, input); err != nil {
			return fail("setting input "+input.T.Name, err)
		}
	}

	var before scheduler.Stats
	onTimed := func() {
		if sched != nil {
			before = sched.Stats()
		}
	}
	if err := r.measure(res, untimed, compute, onTimed); err != nil {
		return fail("compute", err)
	}
	if sched != nil && !untimed {
		after := sched.Stats()
		runs := float64(len(res.Times))
		res.Splits, res.Copies = sched.NSplits(), sched.NCopies()
		res.CopiesPerRun = float64(after.Copies-before.Copies) / runs
		res.CopyBytes = float64(after.CopyBytes-before.CopyBytes) / runs
	}
	got, err := core.GetFloat32s(outT)
	if err != nil {
		return fail("reading the result", err)
	}
	res.Status = StatusOK
	if !refOnly {
		r.est[t].Observe(c.Family.ID, c.Family.Metric, c.Work(), res.Median)
	}
	return res, got
}

// measure runs compute as the policy says and fills res's warm-up and timed runs, median and
// minimum: warm-up run(s) (pipelines, caches, the scheduler's plan; the first also checks the
// estimate), then timed repeats; onTimed is called just before the timed repeats. untimed (a
// hidden baseline or a late reference) runs once and takes that run as the median.
func (r *Runner) measure(res *Result, untimed bool, compute func() error, onTimed func()) error {
	pol := r.Policy
	warm := max(pol.Warmup, 1)
	if untimed {
		warm = 1
	}
	for range warm {
		t0 := time.Now()
		if err := compute(); err != nil {
			return err
		}
		res.Warmup = append(res.Warmup, time.Since(t0))
	}
	if untimed {
		res.Median = res.Warmup[0]
		return nil
	}
	// The first run pays one-off costs (pipeline creation, plans, first-touch allocations): when it
	// alone exceeds -maxrun, warm up once more so that the decision below sees a steady-state run.
	if len(res.Warmup) == 1 && res.Warmup[0] > pol.MaxRun {
		t0 := time.Now()
		if err := compute(); err != nil {
			return err
		}
		res.Warmup = append(res.Warmup, time.Since(t0))
	}
	timing := Timing{MinReps: pol.MinReps, MaxReps: pol.MaxReps, Budget: pol.Budget}
	if last := res.Warmup[len(res.Warmup)-1]; last > pol.MaxRun {
		timing.MinReps, timing.MaxReps = 1, 1 // slower than estimated: one timed run is enough
	}
	onTimed()
	var spent time.Duration
	for timing.More(len(res.Times), spent) {
		t0 := time.Now()
		if err := compute(); err != nil {
			return err
		}
		d := time.Since(t0)
		res.Times = append(res.Times, d)
		spent += d
	}
	res.Median, res.Min = Median(res.Times), Min(res.Times)
	return nil
}

// skipEstimate says why c is too slow to run on t, or "". With the built-in ladders the smallest
// size of a family always runs and later ones are estimated from it; with -sizes, sizes that have no
// smaller size measured are guessed from related work and skipped when hopeless. key is what the
// target's estimator knows the family's sizes by (its ID; a model row adds its -ngl).
func (r *Runner) skipEstimate(c *Case, t *Target, key string) string {
	f, w := c.Family, c.Work()
	same, sameOK := r.est[t].Same(key, w)
	if sameOK || r.Sizes.Empty() {
		return SkipReason(same, sameOK, 0, false, r.Policy.MaxRun)
	}
	like := f.Like
	if like == "" {
		like = f.ID
	}
	guess, guessOK := r.est[t].Like(like, f.Metric, w)
	if !guessOK && t.Kind == KindSched {
		// The scheduler's own runs say nothing yet: guess from its device running alone.
		for _, o := range r.Targets {
			if o.Kind == KindDevice && o.Dev == t.Dev {
				guess, guessOK = r.est[o].Like(like, f.Metric, w)
			}
		}
	}
	return SkipReason(same, sameOK, guess, guessOK, r.Policy.MaxRun)
}

// unsupported lists the ops of g that dev cannot run ("RMS_NORM", "MUL_MAT q8_0"), once each.
func unsupported(dev core.Device, g *core.Graph) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range g.Nodes() {
		if dev.SupportsOp(n) {
			continue
		}
		name := n.Op.String()
		if n.Op == core.OpMulMat && n.Src[0] != nil {
			name += " " + n.Src[0].Type.String()
		}
		if limit := maxBinding(dev); limit > 0 {
			big := n.NBytes()
			for _, s := range n.Src {
				if s != nil {
					big = max(big, s.NBytes())
				}
			}
			if big >= limit {
				name += fmt.Sprintf(" (a %s tensor; one binding holds %s)", fmtBytes(float64(big)), fmtBytes(float64(limit)))
			}
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// maxBinding is the device's largest storage buffer binding in bytes (Vulkan's
// maxStorageBufferRange, from its features), 0 when it does not say.
func maxBinding(dev core.Device) int64 {
	fl, ok := dev.(core.FeatureLister)
	if !ok {
		return 0
	}
	for _, f := range fl.Features() {
		if f.Name == "MAX_STORAGE_BUFFER_RANGE" {
			var v int64
			if _, err := fmt.Sscan(f.Value, &v); err == nil {
				return v
			}
		}
	}
	return 0
}

func ctxBytes(ctx *core.Context) int64 {
	var n int64
	for _, t := range ctx.Tensors() {
		if t.ViewSrc == nil {
			n += t.NBytes()
		}
	}
	return n
}
