// Package scheduler splits one compute graph across several backends (a GPU first, the CPU last),
// copies the tensors that cross from one backend's memory to another's, allocates every split's
// memory with the graph allocator, and runs the splits — concurrently where they do not depend on
// each other.
package scheduler

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"sync"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/core"
)

// MaxBackends bounds the number of backends of one scheduler (ggml's GGML_SCHED_MAX_BACKENDS).
const MaxBackends = 16

// EvalCallback observes nodes as they are computed. It is first called with ask = true: returning
// true asks to see that node after it has run. It is then called with ask = false once the node's
// data is ready; returning false there stops the whole graph (GraphCompute returns ErrStopped).
// It runs while the scheduler's lock is held, so it must not call the scheduler's methods.
type EvalCallback func(t *core.Tensor, ask bool) bool

// ErrStopped is returned when an eval callback stops the graph.
var ErrStopped = fmt.Errorf("tandem: scheduler: stopped by the eval callback")

// Options configure a Scheduler.
type Options struct {
	// GraphSize is the largest graph (nodes) the scheduler plans for; 0 means core.DefaultGraphSize.
	GraphSize int
	// BufferTypes overrides the compute buffer type per backend (nil entries: the backend's default).
	BufferTypes []core.BufferType
	// OpOffload lets a higher-priority backend take an op whose weights live in host memory when its
	// device asks for it (Device.OffloadOp), copying the weights for each run.
	OpOffload bool
	// Sequential runs splits one after another even when they are independent (as ggml does).
	Sequential bool
	// Parallel pipelines successive GraphComputeAsync calls (ggml's n_copies > 1): split inputs
	// and user inputs get one copy per pipeline slot, so a run may start while the previous ones
	// are still going — a backend works on run k+1 while another still finishes run k.
	Parallel bool
	// Copies is the pipeline depth with Parallel (2 to 8; 0 means 4, ggml's GGML_SCHED_MAX_COPIES).
	Copies int
	// Logger receives the plan each time the scheduler makes one: a Debug record per split
	// (backend, nodes, inputs and their sources, dependencies) and, at LevelTrace, one per node with
	// the reason for its placement. nil logs nothing. TANDEM_SCHED_DEBUG=1 (2: every node) prints
	// the same plan to stderr without a logger.
	Logger *slog.Logger
}

// LevelTrace is the level of the scheduler's per-node placement records (below slog.LevelDebug).
const LevelTrace = slog.LevelDebug - 4

// Scheduler runs graphs across backends. It is safe for concurrent use; calls are serialized:
// each public method holds the scheduler's lock for its whole duration (GraphCompute until the run
// is done, GraphComputeAsync until the run has started), so calls from several goroutines run one
// after another. An EvalCallback runs while GraphCompute holds the lock and must not call the
// scheduler's methods. Methods on a nil *Scheduler return an error (or a zero value).
type Scheduler struct {
	mu sync.Mutex // serializes the public methods

	owned bool // the backends were created by NewFromDevices: Close closes them

	backends []core.Backend
	bufts    []core.BufferType
	opts     Options
	galloc   *alloc.GraphAllocator
	debug    int

	pins map[*core.Tensor]int // user assignments (SetTensorBackend)

	plan        *plan // the current plan, nil after Reset
	allocked    bool
	reusing     bool              // a GraphComputeReused call is in progress
	trusted     bool              // that call found reused the plan's graph and did not look at it
	placedSpare []alloc.Placement // a dropped plan's report, for the next one's
	evalCB      EvalCallback

	// probe counts, for tests, the looks at the user's graph (fingerprints taken or compared)
	// and the graph allocator's analyses of the allocation graph (ReserveN, AllocGraphN).
	probe struct{ fingerprints, analyses int }

	statsMu sync.Mutex
	stats   Stats

	async struct {
		mu       sync.Mutex
		inflight []*runState // oldest first
		err      error       // first error of a finished run not yet reported
		runs     int         // runs started (picks the pipeline slot)
	}
}

// Stats count the scheduler's work since it was created.
type Stats struct {
	Plans      int   // assignments + splits computed
	Reserves   int   // graph allocator reservations (buffer sizing)
	Runs       int   // graph computations
	Copies     int   // input copies performed
	CopyBytes  int64 // bytes copied between backends
	CopySkips  int   // input copies skipped because the source had not changed
	Concurrent int   // splits started while another split was running
}

