package rpc_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/rpc"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/tests"
)

// noWireOps are the ops the client refuses because ggml's RPC protocol has no op id for them, with
// the reason. A case is expected to be unsupported exactly when its graph holds one of them;
// TestNoWireOpsList keeps the list equal to what rpc.GGMLOp says. Every tandem op has a ggml id
// since the training ops joined the table (issue 22) but the custom ops, whose Go function cannot
// travel (ggml's RPC cannot send its function pointers either).
var noWireOps = map[core.Op]string{
	core.OpMapCustom1: "a Go function cannot be sent",
	core.OpMapCustom2: "a Go function cannot be sent",
	core.OpMapCustom3: "a Go function cannot be sent",
	core.OpCustom:     "a Go function cannot be sent",
}

// TestNoWireOpsList checks noWireOps against rpc.GGMLOp: every op without an id is listed, and
// none with one.
func TestNoWireOpsList(t *testing.T) {
	for op := core.Op(0); op < core.OpCount; op++ {
		_, ok := rpc.GGMLOp(op)
		if _, listed := noWireOps[op]; listed == ok {
			t.Errorf("%v: GGMLOp ok=%v but listed in noWireOps=%v", op, ok, listed)
		}
	}
}

// caseOps builds tc's graph (metadata only) and returns its computing ops.
func caseOps(t *testing.T, tc tests.Case) []core.Op {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	out := tc.Build(ctx)
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	if err := g.Err(); err != nil {
		t.Fatalf("%s: %v", tc.Name, err)
	}
	var ops []core.Op
	for _, n := range g.Nodes() {
		if !n.Op.IsView() {
			ops = append(ops, n.Op)
		}
	}
	return ops
}

// unsupportedReason says why tc is expected to be unsupported over RPC ("" when it is expected to
// pass).
func unsupportedReason(t *testing.T, tc tests.Case) string {
	for _, op := range caseOps(t, tc) {
		if why, ok := noWireOps[op]; ok {
			return fmt.Sprintf("%v: %s", op, why)
		}
	}
	return ""
}

// TestRemoteOps runs the whole op table of tests/ on a tandem server over loopback. Every case must
// pass except those whose graph holds an op of noWireOps, which must be reported unsupported; a
// case unsupported for any other reason fails the test (it used to pass with a single passing
// case, so a client refusing everything went unnoticed).
func TestRemoteOps(t *testing.T) {
	addr, _ := startServer(t, 1)
	c := dial(t, addr)
	be, err := c.Devices()[0].NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	cases := tests.Cases()
	passed, unsupported := 0, map[string]int{}
	for i, tc := range cases {
		why := unsupportedReason(t, tc)
		r := tests.Run(tc, be, uint64(i+1))
		switch {
		case r.Passed && why == "":
			passed++
		case r.Passed:
			t.Errorf("%s passed but is listed as unsupported (%s): update noWireOps", tc.Name, why)
		case !r.Supported && r.Problem == "" && why != "":
			unsupported[why]++
		case !r.Supported && r.Problem == "":
			t.Errorf("%s: unsupported, but no op of its graph is in noWireOps", tc.Name)
		default:
			t.Errorf("%s: %s", tc.Name, r.Problem)
		}
		if err := c.Err(); err != nil {
			t.Fatalf("after %s: %v", tc.Name, err)
		}
	}
	var whys []string
	n := 0
	for why, k := range unsupported {
		whys = append(whys, fmt.Sprintf("%d × %s", k, why))
		n += k
	}
	sort.Strings(whys)
	t.Logf("%s: %d passed, %d unsupported of %d (%s)", be.Name(), passed, n, len(cases), strings.Join(whys, "; "))
	if passed+n != len(cases) || passed == 0 {
		t.Fatalf("%d passed + %d expected unsupported of %d cases", passed, n, len(cases))
	}
}
