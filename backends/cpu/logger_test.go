package cpu_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
)

// TestLogger: a backend given a logger reports its configuration at Debug level, and a change of
// threads; without one nothing is written.
func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, err := cpu.New(cpu.Options{Threads: 2, Logger: l})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	out := buf.String()
	for _, want := range []string{"level=DEBUG", `msg="tandem cpu backend"`, "threads=2", "reference=false", "kernels=", "TANDEM_CPU_KERNELS="} {
		if !strings.Contains(out, want) {
			t.Errorf("record %q lacks %q", out, want)
		}
	}
	buf.Reset()
	if err := b.SetThreads(3); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, `msg="tandem cpu backend threads"`) || !strings.Contains(out, "threads=3") {
		t.Errorf("SetThreads reported %q", out)
	}
	buf.Reset()
	b.SetLogger(nil)
	if err := b.SetThreads(2); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("reports after SetLogger(nil): %q", buf.String())
	}
	var nilB *cpu.Backend
	nilB.SetLogger(l) // must not panic
}
