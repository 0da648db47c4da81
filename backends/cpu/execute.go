package cpu

import (
	"context"
	"fmt"
	"sync/atomic"

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
	prms    []params // one per worker
}

// execute runs the planned graph on the pool: every worker walks all nodes, runs those it has a task
// in, and meets the others at a barrier after each node. Worker 0 polls for abort after each node.
func (b *Backend) execute(ctx context.Context, g *core.Graph, pl *plan) error {
	rs := &b.rs
	rs.nodes, rs.pl, rs.ctx, rs.abort, rs.work, rs.ref = g.Nodes(), pl, ctx, b.abort, b.work, b.ref
	rs.errs.reset()
	rs.stopAt.Store(int64(len(rs.nodes)))
	rs.stopErr = nil
	if len(rs.prms) != b.pool.n {
		rs.prms = make([]params, b.pool.n)
	}
	if b.runFn == nil {
		b.runFn = b.runWorker
	}
	b.pool.run(b.runFn)
	nodes := rs.nodes
	rs.nodes, rs.pl, rs.ctx, rs.work = nil, nil, nil, nil
	if at, err := rs.errs.failedAt(); err != nil {
		return fmt.Errorf("tandem: cpu: node %d %v: %w", at, nodes[at], err)
	}
	return rs.stopErr
}

// runWorker is worker ith's walk over the nodes of the current run.
func (b *Backend) runWorker(ith int) {
	rs := &b.rs
	p := b.pool
	nth := p.n
	nodes, pl, ctx, abort := rs.nodes, rs.pl, rs.ctx, rs.abort
	prm := &rs.prms[ith]
	*prm = params{ith: ith, nth: nth, work: rs.work, pool: p, errs: &rs.errs, ref: rs.ref}
	for i := 0; i < len(nodes); i++ {
		if int64(i) >= rs.stopAt.Load() {
			break
		}
		n := nodes[i]
		if !skipNode(n) && ith < pl.tasks[i] {
			prm.nth, prm.node = pl.tasks[i], i
			impls[n.Op].compute(prm, n)
		}
		if ith == 0 {
			if ctx.Err() != nil {
				rs.stopErr = fmt.Errorf("%w after node %d of %d: %w", ErrAborted, i+1, len(nodes), ctx.Err())
				rs.stopAt.Store(int64(i + 1))
			} else if abort != nil && abort() {
				rs.stopErr = fmt.Errorf("%w after node %d of %d", ErrAborted, i+1, len(nodes))
				rs.stopAt.Store(int64(i + 1))
			}
		}
		p.barrier.wait()
		// Errors of node i were all recorded before the barrier; later nodes' errors carry a
		// larger index, so every worker takes the same decision here.
		if rs.errs.failed(i) {
			break
		}
	}
}
