package tests

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// The GPU backends (Vulkan, GL) decode MXFP4, NVFP4 and Q1_0 blocks (MUL_MAT, MUL_MAT_ID,
// OUT_PROD, GET_ROWS, CPY into floats, FLASH_ATTN_EXT keys and values) and quantize into them
// (CPY, SET_ROWS); the cases of the fp4/ family that quantGPUReasons or gpuAttnReason name (none
// at present) are theirs to refuse, so the scheduler keeps those nodes on the CPU.
func init() {
	for _, typ := range fp4Types {
		for name, why := range quantGPUReasons(typ) {
			gpuUnsupported["fp4/"+name] = why
		}
	}
	for _, c := range fp4Cases() {
		if why := gpuAttnReason(c.Name); why != "" {
			gpuUnsupported[c.Name] = why
		}
	}
}

// quantGPUReasons are the cases quantTypeCases adds for typ (by name, without a family prefix)
// that the GPU backends refuse, with the reason: CPY and SET_ROWS into typ where their shaders
// have no quantizer for it (gpuNoQuantizer, as the sweep's rule).
func quantGPUReasons(typ core.Type) map[string]string {
	out := map[string]string{}
	if !gpuNoQuantizer[typ] {
		return out
	}
	for _, from := range []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16} {
		out[fmt.Sprintf("CPY(%v->%v)", from, typ)] = gpuNoQuantizerReason(core.OpCpy, typ)
	}
	for _, it := range []core.Type{core.TypeI32, core.TypeI64} {
		out[fmt.Sprintf("SET_ROWS(%v,%v,broadcast)", typ, it)] = gpuNoQuantizerReason(core.OpSetRows, typ)
	}
	return out
}
