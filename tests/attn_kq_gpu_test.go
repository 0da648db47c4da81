package tests

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestAttnKQGPUOps runs the attnkq/ family (FLASH_ATTN_EXT with K and V of the K-quant, IQ4_XS,
// FP4 and IQ types, one-pass and split) on every non-CPU device against the CPU reference, with
// TestOps' rules (TestLowBitGPUOps' subset for this family).
func TestAttnKQGPUOps(t *testing.T) {
	runGPUSubset(t, map[core.Type]bool{}, attnKQCases())
}
