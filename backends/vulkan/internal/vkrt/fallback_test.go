//go:build cgo && !novulkan

package vkrt

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The fallback tests re-run this test binary with a broken environment; the
// child must get an error value (not a crash) from Load/NewInstance.
const fallbackChild = "TANDEM_VKRT_FALLBACK_CHILD"

func TestFallbackChild(t *testing.T) {
	mode := os.Getenv(fallbackChild)
	if mode == "" {
		t.Skip("helper for TestNoLoader/TestNoDriver")
	}
	in, err := NewInstance(InstanceOptions{})
	if err != nil {
		if mode == "noloader" && !errors.Is(err, Load()) && err.Error() != Load().Error() {
			t.Fatalf("NewInstance error %v differs from Load's %v", err, Load())
		}
		t.Logf("FALLBACK-ERROR: %v", err)
		return
	}
	defer in.Close()
	if n := len(in.Devices()); n > 0 {
		for _, d := range in.Devices() {
			if d.Usable() == nil {
				t.Fatalf("found usable device %s in mode %s", d.Name, mode)
			}
		}
	}
	t.Logf("FALLBACK-NODEVICE: %d devices", len(in.Devices()))
}

func runFallbackChild(t *testing.T, mode string, env ...string) string {
	t.Helper()
	if os.Getenv(fallbackChild) != "" {
		t.Skip("in child")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFallbackChild$", "-test.v")
	cmd.Env = append(os.Environ(), append(env, fallbackChild+"="+mode)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child failed: %v\n%s", err, out)
	}
	return string(out)
}

func TestNoLoader(t *testing.T) {
	out := runFallbackChild(t, "noloader", LoaderEnv+"=/nonexistent/libvulkan.so.1")
	if !strings.Contains(out, "FALLBACK-ERROR") {
		t.Fatalf("no error without a loader:\n%s", out)
	}
}

func TestNoDriver(t *testing.T) {
	out := runFallbackChild(t, "nodriver", "VK_ICD_FILENAMES=/nonexistent/icd.json", "VK_DRIVER_FILES=/nonexistent/icd.json")
	if !strings.Contains(out, "FALLBACK-ERROR") && !strings.Contains(out, "FALLBACK-NODEVICE") {
		t.Fatalf("no error and no empty device list without a driver:\n%s", out)
	}
	t.Logf("%s", grepLine(out, "FALLBACK-"))
}

func grepLine(s, substr string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}
