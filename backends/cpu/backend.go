// Package cpu is tandem's CPU backend: it runs graphs whose tensors live in host memory with a
// persistent pool of worker goroutines, one barrier between nodes, and per-op kernels.
package cpu

import (
	"context"
	"errors"
	"fmt"
	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"log/slog"
	"runtime"
	"sync"

	"github.com/tandem-ml/tandem/core"
)

// Options configure a CPU backend.
type Options struct {
	// Threads is the number of workers (0: runtime.NumCPU()).
	Threads int
	// Abort, when set, is polled after every node; returning true stops the graph with ErrAborted.
	Abort func() bool
	// Reference selects the straightforward reference kernels instead of the SIMD ones (ggml's
	// use_ref); other backends are checked against it.
	Reference bool
	// Logger receives the backend's reports at Debug level (see SetLogger); nil reports nothing.
	Logger *slog.Logger
	// NoFusion runs every node alone: no pair of nodes (RMS_NORM then MUL by a weight row) is
	// computed by one fused kernel, and no group of sibling mat-vecs (a generated token's Q, K
	// and V; gate and up, with the GLU of the two) runs as one node. Results are the same bit for
	// bit either way; the switch is for comparisons.
	NoFusion bool
}

// ErrAborted is returned (wrapped) when an abort callback or a context stops a graph.
var ErrAborted = fmt.Errorf("tandem: cpu: graph computation aborted")

// Backend is the CPU backend. Its methods may be called from several goroutines; graph
// computations are serialized (one runs at a time). Methods on a nil *Backend return an error, or do
// nothing where they return none.
type Backend struct {
	mu      sync.Mutex
	threads int
	abort   func() bool
	ref     bool
	// noFusion: Options.NoFusion
	noFusion bool
	pool     *pool
	work     []byte
	closed   bool

	rs    runState
	runFn func(int) // b.runWorker, bound once

	// the plan of the last graph run, reused while the same graph with the same nodes runs again
	planG       *core.Graph
	planNodes   []*core.Tensor
	planThreads int
	planRef     bool
	plan        *plan
	// layoutChecks counts, for tests, the reused plans' layout checks (layoutHolds)
	layoutChecks int

	log *slog.Logger // SetLogger; nil reports nothing

	prof *core.OpTimes // SetOpProfile; nil: off
}

var _ core.Backend = (*Backend)(nil)

// New creates a CPU backend with its worker pool.
func New(o Options) (*Backend, error) {
	if o.Threads < 0 || o.Threads > 512 {
		return nil, fmt.Errorf("tandem: cpu: %d threads is out of range (0..512)", o.Threads)
	}
	if err := kern.KernelSetError(); err != nil {
		return nil, core.Errorf("tandem: cpu: %w", err)
	}
	n := o.Threads
	if n == 0 {
		n = runtime.NumCPU()
	}
	b := &Backend{threads: n, abort: o.Abort, ref: o.Reference, noFusion: o.NoFusion, pool: newPool(n)}
	b.SetLogger(o.Logger)
	return b, nil
}

// Compute runs g on the CPU with the given number of threads (0: runtime.NumCPU()); every tensor
// must already hold host data. A nil g is an error.
func Compute(g *core.Graph, threads int) error {
	if g == nil {
		return errNilGraph
	}
	b, err := New(Options{Threads: threads})
	if err != nil {
		return err
	}
	defer b.Close()
	return b.GraphCompute(g)
}

// Name is "CPU".
func (b *Backend) Name() string { return "CPU" }

// Device is the CPU device.
func (b *Backend) Device() core.Device { return theDevice }

// DefaultBufferType is plain host memory.
func (b *Backend) DefaultBufferType() core.BufferType { return core.HostBufferType() }

// errNilGraph and errNilBackend are the errors for a nil graph and a nil *Backend receiver.
var (
	errNilGraph   = errors.New("tandem: cpu: graph is nil")
	errNilBackend = errors.New("tandem: cpu: backend is nil (create one with cpu.New)")
	errZero       = errors.New("tandem: cpu: zero Backend: create one with cpu.New")
	errClosed     = errors.New("tandem: cpu: backend is closed")
)

// usable is nil for a backend made by New and not closed, and otherwise the error saying why it
// cannot compute: nil, the zero Backend (which has no workers), or closed. b.mu must be held.
func (b *Backend) usable() error {
	switch {
	case b.closed:
		return errClosed
	case b.pool == nil:
		return errZero
	}
	return nil
}

// Threads reports the number of workers (0 for a nil backend).
func (b *Backend) Threads() int {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.threads
}

// SetThreads changes the number of workers for later graphs.
func (b *Backend) SetThreads(n int) error {
	if b == nil {
		return errNilBackend
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.usable(); err != nil {
		return err
	}
	if n < 1 || n > 512 {
		return fmt.Errorf("tandem: cpu: %d threads is out of range (1..512)", n)
	}
	if n != b.threads {
		b.pool.close()
		b.pool = newPool(n)
		b.threads = n
		b.logThreads(n)
	}
	return nil
}

// SetAbort installs (or with nil removes) the abort callback. On a nil backend it does nothing.
func (b *Backend) SetAbort(f func() bool) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.abort = f
	b.mu.Unlock()
}

