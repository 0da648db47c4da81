package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/llm"
)

// benchReadBytes is the buffer cpu.ReadBandwidth streams (far larger than the caches; tests
// shrink it).
var benchReadBytes int64 = 512 << 20

// benchResult is one row of llama-bench's output, with its JSON field names in its order. The
// fields for options tandem does not take (CPU masks, polling, tensor splits, buffer-type
// overrides, ...) hold llama-bench's defaults, so that scripts which read every field find them.
type benchResult struct {
	BuildCommit   string    `json:"build_commit"`
	BuildNumber   int       `json:"build_number"`
	CPUInfo       string    `json:"cpu_info"`
	GPUInfo       string    `json:"gpu_info"`
	Backends      string    `json:"backends"`
	ModelFile     string    `json:"model_filename"`
	ModelType     string    `json:"model_type"`
	ModelSize     int64     `json:"model_size"`
	ModelParams   int64     `json:"model_n_params"`
	NBatch        int       `json:"n_batch"`
	NUBatch       int       `json:"n_ubatch"`
	NThreads      int       `json:"n_threads"`
	CPUMask       string    `json:"cpu_mask"`
	CPUStrict     bool      `json:"cpu_strict"`
	Poll          int       `json:"poll"`
	TypeK         string    `json:"type_k"`
	TypeV         string    `json:"type_v"`
	NGPULayers    int       `json:"n_gpu_layers"`
	NCPUMoE       int       `json:"n_cpu_moe"`
	SplitMode     string    `json:"split_mode"`
	MainGPU       int       `json:"main_gpu"`
	NoKVOffload   bool      `json:"no_kv_offload"`
	FlashAttn     int       `json:"flash_attn"`
	Devices       string    `json:"devices"`
	TensorSplit   string    `json:"tensor_split"`
	BuftOverrides string    `json:"tensor_buft_overrides"`
	LoadMode      string    `json:"load_mode"`
	Embeddings    bool      `json:"embeddings"`
	NoOpOffload   int       `json:"no_op_offload"`
	NoHost        bool      `json:"no_host"`
	FitTarget     int       `json:"fit_target"`
	FitMinCtx     int       `json:"fit_min_ctx"`
	NPrompt       int       `json:"n_prompt"`
	NGen          int       `json:"n_gen"`
	NDepth        int       `json:"n_depth"`
	TestTime      string    `json:"test_time"`
	AvgNs         int64     `json:"avg_ns"`
	StddevNs      int64     `json:"stddev_ns"`
	AvgTs         benchTS   `json:"avg_ts"`
	StddevTs      benchTS   `json:"stddev_ts"`
	SamplesNs     []int64   `json:"samples_ns"`
	SamplesTs     []float64 `json:"samples_ts"`
	UseMmap       bool      `json:"use_mmap"` // older llama-bench builds' field (load_mode since)
	// tandem's own fields (llama-bench has none of these; scripts reading its fields ignore them)
	LoadMs         float64 `json:"tandem_load_ms"`          // llm.Open of the model
	ComputeBytes   int64   `json:"tandem_compute_bytes"`    // compute buffers, all devices
	KVBytes        int64   `json:"tandem_kv_bytes"`         // the session's KV cache
	PlansPer128    float64 `json:"tandem_plans_per_128"`    // scheduler plans per 128 tokens in the timed runs
	BuildsPer128   float64 `json:"tandem_builds_per_128"`   // graph builds per 128 tokens in the timed runs
	CopiesPerGraph int     `json:"tandem_copies_per_graph"` // cross-device copies per graph run
	// generation (tg) rows: weight bytes read per token, their rate, and the CPU's memory read
	// rate measured in the same run with the same threads (cpu.ReadBandwidth; -bw): the best of
	// the reads so far in the run, one right after the row included
	TokenBytes   int64   `json:"tandem_token_bytes,omitempty"`
	WeightsGBs   float64 `json:"tandem_weights_gbs,omitempty"`
	ReadGBs      float64 `json:"tandem_read_gbs,omitempty"`
	BandwidthUse float64 `json:"tandem_bandwidth_fraction,omitempty"`
	backendLabel string
}

