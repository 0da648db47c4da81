package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// capture runs f with os.Stdout redirected and returns what it printed.
func capture(t *testing.T, f func() error) string {
	t.Helper()
	return captureFile(t, &os.Stdout, f)
}

// captureStderr runs f with os.Stderr redirected and returns what it printed there.
func captureStderr(t *testing.T, f func()) string {
	t.Helper()
	return captureFile(t, &os.Stderr, func() error { f(); return nil })
}

// captureFile runs f with *file redirected to a pipe and returns what it wrote there.
func captureFile(t *testing.T, file **os.File, f func() error) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := *file
	*file = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	ferr := f()
	w.Close()
	*file = old
	out := <-done
	if ferr != nil {
		t.Fatalf("%v\n%s", ferr, out)
	}
	return out
}

// run -op-profile prints the CPU nodes' table of the generated tokens on stderr, and
// -op-profile-prompt the prompt's (the prompt's matrix products take more than one row).
func TestRunOpProfile(t *testing.T) {
	model := filepath.Join(t.TempDir(), "tiny.gguf")
	capture(t, func() error { return genCmd([]string{"-o", model, "-shape", "tiny-llama", "-type", "q8_0"}) })
	for _, tc := range []struct {
		flag  string
		wants []string
	}{
		{"-op-profile", []string{"CPU nodes of the 5 generated tokens", "MUL_MAT q8_0 1-row", "outside the CPU nodes", "of the generated tokens' time"}},
		{"-op-profile-prompt", []string{"prompt tokens (µs per token)", "MUL_MAT q8_0 ", "outside the CPU nodes", "of the prompt tokens' time"}},
	} {
		out := captureStderr(t, func() {
			capture(t, func() error {
				return runCmd([]string{"-m", model, "-p", "Once upon a time", "-n", "6", "-t", "2", "--temp", "0", "--ignore-eos", tc.flag})
			})
		})
		for _, want := range tc.wants {
			if !strings.Contains(out, want) {
				t.Errorf("run %s: no %q in\n%s", tc.flag, want, out)
			}
		}
		if tc.flag == "-op-profile-prompt" && strings.Contains(out, "generated tokens (") {
			t.Errorf("run -op-profile-prompt printed the generated tokens' table too:\n%s", out)
		}
	}
}

