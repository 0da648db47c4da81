package tests

// The GPU backends (Vulkan, GL) do not decode MXFP4, NVFP4 or Q1_0 blocks: every case of the fp4/
// family is theirs to refuse, so the scheduler keeps those nodes on the CPU.
func init() {
	for _, c := range fp4Cases() {
		gpuUnsupported[c.Name] = "MXFP4, NVFP4 and Q1_0: the GPU shaders have no dequantization for these blocks yet (CPU only)"
	}
}
