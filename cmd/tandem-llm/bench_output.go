package main

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
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

// benchColumn is a field of the CSV and SQL outputs: its name, SQL type and benchResult field.
type benchColumn struct {
	name, sqlType string
	field         int
}

// benchColumns are the CSV and SQL columns: benchResult's JSON fields in their order (llama-bench's,
// then tandem's own) but the samples and the older llama-bench's use_mmap, which its CSV has not.
var benchColumns = columnsOf(reflect.TypeFor[benchResult]())

func columnsOf(t reflect.Type) []benchColumn {
	var cols []benchColumn
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "", "-", "samples_ns", "samples_ts", "use_mmap":
			continue
		}
		sqlType := "INTEGER" // ints, and bools as 0 or 1
		switch f.Type.Kind() {
		case reflect.String:
			sqlType = "TEXT"
		case reflect.Float64:
			sqlType = "REAL"
		}
		cols = append(cols, benchColumn{name, sqlType, i})
	}
	return cols
}

// text is column c of r as llama-bench writes it: bools as 0 or 1, floats with %f.
func (c benchColumn) text(r *benchResult) string {
	v := reflect.ValueOf(r).Elem().Field(c.field)
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		if v.Bool() {
			return "1"
		}
		return "0"
	case reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'f', 6, 64)
	}
	return strconv.FormatInt(v.Int(), 10)
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
