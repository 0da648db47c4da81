package cpu

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tandem-ml/tandem/core"
)

// runState is the state of one graph run shared by the workers. It lives in the Backend and is
// reset for every run (runs are serialized by the backend's mutex), so that running a graph whose
// plan is cached allocates nothing.
type runState struct {
	nodes   []*core.Tensor
	pl      *plan
	ctx     context.Context
	abort   func() bool
	work    []byte
	ref     bool
	errs    errSlot
	stopAt  atomic.Int64
	stopErr error
	prms    []params      // one per worker
	ropes   []ropeMemo    // one per worker, kept from run to run (ops_rope.go)
	prof    *core.OpTimes // the backend's op profile, nil when off
	solo    bool          // worker 0 runs the graph alone: no barriers between nodes
}

// execute runs the planned graph on the pool: every worker walks all nodes, runs those it has a task
// in, and meets the others at a barrier after each node that computes something. Worker 0 polls for
// abort after each such node.
func (b *Backend) execute(ctx context.Context, g *core.Graph, pl *plan) error {
	rs := &b.rs
	rs.nodes, rs.pl, rs.ctx, rs.abort, rs.work, rs.ref = pl.execNodes(g.Nodes()), pl, ctx, b.abort, b.work, b.ref
	rs.prof = b.prof
	rs.errs.reset()
	rs.stopAt.Store(int64(len(rs.nodes)))
	rs.stopErr = nil
	if len(rs.prms) != b.pool.n {
		rs.prms = make([]params, b.pool.n)
		rs.ropes = make([]ropeMemo, b.pool.n)
	}
	if b.runFn == nil {
		b.runFn = b.runWorker
	}
	if pl.nth == 1 {
		// Every node has one task (a GPU split's token-embedding row, say): the caller runs the
		// graph alone. Waking the pool's sleepers for it cost ~600 µs a token with 16 workers.
		rs.solo = true
		b.runWorker(0)
		rs.solo = false
		b.pool.barrier.reset() // a kernel's panic breaks it
	} else {
		b.pool.run(b.runFn)
	}
	nodes := rs.nodes
	rs.nodes, rs.pl, rs.ctx, rs.work = nil, nil, nil, nil
	if at, err := rs.errs.failedAt(); err != nil {
		return core.Errorf("tandem: cpu: node %d %v: %w", at, nodes[at], err)
	}
	return rs.stopErr
}

// runWorker is worker ith's walk over the nodes of the current run.
func (b *Backend) runWorker(ith int) {
	rs := &b.rs
	p := b.pool
	nth := p.n
	if rs.solo {
		nth = 1
	}
	nodes, pl, ctx, abort := rs.nodes, rs.pl, rs.ctx, rs.abort
	// Polling Done without blocking is lock-free, where ctx.Err takes the context's mutex on
	// every node; Background's Done is nil and never polled.
	done := ctx.Done()
	prm := &rs.prms[ith]
	*prm = params{ith: ith, nth: nth, work: rs.work, pool: p, errs: &rs.errs, ref: rs.ref, rope: &rs.ropes[ith]}
	prof := rs.prof
	if ith != 0 {
		prof = nil
	}
	var t0 time.Time
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		if skipNode(n) || computedElsewhere(pl.fused, i) {
			// Views, leaves and empty tensors compute nothing, and the first node of a fused
			// pair is computed by the second's kernel (a group's GLU by the group's): no worker
			// waits for another here (as ggml's compute loop skips its empty ops), and worker 0
			// polls for an abort only after nodes the workers meet behind.
			continue
		}
		if prof != nil {
			t0 = time.Now()
		}
		if ith < pl.tasks[i] {
			prm.nth, prm.node, prm.routes, prm.fusedWith, prm.group = pl.tasks[i], i, nil, nil, nil
			if pl.routes != nil {
				prm.routes = pl.routes[i]
			}
			if pl.fused != nil {
				switch pl.fused[i] {
				case fuseRMSMul:
					prm.fusedWith = nodes[i-1]
				case fuseMatVecGroup:
					prm.group = pl.groups[i]
				}
			}
			if !runKernel(prm, n) {
				// This worker leaves the run: the others may be waiting for it at a barrier
				// inside the node or after it, so the barrier is broken for the rest of the run
				// and every worker stops after node i (errs.failed(i) is true for all).
				return
			}
		}
		wait := !rs.solo && pl.waits[i]
		stop := false
		if ith == 0 {
			if stopped(done) {
				rs.stopErr = fmt.Errorf("%w after node %d of %d: %w", ErrAborted, i+1, len(nodes), ctx.Err())
				rs.stopAt.Store(int64(i + 1))
			} else if abort != nil {
				if stop, v := callAbort(abort); v != nil {
					rs.stopErr = fmt.Errorf("%w after node %d of %d: the abort callback panicked: %v", ErrAborted, i+1, len(nodes), v)
					rs.stopAt.Store(int64(i + 1))
				} else if stop {
					rs.stopErr = fmt.Errorf("%w after node %d of %d", ErrAborted, i+1, len(nodes))
					rs.stopAt.Store(int64(i + 1))
				}
			}
			// Stopping after a node without a barrier (a one-task node before another: the
			// others skipped it and wait at their next barrier), worker 0 meets them once.
			stop = rs.stopAt.Load() <= int64(i+1) || rs.errs.failed(i)
			wait = wait || stop && !rs.solo
		}
		if wait {
			p.barrier.wait()
		}
		if prof != nil {
			prof.Add(n, time.Since(t0))
		}
		// After a barrier every worker sees the stops and errors recorded before it: those of
		// node i, or of an earlier node of worker 0 alone for a worker that skipped the nodes
		// since its last barrier. Between barriers only worker 0 decides; the others stop at
		// the next one.
		if stop || wait && (rs.errs.failed(i) || rs.stopAt.Load() <= int64(i+1)) {
			break
		}
	}
}

// stopped reports whether done is closed, without blocking.
func stopped(done <-chan struct{}) bool {
	if done == nil {
		return false
	}
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// callAbort calls the user's abort callback, returning the value of a panic in it: worker 0 must
// reach the barrier whatever the callback does, or the other workers would wait forever.
func callAbort(abort func() bool) (stop bool, panicked any) {
	defer func() {
		if v := recover(); v != nil {
			stop, panicked = true, v
		}
	}()
	return abort(), nil
}

// KernelPanicError is the error a panic inside a kernel becomes (wrapped with the node's index and
// description): the op and the recovered value.
type KernelPanicError struct {
	Op    core.Op
	Value any
}

func (e *KernelPanicError) Error() string {
	return fmt.Sprintf("kernel for op %v panicked: %v", e.Op, e.Value)
}

// runKernel computes node n on one worker, turning a panic into the node's error (first error by
// node order wins) and breaking the barrier so no other worker waits for this one. It reports
// whether the kernel returned normally.
func runKernel(p *params, n *core.Tensor) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			p.errs.set(p.node, &KernelPanicError{Op: n.Op, Value: v})
			p.pool.barrier.breakAll()
			ok = false
		}
	}()
	if h := kernelHook; h != nil {
		h(p, n)
	}
	if p.fusedWith != nil {
		computeRMSNormMul(p, p.fusedWith, n) // fuse.go
		return true
	}
	if p.group != nil {
		computeMatVecGroup(p, p.group) // mulmat_vec_group.go
		return true
	}
	impls[n.Op].compute(p, n)
	return true
}

// kernelHook, when set by a test, runs before every kernel on every worker (to inject panics).
var kernelHook func(p *params, n *core.Tensor)
