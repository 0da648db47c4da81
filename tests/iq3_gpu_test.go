package tests

// The GPU backends (Vulkan, GL) decode IQ3_XXS, IQ3_S and Q2_0 blocks (MUL_MAT, MUL_MAT_ID,
// OUT_PROD, GET_ROWS, CPY into floats; CPY and SET_ROWS into Q2_0) but read IQ3_XXS and IQ3_S
// keys and values in FLASH_ATTN_EXT not at all (Q2_0 they do: gpuAttnReason): those cases of the
// iq3/ family are theirs to refuse, so the scheduler keeps those nodes on the CPU.
func init() {
	for _, c := range iq3Cases() {
		if why := gpuAttnReason(c.Name); why != "" {
			gpuUnsupported[c.Name] = why
		}
	}
	for _, typ := range iq3Types {
		for name, why := range quantGPUReasons(typ) {
			gpuUnsupported["iq3/"+name] = why
		}
	}
}
