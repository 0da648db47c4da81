package tests

import "github.com/tandem-ml/tandem/core"

// The GPU backends (Vulkan, GL) run every vision op (expected of Vulkan); the custom-op case is
// theirs to refuse: a Go function runs on the CPU only.
func init() {
	gpuUnsupported[customCaseName] = "MAP_CUSTOM1: a Go function runs on the CPU only (the scheduler keeps custom nodes there)"
	expectedOps["Vulkan"] = append(expectedOps["Vulkan"], core.OpGroupNorm, core.OpUpscale, core.OpWinPart,
		core.OpWinUnpart, core.OpGetRelPos, core.OpAddRelPos)
}
