package llm

import (
	"fmt"
	"strings"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/gguf"
)

// fileTypeNames are llama.cpp's names of general.file_type (enum llama_ftype) for the types
// tandem reads.
var fileTypeNames = map[uint64]string{
	0: "all F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
	10: "Q2_K - Medium", 11: "Q3_K - Small", 12: "Q3_K - Medium", 13: "Q3_K - Large",
	14: "Q4_K - Small", 15: "Q4_K - Medium", 16: "Q5_K - Small", 17: "Q5_K - Medium", 18: "Q6_K",
	25: "IQ4_NL", 30: "IQ4_XS", 32: "BF16",
}

// ModelInfo describes a loaded model as llama-bench does.
type ModelInfo struct {
	Desc   string // "llama 1B Q4_0": architecture, size, file type
	Params int64  // weights' elements
	Bytes  int64  // weights' bytes
	// TokenBytes is the weight bytes one generated token reads: every tensor but the token
	// embedding (one row of it; all of it where it doubles as the output matrix), the expert
	// tensors of an MoE model in the proportion of experts used per token.
	TokenBytes int64
	NLayer     int
	NVocab     int
	FileTyp    string
}

// fileInfo computes the model's description from its file.
func fileInfo(f *gguf.File, h *HParams) ModelInfo {
	info := ModelInfo{NLayer: h.NLayer, NVocab: h.NVocab}
	byType := map[core.Type]int64{}
	tied := true
	for _, t := range f.Tensors {
		if t.Name == "output.weight" {
			tied = false
		}
	}
	for _, t := range f.Tensors {
		info.Params += t.NElements()
		info.Bytes += t.Size
		if t.NDims >= 2 {
			byType[t.Type] += t.Size
		}
		switch {
		case t.Name == "token_embd.weight" && !tied:
			info.TokenBytes += t.Size / max(t.Ne[1], 1)
		case strings.HasSuffix(t.Name, "_exps.weight") && h.NExpert > 0:
			info.TokenBytes += t.Size * int64(h.NExpertUsed) / int64(h.NExpert)
		default:
			info.TokenBytes += t.Size
		}
	}
	if ft, err := f.GetUint("general.file_type"); err == nil {
		info.FileTyp = fileTypeNames[ft]
	}
	if info.FileTyp == "" { // the type holding most of the matrices' bytes
		var best core.Type
		for t, n := range byType {
			if n > byType[best] || byType[best] == 0 {
				best = t
			}
		}
		info.FileTyp = best.String()
		if best == core.TypeF32 {
			info.FileTyp = "all F32"
		}
	}
	size := fmt.Sprintf("%.0fM", float64(info.Params)/1e6)
	if info.Params < 1e6 {
		size = fmt.Sprintf("%.0fK", float64(info.Params)/1e3)
	}
	if info.Params >= 1e9 {
		size = fmt.Sprintf("%.0fB", float64(info.Params)/1e9)
	}
	if h.NExpert > 0 {
		size = fmt.Sprintf("%dx%s", h.NExpert, size)
	}
	info.Desc = fmt.Sprintf("%s %s %s", h.Arch, size, info.FileTyp)
	return info
}

// Info describes the model (llama-bench's model, size and params columns).
func (m *Model) Info() ModelInfo { return m.info }
