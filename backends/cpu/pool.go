package cpu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
)

// barrier is a reusable barrier for a fixed number of participants. A waiter spins first (the
// waits of a graph run are mostly microseconds), then sleeps until the last participant arrives
// once it has waited barrierSleepAfter: on a machine whose cores are busy with other work a worker
// that waits for one the OS has descheduled must give its core back, or it delays the very worker
// it waits for (spinning alone made decoding 3-4x slower beside one busy process).
//
// While it spins a waiter only reads the phase (a cache line that changes once per barrier),
// with a pause instruction at every turn (kern.Pause: under KVM a loop of them lets the host run
// the virtual CPU the waiter waits for, should it have been descheduled). It
// yields its P to other goroutines (runtime.Gosched) at every turn only when the team has more
// workers than Ps, where the worker it waits for may be queued behind it; otherwise it yields
// only now and then (yieldEvery), so that no goroutine waits for a P until preemption. Yielding
// at every turn with all Ps spinning made each barrier cost ~58 µs with 16 workers on 16 cores
// (every Gosched takes the scheduler's global lock), against 2.7 µs with 8.
//
// A barrier can be broken: once a worker has left the run early (a kernel panicked), the others
// would wait for it forever, so every wait returns at once until the run is over and reset is
// called.
//
// The arrival count and the phase live on cache lines of their own: every arrival writes the
// count, and were the spinners' phase on the same line, each arrival would take it from every
// spinner (N arrivals times N readers per barrier, the cost that grows fastest with the team).
type barrier struct {
	n        int32
	spin     int  // turns to spin before the clock is read
	yieldAll bool // yield the P at every turn past spin (more workers than Ps)
	_        [64]byte
	count    atomic.Int32 // arrivals of the current phase: written by every worker, read by none spinning
	_        [60]byte
	phase    atomic.Uint32 // what the spinners read: written once per barrier
	broken   atomic.Bool
	_        [59]byte
	sleepers atomic.Int32 // waiters asleep on wake (or about to be)
	mu       sync.Mutex
	wake     sync.Cond // signalled when the phase advances or the barrier breaks
}

// barrierSleepAfter is how long a waiter spins and yields before it sleeps.
const barrierSleepAfter = 200 * time.Microsecond

// yieldEvery is how many turns past spin a waiter of a team with a P per worker spins between
// two yields (a power of two); the clock is read as often.
const yieldEvery = 256

func (b *barrier) wait() {
	if b.n <= 1 || b.broken.Load() {
		return
	}
	ph := b.phase.Load()
	if b.count.Add(1) == b.n {
		b.count.Store(0)
		b.phase.Add(1)
		// A waiter counts itself a sleeper before it checks the phase one last time, so either
		// it sees the new phase or this load sees it (sequentially consistent atomics).
		if b.sleepers.Load() > 0 {
			b.mu.Lock()
			b.wake.Broadcast()
			b.mu.Unlock()
		}
		return
	}
	var start time.Time
	for i := 0; b.phase.Load() == ph; i++ {
		if b.broken.Load() {
			return
		}
		kern.Pause()
		if i <= b.spin {
			continue
		}
		if b.yieldAll {
			if i&63 == 0 && b.slept(&start, ph) {
				return
			}
			runtime.Gosched()
			continue
		}
		if i&(yieldEvery-1) == 0 {
			if b.slept(&start, ph) {
				return
			}
			runtime.Gosched()
		}
	}
}

// slept starts the clock of a wait (*start zero) or, once the wait has lasted barrierSleepAfter,
// sleeps until the phase moves past ph and reports true.
func (b *barrier) slept(start *time.Time, ph uint32) bool {
	if start.IsZero() {
		*start = time.Now()
		return false
	}
	if time.Since(*start) <= barrierSleepAfter {
		return false
	}
	b.sleep(ph)
	return true
}

// sleep blocks until the phase moves past ph or the barrier breaks.
func (b *barrier) sleep(ph uint32) {
	b.mu.Lock()
	b.sleepers.Add(1)
	for b.phase.Load() == ph && !b.broken.Load() {
		b.wake.Wait()
	}
	b.sleepers.Add(-1)
	b.mu.Unlock()
}

// breakAll releases every waiter, now and until reset.
func (b *barrier) breakAll() {
	b.broken.Store(true)
	b.mu.Lock()
	b.wake.Broadcast()
	b.mu.Unlock()
}

// reset makes a broken barrier usable again; only call it while no worker is inside the run.
func (b *barrier) reset() {
	if b.broken.Load() {
		b.count.Store(0)
		b.broken.Store(false)
	}
}

// job is one graph run handed to every worker.
type job struct {
	run func(ith int)
}

