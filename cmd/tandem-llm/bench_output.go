package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// benchTS is a tokens-per-second figure, written to JSON as llama-bench writes it: fixed-point
// with six decimals (so 0 reads back as a float, 0.000000, not as an integer).
type benchTS float64

// MarshalJSON writes t as llama-bench does (%f).
func (t benchTS) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(t), 'f', 6, 64), nil
}

// benchFormats are the output formats of -o and -oe, llama-bench's.
var benchFormats = []string{"md", "csv", "json", "jsonl", "sql"}

// benchPrinter writes results in one format as they come: a header before the first, each row,
// a footer after the last (llama-bench's printers).
type benchPrinter interface {
	header(w io.Writer)
	row(w io.Writer, r benchResult) error
	footer(w io.Writer)
}

// newBenchPrinter returns the printer of format f ("none": nil), or an error naming the flag.
func newBenchPrinter(f, flagName string) (benchPrinter, error) {
	switch f {
	case "md":
		return &mdPrinter{}, nil
	case "csv":
		return csvPrinter{}, nil
	case "json":
		return &jsonPrinter{}, nil
	case "jsonl":
		return jsonlPrinter{}, nil
	case "sql":
		return sqlPrinter{}, nil
	case "none":
		if flagName == "oe" {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("bench: -%s %q: want %s", flagName, f, strings.Join(benchFormats, ", "))
}

// benchColumn is a field of the CSV and SQL outputs: its name, SQL type and text.
type benchColumn struct {
	name, sqlType string
	text          func(r *benchResult) string
}

func itoa[T ~int | ~int64](v T) string { return strconv.FormatInt(int64(v), 10) }

func btoa(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

// benchColumns are llama-bench's CSV and SQL columns in its order (the JSON fields less the
// samples), then tandem's own.
var benchColumns = []benchColumn{
	{"build_commit", "TEXT", func(r *benchResult) string { return r.BuildCommit }},
	{"build_number", "INTEGER", func(r *benchResult) string { return itoa(r.BuildNumber) }},
	{"cpu_info", "TEXT", func(r *benchResult) string { return r.CPUInfo }},
	{"gpu_info", "TEXT", func(r *benchResult) string { return r.GPUInfo }},
	{"backends", "TEXT", func(r *benchResult) string { return r.Backends }},
	{"model_filename", "TEXT", func(r *benchResult) string { return r.ModelFile }},
	{"model_type", "TEXT", func(r *benchResult) string { return r.ModelType }},
	{"model_size", "INTEGER", func(r *benchResult) string { return itoa(r.ModelSize) }},
	{"model_n_params", "INTEGER", func(r *benchResult) string { return itoa(r.ModelParams) }},
	{"n_batch", "INTEGER", func(r *benchResult) string { return itoa(r.NBatch) }},
	{"n_ubatch", "INTEGER", func(r *benchResult) string { return itoa(r.NUBatch) }},
	{"n_threads", "INTEGER", func(r *benchResult) string { return itoa(r.NThreads) }},
	{"cpu_mask", "TEXT", func(r *benchResult) string { return r.CPUMask }},
	{"cpu_strict", "INTEGER", func(r *benchResult) string { return btoa(r.CPUStrict) }},
	{"poll", "INTEGER", func(r *benchResult) string { return itoa(r.Poll) }},
	{"type_k", "TEXT", func(r *benchResult) string { return r.TypeK }},
	{"type_v", "TEXT", func(r *benchResult) string { return r.TypeV }},
	{"n_gpu_layers", "INTEGER", func(r *benchResult) string { return itoa(r.NGPULayers) }},
	{"n_cpu_moe", "INTEGER", func(r *benchResult) string { return itoa(r.NCPUMoE) }},
	{"split_mode", "TEXT", func(r *benchResult) string { return r.SplitMode }},
	{"main_gpu", "INTEGER", func(r *benchResult) string { return itoa(r.MainGPU) }},
	{"no_kv_offload", "INTEGER", func(r *benchResult) string { return btoa(r.NoKVOffload) }},
	{"flash_attn", "INTEGER", func(r *benchResult) string { return itoa(r.FlashAttn) }},
	{"devices", "TEXT", func(r *benchResult) string { return r.Devices }},
	{"tensor_split", "TEXT", func(r *benchResult) string { return r.TensorSplit }},
	{"tensor_buft_overrides", "TEXT", func(r *benchResult) string { return r.BuftOverrides }},
	{"load_mode", "TEXT", func(r *benchResult) string { return r.LoadMode }},
	{"embeddings", "INTEGER", func(r *benchResult) string { return btoa(r.Embeddings) }},
	{"no_op_offload", "INTEGER", func(r *benchResult) string { return itoa(r.NoOpOffload) }},
	{"no_host", "INTEGER", func(r *benchResult) string { return btoa(r.NoHost) }},
	{"fit_target", "INTEGER", func(r *benchResult) string { return itoa(r.FitTarget) }},
	{"fit_min_ctx", "INTEGER", func(r *benchResult) string { return itoa(r.FitMinCtx) }},
	{"n_prompt", "INTEGER", func(r *benchResult) string { return itoa(r.NPrompt) }},
	{"n_gen", "INTEGER", func(r *benchResult) string { return itoa(r.NGen) }},
	{"n_depth", "INTEGER", func(r *benchResult) string { return itoa(r.NDepth) }},
	{"test_time", "TEXT", func(r *benchResult) string { return r.TestTime }},
	{"avg_ns", "INTEGER", func(r *benchResult) string { return itoa(r.AvgNs) }},
	{"stddev_ns", "INTEGER", func(r *benchResult) string { return itoa(r.StddevNs) }},
	{"avg_ts", "REAL", func(r *benchResult) string { return ftoa(float64(r.AvgTs)) }},
	{"stddev_ts", "REAL", func(r *benchResult) string { return ftoa(float64(r.StddevTs)) }},
	{"tandem_load_ms", "REAL", func(r *benchResult) string { return ftoa(r.LoadMs) }},
	{"tandem_compute_bytes", "INTEGER", func(r *benchResult) string { return itoa(r.ComputeBytes) }},
	{"tandem_kv_bytes", "INTEGER", func(r *benchResult) string { return itoa(r.KVBytes) }},
	{"tandem_plans_per_128", "REAL", func(r *benchResult) string { return ftoa(r.PlansPer128) }},
	{"tandem_builds_per_128", "REAL", func(r *benchResult) string { return ftoa(r.BuildsPer128) }},
	{"tandem_copies_per_graph", "INTEGER", func(r *benchResult) string { return itoa(r.CopiesPerGraph) }},
	{"tandem_token_bytes", "INTEGER", func(r *benchResult) string { return itoa(r.TokenBytes) }},
	{"tandem_weights_gbs", "REAL", func(r *benchResult) string { return ftoa(r.WeightsGBs) }},
	{"tandem_read_gbs", "REAL", func(r *benchResult) string { return ftoa(r.ReadGBs) }},
	{"tandem_bandwidth_fraction", "REAL", func(r *benchResult) string { return ftoa(r.BandwidthUse) }},
}

// mdPrinter is llama-bench's table, with tandem's own figures of each row on stderr (errw).
type mdPrinter struct{ build string }

func (p *mdPrinter) header(w io.Writer) {
	fmt.Fprintf(w, "| %-30s | %10s | %10s | %-10s | %7s | %3s | %2s | %15s | %20s |\n", "model", "size", "params", "backend", "threads", "ngl", "fa", "test", "t/s")
	fmt.Fprintf(w, "| %s | %s: | %s: | %s | %s: | %s: | %s: | %s: | %s: |\n", strings.Repeat("-", 30), strings.Repeat("-", 9),
		strings.Repeat("-", 9), strings.Repeat("-", 10), strings.Repeat("-", 6), "--", "-", strings.Repeat("-", 14), strings.Repeat("-", 19))
}

func (p *mdPrinter) row(w io.Writer, r benchResult) error {
	size := fmt.Sprintf("%.2f MiB", float64(r.ModelSize)/(1<<20))
	if r.ModelSize >= 1<<30 {
		size = fmt.Sprintf("%.2f GiB", float64(r.ModelSize)/(1<<30))
	}
	params := fmt.Sprintf("%.2f M", float64(r.ModelParams)/1e6)
	if r.ModelParams >= 1e9 {
		params = fmt.Sprintf("%.2f B", float64(r.ModelParams)/1e9)
	}
	p.build = fmt.Sprintf("%s (%d)", r.BuildCommit, r.BuildNumber)
	_, err := fmt.Fprintf(w, "| %-30s | %10s | %10s | %-10s | %7d | %3d | %2d | %15s | %20s |\n", r.ModelType, size, params, r.backendLabel,
		r.NThreads, r.NGPULayers, r.FlashAttn, r.testName(), fmt.Sprintf("%.2f ± %.2f", r.AvgTs, r.StddevTs))
	return err
}

func (p *mdPrinter) footer(w io.Writer) {
	if p.build != "" {
		fmt.Fprintf(w, "\nbuild: %s\n", p.build)
	}
}

// csvPrinter writes llama-bench's CSV: a header line, then every field of a row quoted.
type csvPrinter struct{}

func (csvPrinter) header(w io.Writer) {
	names := make([]string, len(benchColumns))
	for i, c := range benchColumns {
		names[i] = c.name
	}
	fmt.Fprintln(w, strings.Join(names, ","))
}

func (csvPrinter) row(w io.Writer, r benchResult) error {
	vals := make([]string, len(benchColumns))
	for i, c := range benchColumns {
		vals[i] = `"` + strings.ReplaceAll(c.text(&r), `"`, `""`) + `"`
	}
	_, err := fmt.Fprintln(w, strings.Join(vals, ","))
	return err
}

func (csvPrinter) footer(io.Writer) {}

// jsonPrinter writes one JSON array of the rows.
type jsonPrinter struct{ n int }

func (p *jsonPrinter) header(w io.Writer) { fmt.Fprint(w, "[") }

func (p *jsonPrinter) row(w io.Writer, r benchResult) error {
	b, err := json.MarshalIndent(r, "  ", "  ")
	if err != nil {
		return err
	}
	sep := "\n  "
	if p.n > 0 {
		sep = ",\n  "
	}
	p.n++
	_, err = fmt.Fprintf(w, "%s%s", sep, b)
	return err
}

func (p *jsonPrinter) footer(w io.Writer) { fmt.Fprintln(w, "\n]") }

// jsonlPrinter writes a JSON object per line.
type jsonlPrinter struct{}

func (jsonlPrinter) header(io.Writer) {}

func (jsonlPrinter) row(w io.Writer, r benchResult) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func (jsonlPrinter) footer(io.Writer) {}

// sqlPrinter writes llama-bench's SQL: the llama_bench table, then an INSERT per row.
type sqlPrinter struct{}

func (sqlPrinter) header(w io.Writer) {
	fmt.Fprintln(w, "CREATE TABLE IF NOT EXISTS llama_bench (")
	for i, c := range benchColumns {
		sep := ","
		if i == len(benchColumns)-1 {
			sep = ""
		}
		fmt.Fprintf(w, "  %s %s%s\n", c.name, c.sqlType, sep)
	}
	fmt.Fprintln(w, ");")
	fmt.Fprintln(w)
}

func (sqlPrinter) row(w io.Writer, r benchResult) error {
	names := make([]string, len(benchColumns))
	vals := make([]string, len(benchColumns))
	for i, c := range benchColumns {
		names[i] = c.name
		vals[i] = "'" + strings.ReplaceAll(c.text(&r), "'", "''") + "'"
	}
	_, err := fmt.Fprintf(w, "INSERT INTO llama_bench (%s) VALUES (%s);\n", strings.Join(names, ", "), strings.Join(vals, ", "))
	return err
}

func (sqlPrinter) footer(io.Writer) {}

// printExtras writes tandem's own figures of a row (stderr, so the table stays llama-bench's).
func printExtras(w io.Writer, r benchResult) {
	fmt.Fprintf(w, "  %s: load %.0f ms, compute buffers %.1f MiB, KV %.1f MiB, %.2g plans and %.2g graph builds per 128 tokens, %d copies per graph\n",
		r.testName(),
		r.LoadMs, float64(r.ComputeBytes)/(1<<20), float64(r.KVBytes)/(1<<20), r.PlansPer128, r.BuildsPer128, r.CopiesPerGraph)
	if r.TokenBytes > 0 {
		fmt.Fprintf(w, "  %s: weights %.3f GB per token, read at %.2f GB/s", r.testName(), float64(r.TokenBytes)/1e9, r.WeightsGBs)
		if r.ReadGBs > 0 {
			fmt.Fprintf(w, ": %.0f%% of the CPU's %.2f GB/s memory read with %d threads", 100*r.BandwidthUse, r.ReadGBs, r.NThreads)
		}
		fmt.Fprintln(w)
	}
}
