//go:build cgo && !novulkan

package vulkan

import (
	"context"
	"log/slog"
	"os"

	"github.com/tandem-ml/tandem/backends/vulkan/internal/vkrt"
)

// SetLogger makes the backend report on l at Debug level (nil: report nothing). It reports at once
// what the environment decided: the device and its physical device, the device list
// (TANDEM_VK_VISIBLE_DEVICES and the devices skipped), TANDEM_VK_FORCE_STAGING, whether the
// validation layer is on (TANDEM_VK_VALIDATE), and one record per validation message so far
// (ValidationMessages). It does nothing on a nil or zero backend.
func (b *Backend) SetLogger(l *slog.Logger) {
	if b == nil || b.dev == nil {
		return
	}
	b.mu.Lock()
	b.log = l
	b.mu.Unlock()
	if l == nil {
		return
	}
	state.mu.Lock()
	devices := state.why
	state.mu.Unlock()
	ctx := context.Background()
	l.LogAttrs(ctx, slog.LevelDebug, "tandem vulkan backend",
		slog.String("device", b.dev.name),
		slog.String("physical", b.dev.info.Name),
		slog.String("devices", devices),
		slog.String("TANDEM_VK_VISIBLE_DEVICES", os.Getenv("TANDEM_VK_VISIBLE_DEVICES")),
		slog.Bool("force_staging", os.Getenv("TANDEM_VK_FORCE_STAGING") == "1"),
		slog.Bool("validation", vkrt.ValidateFromEnv()))
	for _, m := range ValidationMessages() {
		l.LogAttrs(ctx, slog.LevelDebug, "tandem vulkan validation", slog.String("message", m))
	}
}
