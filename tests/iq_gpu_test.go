package tests

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// The GPU backends (Vulkan, GL) decode IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M blocks (MUL_MAT,
// MUL_MAT_ID, OUT_PROD, GET_ROWS, CPY into floats and into the same type; nothing writes these
// types from floats, on the CPU either) but read none of them as FLASH_ATTN_EXT keys and values:
// those cases of the iq/ family are theirs to refuse, so the scheduler keeps those nodes on the
// CPU.
func init() {
	for _, c := range iqCases() {
		if why := gpuAttnReason(c.Name); why != "" {
			gpuUnsupported[c.Name] = why
		}
	}
}

// TestIQGPUOps runs the iq/ family and the sweep's cases of IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and
// IQ1_M on every non-CPU device against the CPU reference (TestLowBitGPUOps' subset for these
// types).
func TestIQGPUOps(t *testing.T) {
	types := map[core.Type]bool{}
	for _, typ := range iqTypes {
		types[typ] = true
	}
	runGPUSubset(t, types, iqCases())
}
