package tests

// The GPU backends (Vulkan, GL) decode neither TQ1_0 nor TQ2_0 blocks and address no 8-byte
// float: every case of the tq/ family is theirs to refuse, so the scheduler keeps those nodes on
// the CPU.
func init() {
	for _, c := range tqCases() {
		gpuUnsupported[c.Name] = "TQ1_0, TQ2_0 and F64: the GPU shaders have no decoding for these types yet (CPU only)"
	}
}
