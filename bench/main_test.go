package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tandem-ml/tandem/backends/vulkan"
)

func TestMatchOp(t *testing.T) {
	cases := []struct {
		term, id string
		want     bool
	}{
		{"mul_mat", "mul_mat/vec/q4_0", true},
		{"mul_mat/vec", "mul_mat/vec/q4_0", true},
		{"mul_mat/ve", "mul_mat/vec/q4_0", false},
		{"vec", "mul_mat/vec/q4_0", true},
		{"q4_0", "mul_mat/mat/q4_0", true},
		{"Q4_0", "block/q4_0", true},
		{"q4_k", "mul_mat/ffn/q4_K", true},
		{"ffn/q6_K", "mul_mat/ffn/q6_K", false},
		{"mul_mat/ffn/Q6_K", "mul_mat/ffn/q6_K", true},
		{"*/f16", "mul_mat/mat/f16", false}, // path.Match: * does not cross /
		{"*/*/f16", "mul_mat/mat/f16", true},
		{"add", "add/f32", true},
		{"ad", "add/f32", false},
		{"f32", "soft_max/f32", true},
		{"", "add/f32", false},
		{"mul", "mul_mat/mat/f32", false},
		{"mul", "mul/f32", true},
	}
	for _, c := range cases {
		if got := matchOp(c.term, c.id); got != c.want {
			t.Errorf("matchOp(%q, %q) = %v, want %v", c.term, c.id, got, c.want)
		}
	}
}

func TestSelectFamilies(t *testing.T) {
	all := Suite()
	sel, un := selectFamilies(all, nil)
	if len(sel) != len(all) || un != nil {
		t.Fatalf("no terms: %d of %d, unmatched %v", len(sel), len(all), un)
	}
	sel, un = selectFamilies(all, []string{"rope", "block", "nosuch"})
	if len(sel) != 2 || sel[0].ID != "rope/f32" || sel[1].ID != "block/q4_0" {
		t.Fatalf("rope,block: got %v", ids(sel))
	}
	if len(un) != 1 || un[0] != "nosuch" {
		t.Fatalf("unmatched = %v", un)
	}
	sel, _ = selectFamilies(all, []string{"mul_mat/vec"})
	if len(sel) != 4 {
		t.Fatalf("mul_mat/vec: got %v", ids(sel))
	}
	// IDs are unique and every family has sizes in increasing order.
	seen := map[string]bool{}
	for _, f := range all {
		if seen[f.ID] {
			t.Errorf("duplicate family id %s", f.ID)
		}
		seen[f.ID] = true
		for _, l := range [][]int64{f.Ladder, f.Quick} {
			if len(l) == 0 {
				t.Errorf("%s: empty ladder", f.ID)
			}
			for i := 1; i < len(l); i++ {
				if l[i] <= l[i-1] {
					t.Errorf("%s: ladder %v not increasing", f.ID, l)
				}
			}
		}
	}
}

func ids(fs []*Family) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

func TestMatchDevice(t *testing.T) {
	cases := []struct {
		term, name, typ string
		want            bool
	}{
		{"cpu", "CPU", "CPU", true},
		{"vulkan0", "Vulkan0", "ACCEL", true},
		{"vulkan", "Vulkan1", "GPU", true},
		{"gpu", "Vulkan1", "GPU", true},
		{"accel", "Vulkan0", "ACCEL", true},
		{"gpu", "Vulkan0", "ACCEL", false},
		{"vulkan1", "Vulkan0", "ACCEL", false},
		{"", "CPU", "CPU", false},
	}
	for _, c := range cases {
		if got := matchDevice(c.term, c.name, c.typ); got != c.want {
			t.Errorf("matchDevice(%q, %q, %q) = %v", c.term, c.name, c.typ, got)
		}
	}
}