func TestCommands(t *testing.T) {
	defer func(n int64) { benchReadBytes = n }(benchReadBytes)
	benchReadBytes = 8 << 20
	model := filepath.Join(t.TempDir(), "tiny.gguf")
	capture(t, func() error { return genCmd([]string{"-o", model, "-shape", "tiny-llama", "-type", "q8_0"}) })

	out := capture(t, func() error {
		return runCmd([]string{"-m", model, "-p", "Once upon a time", "-n", "5", "-t", "1", "--temp", "0", "--ignore-eos"})
	})
	if !strings.HasPrefix(out, "Once upon a time") {
		t.Errorf("run printed %q", out)
	}
	// min-p above 1 keeps the most likely token (it panicked with an empty candidate list)
	out = capture(t, func() error {
		return runCmd([]string{"-m", model, "-p", "Once upon a time", "-n", "3", "-t", "1", "-min-p", "5", "--ignore-eos"})
	})
	if !strings.HasPrefix(out, "Once upon a time") {
		t.Errorf("run -min-p 5 printed %q", out)
	}
	if err := runCmd([]string{"-m", model, "-prompt-tokens", "-2"}); err == nil || !strings.Contains(err.Error(), "-prompt-tokens") {
		t.Errorf("run -prompt-tokens -2: %v, want an error naming the flag", err)
	}
	out = capture(t, func() error { return tokenizeCmd([]string{"-m", model, "-p", "Once upon", "-ids"}) })
	if !strings.HasPrefix(out, "[1, ") {
		t.Errorf("tokenize -ids printed %q, want BOS (1) first", out)
	}
	out = capture(t, func() error {
		return benchCmd([]string{"-m", model, "-p", "16", "-n", "4", "-r", "2", "-t", "1", "-o", "json"})
	})
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("bench -o json: %v\n%s", err, out)
	}
	if len(rows) != 2 || rows[0]["n_prompt"] != 16.0 || rows[1]["n_gen"] != 4.0 {
		t.Fatalf("bench rows %v", rows)
	}
	for _, k := range append(llamaBenchFields, "samples_ns", "samples_ts") {
		if _, ok := rows[0][k]; !ok {
			t.Errorf("bench json lacks %s", k)
		}
	}
	// the fields come in llama-bench's order, and t/s figures read back as floats (0.000000)
	if i := strings.Index(out, `"build_commit"`); i < 0 || !fieldsInOrder(out[i:], llamaBenchFields) {
		t.Errorf("bench json: fields out of llama-bench's order:\n%s", out)
	}
	if !regexp.MustCompile(`"avg_ts": \d+\.\d{6},\s+"stddev_ts": \d+\.\d{6},`).MatchString(out) {
		t.Errorf("bench json: stddev_ts not written as llama-bench writes it (%%f)")
	}
	if ts, _ := rows[1]["avg_ts"].(float64); ts <= 0 {
		t.Errorf("tg avg_ts %v", rows[1]["avg_ts"])
	}
	// tandem's own fields: generation reuses its graph and plan (none made in the timed runs)
	if rows[1]["tandem_plans_per_128"] != 0.0 || rows[1]["tandem_builds_per_128"] != 0.0 {
		t.Errorf("tg: %v plans and %v builds per 128 tokens in the timed runs, want 0",
			rows[1]["tandem_plans_per_128"], rows[1]["tandem_builds_per_128"])
	}
	if cb, _ := rows[0]["tandem_compute_bytes"].(float64); cb <= 0 {
		t.Errorf("pp tandem_compute_bytes %v", rows[0]["tandem_compute_bytes"])
	}
	if lm, _ := rows[0]["tandem_load_ms"].(float64); lm <= 0 {
		t.Errorf("tandem_load_ms %v", rows[0]["tandem_load_ms"])
	}
	// the generation row's weight reads against the memory read measured in the same run
	tb, _ := rows[1]["tandem_token_bytes"].(float64)
	size, _ := rows[1]["model_size"].(float64)
	if tb <= 0 || tb >= size {
		t.Errorf("tg tandem_token_bytes %v of a %v-byte model", tb, size)
	}
	ts, _ := rows[1]["avg_ts"].(float64)
	if w, _ := rows[1]["tandem_weights_gbs"].(float64); math.Abs(w-tb*ts/1e9) > 1e-9*w {
		t.Errorf("tg tandem_weights_gbs %v, want token bytes x t/s = %v", w, tb*ts/1e9)
	}
	if rd, _ := rows[1]["tandem_read_gbs"].(float64); rd <= 0 {
		t.Errorf("tg tandem_read_gbs %v", rows[1]["tandem_read_gbs"])
	}
	if _, ok := rows[0]["tandem_token_bytes"]; ok {
		t.Errorf("the pp row has tandem_token_bytes")
	}
	md := capture(t, func() error { return benchCmd([]string{"-m", model, "-p", "8", "-n", "0", "-r", "1", "-t", "1"}) })
	if !strings.Contains(md, "| model ") || !strings.Contains(md, "pp8") {
		t.Errorf("bench table:\n%s", md)
	}
	// -d: llama-bench's depth, a row per depth, the depth in n_depth and the test's name; the
	// timed tokens of a generation after a prefill build one graph per repetition (its first)
	out = capture(t, func() error {
		return benchCmd([]string{"-m", model, "-p", "0", "-n", "4", "-d", "0,6", "-r", "2", "-t", "1", "-o", "json", "-bw=false"})
	})
	rows = nil
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("bench -d -o json: %v\n%s", err, out)
	}
	if len(rows) != 2 || rows[0]["n_depth"] != 0.0 || rows[1]["n_depth"] != 6.0 || rows[1]["n_gen"] != 4.0 {
		t.Fatalf("bench -d rows %v", rows)
	}
	if b := rows[1]["tandem_builds_per_128"]; b != 32.0 {
		t.Errorf("tg4 at depth 6: %v graph builds per 128 timed tokens, want 32 (one per repetition)", b)
	}
	md = capture(t, func() error {
		return benchCmd([]string{"-m", model, "-p", "0", "-n", "2", "-d", "5", "-r", "1", "-t", "1", "-bw=false"})
	})
	if !strings.Contains(md, "tg2 @ d5") {
		t.Errorf("bench -d table:\n%s", md)
	}
	csv := capture(t, func() error {
		return benchCmd([]string{"-m", model, "-p", "3", "-n", "0", "-d", "7", "-r", "1", "-t", "1", "-o", "csv"})
	})
	if !strings.HasPrefix(csv, strings.Join(llamaBenchFields, ",")+",tandem_") {
		t.Errorf("bench -o csv: header is not llama-bench's columns then tandem's:\n%s", csv)
	}
	if lines := strings.Split(strings.TrimSpace(csv), "\n"); len(lines) != 2 || !strings.Contains(lines[0], "n_depth") {
		t.Errorf("bench -d -o csv:\n%s", csv)
	} else {
		head, row := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
		for i, h := range head {
			if h == "n_depth" && (i >= len(row) || strings.Trim(row[i], `"`) != "7") {
				t.Errorf("bench -d -o csv: n_depth column %q", row[min(i, len(row)-1)])
			}
		}
	}
	// -o jsonl (an object a line) and sql (llama-bench's table and an INSERT a row), and -oe
	// writing a second format to stderr
	var stderr string
	out = capture(t, func() error {
		var err error
		stderr = captureStderr(t, func() {
			err = benchCmd([]string{"-m", model, "-p", "4", "-n", "2", "-r", "1", "-t", "1", "-bw=false", "-o", "jsonl", "-oe", "sql"})
		})
		return err
	})
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("bench -o jsonl printed %d lines:\n%s", len(lines), out)
	}
	for i, l := range lines {
		var row map[string]any
		if err := json.Unmarshal([]byte(l), &row); err != nil || row["n_prompt"] != []float64{4, 0}[i] {
			t.Errorf("bench -o jsonl line %d: %v %v", i, err, row)
		}
	}
	if !strings.HasPrefix(stderr, "CREATE TABLE IF NOT EXISTS llama_bench (\n  build_commit TEXT,") ||
		strings.Count(stderr, "INSERT INTO llama_bench (build_commit, build_number, ") != 2 ||
		!fieldsInOrder(stderr[strings.Index(stderr, "INSERT"):], llamaBenchFields) {
		t.Errorf("bench -oe sql:\n%s", stderr)
	}
	// -pg: a prompt and generated tokens timed together; lists repeat and take ranges; -fa on
	out = capture(t, func() error {
		return benchCmd([]string{"-m", model, "-p", "2", "-p", "3-5+2", "-n", "0", "-pg", "4,2", "-fa", "on", "-r", "1", "-t", "1", "-bw=false", "-o", "jsonl"})
	})
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var row map[string]any
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatalf("bench jsonl: %v\n%s", err, out)
		}
		got = append(got, fmt.Sprintf("%v+%v fa%v", row["n_prompt"], row["n_gen"], row["flash_attn"]))
	}
	if want := []string{"2+0 fa1", "3+0 fa1", "5+0 fa1", "4+2 fa1"}; !slices.Equal(got, want) {
		t.Errorf("bench -p 2 -p 3-5+2 -pg 4,2 -fa on: rows %v, want %v", got, want)
	}
	md = capture(t, func() error {
		return benchCmd([]string{"-m", model, "-p", "0", "-n", "0", "-pg", "3,2", "-r", "1", "-t", "1", "-bw=false", "--no-warmup"})
	})
	if !strings.Contains(md, "pp3+tg2") {
		t.Errorf("bench -pg table:\n%s", md)
	}
	// load modes (-mmp 0,1 and -lm none: a row each, the model read or mapped), --progress
	var progress string
	out = capture(t, func() error {
		var err error
		progress = captureStderr(t, func() {
			err = benchCmd([]string{"-m", model, "-p", "2", "-n", "0", "-mmp", "0,1", "-lm", "none", "-r", "1", "-t", "1",
				"-bw=false", "-o", "jsonl", "--progress", "--delay", "0"})
		})
		return err
	})
	got = nil
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var row map[string]any
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatalf("bench jsonl: %v\n%s", err, out)
		}
		got = append(got, fmt.Sprintf("%v %v", row["load_mode"], row["use_mmap"]))
	}
	if want := []string{"none false", "mmap true", "none false"}; !slices.Equal(got, want) {
		t.Errorf("bench -mmp 0,1 -lm none: rows %v, want %v", got, want)
	}
	if !strings.Contains(progress, "test 1/3: pp2") || !strings.Contains(progress, "test 3/3: pp2") {
		t.Errorf("bench --progress printed:\n%s", progress)
	}
	for _, bad := range [][]string{{"-m", model, "-o", "xml"}, {"-m", model, "-oe", "yaml"}, {"-m", model, "-o", "none"},
		{"-m", model, "-ngl", "5-2"}, {"-m", model, "-p", "1-8*1"}, {"-m", model, "-t", "1-4+0"}, {"-m", model, "-pg", "4"},
		{"-m", model, "-pg", "4,0"}, {"-m", model, "-fa", "maybe"}, {"-m", model, "-ctv", "f32"}, {"-m", model, "-b", "64", "-ub", "128"},
		{"-m", model, "-p", "1-100000"}, {"-m", model, "stray"}, {"-m", model, "-mmp", "2"}, {"-m", model, "-lm", "mlock"},
		{"-m", model, "--delay", "-1"}, {"-m", model, "-r", "0"}, {"-p", "8"}, {"-m", model, "-ngl", "x"}, {"-m", model, "-fa", "2"},
		{"-m", model, "-p", "-5"}, {"-m", model, "-n", "8,-1"}, {"-m", model, "-t", "0"}, {"-m", model, "-ngl", "-1"}, {"-m", model, "-d", "-2"}} {
		err := benchCmd(bad)
		if err == nil {
			t.Errorf("bench %v accepted", bad)
		} else if !strings.Contains(err.Error(), "bench:") {
			t.Errorf("bench %v: %v, want an error naming the bench flag", bad, err)
		}
	}
}

