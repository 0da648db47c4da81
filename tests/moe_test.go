package tests

import "testing"

// TestMoEOps runs just the MUL_MAT_ID cases on every non-CPU device against the CPU reference (a
// quick subset of TestOps): each must be supported and pass.
func TestMoEOps(t *testing.T) {
	devs := devicesUnderTest()
	if len(devs) == 0 {
		t.Skipf("no device besides the CPU: %s", vulkanWhy())
	}
	cases := moeCases()
	for _, d := range devs {
		be, err := d.NewBackend()
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		passed := 0
		for i, c := range cases {
			r := Run(c, be, uint64(i+1))
			switch {
			case r.Passed:
				passed++
			default:
				t.Errorf("%s %s: supported %v, NMSE %g: %s", be.Name(), c.Name, r.Supported, r.NMSE, r.Problem)
			}
		}
		t.Logf("%s: %d of %d MUL_MAT_ID cases passed", be.Name(), passed, len(cases))
		be.Close()
	}
}
