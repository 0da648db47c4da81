package tests

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestK23GPUOps runs the k23/ family and the sweep's cases of Q2_K and Q3_K on every non-CPU
// device against the CPU reference, with TestOps' rules (TestLowBitGPUOps' subset for these
// types): the GPU backends quantize into both types (CPY, SET_ROWS) and refuse none of them.
func TestK23GPUOps(t *testing.T) {
	runGPUSubset(t, map[core.Type]bool{core.TypeQ2_K: true, core.TypeQ3_K: true}, k23Cases())
}
