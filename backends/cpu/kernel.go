package cpu

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tandem-ml/tandem/core"
)

// params is what a kernel gets: its worker index, the team size, the shared work buffer and the
// pool (barrier, chunk counter). Kernels split their work by ith/nth; the barrier between nodes is
// the only synchronization they can rely on, plus p.barrier() inside a node.
type params struct {
	ith, nth int
	node     int  // index of the node being computed
	ref      bool // use the reference kernels only
	work     []byte
	pool     *pool
	errs     *errSlot
	routes   []mmRoute // the node's planned MUL_MAT routes (plan.routes)
	// fusedWith is the node computed together with this one by a fused kernel (fuse.go), or nil
	fusedWith *core.Tensor
	// group is the group of sibling mat-vecs this node computes (mulmat_vec_group.go), or nil
	group *matVecGroup
	// counterReady: the pool's chunk counter was reset and a barrier passed since (mulMatPaths
	// after converting the activations), so forEachBatch's first batch needs neither
	counterReady bool
	// nf fixes the non-finite outputs of the mat-vec sets' tasks this worker finishes
	// (mulmat_vec_repacked.go); kept here so that handing it to the kernel allocates nothing
	nf nonFiniteHook
	// glu is the hook of a group's GLU pair (mulmat_vec_glu.go), kept here for the same reason
	glu gluPairHook
	// rope is the worker's last ROPE rotation table (nil: compute every table)
	rope *ropeMemo
}

// mulMatRoute is the node's planned MUL_MAT route i (routeNone where none was planned).
func (p *params) mulMatRoute(i int) mmRoute {
	if i < 0 || i >= len(p.routes) {
		return routeNone
	}
	return p.routes[i]
}

// barrier waits for the other workers of the node. Only ops that run on every worker of the pool
// (tasks nil or all) may use it, or on one (a team of one passes at once: smallNode's products).
func (p *params) barrier() {
	if p.nth == 1 {
		return
	}
	if p.nth != p.pool.n {
		panic("cpu: barrier inside an op that runs on a partial team")
	}
	p.pool.barrier.wait()
}

// fail records a runtime error (bad indices and the like); the graph stops after the node.
func (p *params) fail(err error) { p.errs.set(p.node, err) }

// errSlot keeps the first error by node order. Workers compare the failing node with the node they
// just finished after the barrier, so all of them stop at the same node. The failing node is an
// atomic so the check after every barrier costs one load.
type errSlot struct {
	first atomic.Int64 // index of the first failing node, or noFailure
	mu    sync.Mutex
	node  int
	err   error
}

const noFailure = 1<<63 - 1

// reset clears the slot for a new run.
func (e *errSlot) reset() {
	e.mu.Lock()
	e.node, e.err = 0, nil
	e.first.Store(noFailure)
	e.mu.Unlock()
}

func (e *errSlot) set(node int, err error) {
	e.mu.Lock()
	if e.err == nil || node < e.node {
		e.node, e.err = node, err
		e.first.Store(int64(node))
	}
	e.mu.Unlock()
}

// failed reports whether some node up to and including node failed.
func (e *errSlot) failed(node int) bool { return e.first.Load() <= int64(node) }

// failedAt returns the node of the first error (or -1) and the error.
func (e *errSlot) failedAt() (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		return -1, nil
	}
	return e.node, e.err
}

// opImpl is one op's CPU implementation.
type opImpl struct {
	// compute runs the node on one worker.
	compute func(p *params, dst *core.Tensor)
	// tasks is how many workers the node uses (nil: all of them).
	tasks func(dst *core.Tensor, nth int) int
	// work is the shared scratch the node needs for nTasks workers (nil: none).
	work func(dst *core.Tensor, nTasks int) int64
	// supports reports whether the kernel handles the node's types and layouts (nil: always).
	supports func(dst *core.Tensor) bool
	// plan, for MUL_MAT and MUL_MAT_ID, decides at plan time the routes the kernel takes
	// (params.routes) for the reference kernels (ref) or the fast ones on kernels ks, and the
	// scratch those routes need for nTasks workers; it stands in for work.
	plan func(dst *core.Tensor, nTasks int, ref bool, ks mmKernels) ([]mmRoute, int64)
}

var impls [core.OpCount]opImpl

// register installs an op's implementation; kernel files call it from init.
func register(op core.Op, impl opImpl) {
	if impls[op].compute != nil {
		panic(fmt.Sprintf("cpu: op %v registered twice", op))
	}
	impls[op] = impl
}

// single is a tasks function for ops that run on one worker.
func single(*core.Tensor, int) int { return 1 }

// rowsTasks uses at most one worker per row.
func rowsTasks(dst *core.Tensor, nth int) int { return int(max(1, min(int64(nth), dst.NRows()))) }

// supportsNode reports whether the CPU backend can compute t.
func supportsNode(t *core.Tensor) bool {
	if t.Op == core.OpNone || t.Op.IsView() {
		return true
	}
	if t.Op < 0 || t.Op >= core.OpCount {
		return false
	}
	impl := impls[t.Op]
	if impl.compute == nil {
		return false
	}
	return impl.supports == nil || impl.supports(t)
}
