package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// A target opened with a logger hands it to its backends, which report their settings at Debug
// level; without one nothing is written.
func TestOpenPassesLogger(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	tg := &Target{Name: "CPU", Kind: KindCPU, Threads: 1}
	if err := tg.open(log); err != nil {
		t.Fatal(err)
	}
	defer tg.Backend.Close()
	if out := buf.String(); !strings.Contains(out, `msg="tandem cpu backend"`) || !strings.Contains(out, "threads=1") {
		t.Errorf("logger got %q, want the CPU backend's settings", out)
	}
	quiet := &Target{Name: "CPU", Kind: KindCPU, Threads: 1}
	buf.Reset()
	if err := quiet.open(nil); err != nil {
		t.Fatal(err)
	}
	defer quiet.Backend.Close()
	if buf.Len() != 0 {
		t.Errorf("open(nil) wrote %q", buf.String())
	}
}
