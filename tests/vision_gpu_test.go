package tests

import "strings"

// The vision and custom cases the GPU backends (Vulkan, GL) do not run, joined to gpuUnsupported.
func init() {
	gpuUnsupported[customCaseName] = "MAP_CUSTOM1: a Go function runs on the CPU only (the scheduler keeps custom nodes there)"
	for _, c := range visionCases() {
		for _, op := range visionGPUPending {
			if strings.HasPrefix(c.Name, op+"(") {
				gpuUnsupported[c.Name] = op + ": no GPU shader yet"
			}
		}
	}
}

// visionGPUPending are the vision ops without a GPU shader.
var visionGPUPending = []string{"GROUP_NORM", "GROUP_NORM_MUL_ADD", "UPSCALE", "UPSCALE_EXT", "INTERPOLATE",
	"WIN_PART", "WIN_UNPART", "GET_REL_POS", "ADD_REL_POS"}
