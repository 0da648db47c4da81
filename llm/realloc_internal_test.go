package llm

import (
	"context"
	"path/filepath"
	"testing"

	_ "github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/llm/testmodel"
)

// A generated token reuses the last graph without allocating it again. When the scheduler's plan
// has gone meanwhile, the token still gives the logits of an undisturbed run: after a Reset (the
// graph's tensors lose their memory) it is computed again after a fresh allocation; after a
// pinned tensor the scheduler plans the graph again as the run starts (its inputs keep their
// place and bytes).
func TestReusedGraphLosesItsPlan(t *testing.T) {
	var c testmodel.Case
	for _, k := range testmodel.Cases() {
		if k.Name == "llama-f32" {
			c = k
		}
	}
	if c.Name == "" {
		t.Fatal("no llama-f32 case")
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := testmodel.Write(path, c.Spec); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path, Options{GPULayers: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	run := func(disturb func(s *Session)) [][]float32 {
		s, err := m.NewSession(SessionOptions{ContextSize: 256})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Eval(ctx, c.IDs, LastLogits); err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for i, id := range []int32{3, 7, 11, 5} {
			plans := s.sched.Stats().Plans
			if i == 2 && disturb != nil {
				if !s.lastRan {
					t.Fatal("the token graph did not run before the disturbance")
				}
				disturb(s)
			}
			l, err := s.EvalTo(ctx, []int32{id}, LastLogits, nil)
			if err != nil {
				t.Fatalf("token %d: %v", i, err)
			}
			if i == 2 && disturb != nil && s.sched.Stats().Plans == plans {
				t.Fatal("the disturbed token was not planned again")
			}
			out = append(out, l)
		}
		return out
	}
	want := run(nil)
	for name, disturb := range map[string]func(*Session){
		"scheduler reset": func(s *Session) { s.sched.Reset() },
		"pinned input": func(s *Session) {
			if err := s.sched.SetTensorBackend(s.last.tokens, s.sched.Backend(s.sched.NBackends()-1)); err != nil {
				t.Fatal(err)
			}
		},
	} {
		got := run(disturb)
		for i := range want {
			for j := range want[i] {
				if got[i][j] != want[i][j] {
					t.Fatalf("%s: token %d logit %d: %g, want %g", name, i, j, got[i][j], want[i][j])
				}
			}
		}
	}
}
