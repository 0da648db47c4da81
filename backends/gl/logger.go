//go:build gl && cgo

package gl

import (
	"context"
	"log/slog"
	"os"
)

// SetLogger makes the backend report on l at Debug level (nil: report nothing). It reports at once
// what the environment decided: the device, its renderer, vendor and OpenGL/GLSL versions, whether
// it counts as a software device, and whether a debug context is on (TANDEM_GL_DEBUG). It does
// nothing on a nil backend.
func (b *Backend) SetLogger(l *slog.Logger) {
	if b == nil || b.dev == nil || l == nil {
		return
	}
	info := b.dev.info
	l.LogAttrs(context.Background(), slog.LevelDebug, "tandem gl backend",
		slog.String("device", b.dev.name),
		slog.String("renderer", info.Renderer),
		slog.String("vendor", info.Vendor),
		slog.String("version", info.Version),
		slog.String("glsl", info.GLSL),
		slog.Bool("software", info.ops.Software),
		slog.Bool("debug", os.Getenv("TANDEM_GL_DEBUG") == "1"))
}
