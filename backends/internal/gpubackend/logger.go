package gpubackend

import (
	"context"
	"log/slog"
)

// SetLogger reports on l at Debug level what the environment decided: one record "tandem <Pkg>
// backend" with the device's name and DeviceConfig.LogAttrs, then one record "tandem <Pkg>
// validation" per message of DeviceConfig.Messages. A nil l and a stand-in report nothing.
func (b *Backend) SetLogger(l *slog.Logger) {
	if b.unmade != "" || l == nil {
		return
	}
	cfg := &b.dev.cfg
	attrs := []slog.Attr{slog.String("device", cfg.Name)}
	if cfg.LogAttrs != nil {
		attrs = append(attrs, cfg.LogAttrs()...)
	}
	ctx := context.Background()
	l.LogAttrs(ctx, slog.LevelDebug, "tandem "+cfg.API.Pkg+" backend", attrs...)
	if cfg.Messages == nil {
		return
	}
	for _, m := range cfg.Messages() {
		l.LogAttrs(ctx, slog.LevelDebug, "tandem "+cfg.API.Pkg+" validation", slog.String("message", m))
	}
}
