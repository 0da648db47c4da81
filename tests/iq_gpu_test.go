package tests

// The GPU backends (Vulkan, GL) decode none of IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M: every
// case of the iq/ family is theirs to refuse, so the scheduler keeps those nodes on the CPU.
func init() {
	for _, c := range iqCases() {
		gpuUnsupported[c.Name] = "IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M: the GPU shaders have no decoding for these types (CPU only)"
	}
}
