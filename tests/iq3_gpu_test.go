package tests

import "strings"

// The GPU backends (Vulkan, GL) decode IQ3_XXS, IQ3_S and Q2_0 blocks (MUL_MAT, MUL_MAT_ID,
// OUT_PROD, GET_ROWS, CPY into floats; CPY and SET_ROWS into Q2_0) but read only f32, f16 and
// q8_0 keys and values in FLASH_ATTN_EXT: those cases of the iq3/ family are theirs to refuse, so
// the scheduler keeps those nodes on the CPU.
func init() {
	for _, c := range iq3Cases() {
		if strings.HasPrefix(c.Name, "iq3/FLASH_ATTN_EXT(") {
			gpuUnsupported[c.Name] = "FLASH_ATTN_EXT: the GPU shader reads f32, f16 and q8_0 keys and values only"
		}
	}
	for _, typ := range iq3Types {
		for name, why := range quantGPUReasons(typ) {
			gpuUnsupported["iq3/"+name] = why
		}
	}
}
