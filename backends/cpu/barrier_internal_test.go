package cpu

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
)

// TestBarrierPolicies runs many phases of the barrier under both waiting policies and team sizes
// above and below GOMAXPROCS: no participant may leave a phase before every other one arrived.
func TestBarrierPolicies(t *testing.T) {
	for _, n := range []int{2, 3, runtime.GOMAXPROCS(0) + 2} {
		for _, yieldAll := range []bool{false, true} {
			b := &barrier{n: int32(n), spin: 64, yieldAll: yieldAll}
			b.wake.L = &b.mu
			const phases = 2000
			arrived := make([]atomic.Int64, n) // phases each participant has reached
			var early atomic.Int64             // a participant left before another arrived
			var wg sync.WaitGroup
			for w := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := range int64(phases) {
						arrived[w].Store(k + 1)
						b.wait()
						for o := range arrived {
							if arrived[o].Load() < k+1 {
								early.Add(1)
							}
						}
					}
				}()
			}
			wg.Wait()
			if got := b.phase.Load(); got != phases || early.Load() != 0 {
				t.Errorf("n %d yieldAll %v: %d phases (want %d), %d early departures", n, yieldAll, got, phases, early.Load())
			}
		}
	}
}

// BenchmarkBarrier is the cost of one barrier of an empty phase for teams of 2 to all cores,
// under the policy the pool picks (spin, then yield now and then) and under yielding at every
// turn past the spin.
func BenchmarkBarrier(b *testing.B) {
	for _, n := range benchTeams() {
		for _, yieldAll := range []bool{false, true} {
			b.Run(fmt.Sprintf("workers%d/yieldAll=%v", n, yieldAll), func(b *testing.B) {
				br := &barrier{n: int32(n), spin: 2048, yieldAll: yieldAll}
				br.wake.L = &br.mu
				var wg sync.WaitGroup
				for range n - 1 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range b.N {
							br.wait()
						}
					}()
				}
				b.ResetTimer()
				for range b.N {
					br.wait()
				}
				wg.Wait()
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "µs/barrier")
			})
		}
	}
}

// benchTeams is 2, 4, 8, ... and all cores.
func benchTeams() []int {
	out := []int{2}
	for th := 4; th < runtime.NumCPU(); th *= 2 {
		out = append(out, th)
	}
	if n := runtime.NumCPU(); n > 2 {
		out = append(out, n)
	}
	return out
}

// TestBarrierLayout: the arrival count, the phase the spinners read and the sleepers' state are
// at least a cache line apart, and the read-only fields before them too (see barrier's doc).
func TestBarrierLayout(t *testing.T) {
	var b barrier
	const line = 64
	// unsafe.Offsetof only reads the struct's layout at compile time; nothing is accessed.
	offs := []struct {
		name string
		at   uintptr
	}{
		{"yieldAll", unsafe.Offsetof(b.yieldAll)},
		{"count", unsafe.Offsetof(b.count)},
		{"phase", unsafe.Offsetof(b.phase)},
		{"sleepers", unsafe.Offsetof(b.sleepers)},
	}
	for i := 1; i < len(offs); i++ {
		if d := offs[i].at - offs[i-1].at; d < line {
			t.Errorf("barrier.%s is %d bytes after barrier.%s, want %d or more", offs[i].name, d, offs[i-1].name, line)
		}
	}
}
