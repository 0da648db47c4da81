package cpu

import (
	"fmt"
	"sync"
	"time"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
)

// ReadBandwidth measures the machine's memory read bandwidth as a generating language model sees
// it: threads workers stream disjoint rows of an f32 buffer of size bytes (far larger than the
// caches: 256 MiB or more is sensible) through the active kernel set's dot product against one
// cached vector, as the f32 mat-vec does. It returns the best of reps passes in bytes per second.
// The buffer is allocated and touched first and dropped on return.
func ReadBandwidth(threads int, size int64, reps int) (float64, error) {
	const row = 16384 // floats per row: the vector (64 KiB) stays in L2
	switch {
	case threads < 1:
		return 0, fmt.Errorf("cpu: ReadBandwidth: %d threads, want at least 1", threads)
	case size < row*4*int64(threads):
		return 0, fmt.Errorf("cpu: ReadBandwidth: %d bytes are too few for %d threads", size, threads)
	case reps < 1:
		return 0, fmt.Errorf("cpu: ReadBandwidth: %d passes, want at least 1", reps)
	}
	rows := int(size / (row * 4))
	buf := make([]float32, rows*row)
	for i := range buf {
		buf[i] = float32(i&1023) * 0x1p-10
	}
	vec := buf[:row:row]
	sums := make([]float32, threads)
	best := time.Duration(1<<63 - 1)
	for range reps {
		var wg sync.WaitGroup
		start := time.Now()
		for t := range threads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var s float32
				for r := t * rows / threads; r < (t+1)*rows/threads; r++ {
					s += kern.DotF32(buf[r*row:(r+1)*row], vec)
				}
				sums[t] = s // kept so the reads cannot be skipped
			}()
		}
		wg.Wait()
		best = min(best, time.Since(start))
	}
	return float64(rows*row*4) / best.Seconds(), nil
}
