package tests

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestIQGPUOps runs the iq/ family and the sweep's cases of IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and
// IQ1_M on every non-CPU device against the CPU reference (TestLowBitGPUOps' subset for these
// types). The GPU backends (Vulkan, GL) decode these blocks in every op of the family (MUL_MAT,
// MUL_MAT_ID, OUT_PROD, GET_ROWS, CPY into floats and into the same type, FLASH_ATTN_EXT keys and
// values) and refuse none of its cases; nothing writes these types from floats, on the CPU either.
func TestIQGPUOps(t *testing.T) {
	types := map[core.Type]bool{}
	for _, typ := range iqTypes {
		types[typ] = true
	}
	runGPUSubset(t, types, iqCases())
}
