package tests

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// The GPU backends (Vulkan, GL) run LIGHTNING_INDEXER (every key type of the lightning/ cases)
// and DeepSeek V4's hyper-connection ops (backends/internal/gpuops' ops_lightning.go, ops_dsv4.go).
func init() {
	expectedOps["Vulkan"] = append(expectedOps["Vulkan"], core.OpLightningIndexer, core.OpDsv4HcComb,
		core.OpDsv4HcPre, core.OpDsv4HcPost)
}

// TestLightningDsv4GPUOps runs the lightning/ and dsv4/ families on every non-CPU device against
// the CPU reference, with TestOps' rules (none of them listed unsupported), and then holds each
// case to the reference bit for bit (NMSE 0): the shaders sum in the reference kernels' order,
// round every product and sum on its own, convert keys with core/quant's arithmetic and round
// DSV4_HC_COMB's exp correctly. A pass that needed f32 denormals flushed (Result.Note) is only
// held to the usual limit.
func TestLightningDsv4GPUOps(t *testing.T) {
	cases := append(lightningCases(), dsv4Cases()...)
	runGPUSubset(t, nil, cases)
	for _, d := range devicesUnderTest() {
		be, err := d.NewBackend()
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		for i, c := range cases {
			r := Run(c, be, uint64(i+1))
			if r.Passed && r.Note == "" && r.NMSE != 0 {
				t.Errorf("%s %s: NMSE %g, want 0 (bit for bit as the CPU reference)", be.Name(), c.Name, r.NMSE)
			}
		}
		be.Close()
	}
}
