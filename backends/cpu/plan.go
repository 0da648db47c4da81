package cpu

import (
	"fmt"
	"math"

	"github.com/tandem-ml/tandem/core"
)

// plan says, per node, how many workers run it and, for MUL_MAT and MUL_MAT_ID, by which routes,
// and how big the shared work buffer must be.
type plan struct {
	tasks    []int
	workSize int64
	nth      int
	threads  int         // the team the plan was made for (nth is the most tasks a node has)
	rp       *repackPlan // nodes reading CPU_REPACK memory (nil: none)
	// routes holds, per node, the MUL_MAT routes its kernel takes (opImpl.plan; nil for other
	// ops): MUL_MAT's at index 0, MUL_MAT_ID's for an expert pass of n rows at index n-1.
	routes [][]mmRoute
	keys   []mmKey // per node with routes: what its routes were decided on
	// fused marks, per exec node, its part in a fused pair (fuse.go; nil: no fusion)
	fused []fusion
	// groups holds, per exec node, the group of sibling mat-vecs it ends (mulmat_vec_group.go;
	// nil: none)
	groups []*matVecGroup
	// waits marks, per exec node, whether the workers meet at a barrier after it (planWaits)
	waits []bool
	// snaps holds, per exec node, the layouts and host memory checkHostData last accepted for
	// the node and its sources (checkNodeHost)
	snaps [][]hostSnap
	// layout is what the checks of a reused plan read, as they last accepted it (layout.go; nil
	// until a reused run's checks pass)
	layout *layoutSnap
}

// hostSnap is a tensor's layout and host memory as checkHostData accepted them. While none of it
// changes, the check would accept them again: the extent depends only on the type, shape and
// strides, and the host bytes on the offset and the buffer's bytes (a freed buffer has none, or
// says so).
type hostSnap struct {
	t      *core.Tensor
	typ    core.Type
	off    int64
	ne, nb [core.MaxDims]int64
	mem    bufferLayout // the buffer's host bytes (layout.go)
}

// snapOf takes t's snapshot.
func snapOf(t *core.Tensor) hostSnap {
	return hostSnap{t: t, typ: t.Type, off: t.Offset, ne: t.Ne, nb: t.Nb, mem: bufferLayoutOf(t.Buffer)}
}