// llamaBenchFields are llama-bench's JSON fields and CSV columns in its order (ggml 0.21.0's
// llama-bench, less the samples).
var llamaBenchFields = []string{"build_commit", "build_number", "cpu_info", "gpu_info", "backends", "model_filename",
	"model_type", "model_size", "model_n_params", "n_batch", "n_ubatch", "n_threads", "cpu_mask", "cpu_strict", "poll",
	"type_k", "type_v", "n_gpu_layers", "n_cpu_moe", "split_mode", "main_gpu", "no_kv_offload", "flash_attn", "devices",
	"tensor_split", "tensor_buft_overrides", "load_mode", "embeddings", "no_op_offload", "no_host", "fit_target",
	"fit_min_ctx", "n_prompt", "n_gen", "n_depth", "test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts"}

// fieldsInOrder reports whether every name occurs in s, each after the one before it.
func fieldsInOrder(s string, names []string) bool {
	for _, n := range names {
		i := strings.Index(s, n)
		if i < 0 {
			return false
		}
		s = s[i+len(n):]
	}
	return true
}

// llama-bench's list items: numbers and the three kinds of range.
func TestRangeInts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"7", []int{7}}, {"-1", []int{-1}}, {"0-3", []int{0, 1, 2, 3}}, {"0-22+8", []int{0, 8, 16}},
		{"1-16*2", []int{1, 2, 4, 8, 16}}, {"5-5", []int{5}}, {"64-512*2", []int{64, 128, 256, 512}},
	} {
		got, err := rangeInts(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("rangeInts(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "x", "3-", "-", "3-1", "1-4+0", "1-4+-2", "0-8*2", "1-8*1", "1-8*x", "1-5000"} {
		if got, err := rangeInts(bad); err == nil {
			t.Errorf("rangeInts(%q) = %v, want an error", bad, got)
		}
	}
}
