package gpuops

import "github.com/tandem-ml/tandem/core"

// FLASH_ATTN_EXT split over the keys (flash_attn_split.comp, "flash decoding"). One workgroup per
// query row leaves most of a GPU idle in a decode step (32 rows of TinyLlama on 132 SMs, each
// walking every key): when a node has few rows and many keys, pass 1 runs (query rows / G) x
// nsplit workgroups, each over a contiguous chunk of the keys for the G query heads that share a
// k and a v head, and writes its partial softmax state (max, sum, unnormalised accumulator) to the
// scratch buffer; pass 2 combines a row's partials into dst. The split pays its way where the
// grid is small: the rule below.

const (
	faSplitMaxRows  = 512  // query rows (dst rows) below which a node may split its keys
	faSplitMinKeys  = 256  // keys from which it does
	faSplitTile     = 64   // keys per tile of pass 1 (its workgroup size); chunks are multiples
	faSplitTarget   = 1024 // pass 1 workgroups aimed for (a large GPU's SMs a few times over)
	faSplitMaxG     = 8    // query heads per workgroup (MAX_G)
	faSplitAcc      = 8    // G*ceil(dv/faSplitTile) bound (ACC_N: accumulator slots per thread)
	faSplitMaxGK    = 2048 // G*dk bound (QS_N: the query rows in shared memory)
	faSplitPushSize = 32 * 4
	faCombinePush   = 8 * 4
)

// UseFlashAttnSplit turns the key split of FLASH_ATTN_EXT on (the default: the rule decides) or
// off (one workgroup per query row always), for tests and benchmarks.
func (e *Encoder) UseFlashAttnSplit(on bool) { e.faOneRow, e.gen = !on, e.gen+1 }

// FABatches are the load batches of the key split's shader (flash_attn_split.comp's
// specialization constants): Values keys' value elements and Dims key dimensions in pass 1, the
// partials of Splits splits in pass 2. A zero field takes the device's choice (faBatches).
type FABatches struct{ Values, Dims, Splits uint32 }

// UseFlashAttnBatches sets the key split's load batches (zero fields: the device's), for tests
// that check every batch gives the same result.
func (e *Encoder) UseFlashAttnBatches(b FABatches) { e.faBatch, e.gen = b, e.gen+1 }

// faBatches returns the load batches for node n: on a GPU each batch of loads is one memory
// latency in a pass of few workgroups, so they are wide (pass 1: the value elements of 32 keys and
// 64 key dimensions when K and V are float types, 8 and 16 for the block types, whose decoders
// the batches unroll; pass 2: 8 splits); the software devices' kernels (KernelsEnv) take 8, 16
// and 1: lavapipe gains nothing from wider ones (the FLASH_ATTN_EXT op tests 14.0 s either way
// once compiled) and compiles them longer (LLVM unrolls every batch: the first run after the
// shaders change took 338 s with 32-key value batches in every variant, against ~24 s).
func (e *Encoder) faBatches(n *core.Tensor) FABatches {
	b := FABatches{Values: 8, Dims: 16, Splits: 1}
	if !e.soft {
		b.Splits = 8
		if n.Src[2].Type.IsFloat() {
			b.Values = 32
		}
		if n.Src[1].Type.IsFloat() {
			b.Dims = 64
		}
	}
	if e.faBatch.Values > 0 {
		b.Values = e.faBatch.Values
	}
	if e.faBatch.Dims > 0 {
		b.Dims = e.faBatch.Dims
	}
	if e.faBatch.Splits > 0 {
		b.Splits = e.faBatch.Splits
	}
	return b
}

// faSplit is how a FLASH_ATTN_EXT node splits its keys.
type faSplit struct {
	g, nsplit, chunk int64  // query heads per workgroup, splits, keys per split
	groups           int64  // pass 1 work items per split: nq * ne3 * nh / g
	scratch          uint64 // bytes of partials
}

// faSplitPlan returns n's split, ok false when n runs in one pass. The split is taken for fewer
// than faSplitMaxRows query rows over at least faSplitMinKeys keys. g is the largest number of
// query heads up to faSplitMaxG that share their k head and their v head (a divisor of both
// ratios) and fits the shader's accumulator and query buffer. nsplit aims at faSplitTarget
// workgroups in all, with chunks of at least one tile: chunk = ceil(nkv / nsplit) rounded up to
// whole tiles, nsplit then recomputed from the chunk (every split has a key).
func (e *Encoder) faSplitPlan(n *core.Tensor) (faSplit, bool) {
	return faSplitPlanOn(e.dev, n, e.faOneRow)
}