// New creates a scheduler over backends in priority order; the last one must be a CPU backend. A
// nil backend (also a typed nil such as a nil *cpu.Backend) and a backend listed twice are errors;
// nil entries of Options.BufferTypes (typed nils too) mean the backend's default buffer type.
func New(backends []core.Backend, opts Options) (*Scheduler, error) {
	if len(backends) == 0 {
		return nil, fmt.Errorf("tandem: scheduler: no backends")
	}
	if len(backends) > MaxBackends {
		return nil, fmt.Errorf("tandem: scheduler: %d backends, at most %d", len(backends), MaxBackends)
	}
	for i, b := range backends {
		if isNil(b) {
			return nil, fmt.Errorf("tandem: scheduler: backend %d is nil (%T)", i, b)
		}
		for j := range i {
			if backends[j] == b {
				return nil, fmt.Errorf("tandem: scheduler: backend %d (%s) is listed twice (also at %d)", i, b.Name(), j)
			}
		}
		if b.Device() == nil {
			return nil, fmt.Errorf("tandem: scheduler: backend %d (%s) has no device", i, b.Name())
		}
		if b.DefaultBufferType() == nil {
			return nil, fmt.Errorf("tandem: scheduler: backend %d (%s) has no default buffer type", i, b.Name())
		}
	}
	last := backends[len(backends)-1]
	if last.Device() == nil || last.Device().Type() != core.DeviceCPU {
		return nil, fmt.Errorf("tandem: scheduler: the last backend must be the CPU (got %s); list backends in priority order, CPU last", last.Name())
	}
	if opts.BufferTypes != nil && len(opts.BufferTypes) != len(backends) {
		return nil, fmt.Errorf("tandem: scheduler: %d buffer types for %d backends", len(opts.BufferTypes), len(backends))
	}
	if opts.GraphSize <= 0 {
		opts.GraphSize = core.DefaultGraphSize
	}
	switch {
	case !opts.Parallel:
		opts.Copies = 1
	case opts.Copies == 0:
		opts.Copies = 4
	case opts.Copies < 2 || opts.Copies > 8:
		return nil, fmt.Errorf("tandem: scheduler: %d pipeline copies, want 2 to 8", opts.Copies)
	}
	s := &Scheduler{backends: backends, opts: opts, pins: map[*core.Tensor]int{}}
	s.bufts = make([]core.BufferType, len(backends))
	for i, b := range backends {
		bt := b.DefaultBufferType()
		if opts.BufferTypes != nil && !isNil(opts.BufferTypes[i]) {
			bt = opts.BufferTypes[i]
		}
		if !b.Device().SupportsBufferType(bt) {
			return nil, fmt.Errorf("tandem: scheduler: backend %s cannot use buffer type %s", b.Name(), bt.Name())
		}
		s.bufts[i] = bt
	}
	// The graph allocator keeps every input's memory for the whole graph, so inputs survive
	// between runs and an unchanged input need not be set (or copied to another backend) again.
	s.galloc = alloc.NewGraphAllocator(s.bufts...)
	switch os.Getenv("TANDEM_SCHED_DEBUG") {
	case "1":
		s.debug = 1
	case "2":
		s.debug = 2
	}
	return s, nil
}

// isNil reports whether b is nil or an interface holding a nil pointer (or other nil-able value).
func isNil(b any) bool {
	if b == nil {
		return true
	}
	switch v := reflect.ValueOf(b); v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return v.IsNil()
	}
	return false
}

// errNilScheduler and errZeroScheduler are returned by the methods of a nil *Scheduler and of a
// zero Scheduler (one not made by New, NewFromDevices or NewAll: it has no backends).
var (
	errNilScheduler  = errors.New("tandem: scheduler: scheduler is nil (create one with scheduler.New)")
	errZeroScheduler = errors.New("tandem: scheduler: zero Scheduler: create one with scheduler.New")
)

// usable is nil for a scheduler made by New, and otherwise the error saying how to make one.
func (s *Scheduler) usable() error {
	switch {
	case s == nil:
		return errNilScheduler
	case len(s.backends) == 0:
		return errZeroScheduler
	}
	return nil
}

// errNilGraph is returned for a nil graph.
var errNilGraph = errors.New("tandem: scheduler: graph is nil")

// NBackends is the number of backends.
func (s *Scheduler) NBackends() int {
	if s == nil {
		return 0
	}
	return len(s.backends)
}

// Backend returns backend i, or nil when i is out of range (0 to NBackends()-1).
func (s *Scheduler) Backend(i int) core.Backend {
	if s == nil || i < 0 || i >= len(s.backends) {
		return nil
	}
	return s.backends[i]
}

