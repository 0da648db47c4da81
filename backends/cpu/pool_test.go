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

// waitSleepers polls until n workers of p sleep between runs (up to 5 s).
func waitSleepers(t *testing.T, p *pool, n int32) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for p.sleepers.Load() != n && time.Now().Before(deadline) {
		time.Sleep(idleSpin)
	}
	if got := p.sleepers.Load(); got != n {
		t.Fatalf("%d workers asleep between runs, want %d", got, n)
	}
}

// Workers poll for the next run, then sleep; a run or a kick wakes them, and every worker takes
// part in every run, whether it was polling or asleep when the run began.
func TestPoolWakesIdleWorkers(t *testing.T) {
	const workers = 3
	p := newPool(workers)
	defer p.close()
	var ran [workers]atomic.Int32
	count := func(ith int) { ran[ith].Add(1) }
	p.run(count)
	p.run(count) // right after the last one: the workers are polling
	if p.idle > 0 {
		waitSleepers(t, p, workers-1)
		p.kick() // they poll again, then sleep again
		if n := p.kicks.Load(); n != 1 {
			t.Fatalf("a kick with %d workers asleep counted %d kicks, want 1", workers-1, n)
		}
		waitSleepers(t, p, workers-1)
	}
	p.run(count) // from sleep
	for i := range ran {
		if n := ran[i].Load(); n != 3 {
			t.Errorf("worker %d ran %d of 3 runs", i, n)
		}
	}
}

// Many short runs in a row keep every worker in step (under -race: the job hand-off is
// synchronized), and close releases workers that poll or sleep.
func TestPoolManyRunsAndClose(t *testing.T) {
	for _, sleepFirst := range []bool{false, true} {
		p := newPool(2)
		var sum atomic.Int64
		for i := range 2000 {
			v := int64(i)
			p.run(func(ith int) { sum.Add(v) })
		}
		if want := int64(2 * 1999 * 2000 / 2); sum.Load() != want {
			t.Errorf("sum %d, want %d", sum.Load(), want)
		}
		if sleepFirst && p.idle > 0 {
			waitSleepers(t, p, 1)
		}
		closed := make(chan struct{})
		go func() { p.close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(5 * time.Second):
			t.Fatalf("close did not return (workers asleep first: %v)", sleepFirst)
		}
	}
}

// A run returns only once every worker has finished its part, whether the caller's spinning wait
// sees them finish (a worker a few microseconds late) or gives up and blocks (one later than
// the spin budget).
func TestPoolRunWaitsForEveryWorker(t *testing.T) {
	for _, n := range []int{2, 3} {
		p := newPool(n)
		for _, late := range []time.Duration{0, 20 * time.Microsecond, 3 * barrierSleepAfter} {
			var finished atomic.Int32
			p.run(func(ith int) {
				if ith == n-1 {
					time.Sleep(late)
				}
				finished.Add(1)
			})
			if got := finished.Load(); got != int32(n) {
				t.Errorf("%d workers, last one %v late: run returned after %d had finished", n, late, got)
			}
			if r := p.running.Load(); r != 0 {
				t.Errorf("%d workers, last one %v late: %d still counted running", n, late, r)
			}
		}
		p.close()
	}
}