func TestParseSizes(t *testing.T) {
	spec, err := ParseSizes("512, 64K,1M")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{512, 64 << 10, 1 << 20}; !equal(spec.Values, want) {
		t.Fatalf("values %v, want %v", spec.Values, want)
	}
	ladder := []int64{64, 128, 256, 512, 1024}
	// Explicit values replace the ladder (sorted, deduplicated).
	spec, _ = ParseSizes("300,100,300")
	if got := spec.Apply(ladder); !equal(got, []int64{100, 300}) {
		t.Fatalf("values: %v", got)
	}
	// Ranges filter it.
	spec, _ = ParseSizes("128-512")
	if got := spec.Apply(ladder); !equal(got, []int64{128, 256, 512}) {
		t.Fatalf("range: %v", got)
	}
	spec, _ = ParseSizes("512-")
	if got := spec.Apply(ladder); !equal(got, []int64{512, 1024}) {
		t.Fatalf("open range: %v", got)
	}
	spec, _ = ParseSizes("-100,2000")
	if got := spec.Apply(ladder); !equal(got, []int64{64, 2000}) {
		t.Fatalf("range and value: %v", got)
	}
	if got := (SizeSpec{}).Apply(ladder); !equal(got, ladder) {
		t.Fatalf("empty spec: %v", got)
	}
	for _, bad := range []string{"0", "x", "12Q", "-5-", "9-3", "1.5K"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("ParseSizes(%q) accepted", bad)
		}
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseThreads(t *testing.T) {
	if v, err := ParseThreads("1, 2"); err != nil || len(v) != 2 || v[0] != 1 || v[1] != 2 {
		t.Fatalf("1,2: %v %v", v, err)
	}
	if v, err := ParseThreads(""); err != nil || len(v) != 1 || v[0] < 1 {
		t.Fatalf("default: %v %v", v, err)
	}
	for _, bad := range []string{"0", "-1", "x", "1000"} {
		if _, err := ParseThreads(bad); err == nil {
			t.Errorf("ParseThreads(%q) accepted", bad)
		}
	}
}

func TestParseArgs(t *testing.T) {
	var stderr bytes.Buffer
	_, err := ParseArgs([]string{"-h"}, &stderr)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	help := stderr.String()
	for _, want := range []string{"-quick", "-json", "-svg", "-html", "-ops", "-devices", "-threads", "-sizes",
		"-list", "-strict", "-budget", "-maxrun", "-device-budget", "-reps", "TANDEM_VK_VALIDATE", "NMSE", "vs CPU",
		"GFLOPS", "GB/s", "median", "too slow on this device", "CGO_ENABLED=0", "novulkan"} {
		if !strings.Contains(help, want) {
			t.Errorf("usage text does not mention %s", want)
		}
	}
	cfg, err := ParseArgs([]string{"-quick", "-ops", "add, rope", "-threads", "1,2", "-budget", "10ms"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Quick || len(cfg.Ops) != 2 || cfg.Ops[1] != "rope" || len(cfg.Threads) != 2 {
		t.Fatalf("parsed %+v", cfg)
	}
	if cfg.Policy.Budget != 10*time.Millisecond || cfg.Policy.MaxRun != QuickPolicy.MaxRun {
		t.Fatalf("policy %+v", cfg.Policy)
	}
	for _, bad := range [][]string{{"-nosuch"}, {"-sizes", "x"}, {"-threads", "0"}, {"extra"}} {
		if _, err := ParseArgs(bad, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	if code := Main([]string{"-ops", "nosuch"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("unknown -ops: exit %d, want 2", code)
	}
	if code := Main([]string{"-devices", "nosuch"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("unknown -devices: exit %d, want 2", code)
	}
	if code := Main([]string{"-h"}, io.Discard, io.Discard); code != 0 {
		t.Errorf("-h: exit %d, want 0", code)
	}
}

func TestStatistics(t *testing.T) {
	ms := time.Millisecond
	if got := Median([]time.Duration{5 * ms, 1 * ms, 3 * ms}); got != 3*ms {
		t.Errorf("odd median %v", got)
	}
	if got := Median([]time.Duration{4 * ms, 1 * ms, 2 * ms, 10 * ms}); got != 3*ms {
		t.Errorf("even median %v", got)
	}
	if Median(nil) != 0 || Min(nil) != 0 {
		t.Error("empty")
	}
	in := []time.Duration{5 * ms, 1 * ms, 3 * ms}
	if Min(in) != ms || in[0] != 5*ms {
		t.Error("min, or the input was reordered")
	}
	if got := NMSE([]float32{1, 2, 3}, []float32{1, 2, 3}); got != 0 {
		t.Errorf("equal: %g", got)
	}
	if got := NMSE([]float32{1, 2, 4}, []float32{1, 2, 3}); math.Abs(got-1.0/14) > 1e-12 {
		t.Errorf("nmse %g, want 1/14", got)
	}
	inf := float32(math.Inf(-1))
	if got := NMSE([]float32{inf, 1}, []float32{inf, 1}); got != 0 {
		t.Errorf("matching infinities: %g", got)
	}
	if got := NMSE([]float32{float32(math.NaN()), 1}, []float32{1, 1}); !math.IsInf(got, 1) {
		t.Errorf("NaN: %g", got)
	}
	if got := NMSE([]float32{1}, []float32{1, 2}); !math.IsInf(got, 1) {
		t.Errorf("length mismatch: %g", got)
	}
	if got := NMSE([]float32{1}, []float32{0}); !math.IsInf(got, 1) {
		t.Errorf("zero reference: %g", got)
	}
	if got := Throughput(2e9, time.Second); got != 2 {
		t.Errorf("throughput %g", got)
	}
	tm := Timing{MinReps: 3, MaxReps: 5, Budget: 10 * ms}
	if !tm.More(2, time.Hour) || tm.More(3, 10*ms) || !tm.More(3, 9*ms) || tm.More(5, 0) {
		t.Error("Timing.More")
	}
}

func TestEstimatorAndSkip(t *testing.T) {
	var e Estimator
	if _, ok := e.Same("a", 1); ok {
		t.Fatal("estimate from nothing")
	}
	if _, ok := e.Like("a", MetricFLOPs, 1); ok {
		t.Fatal("guess from nothing")
	}
	e.Observe("a", MetricFLOPs, 1e6, time.Millisecond)
	if d, ok := e.Same("a", 8e6); !ok || d != 8*time.Millisecond {
		t.Fatalf("linear scaling: %v %v", d, ok)
	}
	if d, ok := e.Like("a", MetricFLOPs, 4e6); !ok || d != 4*time.Millisecond {
		t.Fatalf("like: %v %v", d, ok)
	}
	if d, ok := e.Like("b", MetricFLOPs, 2e6); !ok || d != 2*time.Millisecond {
		t.Fatalf("best rate: %v %v", d, ok)
	}
	if _, ok := e.Like("b", MetricBytes, 2e6); ok {
		t.Fatal("guess across metrics")
	}
	ms := time.Millisecond
	if SkipReason(500*ms, true, 0, false, 400*ms) == "" {
		t.Error("same-family estimate over the limit must skip")
	}
	if SkipReason(300*ms, true, 99*time.Hour, true, 400*ms) != "" {
		t.Error("a same-family estimate under the limit runs, whatever the guess")
	}
	if SkipReason(0, false, 3*time.Second, true, 400*ms) != "" {
		t.Error("a guess under 10× the limit runs")
	}
	if r := SkipReason(0, false, 5*time.Second, true, 400*ms); !strings.Contains(r, "too slow on this device") {
		t.Errorf("hopeless guess: %q", r)
	}
}

// The runner on the real CPU backend with tiny sizes: the smallest size always runs, the next are
// skipped when the estimate from it exceeds the limit, and the device budget stops the rest.
func TestRunnerScaling(t *testing.T) {
	cfg, err := ParseArgs([]string{"-devices", "cpu", "-threads", "1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := Discover(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer closeTargets(disc.Targets)
	fams, _ := selectFamilies(Suite(), []string{"add", "mul_mat/mat/f32"})
	pol := Policy{Warmup: 1, MinReps: 2, MaxReps: 3, Budget: time.Millisecond, MaxRun: time.Nanosecond, Device: time.Hour}
	r := &Runner{Policy: pol, Quick: true, Targets: disc.Targets}
	res := r.Run(fams)
	byFam := map[string][]*Result{}
	for _, x := range res {
		byFam[x.Family.ID] = append(byFam[x.Family.ID], x)
	}
	for id, rs := range byFam {
		if len(rs) != len(fams[0].Quick) && id == fams[0].ID {
			t.Errorf("%s: %d rows", id, len(rs))
		}
		if rs[0].Status != StatusOK || !rs[0].Baseline || rs[0].Reason != "" {
			t.Errorf("%s: smallest size did not run: %+v", id, rs[0])
		}
		if len(rs[0].Times) < 1 || rs[0].Median <= 0 || rs[0].Min > rs[0].Median || rs[0].VsCPU != 1 {
			t.Errorf("%s: timing %+v", id, rs[0])
		}
		if len(rs[0].Warmup) != 2 {
			t.Errorf("%s: %d warm-ups; a first run past -maxrun (one-off costs) must be followed by a second", id, len(rs[0].Warmup))
		}
		for _, x := range rs[1:] {
			if x.Status != StatusSkipped || !strings.Contains(x.Reason, "too slow on this device") {
				t.Errorf("%s %s: %s %q, want skipped as too slow", id, x.Case.Shape, x.Status, x.Reason)
			}
		}
	}

	r = &Runner{Policy: Policy{Warmup: 1, MinReps: 1, MaxReps: 1, MaxRun: time.Hour, Device: time.Nanosecond},
		Sizes: SizeSpec{Values: []int64{64, 128}}, Targets: disc.Targets}
	res = r.Run(fams[:1])
	if len(res) != 2 || res[0].Status != StatusOK || res[1].Status != StatusSkipped || !strings.Contains(res[1].Reason, "budget") {
		t.Fatalf("device budget: %v / %v", res[0].Reason, res[1].Reason)
	}
}

// fakeResults makes a run of two devices over two families, one device skipping a size and one
// family where the second device ran nothing.
func fakeResults() []*Result {
	fams := Suite()
	mm, add := fams[0], fams[0]
	for _, f := range fams {
		if f.ID == "add/f32" {
			add = f
		}
	}
	var out []*Result
	for i, n := range []int64{64, 128, 256} {
		c := mm.make(n)
		base := time.Duration(1<<(3*i)) * time.Millisecond
		out = append(out, &Result{Family: mm, Case: c, Target: "CPU", Kind: KindCPU, Baseline: true, Status: StatusOK,
			Times: []time.Duration{base}, Median: base, Min: base, VsCPU: 1})
		if i == 2 {
			out = append(out, &Result{Family: mm, Case: c, Target: "Vulkan0", Kind: KindDevice, Status: StatusSkipped,
				Reason: "too slow on this device: ~2 s per run"})
			continue
		}
		out = append(out, &Result{Family: mm, Case: c, Target: "Vulkan0", Kind: KindDevice, Status: StatusOK,
			Times: []time.Duration{base / 2, base / 2}, Median: base / 2, Min: base / 3, VsCPU: 2, HasNMSE: true, NMSE: 1e-9})
	}
	c := add.make(1 << 20)
	out = append(out,
		&Result{Family: add, Case: c, Target: "CPU", Kind: KindCPU, Baseline: true, Status: StatusOK,
			Times: []time.Duration{time.Millisecond}, Median: time.Millisecond, Min: time.Millisecond, VsCPU: 1},
		&Result{Family: add, Case: c, Target: "Vulkan0", Kind: KindDevice, Status: StatusOK,
			Times: []time.Duration{time.Millisecond}, Median: time.Millisecond, Min: time.Millisecond, VsCPU: 1,
			HasNMSE: true, NMSE: math.Inf(1), Wrong: true})
	return out
}

type svgDoc struct {
	Panels []struct {
		Title  string `xml:"data-title,attr"`
		Groups []struct {
			Class     string `xml:"class,attr"`
			Device    string `xml:"data-device,attr"`
			Polylines []struct {
				Points string `xml:"points,attr"`
			} `xml:"polyline"`
		} `xml:"g"`
	} `xml:"g"`
}

func parseSVG(t *testing.T, data []byte) (doc svgDoc, devices map[string]int) {
	t.Helper()
	// Well-formed XML first (every token), then the structure.
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	devices = map[string]int{}
	for _, p := range doc.Panels {
		for _, g := range p.Groups {
			if g.Class == "series" {
				devices[g.Device]++
			}
		}
	}
	return doc, devices
}

func TestSVG(t *testing.T) {
	res := fakeResults()
	chart := ChartFromResults("tandem bench <test> & co", "sub", res)
	var buf bytes.Buffer
	if err := WriteSVG(&buf, chart); err != nil {
		t.Fatal(err)
	}
	doc, devices := parseSVG(t, buf.Bytes())
	if len(devices) != 2 || devices["CPU"] == 0 || devices["Vulkan0"] == 0 {
		t.Fatalf("series devices %v, want CPU and Vulkan0", devices)
	}
	var panels int
	for _, p := range doc.Panels {
		if p.Title == "" {
			continue // the legend
		}
		panels++
		n := 0
		for _, g := range p.Groups {
			if g.Class == "series" {
				n++
			}
		}
		if n != 2 {
			t.Errorf("panel %q: %d series, want one per device (2)", p.Title, n)
		}
	}
	if panels != 2 {
		t.Fatalf("%d panels, want 2", panels)
	}
	// MUL_MAT panel: the CPU has a 3-point line, Vulkan0 a 2-point line.
	for _, g := range doc.Panels[1].Groups {
		if g.Class != "series" {
			continue
		}
		want := map[string]int{"CPU": 3, "Vulkan0": 2}[g.Device]
		if len(g.Polylines) != 1 || len(strings.Fields(g.Polylines[0].Points)) != want {
			t.Errorf("%s: polyline %v, want %d points", g.Device, g.Polylines, want)
		}
	}
	if !strings.Contains(buf.String(), "tandem bench &lt;test&gt; &amp; co") {
		t.Error("title not escaped")
	}
	// A chart with no results at all is still valid.
	buf.Reset()
	if err := WriteSVG(&buf, ChartFromResults("empty", "", nil)); err != nil {
		t.Fatal(err)
	}
	parseSVG(t, buf.Bytes())
}

func TestLogTicks(t *testing.T) {
	if got := logTicks(0.1, 1); len(got) != 4 { // 0.1 0.2 0.5 1
		t.Errorf("one decade: %v", got)
	}
	if got := logTicks(0.01, 100); len(got) != 5 { // decades only
		t.Errorf("four decades: %v", got)
	}
	lo, hi := yRange(0.15, 3.4)
	if lo != 0.1 || hi != 5 {
		t.Errorf("yRange(0.15, 3.4) = %g, %g", lo, hi)
	}
	lo, hi = yRange(2, 2)
	if !(lo < 2 && hi > 2) {
		t.Errorf("yRange(2, 2) = %g, %g", lo, hi)
	}
}

func TestTable(t *testing.T) {
	var buf bytes.Buffer
	if err := ResultsTable(fakeResults()).Write(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	// Every row's device name starts in the header's "device" column (counted in runes: × and µ
	// are multi-byte).
	col := utf8.RuneCountInString(lines[0][:strings.Index(lines[0], "device")])
	for _, l := range lines[1:] {
		r := []rune(l)
		if l == "" {
			continue
		}
		if len(r) <= col || r[col] == ' ' || r[col-1] != ' ' || r[col-2] != ' ' {
			t.Errorf("misaligned row: %q", l)
		}
	}
	for _, want := range []string{"MUL_MAT f32 matrix", "ref", "2.00× CPU", "1.0e-09", "inf !", "WRONG", "skipped: too slow on this device", "GFLOPS", "GB/s"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	// Families are separated by one blank line; the family title is printed once.
	if strings.Count(out, "MUL_MAT f32 matrix") != 1 || strings.Count(out, "\n\n") != 1 {
		t.Errorf("grouping:\n%s", out)
	}
	var sb strings.Builder
	WriteSummary(&sb, Summarize(fakeResults()))
	if !strings.Contains(sb.String(), "Vulkan0") || !strings.Contains(sb.String(), "1 skipped") || !strings.Contains(sb.String(), "1 WRONG") {
		t.Errorf("summary:\n%s", sb.String())
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{fmtDuration(1500 * time.Nanosecond), "1.50 µs"},
		{fmtDuration(12345 * time.Microsecond), "12.3 ms"},
		{fmtDuration(2 * time.Second), "2.00 s"},
		{fmtNMSE(0), "0"},
		{fmtNMSE(3.21e-9), "3.2e-09"},
		{fmtRatio(2), "2.00× CPU"},
		{fmtRatio(0.0456), "0.046× CPU"},
		{fmtRatio(123.4), "123× CPU"},
		{fmtCount(64 << 10), "64K"},
		{fmtCount(1 << 20), "1M"},
		{fmtCount(1024), "1024"},
		{fmtBytes(3 << 20), "3.00 MiB"},
		{plural(1, "copy"), "1 copy"},
		{plural(3, "copy"), "3 copies"},
		{plural(2, "split"), "2 splits"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestJSON(t *testing.T) {
	cfg, _ := ParseArgs(nil, io.Discard)
	disc := &Discovery{Devices: []DeviceInfo{{Name: "CPU", Type: "CPU"}}, VulkanWhy: "built without cgo"}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, NewReport(cfg, disc, fakeResults(), time.Now(), time.Second)); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Tool    string
		Vulkan  JSONVulkan
		Results []map[string]any
	}
	if err := json.Unmarshal(buf.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Tool != "tandem bench" || rep.Vulkan.Reason != "built without cgo" || len(rep.Results) != 8 {
		t.Fatalf("report %+v", rep)
	}
	r0 := rep.Results[1] // Vulkan0, 64
	if r0["device"] != "Vulkan0" || r0["status"] != "ok" || r0["nmse"].(float64) != 1e-9 || r0["vs_cpu"].(float64) != 2 ||
		len(r0["times_ns"].([]any)) != 2 || r0["throughput"].(float64) <= 0 || r0["unit"] != "GFLOPS" {
		t.Errorf("result %v", r0)
	}
	if s := rep.Results[5]; s["status"] != "skipped" || s["reason"] == "" || s["median_ns"] != nil {
		t.Errorf("skipped result %v", s)
	}
	if w := rep.Results[7]; w["nmse"] != "inf" || w["wrong"] != true {
		t.Errorf("infinite NMSE %v", w)
	}
}

// The whole command on the CPU alone (what CI runs with CGO_ENABLED=0 or -tags novulkan), with every
// writer: exit 0, a table, JSON and SVG that parse, an HTML page.
func TestMainQuickCPU(t *testing.T) {
	dir := t.TempDir()
	js, svg, html := filepath.Join(dir, "b.json"), filepath.Join(dir, "b.svg"), filepath.Join(dir, "b.html")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"-quick", "-devices", "cpu", "-ops", "add,mul_mat/vec/q4_0,block", "-json", js, "-svg", svg, "-html", html},
		&stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"tandem bench", "devices:", "ADD f32", "MUL_MAT q4_0 mat-vec", "BLOCK", "ref", "summary"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr.String(), "bench:") {
		t.Errorf("no progress on stderr: %q", stderr.String())
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	_, devices := parseSVG(t, data)
	if len(devices) != 1 || devices["CPU"] != 3 {
		t.Errorf("SVG series %v, want CPU in each of 3 panels", devices)
	}
	data, err = os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) == 0 || !rep.Quick || len(rep.Families) != 3 {
		t.Fatalf("JSON: %d results, families %v", len(rep.Results), rep.Families)
	}
	data, err = os.ReadFile(html)
	if err != nil || !bytes.Contains(data, []byte("<svg")) || !bytes.Contains(data, []byte("<pre>")) {
		t.Fatalf("HTML: %v", err)
	}
}

// Every device, Vulkan included where there is one (with TANDEM_VK_VALIDATE=1 any validation
// message fails it): a small slice of the suite must run clean.
func TestMainQuickAllDevices(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	if ok, why := vulkan.Available(); !ok && os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
		t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but Vulkan is unavailable: %s", why)
	}
	dir := t.TempDir()
	js, svg := filepath.Join(dir, "b.json"), filepath.Join(dir, "b.svg")
	var stdout, stderr bytes.Buffer
	code := Main([]string{"-quick", "-ops", "add,mul_mat/vec/q8_0,block", "-json", js, "-svg", svg}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if strings.Contains(stdout.String(), "error:") {
		t.Fatalf("a case failed:\n%s", stdout.String())
	}
	// The chart has one series per device of the run (the scheduler row counts as one).
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, r := range rep.Results {
		want[r.Device] = true
	}
	data, err = os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	_, got := parseSVG(t, data)
	if len(got) != len(want) {
		t.Fatalf("SVG series for %v, run devices %v", got, want)
	}
	for d := range want {
		if got[d] == 0 {
			t.Errorf("no series for %s", d)
		}
	}
	t.Logf("devices: %v", want)
}

// A baseline whose device budget is spent still computes the reference (untimed), so every other
// device's row keeps its NMSE and -strict can still catch a wrong result.
func TestReferenceAfterBudget(t *testing.T) {
	cfg, err := ParseArgs([]string{"-devices", "cpu", "-threads", "2,1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	disc, err := Discover(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer closeTargets(disc.Targets)
	base := disc.Targets[0]
	if !base.Baseline || len(disc.Targets) != 2 {
		t.Fatalf("targets %v", disc.Targets)
	}
	fams, _ := selectFamilies(Suite(), []string{"add", "mul_mat/mat/f32"})
	r := &Runner{Policy: Policy{Warmup: 1, MinReps: 1, MaxReps: 1, MaxRun: time.Hour, Device: time.Minute},
		Sizes: SizeSpec{Values: []int64{64}}, Targets: disc.Targets}
	r.reset()
	r.spent[base] = time.Hour // the baseline has used its budget; CPU·1t has not
	for _, f := range fams {
		for _, c := range r.Cases(f) {
			rows := r.runCase(c)
			if len(rows) != 2 {
				t.Fatalf("%s: %d rows", c.Label(), len(rows))
			}
			b, o := rows[0], rows[1]
			if b.Status != StatusSkipped || !strings.Contains(b.Reason, "-device-budget") || !strings.Contains(b.Reason, "reference computed untimed") {
				t.Errorf("%s: baseline %s %q, want skipped for its budget with an untimed reference", c.Label(), b.Status, b.Reason)
			}
			if len(b.Times) != 0 || b.Median != 0 {
				t.Errorf("%s: the untimed reference shows times %v", c.Label(), b.Times)
			}
			if o.Status != StatusOK || !o.HasNMSE || !(o.NMSE <= c.Family.Limit) || o.Wrong {
				t.Errorf("%s: %s row %s, NMSE %v (has %v), wrong %v: want a checked result", c.Label(), o.Target, o.Status, o.NMSE, o.HasNMSE, o.Wrong)
			}
		}
	}
	if r.spent[base] != time.Hour {
		t.Errorf("the untimed reference counted against the baseline's budget: %v", r.spent[base])
	}
}

// -quick leaves out the model-sized FFN families (seconds each just to make their weights) unless
// -ops names them; a full run keeps them.
func TestQuickLeavesOutFull(t *testing.T) {
	all := Suite()
	has := func(fs []*Family, id string) bool {
		for _, f := range fs {
			if f.ID == id {
				return true
			}
		}
		return false
	}
	quick := quickFamilies(all, &Config{Quick: true})
	if has(quick, "mul_mat/ffn/q4_K") || !has(quick, "mul_mat/mat/q4_0") || !has(quick, "train/mlp") {
		t.Errorf("-quick runs %v", ids(quick))
	}
	if full := quickFamilies(all, &Config{}); len(full) != len(all) {
		t.Errorf("a full run has %d of %d families", len(full), len(all))
	}
	sel, _ := selectFamilies(all, []string{"ffn"})
	if got := quickFamilies(sel, &Config{Quick: true, Ops: []string{"ffn"}}); len(got) != 6 {
		t.Errorf("-quick -ops ffn runs %v", ids(got))
	}
}
