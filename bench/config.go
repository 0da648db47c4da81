package main

import (
	"flag"
	"fmt"
	"github.com/tandem-ml/tandem/scheduler"
	"io"
	"log/slog"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config is everything the command line sets.
type Config struct {
	Quick   bool
	JSON    string // -json FILE
	SVG     string // -svg FILE
	HTML    string // -html FILE
	Ops     []string
	Devices []string
	Threads []int
	Sizes   SizeSpec
	List    bool
	Strict  bool
	RPC     string // -rpc HOST:PORT: a ggml RPC server whose devices join the run
	Model   string // -model FILE: a GGUF language model; adds the model families
	NGL     []int  // -ngl LIST: the model's split rows (nil: 0 and quarter steps)
	Policy  Policy
	Log     slog.Level // -log: the scheduler's plans on stderr at this level (LogOff: none)
}

// LogOff is Config.Log without -log.
const LogOff = slog.LevelError + 4

// Policy is the timing and scaling policy: how long to spend on each case and each device.
type Policy struct {
	Warmup  int           // untimed runs before measuring (the first also estimates the cost)
	MinReps int           // timed runs at least
	MaxReps int           // timed runs at most
	Budget  time.Duration // keep repeating until this much time is spent (then stop at MinReps)
	MaxRun  time.Duration // skip a size whose estimated single run exceeds this
	Device  time.Duration // total time one device may spend; later cases are skipped
}

// DefaultPolicy is a full run: under ~2 minutes in total on a 2-core machine with lavapipe.
var DefaultPolicy = Policy{Warmup: 1, MinReps: 3, MaxReps: 50, Budget: 300 * time.Millisecond,
	MaxRun: time.Second, Device: 50 * time.Second}

// QuickPolicy is -quick: small sizes, few repeats; about 7 s on the 2-core development machine
// (the FFN families, left out of -quick unless -ops names them, would add 20 s and spend the CPU's
// -device-budget).
var QuickPolicy = Policy{Warmup: 1, MinReps: 2, MaxReps: 10, Budget: 40 * time.Millisecond,
	MaxRun: 60 * time.Millisecond, Device: 8 * time.Second}

// SizeSpec is -sizes: explicit sizes that replace each family's ladder, and/or ranges that filter it.
type SizeSpec struct {
	Values []int64
	Ranges [][2]int64
}

// Empty reports whether -sizes was not given.
func (s SizeSpec) Empty() bool { return len(s.Values) == 0 && len(s.Ranges) == 0 }

// Apply returns the sizes to run for a family whose ladder is ladder: the explicit values when
// there are any (plus the ladder's sizes inside a range), else the ladder filtered by the ranges.
func (s SizeSpec) Apply(ladder []int64) []int64 {
	if s.Empty() {
		return ladder
	}
	set := map[int64]bool{}
	for _, v := range s.Values {
		set[v] = true
	}
	for _, n := range ladder {
		for _, r := range s.Ranges {
			if n >= r[0] && n <= r[1] {
				set[n] = true
			}
		}
	}
	out := make([]int64, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// parseSize reads 4096, 64K, 1M, 1G (K = 1024).
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("bad size %q (want a positive number, optionally with K, M or G)", s)
	}
	return v * mult, nil
}

// ParseSizes reads -sizes: a comma list of sizes (512, 64K, 1M) and ranges (128-1024, 1M-).
func ParseSizes(s string) (SizeSpec, error) {
	var spec SizeSpec
	for _, f := range splitList(s) {
		if lo, hi, ok := strings.Cut(f, "-"); ok {
			r := [2]int64{0, 1 << 62}
			var err error
			if strings.TrimSpace(lo) != "" {
				if r[0], err = parseSize(lo); err != nil {
					return spec, err
				}
			}
			if strings.TrimSpace(hi) != "" {
				if r[1], err = parseSize(hi); err != nil {
					return spec, err
				}
			}
			if r[0] > r[1] {
				return spec, fmt.Errorf("bad size range %q: empty", f)
			}
			spec.Ranges = append(spec.Ranges, r)
			continue
		}
		v, err := parseSize(f)
		if err != nil {
			return spec, err
		}
		spec.Values = append(spec.Values, v)
	}
	return spec, nil
}

// ParseThreads reads -threads: one count or a comma list (each is a CPU target of its own).
func ParseThreads(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return []int{runtime.NumCPU()}, nil
	}
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > 512 {
			return nil, fmt.Errorf("bad thread count %q (want 1..512)", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseNGL reads -ngl: a comma list of layer counts (0 or more) for the model's split rows; nil
// when empty.
func ParseNGL(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad -ngl value %q (want layer counts 0, 1, ...)", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ParseArgs reads the command line. It returns flag.ErrHelp for -h (after printing the usage to
// stderr).
func ParseArgs(args []string, stderr io.Writer) (*Config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := &Config{}
	var ops, devices, threads, sizes, ngl string
	var budget, maxRun, devBudget time.Duration
	var reps int
	var logLevel string
	fs.StringVar(&logLevel, "log", "", "")
	fs.BoolVar(&cfg.Quick, "quick", false, "")
	fs.StringVar(&cfg.JSON, "json", "", "")
	fs.StringVar(&cfg.SVG, "svg", "", "")
	fs.StringVar(&cfg.HTML, "html", "", "")
	fs.StringVar(&ops, "ops", "", "")
	fs.StringVar(&devices, "devices", "", "")
	fs.StringVar(&threads, "threads", "", "")
	fs.StringVar(&sizes, "sizes", "", "")
	fs.BoolVar(&cfg.List, "list", false, "")
	fs.BoolVar(&cfg.Strict, "strict", false, "")
	fs.StringVar(&cfg.RPC, "rpc", "", "")
	fs.StringVar(&cfg.Model, "model", "", "")
	fs.StringVar(&ngl, "ngl", "", "")
	fs.DurationVar(&budget, "budget", 0, "")
	fs.DurationVar(&maxRun, "maxrun", 0, "")
	fs.DurationVar(&devBudget, "device-budget", 0, "")
	fs.IntVar(&reps, "reps", 0, "")
	fs.Usage = func() { fmt.Fprint(stderr, usageText) }
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		fmt.Fprint(stderr, usageText)
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch strings.ToLower(logLevel) {
	case "":
		cfg.Log = LogOff
	case "debug":
		cfg.Log = slog.LevelDebug
	case "trace":
		cfg.Log = scheduler.LevelTrace
	default:
		return nil, fmt.Errorf("-log %q: want debug (the scheduler's splits) or trace (every node and why it went there)", logLevel)
	}
	cfg.Ops = splitList(ops)
	cfg.Devices = splitList(devices)
	var err error
	if cfg.Threads, err = ParseThreads(threads); err != nil {
		return nil, err
	}
	if cfg.Sizes, err = ParseSizes(sizes); err != nil {
		return nil, err
	}
	if cfg.NGL, err = ParseNGL(ngl); err != nil {
		return nil, err
	}
	cfg.Policy = DefaultPolicy
	if cfg.Quick {
		cfg.Policy = QuickPolicy
	}
	if budget > 0 {
		cfg.Policy.Budget = budget
	}
	if maxRun > 0 {
		cfg.Policy.MaxRun = maxRun
	}
	if devBudget > 0 {
		cfg.Policy.Device = devBudget
	}
	if reps > 0 {
		cfg.Policy.MinReps = reps
		cfg.Policy.MaxReps = max(cfg.Policy.MaxReps, reps)
	}
	return cfg, nil
}

const usageText = `usage: go run ./bench [flags]

Finds every device tandem can use (the CPU always; each Vulkan device when the
Vulkan backend is built in and a loader and device are present, else one line
saying why not) and runs the same suite on each, comparing every device with
the CPU on speed and on the result itself.

Cases (family ids in brackets; -ops matches them):
  MUL_MAT matrix   [mul_mat/mat/TYPE]  m = n = k = N, weights TYPE, activations f32
  MUL_MAT mat-vec  [mul_mat/vec/TYPE]  N×N weights times one f32 column (token generation)
                   TYPE is f32, f16, q4_0 or q8_0
  MUL_MAT 4096×14336 [mul_mat/ffn/TYPE] model-sized weights times N = 1 (mat-vec) or
                   512 tokens; TYPE is q4_0, q8_0, q4_K, q5_K, q6_K or iq4_xs
  ADD, MUL         [add/f32, mul/f32]  two f32 tensors of N elements
  SOFT_MAX         [soft_max/f32]      rows of 1024, scale 1/8
  RMS_NORM         [rms_norm/f32]      rows of 4096
  ROPE             [rope/f32]          neox, 128 dims × 32 heads × N/4096 tokens
  BLOCK            [block/q4_0]        a transformer-like layer, n_embd = N, 32 tokens:
                   get_rows, rms_norm, q4_0 Q/K/V/O, rope, masked soft_max,
                   SwiGLU feed-forward (q4_0 gate/up, q8_0 down), residual adds.
                   It runs on each device alone (when the device supports every
                   node) and through the scheduler on each Vulkan device + CPU
                   ("Vulkan0+CPU"), which reports its splits and copies.
  MODEL            [model/pp, model/tg] with -model FILE: a GGUF language model
                   run through package llm as llama-bench does: ppN evaluates N
                   seeded random tokens in one Eval, tgN generates N tokens one
                   at a time, from an empty KV cache (F16), in tokens/s. Rows:
                   the CPU (ngl 0), each device with every layer offloaded
                   ("Vulkan0", token embeddings on the CPU as in llama.cpp), and
                   the scheduler over each device + CPU at split layer counts
                   ("Vulkan0+CPU ngl 6"; -ngl). Sizes are N: pp64, pp512 and
                   tg16, tg128 (-quick: pp16, tg4)

Each case runs on every device with the same seeded inputs: warm-up run(s),
then timed repeats until a time budget or count is reached.

Columns:
  case, shape   the op family and its size
  device        CPU, Vulkan0, ... or Vulkan0+CPU (the scheduler)
  median, min   wall time of one graph computation (data already on the device)
  reps          timed repeats
  throughput    GFLOPS for MUL_MAT (2·m·n·k) and the block (its MUL_MATs);
                tokens/s for MODEL (N tokens / median);
                GB/s (10⁹ bytes) for the others: bytes of every input + the output
  vs CPU        CPU median / device median: 2.00× CPU is twice as fast as the CPU
  NMSE          Σ(x−ref)² / Σref², ref = the CPU's result of the same case; a
                value above the family's limit (5e-4 MUL_MAT, 2e-3 the block,
                1e-3 MODEL, 1e-6 SOFT_MAX, 1e-7 others) is marked "!" and
                "WRONG" in notes. MODEL compares logits: the prompt's last
                token's for pp, every generated token's for tg
  notes         why a row was skipped; scheduler splits and copies per run;
                MODEL: layers offloaded (ngl N/all), flash attention, the
                scheduler's splits and copies per graph (a micro-batch or a token)

Sizes scale down by themselves: on each device sizes run in increasing order,
the smallest always runs, the next size's time is estimated from the last
(linear in the work), and sizes whose estimate exceeds -maxrun are skipped
("skipped: too slow on this device"); a run that turns out slower than -maxrun
is timed once. A device that has used -device-budget skips the rest. With
-sizes, a size with no smaller one measured is guessed from related work and
skipped only when the guess is 10× over -maxrun. Every row that ran is still
checked: when the CPU skipped a case (budget spent, too slow) that another
device ran, the CPU computes the reference once, untimed, and its row says
"reference computed untimed".

Flags:
  -quick            small sizes and few repeats, without the 4096×14336 FFN
                    families unless -ops names them (about 7 s on 2 cores with
                    lavapipe)
  -ops LIST         comma list of family ids, leading paths, parts or globs:
                    mul_mat, mul_mat/vec, q4_0, "*/f16", rope, block
  -devices LIST     comma list of device names or types (cpu, vulkan0, vulkan,
                    gpu, accel); a Vulkan+CPU scheduler row runs when its Vulkan
                    device is selected. Without the CPU, it still computes the
                    reference results (untimed) for NMSE
  -threads N[,M]    CPU worker threads (default: all cores); a list runs one CPU
                    row per count ("CPU·1t", "CPU·2t"), the first is the baseline
  -sizes LIST       sizes N to run instead of each family's ladder: 512,2048 or
                    64K,1M; a range (128-1024, 1M-) keeps the ladder's sizes in it.
                    N means the same number for every selected family (n for
                    MUL_MAT, elements for the others): combine it with -ops
  -model FILE       add the MODEL families for this GGUF model (llama, qwen2,
                    qwen3, qwen3moe); select them alone with -ops model
  -ngl LIST         layer counts of the MODEL split rows (default 0 and the
                    quarter steps below all layers: 0,6,12,17 of 23); the
                    chart draws tokens/s against layers offloaded, 0 to all
  -json FILE        write every result (times of each repeat, FLOPs, bytes, NMSE,
                    splits, copies) as JSON
  -svg FILE         write a chart of throughput by size, one panel per family,
                    one line per device (plain SVG, any browser or viewer); a
                    MODEL case's panel has tokens/s against layers offloaded
  -html FILE        write a page with the table and the chart
  -log debug|trace  log to stderr (log/slog) each backend's settings and the scheduler's plans:
                    its splits, or every node with the reason it went where it went
  -list             list the devices and the cases, run nothing
  -strict           exit 1 when a result is WRONG (NMSE above its limit)
  -rpc HOST:PORT    add the devices of a ggml RPC server (tandem-rpc-server or
                    llama.cpp's rpc-server) as rows, "RPC0[HOST:PORT]" alone and
                    with the CPU through the scheduler, and print its per-call
                    latency and SET/GET throughput first
  -budget D         time spent repeating one case (default 300ms, quick 40ms)
  -maxrun D         largest estimated single run before a size is skipped
                    (default 1s, quick 60ms)
  -device-budget D  wall time one device (each row: CPU, Vulkan0, Vulkan0+CPU)
                    may spend on its cases, warm-ups and repeats included
                    (default 50s, quick 8s); once spent, its later cases are
                    skipped ("device time budget spent"). A late CPU reference
                    (see above) does not count against it
  -reps N           timed repeats at least (default 3, quick 2)

Progress goes to stderr (a live line on a terminal, one line per family
otherwise); the table goes to stdout. The exit status is 1 when a case fails
with an error (or is WRONG with -strict), 2 for bad flags.

Environment:
  TANDEM_VK_VALIDATE=1         Khronos validation layer on; any message it
                               prints is shown and makes the exit status 1
  TANDEM_VK_VISIBLE_DEVICES    which Vulkan devices, in order (0,1,...)
  TANDEM_VK_FORCE_STAGING=1    never map device memory (staging copies only)
  TANDEM_VK_LOADER             path of the Vulkan loader library
  TANDEM_SCHED_DEBUG=1|2       the scheduler prints its splits to stderr

Builds: with CGO_ENABLED=0 or -tags novulkan the Vulkan backend is left out
and the bench runs on the CPU alone, saying so.
`
