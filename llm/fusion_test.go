package llm_test

import (
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/llm"
)

// The CPU backend's node fusions (RMS_NORM then MUL by the norm weights) change no logit: a model
// run on a CPU backend with NoFusion gives the same logits bit for bit, prompt and generation.
func TestFusionKeepsLogits(t *testing.T) {
	for _, name := range []string{"llama-f32", "llama-q4_k", "qwen3moe-q4_0"} {
		c := caseByName(t, name)
		var want [][]float32
		for _, noFusion := range []bool{true, false} {
			be, err := cpu.New(cpu.Options{Threads: 2, NoFusion: noFusion})
			if err != nil {
				t.Fatal(err)
			}
			be.SetOpProfile(true)
			m := openCase(t, c.Name, llm.Options{Backends: []core.Backend{be}})
			got := evalAll(t, m, llm.SessionOptions{ContextSize: 256}, c.IDs, len(c.IDs)-2, 1, 1)
			norms := 0
			for _, o := range be.OpProfile() {
				if o.Op == "RMS_NORM" {
					norms += o.Nodes
				}
			}
			if fused := norms == 0; fused == noFusion {
				t.Fatalf("%s: NoFusion %v, yet %d RMS_NORM nodes ran alone", name, noFusion, norms)
			}
			m.Close()
			be.Close()
			if want == nil {
				want = got
				continue
			}
			identicalLogits(t, name+": fused against unfused", got, want)
		}
	}
}