// checkNodeHost is checkHostData for exec node i, skipped where the node and its sources are as
// the last successful check of this plan found them (a generated token's graph runs with the same
// tensors in the same memory every time: ~0.1-0.3 µs a node saved). Sources read in the repacked
// layout are checked every time.
func (pl *plan) checkNodeHost(i int, n *core.Tensor) error {
	routed := pl.routedMask(i)
	if pl.snaps == nil {
		pl.snaps = make([][]hostSnap, len(pl.tasks))
	}
	if pl.snapsHold(i, n, routed) {
		for j, s := range n.Src {
			if s != nil && routed&(1<<j) != 0 {
				if err := checkRepacked(n, s); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := checkHostData(n, routed); err != nil {
		pl.snaps[i] = pl.snaps[i][:0]
		return err
	}
	sn := append(pl.snaps[i][:0], snapOf(n))
	for j, s := range n.Src {
		if s != nil && routed&(1<<j) == 0 {
			sn = append(sn, snapOf(s))
		}
	}
	pl.snaps[i] = sn
	return nil
}

// snapsHold reports whether node i's snapshots exist and still describe n and its sources.
func (pl *plan) snapsHold(i int, n *core.Tensor, routed uint16) bool {
	sn := pl.snaps[i]
	if len(sn) == 0 || sn[0] != snapOf(n) {
		return false
	}
	k := 1
	for j, s := range n.Src {
		if s == nil || routed&(1<<j) != 0 {
			continue
		}
		if k >= len(sn) || sn[k] != snapOf(s) {
			return false
		}
		k++
	}
	return k == len(sn)
}

// routesValid reports whether the nodes with planned routes still have the types, shapes and
// strides their routes were decided on.
func (pl *plan) routesValid(nodes []*core.Tensor) bool {
	for i, r := range pl.routes {
		if r != nil && mmKeyOf(nodes[i]) != pl.keys[i] {
			return false
		}
	}
	return true
}

// execNodes returns the tensors the workers compute: the graph's nodes, with shadows in place of
// nodes that read CPU_REPACK memory through standard copies.
func (pl *plan) execNodes(nodes []*core.Tensor) []*core.Tensor {
	if pl.rp != nil {
		return pl.rp.exec
	}
	return nodes
}

// loadRepackCopies brings the shadows up to date and fills the standard copies of CPU_REPACK
// sources they read, before a run.
func (pl *plan) loadRepackCopies() error {
	if pl.rp == nil || pl.rp.host == nil {
		return nil
	}
	return pl.rp.refresh(true)
}

// routedMask is the mask of node i's sources its kernel reads in the repacked layout.
func (pl *plan) routedMask(i int) uint16 {
	if pl.rp != nil {
		return pl.rp.routed[i]
	}
	return 0
}

// skipNode reports whether a node needs no computation (views, leafs, empty tensors).
func skipNode(t *core.Tensor) bool {
	return t.Op == core.OpNone || t.Op.IsView() || t.IsEmpty()
}

// makePlan plans g for threads workers, the reference kernels (ref) or the fast ones on a
// kernel set offering ks (activeMMKernels; tests plan for other sets), fusing node pairs unless
// noFusion.
func makePlan(g *core.Graph, threads int, ref, noFusion bool, ks mmKernels) (*plan, error) {
	nodes := g.Nodes()
	pl := &plan{tasks: make([]int, len(nodes)), nth: 1, threads: threads}
	for i, n := range nodes {
		if n == nil {
			return nil, fmt.Errorf("tandem: cpu: node %d of the graph is nil", i)
		}
	}
	rp, err := planRepack(nodes, ref)
	if err != nil {
		return nil, err
	}
	pl.rp = rp
	exec := pl.execNodes(nodes)
	for i, n := range exec {
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
		if err := pl.checkNodeHost(i, n); err != nil {
			return nil, fmt.Errorf("tandem: cpu: node %d: %w", i, err)
		}
		nt := threads
		if impl.tasks != nil {
			nt = max(1, min(threads, impl.tasks(n, threads)))
		}
		if nt > 1 && !ref && smallNode(n) {
			nt = 1
		}
		pl.tasks[i] = nt
		pl.nth = max(pl.nth, nt)
		switch {
		case impl.plan != nil:
			if pl.routes == nil {
				pl.routes, pl.keys = make([][]mmRoute, len(nodes)), make([]mmKey, len(nodes))
			}
			r, w := impl.plan(n, nt, ref, ks)
			pl.routes[i], pl.keys[i] = r, mmKeyOf(nodes[i])
			pl.workSize = max(pl.workSize, w)
		case impl.work != nil:
			pl.workSize = max(pl.workSize, impl.work(n, nt))
		}
	}
	if pl.workSize > 0 {
		pl.workSize += 64 * int64(threads)
	}
	pl.fused = planFusions(exec, ref, noFusion)
	if !ref && !noFusion {
		pl.fused, pl.groups = planMatVecGroups(pl, exec, threads, pl.fused)
		for _, g := range pl.groups {
			if g != nil {
				pl.workSize = max(pl.workSize, matVecGroupWork(g)+64*int64(threads))
			}
		}
	}
	pl.waits = planWaits(exec, pl.tasks, pl.fused)
	return pl, nil
}

// checkHostData makes sure a node and its sources are in host memory, and that every byte their
// shapes and strides reach lies inside that memory, so no kernel indexes outside it.
// Shapes and strides are checked first: a layout core cannot size has no host bytes either, and
// the layout is what was wrong.
// Sources in routed (bit j for Src[j]) are read in the repacked layout instead.
func checkHostData(n *core.Tensor, routed uint16) error {
	if err := checkExtent(n); err != nil {
		return err
	}
	if n.Data() == nil {
		return noHostData(n)
	}
	for j, s := range n.Src {
		if s == nil {
			continue
		}
		if routed&(1<<j) != 0 {
			if err := checkRepacked(n, s); err != nil {
				return err
			}
			continue
		}
		if err := checkExtent(s); err != nil {
			return fmt.Errorf("source of %v: %w", n, err)
		}
		if s.NBytes() > 0 && s.Data() == nil {
			return fmt.Errorf("source of %v: %w", n, noHostData(s))
		}
	}
	return nil
}

// noHostData says why t.Data() is nil: no memory, device memory, or bytes outside its buffer.
func noHostData(t *core.Tensor) error {
	if t.Buffer == nil {
		return fmt.Errorf("tensor %v has no host memory (no buffer: allocate it first)", t)
	}
	hb, ok := t.Buffer.(core.HostBuffer)
	if !ok {
		return fmt.Errorf("tensor %v has no host memory (its buffer is %s)", t, t.Buffer.Type().Name())
	}
	return fmt.Errorf("tensor %v has no host memory for its bytes %d to %d+%d: they lie outside its %d-byte buffer", t, t.Offset, t.Offset, t.NBytes(), len(hb.Bytes()))
}

// checkExtent checks t's shape and strides: no negative count or stride, and the byte extent they
// span (computed without overflow) fits in the host bytes t.Data() gives (which core sizes by
// NBytes). Tensors with a zero count reach no byte.
func checkExtent(t *core.Tensor) error {
	for i, ne := range t.Ne {
		if ne < 0 {
			return fmt.Errorf("tensor %v has a negative size %d in dimension %d", t, ne, i)
		}
		if t.Nb[i] < 0 {
			return fmt.Errorf("tensor %v has a negative stride %d in dimension %d", t, t.Nb[i], i)
		}
		if ne == 0 {
			return nil
		}
	}
	bs := t.Type.BlockSize()
	if bs <= 0 || t.Ne[0]%bs != 0 {
		return fmt.Errorf("tensor %v: %d elements per row is not a whole number of %v blocks", t, t.Ne[0], t.Type)
	}
	ext, ok := mulAdd(0, t.Ne[0]/bs, t.Nb[0])
	if bs == 1 {
		ext, ok = mulAdd(t.Type.Size(), t.Ne[0]-1, t.Nb[0])
	}
	for i := 1; ok && i < core.MaxDims; i++ {
		ext, ok = mulAdd(ext, t.Ne[i]-1, t.Nb[i])
	}
	if !ok {
		return fmt.Errorf("tensor %v with strides %v spans more bytes than an int64 holds", t, t.Nb)
	}
	if t.Buffer != nil {
		d := t.Data()
		if d == nil {
			return noHostData(t)
		}
		if ext > int64(len(d)) {
			return fmt.Errorf("tensor %v with strides %v spans %d bytes, its memory holds %d", t, t.Nb, ext, len(d))
		}
	}
	return nil
}

// mulAdd returns acc + a*b for non-negative operands and whether it did not overflow.
func mulAdd(acc, a, b int64) (int64, bool) {
	if a != 0 && b > (math.MaxInt64-acc)/a {
		return 0, false
	}
	return acc + a*b, true
}
