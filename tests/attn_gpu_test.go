package tests

import (
	"strings"

	"github.com/tandem-ml/tandem/core"
)

// gpuAttnTypes are the key/value types the GPU backends' FLASH_ATTN_EXT reads, each with itself
// (gpuops' faPair; shaders/fa_kv.glsl).
var gpuAttnTypes = map[core.Type]bool{core.TypeF32: true, core.TypeF16: true, core.TypeBF16: true,
	core.TypeQ8_0: true, core.TypeQ4_0: true, core.TypeQ4_1: true, core.TypeQ5_0: true, core.TypeQ5_1: true,
	core.TypeIQ4_NL: true, core.TypeQ1_0: true, core.TypeQ2_0: true}

// gpuAttnReason is why the GPU backends refuse the FLASH_ATTN_EXT case named name, of a type
// family's cases (K and V of one type, "...FLASH_ATTN_EXT(k=<type>,..."): its type is not one they
// read. "" for every other case.
func gpuAttnReason(name string) string {
	_, rest, ok := strings.Cut(name, "FLASH_ATTN_EXT(k=")
	if !ok {
		return ""
	}
	tname, _, _ := strings.Cut(rest, ",")
	for t := range gpuAttnTypes {
		if t.String() == tname {
			return ""
		}
	}
	return "FLASH_ATTN_EXT: the GPU shaders read f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, q1_0 and q2_0 keys and values only"
}
