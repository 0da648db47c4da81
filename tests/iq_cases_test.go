package tests

import (
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
)

// TestIQCases runs the iq/ family (random IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M blocks) on a
// second CPU backend against the reference: every case is supported and passes.
func TestIQCases(t *testing.T) {
	be, err := cpu.New(cpu.Options{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	cs := iqCases()
	if len(cs) != 5*16 {
		t.Errorf("%d iq/ cases, want 80", len(cs))
	}
	for i, c := range cs {
		if r := Run(c, be, uint64(i+1)); !r.Supported || !r.Passed {
			t.Errorf("%s: supported %v: %s", c.Name, r.Supported, r.Problem)
		}
	}
}