// pool is a persistent set of worker goroutines; the caller of run is worker 0.
//
// A run is published by bumping seq. Between runs a worker polls seq for idleSpin before it
// sleeps: generation calls run once per token, and the host's work between two tokens (reading
// the logits, checking the reused plan) takes a few hundred microseconds, while waking a parked
// goroutine (a futex and a scheduler hand-off, ~100 µs on the virtual machines measured) cost
// every token that much, in the first node's barrier. A worker asleep anyway (a longer pause) is
// woken early by kick, which the backend calls as a run begins, so that its wake-up overlaps the
// host's checks instead of the first node. With more workers than Ps a worker sleeps at once
// (spinning would take a P from one that works).
type pool struct {
	n       int
	seq     atomic.Uint64 // runs published so far (closing publishes one more)
	done    sync.WaitGroup
	running atomic.Int32 // workers other than the caller still in the current run
	barrier barrier
	chunk   atomic.Int64                 // shared chunk counter for work-stealing kernels
	group   [maxMatVecGroup]groupCounter // a group of sibling mat-vecs' counters, one per product
	cur     job                          // the job of the current run (runs are serialized by the backend)
	closed  atomic.Bool
	idle    time.Duration // how long a worker polls for the next run before it sleeps
	exited  sync.WaitGroup

	kicks    atomic.Uint64 // kick calls that found sleepers
	sleepers atomic.Int32  // workers asleep on wake (or about to be)
	mu       sync.Mutex
	wake     sync.Cond // signalled when seq or kicks move
}

// idleSpin is how long a worker polls for the next run after one ends.
const idleSpin = time.Millisecond

func newPool(n int) *pool {
	if n < 1 {
		n = 1
	}
	p := &pool{n: n}
	p.barrier.n = int32(n)
	p.barrier.wake.L = &p.barrier.mu
	p.wake.L = &p.mu
	// Spinning pays while every worker has a processor of its own; with more workers than
	// processors a spinning waiter only delays the ones it waits for.
	p.barrier.spin, p.barrier.yieldAll = 64, true
	if n <= runtime.GOMAXPROCS(0) {
		p.barrier.spin, p.barrier.yieldAll = 2048, false
		p.idle = idleSpin
	}
	for i := 1; i < n; i++ {
		p.exited.Add(1)
		go p.worker(i)
	}
	return p
}

func (p *pool) worker(ith int) {
	defer p.exited.Done()
	var seen uint64
	for {
		seen = p.next(seen)
		if p.closed.Load() {
			return
		}
		p.cur.run(ith)
		p.running.Add(-1)
		p.done.Done()
	}
}

// next waits until seq moves past seen and returns it: polling for p.idle, then asleep until a
// run or a kick (after a kick it polls again).
func (p *pool) next(seen uint64) uint64 {
	for {
		var s uint64
		if p.idle > 0 && poll(func() bool { s = p.seq.Load(); return s != seen }, p.idle) {
			return s
		}
		p.mu.Lock()
		// Counted a sleeper before the last look at seq, so that either it sees the new run or
		// run's load of sleepers sees it (sequentially consistent atomics), as in barrier.wait.
		p.sleepers.Add(1)
		k := p.kicks.Load()
		for p.seq.Load() == seen && p.kicks.Load() == k {
			p.wake.Wait()
		}
		p.sleepers.Add(-1)
		p.mu.Unlock()
		if s := p.seq.Load(); s != seen {
			return s
		}
	}
}

// kick wakes the workers asleep between runs so that they poll for the next one: a run is about
// to begin.
func (p *pool) kick() { p.wakeSleepers(true) }

// publish starts run number seq+1 (or, closing, releases the workers) and wakes the sleepers.
func (p *pool) publish() {
	p.seq.Add(1)
	p.wakeSleepers(false)
}

// wakeSleepers wakes the workers asleep in next, if any, counting a kick when kick is set (a
// sleeper then returns to polling even though seq has not moved).
func (p *pool) wakeSleepers(kick bool) {
	if p.sleepers.Load() == 0 {
		return
	}
	p.mu.Lock()
	if kick {
		p.kicks.Add(1)
	}
	p.wake.Broadcast()
	p.mu.Unlock()
}

// run executes f on every worker (f(0) on the calling goroutine) and waits for all of them.
func (p *pool) run(f func(ith int)) {
	p.cur.run = f
	p.done.Add(p.n - 1)
	p.running.Store(int32(p.n - 1))
	p.publish()
	f(0)
	p.awaitWorkers()
	p.done.Wait()
	p.barrier.reset()
}

// awaitWorkers spins (with the barrier's turns and yields) until the other workers have
// finished the run, for at most barrierSleepAfter; run's WaitGroup then returns at once. The
// workers leave a run within a microsecond of its last barrier, and parking the caller on the
// WaitGroup for that cost a scheduler round trip each run (the caller's thread asleep, then
// woken: ~1 context switch and tens of µs a generated token, most visible on small models).
func (p *pool) awaitWorkers() {
	if p.barrier.yieldAll {
		return // more workers than Ps: a spinning caller would hold a P one of them needs
	}
	poll(func() bool { return p.running.Load() == 0 }, barrierSleepAfter)
}

// poll spins until done reports true (a pause at every turn, the clock read and the P yielded
// every yieldEvery turns) or budget has passed, and reports whether done did.
func poll(done func() bool, budget time.Duration) bool {
	var start time.Time
	for i := 0; ; i++ {
		if done() {
			return true
		}
		kern.Pause()
		if i&(yieldEvery-1) != yieldEvery-1 {
			continue
		}
		if start.IsZero() {
			start = time.Now()
		} else if time.Since(start) > budget {
			return false
		}
		runtime.Gosched()
	}
}

// close stops the workers and waits until they have exited.
func (p *pool) close() {
	if p.closed.Load() {
		return
	}
	p.closed.Store(true)
	p.publish()
	p.exited.Wait()
}
