package gputest

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// Logger checks a backend's SetLogger: at Info level nothing is written; at Debug level the
// record holds every string of want; SetLogger(nil) writes nothing.
func Logger(t *testing.T, setLogger func(*slog.Logger), want ...string) {
	t.Helper()
	var buf bytes.Buffer
	setLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if buf.Len() != 0 {
		t.Fatalf("Debug records written at Info level: %q", buf.String())
	}
	setLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	out := buf.String()
	for _, w := range append([]string{"level=DEBUG"}, want...) {
		if !strings.Contains(out, w) {
			t.Errorf("record %q lacks %q", out, w)
		}
	}
	buf.Reset()
	setLogger(nil)
	if buf.Len() != 0 {
		t.Errorf("SetLogger(nil) wrote %q", buf.String())
	}
}
