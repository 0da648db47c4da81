package tests

import (
	"strings"

	"github.com/tandem-ml/tandem/core"
)

// gpuAttnTypes are the key/value types the GPU backends' FLASH_ATTN_EXT reads, each with itself
// (gpuops' faPair; shaders/fa_kv.glsl).
var gpuAttnTypes = map[core.Type]bool{core.TypeF32: true, core.TypeF16: true, core.TypeBF16: true,
	core.TypeQ8_0: true, core.TypeQ4_0: true, core.TypeQ4_1: true, core.TypeQ5_0: true, core.TypeQ5_1: true,
	core.TypeIQ4_NL: true, core.TypeQ1_0: true, core.TypeQ2_0: true,
	core.TypeQ2_K: true, core.TypeQ3_K: true, core.TypeQ4_K: true, core.TypeQ5_K: true, core.TypeQ6_K: true,
	core.TypeIQ4_XS: true, core.TypeMXFP4: true, core.TypeNVFP4: true, core.TypeIQ3_XXS: true, core.TypeIQ3_S: true,
	core.TypeIQ2_XXS: true, core.TypeIQ2_XS: true, core.TypeIQ2_S: true, core.TypeIQ1_S: true, core.TypeIQ1_M: true}

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
	return "FLASH_ATTN_EXT: the GPU shaders read keys and values of f32, f16, bf16, the legacy and K-quant block types, " +
		"iq4_nl, iq4_xs, mxfp4, nvfp4, q1_0, q2_0 and the IQ3/IQ2/IQ1 types only"
}
