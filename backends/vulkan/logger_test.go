//go:build cgo && !novulkan

package vulkan

import (
	"log/slog"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gputest"
)

// TestLogger: a backend given a logger reports its device and the environment's settings at
// Debug level; at Info level, or without a logger, nothing is written.
func TestLogger(t *testing.T) {
	b := newBackend(t)
	gputest.Logger(t, b.SetLogger, `msg="tandem vulkan backend"`, "device="+b.dev.name,
		"physical=", "Vulkan physical devices", "force_staging=", "validation=")
	var nilB *Backend
	nilB.SetLogger(slog.Default()) // must not panic
}
