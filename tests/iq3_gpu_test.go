package tests

// The GPU backends (Vulkan, GL) decode IQ3_XXS, IQ3_S and Q2_0 blocks (MUL_MAT, MUL_MAT_ID,
// OUT_PROD, GET_ROWS, CPY into floats, FLASH_ATTN_EXT keys and values; CPY and SET_ROWS into
// Q2_0); the cases of the iq3/ family that gpuAttnReason or quantGPUReasons name (none at
// present) are theirs to refuse, so the scheduler keeps those nodes on the CPU.
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
