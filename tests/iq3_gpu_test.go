package tests

// The GPU backends (Vulkan, GL) decode none of IQ3_XXS, IQ3_S and Q2_0: every case of the iq3/
// family is theirs to refuse, so the scheduler keeps those nodes on the CPU.
func init() {
	for _, c := range iq3Cases() {
		gpuUnsupported[c.Name] = "IQ3_XXS, IQ3_S and Q2_0: the GPU shaders have no decoding for these types (CPU only)"
	}
}