// faSplitPlanOn is faSplitPlan on device d, with oneRow as UseFlashAttnSplit(false) leaves it.
func faSplitPlanOn(d *Device, n *core.Tensor, oneRow bool) (faSplit, bool) {
	q, k, v := n.Src[0], n.Src[1], n.Src[2]
	dk, dv, nq, nkv, nh, ne3 := k.Ne[0], v.Ne[0], q.Ne[1], k.Ne[1], q.Ne[2], q.Ne[3]
	rows := nq * nh * ne3
	// A software device (llvmpipe) ends a loop after 65,535 iterations counted over an
	// invocation: the one-row shader's key dot runs dk iterations a tile, every tile of every
	// key, which 16384 keys of 256 cross. There the keys are split whatever the rows, in chunks
	// whose dots stay under softLoopLimit.
	soft := faOneRowPastLoopLimit(d, dk, nkv)
	if !soft && (oneRow || rows >= faSplitMaxRows || nkv < faSplitMinKeys) {
		return faSplit{}, false
	}
	rk2, rv2 := nh/k.Ne[2], nh/v.Ne[2]
	c := gcd(rk2, rv2)
	var g int64 = 1
	for d := int64(faSplitMaxG); d > 1; d-- {
		if c%d == 0 && d*((dv+faSplitTile-1)/faSplitTile) <= faSplitAcc && d*dk <= faSplitMaxGK {
			g = d
			break
		}
	}
	groups := rows / g
	nsplit := min((nkv+faSplitTile-1)/faSplitTile, max(2, (faSplitTarget+groups-1)/groups))
	if soft {
		maxTiles := max(1, softLoopLimit/(g*dk)) // the split shader's dot loop runs G*dk a tile
		nsplit = max(nsplit, (nkv+maxTiles*faSplitTile-1)/(maxTiles*faSplitTile))
	}
	chunk := (nkv + nsplit - 1) / nsplit
	chunk = (chunk + faSplitTile - 1) / faSplitTile * faSplitTile
	nsplit = (nkv + chunk - 1) / chunk
	s := faSplit{g: g, nsplit: nsplit, chunk: chunk, groups: groups, scratch: uint64(rows*nsplit*(dv+2)) * 4}
	// The split is there to spread the keys over more workgroups than the rows alone give: where
	// the device's grid cannot hold one workgroup per work item, the one-pass shader serves as well
	// (and a software driver's per-invocation loop limit is not crossed by looping over items).
	if nsplit < 2 || s.scratch > uint64(d.MaxStorageBufferRange) || groups*nsplit >= maxShaderIndex ||
		groups*nsplit > int64(d.MaxComputeWorkGroupCount[0]) {
		return faSplit{}, false
	}
	return s, true
}

// faOneRowPastLoopLimit reports whether d is a software device on which the one-row shader's
// key dot over nkv keys of dk would run past softLoopLimit iterations an invocation.
func faOneRowPastLoopLimit(d *Device, dk, nkv int64) bool {
	return d.Software && dk*((nkv+faSplitTile-1)/faSplitTile) > softLoopLimit
}

// gcd is the greatest common divisor of two positive numbers.
func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// scratchFlashAttn is the scratch a FLASH_ATTN_EXT node needs: its partials when it splits.
func scratchFlashAttn(e *Encoder, n *core.Tensor) uint64 {
	if s, ok := e.faSplitPlan(n); ok {
		return s.scratch
	}
	return 0
}

// encodeFlashAttnSplit records the two passes of split s. Pass 1 writes the scratch (a barrier
// first if an earlier node still reads or writes it), pass 2 reads it (a barrier between them).
func (e *Encoder) encodeFlashAttnSplit(n *core.Tensor, s faSplit, sp operand) error {
	q, k, v, m, sinks := n.Src[0], n.Src[1], n.Src[2], n.Src[3], n.Src[4]
	name, ku, vu, mu := faVariant(e.dev, "flash_attn_split", n)
	fb := e.faBatches(n)
	p1, err := e.pipeline(name, 5, faSplitPushSize, 64, fb.Values, fb.Dims)
	if err != nil {
		return err
	}
	p2, err := e.pipeline("flash_attn_split_combine", 3, faCombinePush, 64, fb.Splits)
	if err != nil {
		return err
	}
	oq, err := e.bindTensor(q, 4)
	if err != nil {
		return err
	}
	ok, err := e.bindTensor(k, ku)
	if err != nil {
		return err
	}
	ov, err := e.bindTensor(v, vu)
	if err != nil {
		return err
	}
	srcs := []operand{oq, ok, ov}
	om, os := oq, oq // absent: bind q again (never read)
	if m != nil {
		if om, err = e.bindTensor(m, mu); err != nil {
			return err
		}
		srcs = append(srcs, om)
	}
	od, err := e.bindTensor(n, 4)
	if err != nil {
		return err
	}
	if err := e.sync(sp, srcs...); err != nil {
		return err
	}

	work := s.groups * s.nsplit
	pc := e.pushFlashAttnShape(n, ku, vu, mu)
	pc.U32(oq.offs, ok.offs, ov.offs, om.offs)
	fp := core.FlashAttnParamsOf(n)
	pc.F32(faScale(fp), fp.LogitSoftcap, fp.MaxBias)
	pc.U32(b2u(m != nil)|u32(s.g)<<8, u32(s.nsplit), u32(s.chunk), u32(work))
	if err := e.dispatch(p1, [3]uint32{e.groups(work, 1, 0), 1, 1}, pc.Bytes(), oq.bind, ok.bind, ov.bind, om.bind, sp.bind); err != nil {
		return err
	}

	srcs = append(srcs[:0], sp)
	if sinks != nil {
		if os, err = e.bindTensor(sinks, 4); err != nil {
			return err
		}
		srcs = append(srcs, os)
	}
	if err := e.sync(od, srcs...); err != nil {
		return err
	}
	rows := n.NRows()
	pc = e.push.Reset()
	pc.U32(u32(v.Ne[0]), u32(q.Ne[2]), u32(rows), u32(s.nsplit))
	pc.U32(0, os.offs, od.offs, b2u(sinks != nil)<<1)
	return e.dispatch(p2, [3]uint32{e.groups(rows, 1, 0), 1, 1}, pc.Bytes(), sp.bind, os.bind, od.bind)
}