// benchCmd is llama-bench for tandem: pp (prompt) and tg (generation) tests per model, -ngl and
// thread count, each repeated -r times after a warm-up, printed as llama-bench prints them.
func benchCmd(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	models := newListFlag("")
	fs.Var(models, "m", "model files (comma-separated, or the flag repeated)")
	pp, tg, depths := newListFlag("512"), newListFlag("128"), newListFlag("0")
	fs.Var(pp, "p", "prompt lengths (0 skips)")
	fs.Var(tg, "n", "generation lengths (0 skips)")
	pg := newListFlag("")
	fs.Var(pg, "pg", "a prompt then generated tokens timed together: pp,tg (repeat the flag for more)")
	fs.Var(depths, "d", "depths: tokens in the cache before each test, not timed")
	ngls := newListFlag("0")
	fs.Var(ngls, "ngl", "GPU layer counts (99 = all)")
	threads := newListFlag(strconv.Itoa(runtime.NumCPU()))
	fs.Var(threads, "t", "CPU thread counts")
	fas := newListFlag("auto")
	fs.Var(fas, "fa", "flash attention: on, off or auto (1, 0, -1)")
	reps := fs.Int("r", 5, "repetitions per test")
	out := fs.String("o", "md", "output to stdout: md, csv, json, jsonl or sql")
	outErr := fs.String("oe", "none", "output to stderr as well: md, csv, json, jsonl, sql or none")
	ctk := fs.String("ctk", "f16", "KV cache type")
	ctv := fs.String("ctv", "", "V cache type: the same as -ctk (tandem's cache has one type)")
	batch := fs.Int("b", llm.DefaultBatchSize, "batch size (n_batch; the micro-batch too unless -ub is given)")
	ubatch := fs.Int("ub", 0, "micro-batch size (n_ubatch; default -b)")
	noWarmup := fs.Bool("no-warmup", false, "skip the warm-up run before each test's repetitions")
	delay := fs.Int("delay", 0, "seconds to wait between tests")
	progress := fs.Bool("progress", false, "print each test as it starts (stderr)")
	mmaps := newListFlag("")
	fs.Var(mmaps, "mmp", "map the model file (1) or read it into memory (0); llama-bench's older flag")
	fs.Var(mmaps, "mmap", "the same as -mmp")
	loadMode := newListFlag("")
	fs.Var(loadMode, "lm", "load modes: auto or mmap (map the file), none (read it into memory)")
	fs.Var(loadMode, "load-mode", "the same as -lm")
	rpcs := fs.String("rpc", "", "RPC servers (comma-separated)")
	f32Prod := fs.Bool("f32-products", false, f32ProductsUsage)
	bw := fs.Bool("bw", true, "measure the CPU's memory read bandwidth per thread count and set generation's weight reads against it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("bench: unexpected argument %q", fs.Arg(0))
	}
	if models.String() == "" {
		return errors.New("bench: -m model.gguf is required")
	}
	if *reps < 1 {
		return fmt.Errorf("bench: -r %d: want at least 1", *reps)
	}
	if *batch < 1 {
		return fmt.Errorf("bench: -b %d: want at least 1", *batch)
	}
	if *ubatch == 0 {
		*ubatch = *batch
	}
	if *ubatch < 1 || *ubatch > *batch {
		return fmt.Errorf("bench: -ub %d: want 1 to -b (%d)", *ubatch, *batch)
	}
	pps, err := pp.ints("p", 0)
	if err != nil {
		return err
	}
	tgs, err := tg.ints("n", 0)
	if err != nil {
		return err
	}
	pgs, err := pg.pairs("pg")
	if err != nil {
		return err
	}
	dList, err := depths.ints("d", 0)
	if err != nil {
		return err
	}
	nglList, err := ngls.ints("ngl", 0)
	if err != nil {
		return err
	}
	thr, err := threads.ints("t", 1)
	if err != nil {
		return err
	}
	kv, err := llm.ParseKVType(*ctk)
	if err != nil {
		return err
	}
	if *ctv != "" {
		kvV, err := llm.ParseKVType(*ctv)
		if err != nil {
			return err
		}
		if kvV != kv {
			return fmt.Errorf("bench: -ctv %s with -ctk %s: tandem's KV cache holds K and V in one type", *ctv, *ctk)
		}
	}
	var faList []llm.FlashAttn
	for _, use := range fas.vals {
		for _, f := range strings.Split(use, ",") {
			v, err := parseFlashAttn(f)
			if err != nil {
				return err
			}
			faList = append(faList, map[int]llm.FlashAttn{-1: llm.FlashAttnAuto, 0: llm.FlashAttnOff, 1: llm.FlashAttnOn}[v])
		}
	}
	var rpcList []string
	if *rpcs != "" {
		rpcList = strings.Split(*rpcs, ",")
	}
	loadModes, err := parseLoadModes(mmaps, loadMode)
	if err != nil {
		return err
	}
	if *delay < 0 {
		return fmt.Errorf("bench: --delay %d: want 0 or more seconds", *delay)
	}
	b := &benchRun{fa: faList, depths: dList, reps: *reps, warmup: !*noWarmup, kv: kv, batch: *batch,
		ubatch: *ubatch, rpc: rpcList, f32Prod: *f32Prod, delay: time.Duration(*delay) * time.Second,
		progress: *progress, md: *out == "md", progressW: os.Stderr}
	if b.out, err = newBenchPrinter(*out, "o"); err != nil {
		return err
	}
	if b.outErr, err = newBenchPrinter(*outErr, "oe"); err != nil {
		return err
	}
	b.out.header(os.Stdout)
	if b.outErr != nil {
		b.outErr.header(os.Stderr)
	}
	hasTG := false
	for _, n := range tgs {
		hasTG = hasTG || n > 0
	}
	// the tests: each prompt length (nPrompt), then each generation length (nGen), then each -pg
	var tests [][2]int
	for _, n := range pps {
		tests = append(tests, [2]int{n, 0})
	}
	for _, n := range tgs {
		tests = append(tests, [2]int{0, n})
	}
	for _, tc := range append(tests, pgs...) {
		if tc[0]+tc[1] > 0 {
			b.tests = append(b.tests, tc)
		}
	}
	b.readBW = map[int]float64{}
	b.bw = *bw && hasTG
	paths := strings.Split(models.String(), ",")
	b.total = len(paths) * len(nglList) * len(thr) * len(loadModes) * len(b.tests) * len(b.fa) * len(b.depths)
	for _, path := range paths {
		for _, ngl := range nglList {
			for _, t := range thr {
				for _, mapped := range loadModes {
					if err := b.model(path, ngl, t, mapped); err != nil {
						return err
					}
				}
			}
		}
	}
	b.out.footer(os.Stdout)
	if b.outErr != nil {
		b.outErr.footer(os.Stderr)
	}
	return nil
}

