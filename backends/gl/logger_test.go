//go:build gl && cgo

package gl

import (
	"log/slog"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gputest"
)

// TestLogger: a backend given a logger reports its device and the environment's settings at
// Debug level; at Info level, or without a logger, nothing is written.
func TestLogger(t *testing.T) {
	b := newBackend(t)
	gputest.Logger(t, b.SetLogger, `msg="tandem gl backend"`, "device="+b.dev.name,
		"renderer=", "version=", "software=", "debug=true")
	var nilB *Backend
	nilB.SetLogger(slog.Default()) // must not panic
}