// BufferType returns the compute buffer type of backend i, or nil when i is out of range.
func (s *Scheduler) BufferType(i int) core.BufferType {
	if s == nil || i < 0 || i >= len(s.bufts) {
		return nil
	}
	return s.bufts[i]
}

// BufferSize is the size of backend i's compute buffer (0 when i is out of range).
func (s *Scheduler) BufferSize(i int) int64 {
	if s == nil || i < 0 || i >= len(s.bufts) {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.galloc.BufferSize(i)
}

// Stats returns the scheduler's counters.
func (s *Scheduler) Stats() Stats {
	if s == nil {
		return Stats{}
	}
	s.statsMu.Lock()
	defer s.statsMu.Unlock()
	return s.stats
}

// NPipeline is the pipeline depth: 1, or Options.Copies with Options.Parallel.
func (s *Scheduler) NPipeline() int {
	if s == nil {
		return 0
	}
	return s.opts.Copies
}

func (s *Scheduler) addStats(f func(st *Stats)) {
	s.statsMu.Lock()
	f(&s.stats)
	s.statsMu.Unlock()
}

// SetEvalCallback installs (or with nil removes) a callback that observes computed nodes. It
// applies to runs started afterwards. The callback must not call the scheduler's methods.
func (s *Scheduler) SetEvalCallback(cb EvalCallback) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.evalCB = cb
}

// SetTensorBackend pins t to backend b (which must be one of the scheduler's). The pin applies from
// the next plan (a change drops the current plan, waiting for runs in flight, and the tensors it gave
// memory lose it until the next AllocGraph); a pinned node whose backend cannot run it is an error
// at planning time. A nil t or b is an error.
func (s *Scheduler) SetTensorBackend(t *core.Tensor, b core.Backend) error {
	if err := s.usable(); err != nil {
		return err
	}
	if t == nil {
		return errors.New("tandem: scheduler: SetTensorBackend: tensor is nil")
	}
	if isNil(b) {
		return fmt.Errorf("tandem: scheduler: SetTensorBackend(%v): backend is nil", t)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.backendIndex(b)
	if id < 0 {
		return fmt.Errorf("tandem: scheduler: SetTensorBackend(%v): backend %T %s is not one of this scheduler's (%s)", t, b, b.Name(), s.backendNames())
	}
	if old, ok := s.pins[t]; !ok || old != id {
		s.pins[t] = id
		if s.plan != nil {
			// The next plan may place tensors elsewhere: take back the memory this plan gave
			// them (after the runs in flight), or they would keep pointing at the old backend's.
			err := s.synchronize()
			s.dropPlan()
			if err != nil {
				return fmt.Errorf("tandem: scheduler: SetTensorBackend: a run in flight failed: %w", err)
			}
		}
	}
	return nil
}

// TensorBackend returns the backend t is assigned to in the current plan (or pinned to), or nil
// (also for a nil t).
func (s *Scheduler) TensorBackend(t *core.Tensor) core.Backend {
	if s == nil || t == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.plan != nil {
		if id, ok := s.plan.assign[t]; ok && id >= 0 {
			return s.backends[id]
		}
	}
	if id, ok := s.pins[t]; ok {
		return s.backends[id]
	}
	return nil
}

func (s *Scheduler) backendIndex(b core.Backend) int {
	for i, x := range s.backends {
		if x == b {
			return i
		}
	}
	return -1
}

// NSplits is the number of splits of the current plan.
func (s *Scheduler) NSplits() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.plan == nil {
		return 0
	}
	return len(s.plan.splits)
}

// NCopies is the number of tensor copies between backends the current plan makes per run (the
// inputs of all splits).
func (s *Scheduler) NCopies() int {
	if s == nil {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.plan == nil {
		return 0
	}
	return len(s.plan.copies)
}

// Reset forgets the current plan and allocation (the next graph is planned afresh). Tensors the
// scheduler allocated lose their memory.
func (s *Scheduler) Reset() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reset()
}

func (s *Scheduler) reset() {
	_ = s.synchronize()
	s.dropPlan()
}

// Close releases the scheduler's compute buffers and, for a scheduler made by NewFromDevices or
// NewAll, closes its backends; backends given to New stay open (their owner closes them). Closing
// a nil scheduler does nothing.
func (s *Scheduler) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reset()
	s.galloc.Free()
	var err error
	if s.owned {
		for _, b := range s.backends {
			err = errors.Join(err, b.Close())
		}
		s.owned = false
	}
	return err
}
