package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/llm/testmodel"
)

// tinyModel writes the tiny llama test model (2 layers, Q8_0 matrices) and returns its path.
func tinyModel(t *testing.T) string {
	t.Helper()
	spec := testmodel.Tiny("llama")
	spec.WeightType = core.TypeQ8_0
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := testmodel.Write(path, spec); err != nil {
		t.Fatal(err)
	}
	return path
}

// The split rows default to 0 and the quarter steps below all layers; -ngl replaces them, keeping
// the values below all layers (all layers is the device's own row) once each, in order.
func TestSplitLayers(t *testing.T) {
	cases := []struct {
		list   []int
		layers int
		want   []int
	}{
		{nil, 3, []int{0, 1, 2}},
		{nil, 23, []int{0, 6, 12, 17}},
		{nil, 1, []int{0}},
		{[]int{12, 0, 99, 12, 23, 5}, 23, []int{0, 5, 12}},
	}
	for _, c := range cases {
		if got := splitLayers(c.list, c.layers); !slices.Equal(got, c.want) {
			t.Errorf("splitLayers(%v, %d) = %v, want %v", c.list, c.layers, got, c.want)
		}
	}
	if _, err := ParseNGL("0,4,x"); err == nil {
		t.Error("-ngl 0,4,x: no error")
	}
	if got, err := ParseNGL(" 8, 0 "); err != nil || !slices.Equal(got, []int{8, 0}) {
		t.Errorf("-ngl ' 8, 0 ' = %v, %v", got, err)
	}
}

