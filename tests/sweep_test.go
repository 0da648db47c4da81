package tests

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestSweepTable: the generated sweep holds every op family with every type tandem has as MUL_MAT
// weights, GET_ROWS source and SET_ROWS/CPY destination, and the default sample stays small
// (TestOps runs it on every device) while holding every family.
func TestSweepTable(t *testing.T) {
	all := sweepAll()
	families := map[string]int{}
	typesOf := map[string]map[core.Type]bool{}
	for _, c := range all {
		op := sweepFamily(c.Name)
		families[op]++
		if typesOf[op] == nil {
			typesOf[op] = map[core.Type]bool{}
		}
		for _, typ := range c.types {
			typesOf[op][typ] = true
		}
	}
	for _, op := range []string{"MUL_MAT", "MUL_MAT_ID", "GET_ROWS", "SET_ROWS", "CPY"} {
		for _, typ := range sweepTypes {
			if !typesOf[op][typ] && (op != "SET_ROWS" || typ.CanConvert()) { // nothing sets rows of a type without a quantizer
				t.Errorf("no %s case of the sweep uses %v", op, typ)
			}
		}
	}
	for _, op := range []string{"OUT_PROD", "ADD", "SUB", "MUL", "DIV"} {
		if families[op] == 0 {
			t.Errorf("the sweep has no %s case", op)
		}
	}
	if len(all) < 3000 {
		t.Errorf("the whole sweep has %d cases, want at least 3000", len(all))
	}
	sample := map[string]int{}
	n := 0
	for _, c := range all {
		if inSweepSample(c) {
			sample[sweepFamily(c.Name)]++
			n++
		}
	}
	for op := range families {
		if sample[op] == 0 {
			t.Errorf("the default sample has no %s case", op)
		}
	}
	if n < 100 || n > 300 {
		t.Errorf("the default sample has %d cases, want 100 to 300", n)
	}
	t.Logf("sweep: %d cases %v; default sample %d %v; TANDEM_LONG=1: %v", len(all), families, n, sample, sweepLong())
}

func sweepFamily(name string) string {
	op, _, _ := strings.Cut(strings.TrimPrefix(name, "sweep/"), "(")
	return op
}

// TestSweepGPURule checks sweepGPUReason against what the GPU devices report for every case of
// the whole sweep (not only the sample TestOps computes; nothing is computed here): on a software
// device (the ones CI runs) a case must be supported exactly when the rule gives no reason.
func TestSweepGPURule(t *testing.T) {
	devs := devicesUnderTest()
	if len(devs) == 0 {
		t.Skipf("no device besides the CPU: %s", vulkanWhy())
	}
	all := sweepAll()
	for _, d := range devs {
		if _, ok := expectedUnsupported[deviceKind(d.Name())]; !ok {
			continue
		}
		var wrong []string
		for _, c := range all {
			ctx := core.NewContext(core.ContextParams{NoAlloc: true})
			g := core.NewGraph(core.DefaultGraphSize)
			g.BuildForwardExpand(c.Build(ctx))
			supported := true
			for _, n := range g.Nodes() {
				supported = supported && d.SupportsOp(n)
			}
			why := sweepGPUReason(c)
			if supported == (why == "") {
				continue
			}
			if why == "" {
				why = "no reason"
			}
			wrong = append(wrong, fmt.Sprintf("%s: supported %v, rule: %s", c.Name, supported, why))
		}
		if len(wrong) == 0 {
			continue
		}
		msg := fmt.Sprintf("%s: sweepGPUReason is wrong for %d of %d cases:\n%s", d.Name(), len(wrong), len(all), strings.Join(wrong[:min(len(wrong), 40)], "\n"))
		if d.Type() == core.DeviceAccel {
			t.Error(msg)
		} else {
			t.Log(msg)
		}
	}
}
