package cpu

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// plan says, per node, how many workers run it, and how big the shared work buffer must be.
type plan struct {
	tasks    []int
	workSize int64
	nth      int
}

// skipNode reports whether a node needs no computation (views, leafs, empty tensors).
func skipNode(t *core.Tensor) bool {
	return t.Op == core.OpNone || t.Op.IsView() || t.IsEmpty()
}

func makePlan(g *core.Graph, threads int) (*plan, error) {
	nodes := g.Nodes()
	pl := &plan{tasks: make([]int, len(nodes)), nth: 1}
	for i, n := range nodes {
		if n == nil {
			return nil, fmt.Errorf("tandem: cpu: node %d of the graph is nil", i)
		}
		if skipNode(n) {
			pl.tasks[i] = 1
			continue
		}
		if n.Op < 0 || n.Op >= core.OpCount {
			return nil, fmt.Errorf("tandem: cpu: node %d %v: unknown op %d", i, n, int32(n.Op))
		}
		impl := &impls[n.Op]
		if impl.compute == nil {
			return nil, fmt.Errorf("tandem: cpu: node %d %v: op %v is not implemented on the CPU", i, n, n.Op)
		}
		if impl.supports != nil && !impl.supports(n) {
			return nil, fmt.Errorf("tandem: cpu: node %d %v: the CPU kernel does not support these types or layouts", i, n)
		}
		if err := checkHostData(n); err != nil {
			return nil, fmt.Errorf("tandem: cpu: node %d: %w", i, err)
		}
		nt := threads
		if impl.tasks != nil {
			nt = max(1, min(threads, impl.tasks(n, threads)))
		}
		pl.tasks[i] = nt
		pl.nth = max(pl.nth, nt)
		if impl.work != nil {
			pl.workSize = max(pl.workSize, impl.work(n, nt))
		}
	}
	if pl.workSize > 0 {
		pl.workSize += 64 * int64(threads)
	}
	return pl, nil
}

// checkHostData makes sure a node and its sources are in host memory.
func checkHostData(n *core.Tensor) error {
	if n.Data() == nil {
		return fmt.Errorf("tensor %v has no host memory", n)
	}
	for _, s := range n.Src {
		if s != nil && s.NBytes() > 0 && s.Data() == nil {
			return fmt.Errorf("source %v of %v has no host memory", s, n)
		}
	}
	return nil
}
