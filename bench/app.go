package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	_ "github.com/tandem-ml/tandem/backends/cpu" // registers the CPU device
	"github.com/tandem-ml/tandem/backends/vulkan"
)

// Main runs the bench with the given arguments and returns the exit status: 0 ok, 1 a case failed
// (or was wrong, with -strict, or the validation layer complained), 2 bad usage.
func Main(args []string, stdout, stderr io.Writer) int {
	cfg, err := ParseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 2
	}
	suite := Suite()
	var model *modelSource
	if cfg.Model != "" {
		if model, err = openModelSource(cfg.Model); err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			return 2
		}
		suite = append(suite, modelFamilies(model)...)
	}
	fams, unmatched := selectFamilies(suite, cfg.Ops)
	if len(unmatched) > 0 {
		var ids []string
		for _, f := range suite {
			ids = append(ids, f.ID)
		}
		hint := ""
		if model == nil {
			hint = " (the model families need -model FILE)"
		}
		fmt.Fprintf(stderr, "bench: -ops %s matches no case; the cases are: %s%s\n", strings.Join(unmatched, ","), strings.Join(ids, " "), hint)
		return 2
	}
	fams = quickFamilies(fams, cfg)
	disc, err := Discover(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 2
	}
	disc.Model = model
	WriteHeader(stdout, cfg, disc)
	if disc.RPC != nil {
		defer disc.RPC.Close()
		if !cfg.List {
			if err := WriteRPCFigures(stdout, disc.RPC, cfg.Quick); err != nil {
				fmt.Fprintln(stderr, "bench: rpc figures:", err)
				return 1
			}
		}
	}
	runner := &Runner{Policy: cfg.Policy, Sizes: cfg.Sizes, Quick: cfg.Quick, Targets: disc.Targets, NGL: cfg.NGL, Progress: NewProgress(stderr)}
	if cfg.Log != LogOff {
		runner.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: cfg.Log}))
	}
	if cfg.List {
		writeList(stdout, runner, fams)
		return 0
	}

	started := time.Now()
	results := runner.Run(fams)
	elapsed := time.Since(started)
	status := 0
	if runner.CloseErr != nil {
		fmt.Fprintln(stderr, "bench:", runner.CloseErr)
		status = 1
	}
	if err := closeTargets(disc.Targets); err != nil {
		fmt.Fprintln(stderr, "bench: closing backends:", err)
		status = 1
	}
	if err := vulkan.Shutdown(); err != nil {
		fmt.Fprintln(stderr, "bench: vulkan shutdown:", err)
		status = 1
	}

	fmt.Fprintln(stdout)
	if err := ResultsTable(results).Write(stdout); err != nil {
		fmt.Fprintln(stderr, "bench:", err)
		return 1
	}
	fmt.Fprintln(stdout)
	WriteSummary(stdout, Summarize(results))
	fmt.Fprintf(stdout, "total %.1fs\n", elapsed.Seconds())

	for _, r := range results {
		if r.Status == StatusError {
			status = 1
		}
		if r.Wrong && cfg.Strict {
			status = 1
		}
	}
	if msgs := vulkan.ValidationMessages(); len(msgs) > 0 {
		fmt.Fprintf(stderr, "bench: the Vulkan validation layer reported %d messages:\n", len(msgs))
		for i, m := range msgs {
			if i == 20 {
				fmt.Fprintf(stderr, "  ... and %d more\n", len(msgs)-i)
				break
			}
			fmt.Fprintln(stderr, "  "+m)
		}
		status = 1
	}

	if cfg.JSON != "" {
		if err := writeFile(cfg.JSON, func(w io.Writer) error {
			return WriteJSON(w, NewReport(cfg, disc, results, started, elapsed))
		}); err != nil {
			fmt.Fprintln(stderr, "bench:", err)
			status = 1
		} else {
			wrote(stderr, "results", cfg.JSON)
		}
	}
	if cfg.SVG != "" || cfg.HTML != "" {
		chart := ChartFromResults("tandem bench: throughput by size", chartSubtitle(cfg, disc), results)
		chart.Labels = softwareLabels(disc)
		if cfg.SVG != "" {
			if err := writeFile(cfg.SVG, func(w io.Writer) error { return WriteSVG(w, chart) }); err != nil {
				fmt.Fprintln(stderr, "bench:", err)
				status = 1
			} else {
				wrote(stderr, "chart", cfg.SVG)
			}
		}
		if cfg.HTML != "" {
			if err := writeFile(cfg.HTML, func(w io.Writer) error { return WriteHTML(w, cfg, disc, results, chart) }); err != nil {
				fmt.Fprintln(stderr, "bench:", err)
				status = 1
			} else {
				wrote(stderr, "page", cfg.HTML)
			}
		}
	}
	return status
}

