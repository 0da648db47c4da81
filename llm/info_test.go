package llm_test

import (
	"testing"

	"github.com/tandem-ml/tandem/llm"
	"github.com/tandem-ml/tandem/llm/testmodel"
)

// ModelInfo.TokenBytes, computed by hand for tiny F32 models: all the weights but the token
// embeddings' other rows; an MoE model reads half of its expert tensors (2 of 4 experts); a tied
// model reads its whole embedding matrix (it is the output matrix too).
func TestTokenBytes(t *testing.T) {
	const e, v, l, hd = 64, 384, 2, 16         // n_embd, vocab, layers, head dim; 4 heads, 2 KV heads
	attn := int64(e*e + e*2*hd + e*2*hd + e*e) // q, k, v, output
	norms := int64(2*l*e + e)                  // attn and ffn norms per layer, output norm
	for _, c := range []struct {
		name string
		spec testmodel.Spec
		want int64 // floats
	}{
		{"llama", testmodel.Tiny("llama"), l*(attn+3*e*96) + norms + e*v + e},
		{"llama-moe", testmodel.Tiny("llama-moe"), l*(attn+3*e*48*2+e*4) + norms + e*v + e},
	} {
		m, err := llm.Open(modelFile(t, "tokenbytes-"+c.name, c.spec), llm.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := m.Info().TokenBytes
		m.Close()
		if got != 4*c.want {
			t.Errorf("%s: TokenBytes %d, want %d", c.name, got, 4*c.want)
		}
	}
}
