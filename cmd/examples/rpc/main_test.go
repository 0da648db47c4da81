package main

import (
	"bytes"
	"strings"
	"testing"
)

// The example against its in-process loopback server: the remote device computes the product, as
// the local CPU does.
func TestRPC(t *testing.T) {
	var out bytes.Buffer
	res, err := run(&out, config{N: 64})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	if !strings.HasPrefix(res.Device, "RPC") || res.Elements != 64*16 {
		t.Fatalf("device %q, %d elements", res.Device, res.Elements)
	}
	if !(res.NMSE <= 1e-10) {
		t.Errorf("NMSE %.3g against the local CPU (the same kernels remotely)", res.NMSE)
	}
	if !strings.Contains(out.String(), "serving the CPU backend on 127.0.0.1:") {
		t.Errorf("output:\n%s", out.String())
	}
}
