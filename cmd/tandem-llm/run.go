package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"time"

	_ "github.com/tandem-ml/tandem/backends/gl"
	_ "github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/llm"
)

// modelFlags are the flags shared by the commands that open a model.
type modelFlags struct {
	model   string
	ngl     int
	rpc     string
	threads int
	noMmap  bool
	f32Prod bool
}

func (f *modelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.model, "m", "", "model file (GGUF)")
	fs.IntVar(&f.ngl, "ngl", -1, "layers to offload to GPUs/RPC devices, counted from the last (output layer included); -1: all when a GPU or --rpc is present, else 0")
	fs.StringVar(&f.rpc, "rpc", "", "comma-separated RPC servers (host:port) whose devices take offloaded layers")
	fs.IntVar(&f.threads, "t", 0, "CPU threads (0: all cores)")
	fs.BoolVar(&f.noMmap, "no-mmap", false, "copy the weights into memory instead of mapping the file")
	fs.BoolVar(&f.f32Prod, "f32-products", false, f32ProductsUsage)
}

// f32ProductsUsage is the help of -f32-products (run and bench).
const f32ProductsUsage = "keep every product with the weights in f32 (F16 weights are otherwise rounded to bf16 for prompts on AVX-512 BF16 CPUs)"

// options turns the flags into llm.Options; -ngl -1 offloads everything when there is a real GPU
// or an RPC server (software Vulkan devices such as lavapipe are slower than the CPU backend).
func (f *modelFlags) options() llm.Options {
	o := llm.Options{GPULayers: f.ngl, Threads: f.threads, NoMmap: f.noMmap, F32Products: f.f32Prod}
	if f.rpc != "" {
		o.RPC = strings.Split(f.rpc, ",")
	}
	if f.ngl < 0 {
		o.GPULayers = 0
		if len(o.RPC) > 0 {
			o.GPULayers = -1
		}
		for _, d := range core.Devices() {
			if d.Type() == core.DeviceGPU || d.Type() == core.DeviceIGPU {
				o.GPULayers = -1
			}
		}
	}
	return o
}

