package tests

import "strings"

// The GPU backends (Vulkan, GL) decode TQ1_0 and TQ2_0 blocks (MUL_MAT, MUL_MAT_ID, OUT_PROD,
// GET_ROWS, CPY into floats) and quantize into them only as quantGPUReasons says, and they address
// no 8-byte float: those cases of the tq/ family are theirs to refuse, so the scheduler keeps
// those nodes on the CPU.
func init() {
	for _, typ := range tqTypes {
		for name, why := range quantGPUReasons(typ) {
			gpuUnsupported["tq/"+name] = why
		}
	}
	for _, c := range tqCases() {
		if strings.Contains(c.Name, "(f64") {
			gpuUnsupported[c.Name] = "F64: the GPU shaders address no 8-byte float (CPU only)"
		}
	}
}
