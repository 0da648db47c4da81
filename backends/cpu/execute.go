package cpu

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/tandem-ml/tandem/core"
)

// execute runs the planned graph on the pool: every worker walks all nodes, runs those it has a task
// in, and meets the others at a barrier after each node. Worker 0 polls for abort after each node.
func (b *Backend) execute(ctx context.Context, g *core.Graph, pl *plan) error {
	nodes := g.Nodes()
	errs := newErrSlot()
	var stopAt atomic.Int64
	stopAt.Store(int64(len(nodes)))
	var stopErr error
	p := b.pool
	nth := p.n
	abort := b.abort
	p.run(func(ith int) {
		prm := params{ith: ith, nth: nth, work: b.work, pool: p, errs: errs, ref: b.ref}
		for i := 0; i < len(nodes); i++ {
			if int64(i) >= stopAt.Load() {
				break
			}
			n := nodes[i]
			if !skipNode(n) && ith < pl.tasks[i] {
				prm.nth, prm.node = pl.tasks[i], i
				impls[n.Op].compute(&prm, n)
			}
			if ith == 0 {
				if ctx.Err() != nil {
					stopErr = fmt.Errorf("%w after node %d of %d: %w", ErrAborted, i+1, len(nodes), ctx.Err())
					stopAt.Store(int64(i + 1))
				} else if abort != nil && abort() {
					stopErr = fmt.Errorf("%w after node %d of %d", ErrAborted, i+1, len(nodes))
					stopAt.Store(int64(i + 1))
				}
			}
			p.barrier.wait()
			// Errors of node i were all recorded before the barrier; later nodes' errors carry a
			// larger index, so every worker takes the same decision here.
			if errs.failed(i) {
				break
			}
		}
	})
	if at, err := errs.failedAt(); err != nil {
		return fmt.Errorf("tandem: cpu: node %d %v: %w", at, nodes[at], err)
	}
	return stopErr
}
