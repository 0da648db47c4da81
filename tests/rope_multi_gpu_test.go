package tests

import (
	"strings"
	"testing"
)

// ropeGPUCases are the ROPE and ROPE_BACK cases of ggml_rope_multi's modes (MROPE 8, VISION 24,
// IMROPE 40, with sections) and of ggml_rope_set_offset's offsets.
func ropeGPUCases() []Case {
	var cs []Case
	for _, c := range Cases() {
		n := c.Name
		if !strings.HasPrefix(n, "norm/ROPE") {
			continue
		}
		if strings.Contains(n, "mode=8,") || strings.Contains(n, "mode=24,") || strings.Contains(n, "mode=40,") ||
			strings.Contains(n, "offset") {
			cs = append(cs, c)
		}
	}
	return cs
}

// TestRopeMultiGPU runs the multi-section and offset ROPE cases on every non-CPU device: each
// must be supported and match the CPU.
func TestRopeMultiGPU(t *testing.T) {
	cases := ropeGPUCases()
	if len(cases) < 40 {
		t.Fatalf("%d multi-section and offset ROPE cases, want at least 40", len(cases))
	}
	devs := devicesUnderTest()
	if len(devs) == 0 {
		t.Skipf("no device besides the CPU: %s", vulkanWhy())
	}
	for _, d := range devs {
		be, err := d.NewBackend()
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		passed := 0
		for i, c := range cases {
			r := Run(c, be, uint64(i+1))
			if r.Supported && r.Passed {
				passed++
				continue
			}
			t.Errorf("%s %s: supported %v, NMSE %g: %s", be.Name(), c.Name, r.Supported, r.NMSE, r.Problem)
		}
		t.Logf("%s: %d of %d cases passed", be.Name(), passed, len(cases))
		be.Close()
	}
}
