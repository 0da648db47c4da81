package tests

import "testing"

// TestGPUGapOps runs just the cases of gpuGapCases on every non-CPU device against the CPU
// reference (a quick subset of TestOps): each must be supported and pass.
func TestGPUGapOps(t *testing.T) {
	devs := devicesUnderTest()
	if len(devs) == 0 {
		t.Skipf("no device besides the CPU: %s", vulkanWhy())
	}
	cases := gpuGapCases()
	for _, d := range devs {
		be, err := d.NewBackend()
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		passed := 0
		for i, c := range cases {
			r := Run(c, be, uint64(i+1))
			if r.Passed {
				passed++
				continue
			}
			t.Errorf("%s %s: supported %v, NMSE %g: %s", be.Name(), c.Name, r.Supported, r.NMSE, r.Problem)
		}
		t.Logf("%s: %d of %d cases passed", be.Name(), passed, len(cases))
		be.Close()
	}
}
