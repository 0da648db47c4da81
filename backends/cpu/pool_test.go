package cpu

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The barrier keeps its workers in lockstep whether they spin, yield or sleep: one worker is
// late by up to twice barrierSleepAfter at some phases, so the others go to sleep there, and no
// worker ever sees a phase before all have finished the previous one.
func TestBarrierSleepers(t *testing.T) {
	const workers, phases = 3, 40
	p := newPool(workers)
	defer p.close()
	var done [phases]atomic.Int32
	var bad atomic.Int32
	p.run(func(ith int) {
		for ph := range phases {
			if ith == ph%workers && ph%4 == 0 {
				time.Sleep(2 * barrierSleepAfter) // the others go to sleep
			}
			done[ph].Add(1)
			p.barrier.wait()
			if done[ph].Load() != workers {
				bad.Add(1)
			}
		}
	})
	if n := bad.Load(); n != 0 {
		t.Fatalf("%d waits returned before every worker had arrived", n)
	}
}

// Breaking the barrier wakes a sleeping waiter.
func TestBarrierBreakWakesSleeper(t *testing.T) {
	p := newPool(2)
	defer p.close()
	var wg sync.WaitGroup
	wg.Add(1)
	released := make(chan struct{})
	go func() {
		defer wg.Done()
		p.barrier.wait() // the only arrival: sleeps after barrierSleepAfter
		close(released)
	}()
	// The waiter sleeps once it has waited barrierSleepAfter; on a loaded machine it may not be
	// scheduled for a while, so poll rather than assume a fixed delay suffices.
	deadline := time.Now().Add(5 * time.Second)
	for p.barrier.sleepers.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(barrierSleepAfter)
	}
	if n := p.barrier.sleepers.Load(); n != 1 {
		t.Errorf("%d sleepers after %v, want 1", n, 5*time.Second)
	}
	p.barrier.breakAll()
	select {
	case <-released:
	case <-time.After(5 * time.Second):
		t.Fatal("breakAll did not wake the sleeping waiter")
	}
	wg.Wait()
	p.barrier.reset()
}