// benchRun is a bench command's parsed flags, printers and state across its tests.
type benchRun struct {
	tests         [][2]int // (nPrompt, nGen) of each test
	fa            []llm.FlashAttn
	depths        []int
	reps          int
	warmup, bw    bool
	kv            llm.KVType
	batch, ubatch int
	rpc           []string
	f32Prod       bool
	delay         time.Duration // between tests (--delay)
	progress      bool          // --progress
	out, outErr   benchPrinter
	md            bool
	readBW        map[int]float64 // the CPU's memory read per thread count, the best so far
	total, done   int             // tests in all and run so far (--progress)
	progressW     io.Writer
}

// model opens path with ngl GPU layers and t threads, mapped or read into memory, and runs every
// test on it.
func (b *benchRun) model(path string, ngl, t int, mapped bool) error {
	start := time.Now()
	m, err := llm.Open(path, llm.Options{GPULayers: ngl, Threads: t, RPC: b.rpc, F32Products: b.f32Prod, NoMmap: !mapped})
	if err != nil {
		return err
	}
	defer m.Close()
	loadMs := float64(time.Since(start).Microseconds()) / 1e3
	if _, done := b.readBW[t]; b.bw && !done {
		v, err := cpu.ReadBandwidth(t, benchReadBytes, 5)
		if err != nil {
			return err
		}
		b.readBW[t] = v
	}
	loadMode := "none"
	if mapped {
		loadMode = "mmap"
	}
	base := benchResult{ModelFile: path, ModelType: m.Info().Desc, ModelSize: m.Info().Bytes,
		ModelParams: m.Info().Params, NBatch: b.batch, NUBatch: b.ubatch, NThreads: t, TypeK: b.kv.String(),
		TypeV: b.kv.String(), NGPULayers: ngl, UseMmap: mapped, CPUInfo: cpuName(), Backends: backendNames(m),
		BuildCommit: "tandem", TestTime: time.Now().UTC().Format(time.RFC3339), LoadMs: loadMs,
		// llama-bench's defaults for what tandem has no option of
		CPUMask: "0x0", Poll: 50, SplitMode: "layer", Devices: "auto", TensorSplit: "0.00",
		BuftOverrides: "none", LoadMode: loadMode}
	base.backendLabel = base.Backends
	for _, tc := range b.tests {
		for _, fl := range b.fa {
			for _, depth := range b.depths {
				if err := b.test(m, base, tc[0], tc[1], fl, depth); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// test runs one test (nPrompt, nGen at depth, flash attention fl) on m and prints its row.
func (b *benchRun) test(m *llm.Model, base benchResult, nPrompt, nGen int, fl llm.FlashAttn, depth int) error {
	if b.done > 0 && b.delay > 0 {
		time.Sleep(b.delay)
	}
	b.done++
	name := benchResult{NPrompt: nPrompt, NGen: nGen, NDepth: depth}.testName()
	if b.progress {
		fmt.Fprintf(b.progressW, "tandem-llm bench: test %d/%d: %s, %d threads, ngl %d, %s\n", b.done, b.total, name,
			base.NThreads, base.NGPULayers, base.ModelFile)
	}
	so := llm.SessionOptions{ContextSize: depth + nPrompt + nGen, KVType: b.kv, FlashAttn: fl, BatchSize: b.ubatch}
	r, err := runBench(m, so, depth, nPrompt, nGen, b.reps, b.warmup, base)
	if err != nil {
		return err
	}
	if nGen > 0 {
		r.TokenBytes = m.Info().TokenBytes
		r.WeightsGBs = float64(r.TokenBytes) * float64(r.AvgTs) / 1e9
		if v := b.readBW[r.NThreads]; v > 0 {
			// The host's memory read can move between the reads: the row takes the best so far,
			// one right after it included.
			after, err := cpu.ReadBandwidth(r.NThreads, benchReadBytes, 5)
			if err != nil {
				return err
			}
			v = max(v, after)
			b.readBW[r.NThreads] = v
			r.ReadGBs = v / 1e9
			r.BandwidthUse = r.WeightsGBs / r.ReadGBs
		}
	}
	if err := b.out.row(os.Stdout, r); err != nil {
		return err
	}
	if b.outErr != nil {
		if err := b.outErr.row(os.Stderr, r); err != nil {
			return err
		}
	}
	if b.md {
		printExtras(os.Stderr, r)
	}
	return nil
}

// runBench times nPrompt tokens in one Eval (pp), nGen tokens one at a time (tg), or the two
// in turn (pp+tg, llama-bench's -pg), after depth tokens in the cache (evaluated first, not
// timed: llama-bench's -d), reps times after one warm-up (unless warmup is false), with seeded
// random tokens as llama-bench does. Plans and graph builds count the timed tokens only.
func runBench(m *llm.Model, so llm.SessionOptions, depth, nPrompt, nGen, reps int, warmup bool, r benchResult) (benchResult, error) {
	s, err := m.NewSession(so)
	if err != nil {
		return r, err
	}
	defer s.Close()
	r.FlashAttn = 0
	if s.FlashAttn() {
		r.FlashAttn = 1
	}
	r.NPrompt, r.NGen, r.NDepth = nPrompt, nGen, depth
	ctx := context.Background()
	vocab := m.Vocab().Len()
	var logits []float32       // reused: a generated token allocates nothing
	var timed llm.SessionStats // the timed part's plans, builds and tokens
	one := func(seed uint64) (time.Duration, error) {
		s.Reset()
		if depth > 0 {
			if _, err := s.EvalTo(ctx, randomTokens(depth, vocab, seed+1<<32), llm.NoLogits, nil); err != nil {
				return 0, err
			}
		}
		before := s.Stats()
		defer func() {
			after := s.Stats()
			timed.Plans += after.Plans - before.Plans
			timed.Builds += after.Builds - before.Builds
			timed.Tokens += after.Tokens - before.Tokens
		}()
		var err error
		prompt := randomTokens(nPrompt, vocab, seed)
		ids := randomTokens(nGen, vocab, seed+1<<33)
		start := time.Now()
		if nPrompt > 0 {
			if logits, err = s.EvalTo(ctx, prompt, llm.LastLogits, logits[:0]); err != nil {
				return 0, err
			}
		}
		for _, id := range ids {
			if logits, err = s.EvalTo(ctx, []int32{id}, llm.LastLogits, logits[:0]); err != nil {
				return 0, err
			}
		}
		return time.Since(start), nil
	}
	if warmup {
		if _, err := one(0); err != nil {
			return r, err
		}
	}
	n := float64(nPrompt + nGen)
	timed = llm.SessionStats{}
	for i := range reps {
		d, err := one(uint64(i + 1))
		if err != nil {
			return r, err
		}
		r.SamplesNs = append(r.SamplesNs, d.Nanoseconds())
		r.SamplesTs = append(r.SamplesTs, n/d.Seconds())
	}
	after := s.Stats()
	if timed.Tokens > 0 {
		r.PlansPer128 = float64(timed.Plans) * 128 / float64(timed.Tokens)
		r.BuildsPer128 = float64(timed.Builds) * 128 / float64(timed.Tokens)
	}
	r.ComputeBytes, r.KVBytes, r.CopiesPerGraph = after.ComputeBytes, after.KVBytes, after.Copies
	r.AvgNs, r.StddevNs = meanStd64(r.SamplesNs)
	avg, std := meanStd(r.SamplesTs)
	r.AvgTs, r.StddevTs = benchTS(avg), benchTS(std)
	return r, nil
}

func meanStd(x []float64) (mean, std float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) > 1 {
		for _, v := range x {
			std += (v - mean) * (v - mean)
		}
		std = math.Sqrt(std / float64(len(x)-1))
	}
	return mean, std
}

func meanStd64(x []int64) (int64, int64) {
	f := make([]float64, len(x))
	for i, v := range x {
		f[i] = float64(v)
	}
	m, s := meanStd(f)
	return int64(m), int64(s)
}

func backendNames(m *llm.Model) string {
	seen := map[string]bool{}
	var names []string
	for il := 0; il <= m.HParams.NLayer; il++ {
		n := m.LayerBackend(il)
		if i := strings.IndexAny(n, "0123456789["); i > 0 {
			n = n[:i]
		}
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
		}
	}
	return runtime.GOARCH
}

// testName is llama-bench's name of the row's test: pp<n>, tg<n> or pp<n>+tg<m>, and " @ d<depth>".
func (r benchResult) testName() string {
	var name string
	switch {
	case r.NPrompt > 0 && r.NGen > 0:
		name = fmt.Sprintf("pp%d+tg%d", r.NPrompt, r.NGen)
	case r.NGen > 0:
		name = fmt.Sprintf("tg%d", r.NGen)
	default:
		name = fmt.Sprintf("pp%d", r.NPrompt)
	}
	if r.NDepth > 0 {
		name += fmt.Sprintf(" @ d%d", r.NDepth)
	}
	return name
}
