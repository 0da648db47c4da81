package llm_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	_ "github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/llm"
	"github.com/tandem-ml/tandem/llm/testmodel"
	"github.com/tandem-ml/tandem/tests"
)

var (
	modelMu    sync.Mutex
	modelPaths = map[string]string{}
	modelDir   string
)

// modelFile writes the case's model once per test binary and returns its path.
func modelFile(t testing.TB, name string, spec testmodel.Spec) string {
	t.Helper()
	modelMu.Lock()
	defer modelMu.Unlock()
	if p, ok := modelPaths[name]; ok {
		return p
	}
	if modelDir == "" {
		d, err := os.MkdirTemp("", "tandem-llm-test")
		if err != nil {
			t.Fatal(err)
		}
		modelDir = d
	}
	p := filepath.Join(modelDir, name+".gguf")
	if err := testmodel.Write(p, spec); err != nil {
		t.Fatalf("writing %s: %v", name, err)
	}
	modelPaths[name] = p
	return p
}

func TestMain(m *testing.M) {
	code := m.Run()
	if modelDir != "" {
		os.RemoveAll(modelDir)
	}
	os.Exit(code)
}

// caseByName finds a golden case.
func caseByName(t testing.TB, name string) testmodel.Case {
	for _, c := range testmodel.Cases() {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no case %s", name)
	return testmodel.Case{}
}

func openCase(t testing.TB, name string, opts llm.Options) *llm.Model {
	t.Helper()
	c := caseByName(t, name)
	m, err := llm.Open(modelFile(t, c.Name, c.Spec), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// evalAll runs ids through a fresh session in chunks of the given sizes (nil: whole) and returns
// every position's logits.
func evalAll(t testing.TB, m *llm.Model, so llm.SessionOptions, ids []int32, chunks ...int) [][]float32 {
	t.Helper()
	s, err := m.NewSession(so)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if len(chunks) == 0 {
		chunks = []int{len(ids)}
	}
	var out [][]float32
	for start, i := 0, 0; start < len(ids); i++ {
		n := min(chunks[i%len(chunks)], len(ids)-start)
		rows, err := s.Eval(context.Background(), ids[start:start+n], llm.AllLogits)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rows...)
		start += n
	}
	if s.Pos() != len(ids) {
		t.Fatalf("Pos() = %d after %d tokens", s.Pos(), len(ids))
	}
	return out
}

// sameLogits fails when any position's NMSE exceeds limit.
func sameLogits(t testing.TB, what string, got, want [][]float32, limit float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	worst := 0.0
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: row %d has %d logits, want %d", what, i, len(got[i]), len(want[i]))
		}
		e := tests.NMSE(got[i], want[i])
		if math.IsNaN(e) || e > limit {
			t.Errorf("%s: position %d: NMSE %.3g > %.g", what, i, e, limit)
		}
		worst = max(worst, e)
	}
	t.Logf("%s: worst NMSE %.3g over %d positions", what, worst, len(want))
}

// identicalLogits fails t unless got and want hold the same logits bit for bit.
func identicalLogits(t testing.TB, what string, got, want [][]float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: row %d has %d logits, want %d", what, i, len(got[i]), len(want[i]))
		}
		for j := range got[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("%s: position %d logit %d: %v, want %v", what, i, j, got[i][j], want[i][j])
			}
		}
	}
}
