package rpc_test

import (
	"testing"

	"github.com/tandem-ml/tandem/tests"
)

// Every op case of the tests/ harness, computed by a tandem server over loopback, against the CPU
// reference.
func TestRemoteOps(t *testing.T) {
	addr, _ := startServer(t, 1)
	c := dial(t, addr)
	be, err := c.Devices()[0].NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	passed, unsupported := 0, 0
	for i, tc := range tests.Cases() {
		r := tests.Run(tc, be, uint64(i+1))
		switch {
		case r.Passed:
			passed++
		case !r.Supported && r.Problem == "":
			unsupported++
			t.Logf("unsupported: %s", tc.Name)
		default:
			t.Errorf("%s: %s", tc.Name, r.Problem)
		}
		if err := c.Err(); err != nil {
			t.Fatalf("after %s: %v", tc.Name, err)
		}
	}
	t.Logf("%s: %d passed, %d unsupported of %d", be.Name(), passed, unsupported, len(tests.Cases()))
	if passed == 0 {
		t.Fatal("no case passed")
	}
}