// Synchronize returns at once: the CPU backend computes synchronously.
func (b *Backend) Synchronize() error { return nil }

// Close stops the workers. The backend cannot be used afterwards. Closing twice, or closing a nil
// or zero backend, does nothing.
func (b *Backend) Close() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		if b.pool != nil {
			b.pool.close()
		}
		b.work = nil
		b.planG, b.plan, b.planNodes = nil, nil, nil
	}
	return nil
}

// sameNodes reports whether a and b hold the same tensors in the same order.
func sameNodes(a, b []*core.Tensor) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// GraphCompute runs every node of g. A nil g is an error, and so is a graph that reads an input
// not written since a graph allocator gave it memory (core.ErrInputNotSet). A panic inside a kernel is recovered and
// returned as an error naming the node, its op and the panic value; the graph stops at that node.
func (b *Backend) GraphCompute(g *core.Graph) error {
	return b.GraphComputeContext(context.Background(), g)
}

// GraphComputeContext runs g, stopping before the next node once ctx is done (the error wraps
// ErrAborted and ctx.Err()). A nil ctx means context.Background(); a nil g is an error.
func (b *Backend) GraphComputeContext(ctx context.Context, g *core.Graph) error {
	return b.graphCompute(ctx, g, false)
}

// GraphComputeReused is GraphComputeContext for the graph the backend computed last, unchanged
// since but for tensor data (core.ReusedComputer; the scheduler's GraphComputeReused): the checks
// that its nodes' layouts are the plan's are skipped (a generated token of an MoE model: ~25 µs,
// the tensors cold after the weights went through the caches). Inputs must still have been
// written. Any other graph is checked as GraphComputeContext does. A nil ctx means
// context.Background(); a nil g is an error.
func (b *Backend) GraphComputeReused(ctx context.Context, g *core.Graph) error {
	return b.graphCompute(ctx, g, true)
}

// graphCompute is GraphComputeContext, or GraphComputeReused when reused is set.
func (b *Backend) graphCompute(ctx context.Context, g *core.Graph, reused bool) error {
	if b == nil {
		return errNilBackend
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.usable(); err != nil {
		return err
	}
	if g == nil {
		return errNilGraph
	}
	// Workers asleep since the last run start waking now, while the checks below run (unless the
	// graph is the last one again and its plan runs on the caller alone).
	if g != b.planG || b.plan == nil || b.plan.nth > 1 {
		b.pool.kick()
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := g.Err(); err != nil {
		return err
	}
	if err := core.CheckInputsSet(g); err != nil {
		return err
	}
	var pl *plan
	reuse := g == b.planG && b.threads == b.planThreads && b.ref == b.planRef && sameNodes(g.Nodes(), b.planNodes)
	if reuse && (reused || b.countedLayoutHolds()) {
		// nothing the checks below read has changed since they last passed (layout.go)
		pl = b.plan
		if err := pl.loadRepackCopies(); err != nil {
			return err
		}
	} else if reuse && b.plan.rp.stillValid(g.Nodes(), b.ref) && b.plan.routesValid(g.Nodes()) &&
		b.plan.fusionsValid(b.plan.execNodes(g.Nodes())) {
		pl = b.plan
		pl.layout = nil
		if err := pl.loadRepackCopies(); err != nil {
			return err
		}
		exec := pl.execNodes(g.Nodes())
		for i, n := range exec {
			if skipNode(n) {
				continue
			}
			if err := pl.checkNodeHost(i, n); err != nil {
				return fmt.Errorf("tandem: cpu: node %d: %w", i, err)
			}
		}
		pl.takeLayout(g.Nodes(), exec)
	} else {
		var err error
		if pl, err = safePlan(g, b.threads, b.ref, b.noFusion); err != nil {
			b.planG, b.plan = nil, nil
			return err
		}
		b.planG, b.planThreads, b.planRef, b.plan = g, b.threads, b.ref, pl
		b.planNodes = append(b.planNodes[:0], g.Nodes()...)
		if err := pl.loadRepackCopies(); err != nil {
			return err
		}
		pl.takeLayout(g.Nodes(), pl.execNodes(g.Nodes())) // makePlan checked every node's host data
	}
	if int64(len(b.work)) < pl.workSize {
		// Host memory as the buffers have it: huge pages where Linux gives them (the GEMM's
		// packed blocks live here).
		w, err := core.NewHostBuffer(nil, pl.workSize)
		if err != nil {
			return fmt.Errorf("tandem: cpu: work buffer: %w", err)
		}
		b.work = w.Bytes()
	}
	return b.execute(ctx, g, pl)
}

// countedLayoutHolds is b.plan.layoutHolds, counted.
func (b *Backend) countedLayoutHolds() bool {
	b.layoutChecks++
	return b.plan.layoutHolds()
}

// safePlan is makePlan with a panic in an op's planning functions turned into an error.
func safePlan(g *core.Graph, threads int, ref, noFusion bool) (pl *plan, err error) {
	defer func() {
		if v := recover(); v != nil {
			pl, err = nil, fmt.Errorf("tandem: cpu: planning the graph panicked: %v", v)
		}
	}()
	return makePlan(g, threads, ref, noFusion, activeMMKernels())
}
