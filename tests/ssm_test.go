package tests

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// TestSSMCases runs the state-space and linear-attention cases alone (TestOps runs them with the
// rest of the table) on the fast CPU kernels and on every device besides the CPU, against the
// CPU reference. A device may leave a case unsupported only where expectedUnsupported lists it.
func TestSSMCases(t *testing.T) {
	cases := ssmCases()
	if len(cases) < 60 {
		t.Fatalf("%d state-space cases", len(cases))
	}
	fast, err := cpu.New(cpu.Options{Threads: 3})
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
		worst := map[string]float64{} // the largest NMSE per op
		for i, c := range cases {
			r := Run(c, be, uint64(i+1))
			switch {
			case r.Passed:
				passed++
				op, _, _ := strings.Cut(c.Name, "(")
				worst[op] = max(worst[op], r.NMSE)
			case !r.Supported && r.Problem == "":
				if _, listed := expectedUnsupported[deviceKind(be.Name())][c.Name]; !listed {
					t.Errorf("%s %s: unsupported, and not in its expectedUnsupported list", be.Name(), c.Name)
				}
			default:
				t.Errorf("%s %s: %s", be.Name(), c.Name, r.Problem)
			}
		}
		t.Logf("%s: %d of %d state-space cases passed; largest NMSE per op %v", be.Name(), passed, len(cases), worst)
	}
}

// The GPU backends run every state-space case; Vulkan must keep running each op.
func init() {
	expectedOps["Vulkan"] = append(expectedOps["Vulkan"], core.OpSSMConv, core.OpSSMScan, core.OpRWKVWKV6,
		core.OpGatedLinearAttn, core.OpRWKVWKV7, core.OpSolveTri, core.OpGatedDeltaNet)
}
