package cpu

import (
	"context"
	"log/slog"
	"os"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
)

// SetLogger makes the backend report on l at Debug level (nil: report nothing). It reports at once
// what the environment decided: the kernel set in use, the TANDEM_CPU_KERNELS cap it was read from,
// the threads and whether the reference kernels run; then, whenever SetThreads changes the threads,
// the new count. It does nothing on a nil backend.
func (b *Backend) SetLogger(l *slog.Logger) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.log = l
	threads, ref := b.threads, b.ref
	b.mu.Unlock()
	if l == nil {
		return
	}
	attrs := []slog.Attr{
		slog.String("kernels", kern.ActiveKernelSet().String()),
		slog.String(kern.KernelCapEnv, os.Getenv(kern.KernelCapEnv)),
		slog.Int("threads", threads),
		slog.Bool("reference", ref),
	}
	if err := kern.KernelSetError(); err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	l.LogAttrs(context.Background(), slog.LevelDebug, "tandem cpu backend", attrs...)
}

// logThreads reports a change of the thread count; b.mu is held.
func (b *Backend) logThreads(n int) {
	if b.log != nil {
		b.log.LogAttrs(context.Background(), slog.LevelDebug, "tandem cpu backend threads", slog.Int("threads", n))
	}
}