func runCmd(args []string) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var mf modelFlags
	mf.register(fs)
	prompt := fs.String("p", "", "prompt")
	promptFile := fs.String("f", "", "read the prompt from this file")
	n := fs.Int("n", 64, "tokens to generate")
	ctxSize := fs.Int("c", 0, "context size (0: the model's, at most 4096)")
	batch := fs.Int("b", llm.DefaultBatchSize, "micro-batch size for the prompt")
	seed := fs.Uint64("s", 0, "sampling seed")
	temp := fs.Float64("temp", 0.8, "temperature (0: greedy)")
	topK := fs.Int("top-k", 40, "top-k sampling (0: off)")
	topP := fs.Float64("top-p", 0.95, "top-p sampling (1: off)")
	minP := fs.Float64("min-p", 0.05, "min-p sampling (0: off)")
	repeat := fs.Float64("repeat-penalty", 1.0, "repetition penalty (1: off)")
	repeatN := fs.Int("repeat-last-n", 64, "tokens the repetition penalty looks at")
	ctk := fs.String("ctk", "f16", "KV cache type: f16, f32 or q8_0")
	fa := fs.String("fa", "auto", "flash attention: on, off or auto")
	ignoreEOS := fs.Bool("ignore-eos", false, "keep generating past end-of-generation tokens")
	noBOS := fs.Bool("no-bos", false, "do not add BOS/EOS to the prompt")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the generation to this file")
	opProfile := fs.Bool("op-profile", false, "time each backend's nodes while generating (the CPU's by the clock, Vulkan's by device timestamps): a table per op and backend, and the time outside the nodes")
	opProfilePrompt := fs.Bool("op-profile-prompt", false, "time each backend's nodes while evaluating the prompt (as -op-profile does for the generated tokens)")
	randomPrompt := fs.Int("prompt-tokens", 0, "use this many seeded random token ids as the prompt instead of -p (as llama-bench does)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if mf.model == "" {
		return errors.New("run: -m model.gguf is required")
	}
	if *randomPrompt < 0 {
		return fmt.Errorf("run: -prompt-tokens %d is negative", *randomPrompt)
	}
	if *promptFile != "" {
		b, err := os.ReadFile(*promptFile)
		if err != nil {
			return err
		}
		*prompt = string(b)
	}
	kvType, err := llm.ParseKVType(*ctk)
	if err != nil {
		return err
	}
	var flash llm.FlashAttn
	switch *fa {
	case "auto":
		flash = llm.FlashAttnAuto
	case "on", "1":
		flash = llm.FlashAttnOn
	case "off", "0":
		flash = llm.FlashAttnOff
	default:
		return fmt.Errorf("run: -fa %q: want on, off or auto", *fa)
	}
	sampler, err := llm.NewSampler(llm.SamplerOptions{Temp: float32(*temp), TopK: *topK, TopP: float32(*topP),
		MinP: float32(*minP), RepeatPenalty: float32(*repeat), RepeatLastN: *repeatN, Seed: *seed})
	if err != nil {
		return err
	}

	m, err := llm.Open(mf.model, mf.options())
	if err != nil {
		return err
	}
	defer m.Close()
	rssLoad := residentBytes()
	s, err := m.NewSession(llm.SessionOptions{ContextSize: *ctxSize, KVType: kvType, FlashAttn: flash, BatchSize: *batch})
	if err != nil {
		return err
	}
	defer s.Close()
	ids, err := m.Tokenize(*prompt, !*noBOS)
	if err != nil {
		return err
	}
	if *randomPrompt > 0 {
		ids = randomTokens(*randomPrompt, m.Vocab().Len(), *seed)
		*prompt = ""
	}
	if len(ids) == 0 {
		return errors.New("run: the prompt has no tokens (give -p, or drop -no-bos)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *cpuProfile != "" {
		pf, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var profs []profiled // the backends whose nodes -op-profile times
	for _, be := range m.Backends() {
		if p, ok := be.(core.OpProfiler); ok && (*opProfile || *opProfilePrompt) {
			profs = append(profs, profiled{be.Name(), p})
			p.SetOpProfile(*opProfilePrompt)
		}
	}
	fmt.Print(*prompt)
	first := true
	promptOps := make([][]core.OpTime, len(profs)) // the prompt's profiles, taken when the first token arrives
	out, genErr := s.Generate(ctx, ids, llm.GenerateOptions{MaxTokens: *n, Sampler: sampler, IgnoreEOG: *ignoreEOS,
		OnToken: func(_ int32, text string) error {
			if first { // the prompt is done: profile the generated tokens only, or stop
				first = false
				for i, p := range profs {
					if *opProfilePrompt {
						promptOps[i] = p.OpProfile()
					}
					p.SetOpProfile(*opProfile)
				}
			}
			fmt.Print(text)
			return nil
		}})
	fmt.Println()
	printTimings(m, s, len(out), rssLoad)
	t := s.LastTimings()
	for i, p := range profs {
		if *opProfilePrompt {
			printOpProfile(os.Stderr, p.name, "prompt", promptOps[i], t.PromptTokens, t.PromptDuration)
		}
		if *opProfile {
			printOpProfile(os.Stderr, p.name, "generated", p.OpProfile(), t.GenTokens, t.GenDuration)
		}
		p.SetOpProfile(false)
	}
	return genErr
}

// profiled is a backend of the model whose nodes -op-profile times.
type profiled struct {
	name string
	core.OpProfiler
}

// printOpProfile writes a backend's per-op times of tokens (the prompt's or the generated ones,
// which took total), and how much of that time was spent outside its nodes (building, planning
// and launching graphs, sampling, other devices; for a GPU, the host's recording and the device's
// idle time too). The CPU's times are wall times of its nodes, a GPU's the device's own.
func printOpProfile(w io.Writer, name, what string, ops []core.OpTime, tokens int, total time.Duration) {
	var sum time.Duration
	for _, o := range ops {
		sum += o.Time
	}
	if sum <= 0 || tokens == 0 {
		return
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(tokens) }
	fmt.Fprintf(w, "\n%s nodes of the %d %s tokens (µs per token):\n", name, tokens, what)
	for _, o := range ops {
		fmt.Fprintf(w, "  %-28s %6d nodes %10.1f µs %5.1f%%\n", o.Op, o.Nodes, per(o.Time), 100*float64(o.Time)/float64(sum))
	}
	out := total - sum
	fmt.Fprintf(w, "  %-28s %17.1f µs %5.1f%% of the %s tokens' time\n", "outside the "+name+" nodes", per(out),
		100*float64(out)/float64(total), what)
}

// printTimings writes llama.cpp-style timings and the layer placement to stderr.
func printTimings(m *llm.Model, s *llm.Session, generated int, rssLoad int64) {
	t := s.LastTimings()
	w := os.Stderr
	ms := func(d float64) float64 { return d * 1000 }
	fmt.Fprintf(w, "\nload time        = %10.2f ms\n", ms(m.LoadTime().Seconds()))
	fmt.Fprintf(w, "prompt eval time = %10.2f ms / %5d tokens (%8.2f ms per token, %8.2f tokens per second)\n",
		ms(t.PromptDuration.Seconds()), t.PromptTokens, ms(t.PromptDuration.Seconds())/float64(max(t.PromptTokens, 1)), t.PromptTPS())
	fmt.Fprintf(w, "eval time        = %10.2f ms / %5d runs   (%8.2f ms per token, %8.2f tokens per second)\n",
		ms(t.GenDuration.Seconds()), t.GenTokens, ms(t.GenDuration.Seconds())/float64(max(t.GenTokens, 1)), t.GenTPS())
	fmt.Fprintf(w, "first token      = %10.2f ms; %d tokens generated\n", ms(t.FirstTokenDelay.Seconds()), generated)
	st := s.Stats()
	fmt.Fprintf(w, "KV cache         = %d cells, %s, %.1f MiB; flash attention %v; %d splits, %d copies per graph\n",
		s.ContextSize(), s.KVType(), float64(st.KVBytes)/(1<<20), s.FlashAttn(), st.Splits, st.Copies)
	fmt.Fprintf(w, "compute buffers  = %.1f MiB (all devices)\n", float64(st.ComputeBytes)/(1<<20))
	fmt.Fprintf(w, "layers           = %s\n", placement(m))
	if rss := residentBytes(); rss > 0 {
		fmt.Fprintf(w, "resident memory  = %.1f MiB after load, %.1f MiB now (model file %.1f MiB)\n",
			float64(rssLoad)/(1<<20), float64(rss)/(1<<20), float64(m.FileSize())/(1<<20))
	}
}

// randomTokens returns n seeded random ids below vocab.
func randomTokens(n, vocab int, seed uint64) []int32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(rng.IntN(vocab))
	}
	return ids
}

// residentBytes is the process's resident memory (VmRSS), or 0 where /proc does not say.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb << 10
		}
	}
	return 0
}

// placement summarizes where each layer runs: "0-11 CPU, 12-22 Vulkan0 (22 = output)".
func placement(m *llm.Model) string {
	n := m.HParams.NLayer
	var parts []string
	start := 0
	for il := 1; il <= n+1; il++ {
		if il == n+1 || m.LayerBackend(il) != m.LayerBackend(start) {
			r := fmt.Sprint(start)
			if il-1 > start {
				r = fmt.Sprintf("%d-%d", start, il-1)
			}
			parts = append(parts, r+" "+m.LayerBackend(start))
			start = il
		}
	}
	return fmt.Sprintf("%s (%d = output)", strings.Join(parts, ", "), n)
}
