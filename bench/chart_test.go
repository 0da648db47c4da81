package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/scheduler"
)

// A size a device skipped is drawn as a cross carrying the reason, and a software device is
// labelled as such in the legend (for itself and for the scheduler over it).
func TestChartSkippedAndSoftware(t *testing.T) {
	c := ChartFromResults("t", "", fakeResults())
	var skips []Skip
	for _, l := range c.Panels[0].Lines {
		if l.Device == "Vulkan0" {
			skips = l.Skipped
		}
	}
	if len(skips) != 1 || skips[0].X != 256 || !strings.Contains(skips[0].Reason, "too slow") {
		t.Fatalf("skipped sizes of Vulkan0: %+v, want one at 256 saying why", skips)
	}
	disc := &Discovery{Devices: []DeviceInfo{
		{Name: "CPU", Type: "CPU", Description: "AMD EPYC"},
		describeInfo("Vulkan0", "ACCEL", "llvmpipe (LLVM 15.0.6, 256 bits) (CPU, Vulkan 1.3.230, llvmpipe)"),
		describeInfo("Vulkan1", "GPU", "NVIDIA H100"),
	}}
	c.Labels = softwareLabels(disc)
	var b strings.Builder
	if err := WriteSVG(&b, c); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	for _, want := range []string{">Vulkan0 (software)</text>", `class="skipped"`, "too slow on this device"} {
		if !strings.Contains(svg, want) {
			t.Errorf("svg lacks %q", want)
		}
	}
	if got := c.label("Vulkan0+CPU"); got != "Vulkan0 (software)+CPU" {
		t.Errorf("scheduler label %q", got)
	}
	if got := c.label("Vulkan1"); got != "Vulkan1" {
		t.Errorf("a hardware GPU is labelled %q", got)
	}
}

func describeInfo(name, typ, desc string) DeviceInfo {
	d := DeviceInfo{Name: name, Type: typ, Description: desc}
	d.Software = isSoftware(d)
	return d
}

// -log picks the level of the scheduler's plan records; anything else is a clear error.
func TestParseLogFlag(t *testing.T) {
	for arg, want := range map[string]slog.Level{"": LogOff, "debug": slog.LevelDebug, "TRACE": scheduler.LevelTrace} {
		args := []string{}
		if arg != "" {
			args = []string{"-log", arg}
		}
		cfg, err := ParseArgs(args, io.Discard)
		if err != nil || cfg.Log != want {
			t.Errorf("-log %q: %v, %v; want %v", arg, cfg, err, want)
		}
	}
	if _, err := ParseArgs([]string{"-log", "loud"}, io.Discard); err == nil || !strings.Contains(err.Error(), "debug") {
		t.Errorf("-log loud: %v", err)
	}
}
