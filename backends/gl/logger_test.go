//go:build gl && cgo

package gl

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestLogger: a backend given a logger reports its device and the environment's settings at
// Debug level; at Info level, or without a logger, nothing is written.
func TestLogger(t *testing.T) {
	b := newBackend(t)
	var buf bytes.Buffer
	b.SetLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if buf.Len() != 0 {
		t.Fatalf("Debug records written at Info level: %q", buf.String())
	}
	b.SetLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	out := buf.String()
	for _, want := range []string{"level=DEBUG", `msg="tandem gl backend"`, "device=" + b.dev.name,
		"renderer=", "version=", "software=", "debug=true"} {
		if !strings.Contains(out, want) {
			t.Errorf("record %q lacks %q", out, want)
		}
	}
	buf.Reset()
	b.SetLogger(nil)
	if buf.Len() != 0 {
		t.Errorf("SetLogger(nil) wrote %q", buf.String())
	}
	var nilB *Backend
	nilB.SetLogger(slog.Default()) // must not panic
}
