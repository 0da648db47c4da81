package tests

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
)

// convCases are the table's conv/ family (cases_conv_direct.go).
func convCases() []Case {
	var out []Case
	for _, c := range Cases() {
		if strings.HasPrefix(c.Name, "conv/") {
			out = append(out, c)
		}
	}
	return out
}

// The conv/ family alone on the CPU (a two-thread team against the reference's one), and on
// every other device the way TestOps runs it, for quick runs of these ops.
func TestConvDirectCases(t *testing.T) {
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	cases := convCases()
	if len(cases) == 0 {
		t.Fatal("no conv/ cases")
	}
	for i, c := range cases {
		if r := Run(c, be, uint64(i+1)); !r.Supported || !r.Passed {
			t.Errorf("%s: supported %v: %s", c.Name, r.Supported, r.Problem)
		}
	}
	for _, d := range devicesUnderTest() {
		gb, err := d.NewBackend()
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		unsupported := expectedUnsupported[deviceKind(gb.Name())]
		passed := 0
		for i, c := range cases {
			r := Run(c, gb, uint64(i+1))
			_, listed := unsupported[c.Name]
			switch {
			case !r.Supported && r.Problem == "" && !listed:
				t.Errorf("%s %s: unsupported, and not in its expectedUnsupported list", gb.Name(), c.Name)
			case r.Supported && !r.Passed:
				t.Errorf("%s %s: %s", gb.Name(), c.Name, r.Problem)
			case r.Passed:
				passed++
			}
		}
		t.Logf("%s: %d of %d conv/ cases passed", gb.Name(), passed, len(cases))
		gb.Close()
	}
}
