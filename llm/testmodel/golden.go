package testmodel

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tandem-ml/tandem/core"
)

// Case is a model with token ids whose logits llama.cpp computed (the golden files in
// llm/testdata/golden, made by TestWriteGolden in this package).
type Case struct {
	Name string
	Spec Spec
	IDs  []int32
	Gen  int // greedy tokens generated after IDs
}

// Cases are the golden cases: every architecture, tied and untied output, GQA, biases, q/k norms,
// MoE, RoPE frequency factors, F32 and quantized weights.
func Cases() []Case {
	ids := []int32{1, 300, 17, 291, 42, 260, 305, 77, 333, 8, 270, 299}
	llamaQ := Tiny("llama")
	llamaQ.WeightType, llamaQ.Seed = core.TypeQ8_0, 3
	llamaQ4 := Tiny("llama")
	llamaQ4.WeightType, llamaQ4.OutputF32, llamaQ4.OutputType, llamaQ4.Seed = core.TypeQ4_0, false, core.TypeQ8_0, 4
	llamaK := Tiny("llama")
	llamaK.NEmbd, llamaK.NFF, llamaK.NHead, llamaK.NHeadKV, llamaK.Seed = 256, 256, 4, 1, 5
	llamaK.WeightType, llamaK.OutputF32, llamaK.OutputType = core.TypeQ4_K, false, core.TypeQ6_K
	llama3 := Tiny("llama")
	llama3.RopeFreqs, llama3.Tied, llama3.RopeBase, llama3.Seed = true, true, 500000, 6
	moeQ := Tiny("qwen3moe")
	moeQ.WeightType, moeQ.Seed = core.TypeQ4_0, 7
	return []Case{
		{"llama-f32", Tiny("llama"), ids, 8},
		{"llama3-tied-ropefreqs-f32", llama3, ids, 8},
		{"llama-q8_0", llamaQ, ids, 8},
		{"llama-q4_0", llamaQ4, ids, 8},
		{"llama-q4_k", llamaK, ids, 8},
		{"llama-moe-f32", Tiny("llama-moe"), ids, 8},
		{"qwen2-f32", Tiny("qwen2"), ids, 8},
		{"qwen3-f32", Tiny("qwen3"), ids, 8},
		{"qwen3moe-f32", Tiny("qwen3moe"), ids, 8},
		{"qwen3moe-q4_0", moeQ, ids, 8},
	}
}

// Golden is llama.cpp's answer for a case: logits per position and the greedy continuation.
type Golden struct {
	IDs    []int32
	Logits [][]float32
	Gen    []int32
}

// ReadGolden parses a golden file: "ids a,b,c", one "logits v v v" line per position, "gen a b c";
// lines starting with # are comments.
func ReadGolden(r io.Reader) (*Golden, error) {
	g := &Golden{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, rest, _ := strings.Cut(line, " ")
		switch key {
		case "ids":
			for _, f := range strings.Split(rest, ",") {
				v, err := strconv.Atoi(f)
				if err != nil {
					return nil, err
				}
				g.IDs = append(g.IDs, int32(v))
			}
		case "gen":
			for _, f := range strings.Fields(rest) {
				v, err := strconv.Atoi(f)
				if err != nil {
					return nil, err
				}
				g.Gen = append(g.Gen, int32(v))
			}
		case "logits":
			var row []float32
			for _, f := range strings.Fields(rest) {
				v, err := strconv.ParseFloat(f, 32)
				if err != nil {
					return nil, err
				}
				row = append(row, float32(v))
			}
			g.Logits = append(g.Logits, row)
		default:
			return nil, fmt.Errorf("tandem: testmodel: golden line starts with %q", key)
		}
	}
	return g, sc.Err()
}
