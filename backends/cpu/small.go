package cpu

import "github.com/tandem-ml/tandem/core"

// Small nodes and the barriers between them. A generated token's graph is mostly nodes that
// touch a few KiB (norms, RoPE, residual adds, the KV cache's row stores, the experts' routing)
// between the products that stream the weights. Splitting such a node over the workers saves
// less than the workers' meeting costs: every node's barrier and the rows one worker wrote and
// another reads cross between the cores, and when the two cores sit on different dies (a
// virtual machine's vCPUs move) that costs several times more than on one (a cache line's round
// trip measured 95-130 ns on one Zen 5 die and 370-430 ns across). So a small node runs as one
// task on worker 0, and a run of consecutive one-task nodes runs on worker 0 without barriers
// between them (the other workers wait once, before the next node they share).

// smallNodeBytes is the most bytes a light node may read or write and still run as one task.
const smallNodeBytes = 8 << 10

// lightOps are the ops whose cost is their bytes: element-wise and row-wise ops, row copies,
// small reductions.
var lightOps = func() (ops [core.OpCount]bool) {
	for _, op := range []core.Op{core.OpAdd, core.OpSub, core.OpMul, core.OpDiv, core.OpScale, core.OpUnary,
		core.OpGLU, core.OpRope, core.OpRMSNorm, core.OpNorm, core.OpL2Norm, core.OpSetRows, core.OpGetRows,
		core.OpSoftMax, core.OpCpy, core.OpCont, core.OpDup, core.OpClamp, core.OpSumRows, core.OpMean,
		core.OpArgsort, core.OpArgmax, core.OpAddID, core.OpSqr, core.OpSqrt, core.OpSin, core.OpCos,
		core.OpLog, core.OpLeakyRelu, core.OpRepeat, core.OpConcat, core.OpAdd1} {
		ops[op] = true
	}
	return ops
}()

// smallNode reports whether n is a light op over at most smallNodeBytes: its result, its first
// source (a GET_ROWS reads only its result's rows of the table; a SET_ROWS writes only its
// source's rows into its destination).
func smallNode(n *core.Tensor) bool {
	if n.Op == core.OpMulMat {
		return smallProduct(n)
	}
	if n.Op < 0 || n.Op >= core.OpCount || !lightOps[n.Op] {
		return false
	}
	b := n.NBytes()
	switch src := n.Src[0]; {
	case n.Op == core.OpGetRows:
	case n.Op == core.OpSetRows:
		if src == nil {
			return false
		}
		b = src.NBytes()
	case src != nil:
		b = max(b, src.NBytes())
	}
	return b <= smallNodeBytes
}

// smallProductBytes is the most weight bytes a product of one activation row may read and still
// run as one task (an MoE layer's router: 8 experts x 1024 f32, 32 KiB).
const smallProductBytes = 64 << 10

// smallProduct reports whether n is a MUL_MAT of one activation row (at most smallNodeBytes)
// with at most smallProductBytes of weights: on one worker it reads the weights in about the time
// the team takes to meet, and the activation and the result stay in that worker's cache.
func smallProduct(n *core.Tensor) bool {
	a, b := n.Src[0], n.Src[1]
	return a != nil && b != nil && b.NRows() == 1 && b.NBytes() <= smallNodeBytes && a.NBytes() <= smallProductBytes
}

// planWaits marks the exec nodes after which the workers meet at a barrier. A node computed by
// worker 0 alone and followed by another such node needs none: worker 0 runs them in order and no
// other worker has a part in either. The last node that computes keeps its barrier.
func planWaits(exec []*core.Tensor, tasks []int, fused []fusion) []bool {
	waits := make([]bool, len(exec))
	prev := -1 // the last node before i that computes
	for i, n := range exec {
		if skipNode(n) || computedElsewhere(fused, i) {
			continue
		}
		if prev >= 0 {
			waits[prev] = tasks[prev] > 1 || tasks[i] > 1
		}
		prev = i
	}
	if prev >= 0 {
		waits[prev] = true
	}
	return waits
}
