package cpu_test

import (
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
)

// ReadBandwidth returns a positive figure and refuses bad arguments with an error.
func TestReadBandwidth(t *testing.T) {
	bw, err := cpu.ReadBandwidth(2, 8<<20, 2)
	if err != nil || !(bw > 0) {
		t.Fatalf("ReadBandwidth(2, 8 MiB, 2) = %g, %v", bw, err)
	}
	for _, c := range []struct {
		threads, reps int
		size          int64
	}{{0, 1, 8 << 20}, {2, 0, 8 << 20}, {4, 1, 1 << 10}} {
		if _, err := cpu.ReadBandwidth(c.threads, c.size, c.reps); err == nil {
			t.Errorf("ReadBandwidth(%d, %d, %d): no error", c.threads, c.size, c.reps)
		}
	}
}