// -ops model without -model says what is missing; a file that is not a model is a usage error.
func TestModelUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"-ops", "model", "-devices", "cpu"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "-model FILE") {
		t.Errorf("-ops model alone: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	if err := os.WriteFile(bad, []byte("not a gguf file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := Main([]string{"-model", bad, "-ops", "model"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "-model") {
		t.Errorf("-model of a bad file: exit %d, %q", code, stderr.String())
	}
}

// runModelBench runs the model families of the tiny model in a -quick -strict run with args added
// and returns the table, the JSON report and the SVG's series per device.
func runModelBench(t *testing.T, args ...string) (string, Report, svgDoc, map[string]int) {
	t.Helper()
	dir := t.TempDir()
	js, svg := filepath.Join(dir, "b.json"), filepath.Join(dir, "b.svg")
	var stdout, stderr bytes.Buffer
	args = append([]string{"-quick", "-strict", "-model", tinyModel(t), "-ops", "model", "-json", js, "-svg", svg}, args...)
	if code := Main(args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	data, err = os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	doc, series := parseSVG(t, data)
	panels := doc.Panels[:0]
	for _, p := range doc.Panels {
		if p.Title != "" { // not the legend
			panels = append(panels, p)
		}
	}
	doc.Panels = panels
	return stdout.String(), rep, doc, series
}

// checkModelRow checks one JSON row of the model families: an OK row in tokens/s, the test named
// as llama-bench names it, and (off the baseline) logits that match the CPU's.
func checkModelRow(t *testing.T, r JSONResult, ngl int) {
	t.Helper()
	name := r.Device
	if r.Status != "ok" || r.Unit != "tokens/s" || !(r.Throughput > 0) || r.MedianNS <= 0 || len(r.TimesNS) == 0 {
		t.Errorf("%s %s: status %s %q, %v %s, median %d", name, r.Test, r.Status, r.Reason, r.Throughput, r.Unit, r.MedianNS)
	}
	if r.NGL == nil || *r.NGL != ngl || r.NLayers != 3 {
		t.Errorf("%s %s: n_gpu_layers %v of %d, want %d of 3", name, r.Test, r.NGL, r.NLayers, ngl)
	}
	switch r.Family {
	case modelPP:
		if r.Test != "pp16" || r.NPrompt != 16 || r.NGen != 0 || r.N != 16 {
			t.Errorf("%s: test %q, n_prompt %d, n_gen %d", name, r.Test, r.NPrompt, r.NGen)
		}
	case modelTG:
		if r.Test != "tg4" || r.NGen != 4 || r.NPrompt != 0 {
			t.Errorf("%s: test %q, n_prompt %d, n_gen %d", name, r.Test, r.NPrompt, r.NGen)
		}
	default:
		t.Errorf("%s: family %q", name, r.Family)
	}
	// tokens/s is the test's tokens over the median time
	if want := float64(r.N) / (float64(r.MedianNS) / 1e9); r.Throughput < want*0.999 || r.Throughput > want*1.001 {
		t.Errorf("%s %s: %v tokens/s, want %v", name, r.Test, r.Throughput, want)
	}
	if r.Baseline {
		if r.NMSE != nil {
			t.Errorf("%s %s: the baseline has an NMSE %v", name, r.Test, r.NMSE)
		}
		return
	}
	v, ok := r.NMSE.(float64)
	if !ok || v < 0 || v > modelLimit || r.Wrong {
		t.Errorf("%s %s: NMSE %v (wrong %v), want a number ≤ %g", name, r.Test, r.NMSE, r.Wrong, modelLimit)
	}
}

// On the CPU alone (two thread counts, so that the second row is checked against the first): a
// pp and a tg row per count, tokens/s, the model in the header and the JSON, one chart panel per
// test against the layers offloaded.
func TestModelFamilyCPU(t *testing.T) {
	out, rep, doc, series := runModelBench(t, "-devices", "cpu", "-threads", "2,1")
	for _, want := range []string{"model: ", "MODEL llama", "pp16", "tg4", "CPU·1t", "tokens/s", "ngl 0/3", "ref"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if rep.Model == nil || rep.Model.Layers != 3 || rep.Model.Params <= 0 || rep.Model.Size <= 0 || !strings.HasPrefix(rep.Model.Type, "llama ") {
		t.Fatalf("JSON model %+v", rep.Model)
	}
	if len(rep.Families) != 2 || rep.Families[0].ID != modelPP || rep.Families[1].ID != modelTG ||
		rep.Families[0].Unit != "tokens/s" || rep.Families[0].NMSELimit != modelLimit {
		t.Fatalf("JSON families %+v", rep.Families)
	}
	if len(rep.Results) != 4 {
		t.Fatalf("%d results, want pp and tg on CPU·2t and CPU·1t", len(rep.Results))
	}
	for i, r := range rep.Results {
		if want := []string{"CPU·2t", "CPU·1t"}[i%2]; r.Device != want || r.Kind != "cpu" || r.Baseline != (i%2 == 0) {
			t.Errorf("row %d: %s (%s, baseline %v), want %s", i, r.Device, r.Kind, r.Baseline, want)
		}
		checkModelRow(t, r, 0)
	}
	if len(doc.Panels) != 2 || !strings.HasSuffix(doc.Panels[0].Title, " pp16") || !strings.HasSuffix(doc.Panels[1].Title, " tg4") {
		t.Errorf("SVG panels %+v", doc.Panels)
	}
	if series["CPU·2t"] != 2 || series["CPU·1t"] != 2 {
		t.Errorf("SVG series %v, want each CPU row in both panels", series)
	}
}

// Vulkan0 with every layer, the Vulkan0+CPU scheduler at -ngl 0, 1 and 2: every row runs and its
// logits match the CPU's within the family's limit (-strict would fail the run otherwise), and the
// chart draws the scheduler's curve over every layer count, the device's own row at its end.
func TestModelFamilyVulkan(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	ok, why := vulkan.Available()
	if !ok {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but Vulkan is unavailable: %s", why)
		}
		t.Skip("Vulkan unavailable: " + why)
	}
	out, rep, doc, series := runModelBench(t, "-devices", "cpu,vulkan0")
	for _, want := range []string{"Vulkan0+CPU ngl 0", "Vulkan0+CPU ngl 2", "ngl 3/3 (all"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	type row struct {
		dev string
		ngl int
	}
	want := []row{{"CPU", 0}, {"Vulkan0", 3}, {"Vulkan0+CPU", 0}, {"Vulkan0+CPU", 1}, {"Vulkan0+CPU", 2}}
	if len(rep.Results) != 2*len(want) {
		t.Fatalf("%d results, want %d:\n%s", len(rep.Results), 2*len(want), out)
	}
	for i, r := range rep.Results {
		w := want[i%len(want)]
		if r.Device != w.dev {
			t.Errorf("row %d: device %s, want %s", i, r.Device, w.dev)
		}
		checkModelRow(t, r, w.ngl)
		if r.Kind != "cpu" && (r.Splits < 1 || r.CopiesPerRun == nil) {
			t.Errorf("%s %s ngl %d: splits %d, copies per run %v", r.Device, r.Test, w.ngl, r.Splits, r.CopiesPerRun)
		}
		if r.Kind != "cpu" && *r.NGL > 0 && r.Copies == 0 {
			t.Errorf("%s %s ngl %d: layers on two devices with no copies", r.Device, r.Test, *r.NGL)
		}
	}
	if len(doc.Panels) != 2 || series["CPU"] != 2 || series["Vulkan0+CPU"] != 2 || series["Vulkan0"] != 0 {
		t.Fatalf("SVG: %d panels, series %v", len(doc.Panels), series)
	}
	for _, p := range doc.Panels {
		for _, g := range p.Groups {
			if g.Device == "Vulkan0+CPU" && (len(g.Polylines) != 1 || len(strings.Fields(g.Polylines[0].Points)) != 4) {
				t.Errorf("%s: the scheduler's curve %+v, want 4 points (ngl 0 to 3)", p.Title, g.Polylines)
			}
		}
	}
}
