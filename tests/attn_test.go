package tests

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// TestFlashAttnCases runs the FLASH_ATTN_EXT cases alone (TestOps runs them with the rest of the
// table) on the fast CPU kernels and on every device besides the CPU, against the CPU reference.
func TestFlashAttnCases(t *testing.T) {
	var cases []Case
	for _, c := range Cases() {
		if strings.HasPrefix(c.Name, "FLASH_ATTN_EXT") {
			cases = append(cases, c)
		}
	}
	if len(cases) < 8 {
		t.Fatalf("%d FLASH_ATTN_EXT cases", len(cases))
	}
	fast, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer fast.Close()
	backends := []core.Backend{fast}
	for _, d := range devicesUnderTest() {
		be, err := d.NewBackend()
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		defer be.Close()
		backends = append(backends, be)
	}
	for _, be := range backends {
		passed := 0
		for i, c := range cases {
			r := Run(c, be, uint64(i+1))
			switch {
			case r.Passed:
				passed++
				t.Logf("%s %s: NMSE %.3g", be.Name(), c.Name, r.NMSE)
			case !r.Supported && r.Problem == "":
				t.Logf("%s %s: unsupported", be.Name(), c.Name)
			default:
				t.Errorf("%s %s: %s", be.Name(), c.Name, r.Problem)
			}
		}
		if passed == 0 {
			t.Errorf("%s passed no FLASH_ATTN_EXT case", be.Name())
		}
	}
}