// wrote tells where an output file went (nothing for "-", which is stdout).
func wrote(w io.Writer, what, path string) {
	if path == "-" {
		return
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	fmt.Fprintf(w, "bench: wrote the %s to %s\n", what, path)
}

// softwareLabels names software devices "(software)" in the chart's legend, for the device and
// for the scheduler over it.
func softwareLabels(disc *Discovery) map[string]string {
	labels := map[string]string{}
	for _, d := range disc.Devices {
		if d.Software {
			labels[d.Name] = d.Name + " (software)"
			labels[d.Name+"+CPU"] = d.Name + " (software)+CPU"
		}
	}
	return labels
}

// writeFile creates path and writes it with f; "-" is stdout.
func writeFile(path string, f func(io.Writer) error) error {
	if path == "-" {
		return f(os.Stdout)
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := f(fh); err != nil {
		fh.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return fh.Close()
}

// quickFamilies leaves the Full families out of a -quick run that names no -ops.
func quickFamilies(fams []*Family, cfg *Config) []*Family {
	if !cfg.Quick || len(cfg.Ops) > 0 {
		return fams
	}
	var out []*Family
	for _, f := range fams {
		if !f.Full {
			out = append(out, f)
		}
	}
	return out
}

func chartSubtitle(cfg *Config, disc *Discovery) string {
	var parts []string
	for _, d := range disc.Devices {
		parts = append(parts, d.Name+": "+d.Description)
	}
	mode := "default run"
	if cfg.Quick {
		mode = "-quick run"
	}
	scales := "log scales"
	if cfg.Model != "" {
		scales = "log scales (MODEL panels: layers offloaded on a linear axis)"
	}
	return fmt.Sprintf("%s; %s; %s; median of repeats", strings.Join(parts, "; "), mode, scales)
}

// WriteHeader prints the run's setting and the devices, and why Vulkan is absent when it is.
func WriteHeader(w io.Writer, cfg *Config, disc *Discovery) {
	mode := "default sizes"
	if cfg.Quick {
		mode = "-quick sizes"
	}
	if !cfg.Sizes.Empty() {
		mode = "-sizes"
	}
	p := cfg.Policy
	fmt.Fprintf(w, "tandem bench · %s %s/%s · %d CPUs · %s · median of ≥%d repeats (~%v each case) after %d warm-up\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), mode, p.MinReps, p.Budget, p.Warmup)
	fmt.Fprintln(w, "devices:")
	shown := map[string]bool{}
	for _, t := range disc.Targets {
		if !t.Hidden {
			shown[t.Dev.Name()] = true
		}
	}
	t := &Table{}
	for _, d := range disc.Devices {
		desc := d.Description
		if d.Type == "CPU" {
			desc += fmt.Sprintf(", threads %s", joinInts(cfg.Threads))
		}
		if d.MemoryMiB > 0 {
			desc += fmt.Sprintf(", %d MiB", d.MemoryMiB)
		}
		if d.Software {
			desc += " (software: runs on the CPU's cores)"
		}
		if !shown[d.Name] {
			desc += " (not selected)"
		}
		t.Rows = append(t.Rows, []string{"  " + d.Name, d.Type, desc})
		if len(d.Features) > 0 {
			t.Rows = append(t.Rows, []string{"", "", "features: " + featureLine(d.Features)})
		}
	}
	if !disc.VulkanOK {
		t.Rows = append(t.Rows, []string{"  Vulkan", "—", "not used: " + disc.VulkanWhy})
	}
	if !disc.GLOK && disc.GLWhy != "" {
		t.Rows = append(t.Rows, []string{"  GL", "—", "not used: " + disc.GLWhy})
	}
	t.Header = []string{"", "", ""}
	var b strings.Builder
	t.Write(&b)
	// drop the empty header line
	fmt.Fprint(w, strings.TrimPrefix(b.String(), "\n"))
	if m := disc.Model; m != nil {
		fmt.Fprintf(w, "model: %s: %s, %s, %.2f M params, %d layers + output (-ngl all = %d), KV cache F16\n",
			m.Path, m.Info.Desc, fmtBytes(float64(m.Info.Bytes)), float64(m.Info.Params)/1e6, m.Layers-1, m.Layers)
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}

// featureLine prints features sorted by name: boolean ones as names when on, others as name=value.
func featureLine(f map[string]string) string {
	var on, kv []string
	for k, v := range f {
		switch v {
		case "1":
			on = append(on, k)
		case "0":
		default:
			kv = append(kv, k+"="+v)
		}
	}
	sortStrings(on)
	sortStrings(kv)
	return strings.Join(append(kv, on...), " ")
}

func writeList(w io.Writer, r *Runner, fams []*Family) {
	fmt.Fprintln(w, "\ncases (family id: sizes):")
	for _, f := range fams {
		var ns []string
		for _, c := range r.Cases(f) {
			ns = append(ns, fmtCount(c.N))
		}
		var ts []string
		for _, t := range r.Targets {
			if applies(t, f) && !t.Hidden {
				ts = append(ts, t.Name)
			}
		}
		fmt.Fprintf(w, "  %-18s %-24s N = %s  [%s]  on %s\n", f.ID, f.Title, strings.Join(ns, ", "), f.XLabel, strings.Join(ts, ", "))
	}
}
