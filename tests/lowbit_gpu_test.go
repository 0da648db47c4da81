package tests

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestLowBitGPUOps runs the fp4/, tq/, iq3/ and mxfp4/ families and the sweep's cases of MXFP4, NVFP4,
// Q1_0, TQ1_0, TQ2_0, Q2_0, IQ3_XXS and IQ3_S on every non-CPU device against the CPU reference (a quick subset of TestOps,
// with its rules: each case passes or is listed in expectedUnsupported, and a listed case that a
// software device supports is a failure).
func TestLowBitGPUOps(t *testing.T) {
	lowbit := map[core.Type]bool{core.TypeMXFP4: true, core.TypeNVFP4: true, core.TypeQ1_0: true,
		core.TypeTQ1_0: true, core.TypeTQ2_0: true, core.TypeQ2_0: true, core.TypeIQ3_XXS: true, core.TypeIQ3_S: true}
	runGPUSubset(t, lowbit, append(append(append(fp4Cases(), tqCases()...), iq3Cases()...), mxfp4Cases()...))
}

// runGPUSubset runs cases and the sweep's cases of the types in types on every non-CPU device
// against the CPU reference, with TestOps' rules.
func runGPUSubset(t *testing.T, types map[core.Type]bool, cases []Case) {
	devs := devicesUnderTest()
	if len(devs) == 0 {
		t.Skipf("no device besides the CPU: %s", vulkanWhy())
	}
	for _, c := range sweepSelection() {
		for _, typ := range c.types {
			if types[typ] {
				cases = append(cases, c.Case)
				break
			}
		}
	}
	for _, d := range devs {
		be, err := d.NewBackend()
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		unsupported := map[string]string{}
		for _, c := range cases {
			if why, ok := expectedUnsupported[deviceKind(be.Name())][c.Name]; ok {
				unsupported[c.Name] = why
			}
		}
		summary, notes, problems := runTable(be, cases, unsupported, d.Type() == core.DeviceAccel)
		t.Log(summary)
		for _, n := range notes {
			t.Log(n)
		}
		for _, p := range problems {
			if strings.Contains(p, "no passing case for the ops it is expected to run") {
				continue // the subset runs a few ops only
			}
			t.Error(p)
		}
		be.Close()
	}
}
