// Package cpu is tandem's CPU backend: it runs graphs whose tensors live in host memory with a
// persistent pool of worker goroutines, one barrier between nodes, and per-op kernels.
package cpu

import (
	"context"
	"fmt"
	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
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
}

// ErrAborted is returned (wrapped) when an abort callback or a context stops a graph.
var ErrAborted = fmt.Errorf("tandem: cpu: graph computation aborted")

// Backend is the CPU backend. It is safe for use by one goroutine at a time.
type Backend struct {
	mu      sync.Mutex
	threads int
	abort   func() bool
	ref     bool
	pool    *pool
	work    []byte
	closed  bool
}

var _ core.Backend = (*Backend)(nil)

// New creates a CPU backend with its worker pool.
func New(o Options) (*Backend, error) {
	if o.Threads < 0 || o.Threads > 512 {
		return nil, fmt.Errorf("tandem: cpu: %d threads is out of range (0..512)", o.Threads)
	}
	if err := kern.KernelSetError(); err != nil {
		return nil, fmt.Errorf("tandem: cpu: %w", err)
	}
	n := o.Threads
	if n == 0 {
		n = runtime.NumCPU()
	}
	return &Backend{threads: n, abort: o.Abort, ref: o.Reference, pool: newPool(n)}, nil
}

// Compute runs g on the CPU with the given number of threads; every tensor must already hold host data.
func Compute(g *core.Graph, threads int) error {
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

// Threads reports the number of workers.
func (b *Backend) Threads() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.threads
}

// SetThreads changes the number of workers for later graphs.
func (b *Backend) SetThreads(n int) error {
	if n < 1 || n > 512 {
		return fmt.Errorf("tandem: cpu: %d threads is out of range (1..512)", n)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("tandem: cpu: backend is closed")
	}
	if n != b.threads {
		b.pool.close()
		b.pool = newPool(n)
		b.threads = n
	}
	return nil
}

// SetAbort installs (or with nil removes) the abort callback.
func (b *Backend) SetAbort(f func() bool) {
	b.mu.Lock()
	b.abort = f
	b.mu.Unlock()
}

// Synchronize returns at once: the CPU backend computes synchronously.
func (b *Backend) Synchronize() error { return nil }

// Close stops the workers. The backend cannot be used afterwards.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed = true
		b.pool.close()
		b.work = nil
	}
	return nil
}

// GraphCompute runs every node of g.
func (b *Backend) GraphCompute(g *core.Graph) error {
	return b.GraphComputeContext(context.Background(), g)
}

// GraphComputeContext runs g, stopping before the next node once ctx is done (the error wraps
// ErrAborted and ctx.Err()).
func (b *Backend) GraphComputeContext(ctx context.Context, g *core.Graph) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("tandem: cpu: backend is closed")
	}
	if err := g.Err(); err != nil {
		return err
	}
	pl, err := makePlan(g, b.threads)
	if err != nil {
		return err
	}
	if int64(len(b.work)) < pl.workSize {
		b.work = make([]byte, pl.workSize)
	}
	return b.execute(ctx, g, pl)
}
