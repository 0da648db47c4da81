package alloc

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// fakeBT is a buffer type whose buffers have a size but no memory (for planning big graphs), or
// whose Alloc fails (failWith).
type fakeBT struct {
	name     string
	align    int64
	maxSize  int64
	failWith error
	dev      core.Device
	allocs   []int64
}

func (f *fakeBT) Name() string                   { return f.name }
func (f *fakeBT) Alignment() int64               { return f.align }
func (f *fakeBT) MaxSize() int64                 { return f.maxSize }
func (f *fakeBT) AllocSize(t *core.Tensor) int64 { return t.NBytes() }
func (f *fakeBT) IsHost() bool                   { return false }
func (f *fakeBT) Device() core.Device {
	if f.dev == nil {
		return nil // a typed nil would not compare equal to nil
	}
	return f.dev
}

func (f *fakeBT) Alloc(size int64) (core.Buffer, error) {
	if f.failWith != nil {
		return nil, f.failWith
	}
	f.allocs = append(f.allocs, size)
	return &fakeBuf{bt: f, size: size}, nil
}

type fakeBuf struct {
	bt    *fakeBT
	size  int64
	usage core.BufferUsage
	freed bool
}

func (b *fakeBuf) Type() core.BufferType       { return b.bt }
func (b *fakeBuf) Size() int64                 { return b.size }
func (b *fakeBuf) Usage() core.BufferUsage     { return b.usage }
func (b *fakeBuf) SetUsage(u core.BufferUsage) { b.usage = u }
func (b *fakeBuf) SetTensor(*core.Tensor, []byte, int64) error {
	return fmt.Errorf("fake buffer has no memory")
}
func (b *fakeBuf) GetTensor(*core.Tensor, []byte, int64) error {
	return fmt.Errorf("fake buffer has no memory")
}
func (b *fakeBuf) MemsetTensor(*core.Tensor, byte, int64, int64) error {
	return fmt.Errorf("fake buffer has no memory")
}
func (b *fakeBuf) Clear(byte) error { return nil }
func (b *fakeBuf) Free() error      { b.freed = true; return nil }

// hostBT is host memory with a chosen alignment and maximum buffer size (to exercise chunks on the
// CPU backend).
type hostBT struct {
	align, maxSize int64
}

func (h *hostBT) Name() string                   { return fmt.Sprintf("host-align%d-max%d", h.align, h.maxSize) }
func (h *hostBT) Alignment() int64               { return h.align }
func (h *hostBT) MaxSize() int64                 { return h.maxSize }
func (h *hostBT) AllocSize(t *core.Tensor) int64 { return t.NBytes() }
func (h *hostBT) IsHost() bool                   { return true }
func (h *hostBT) Device() core.Device            { return nil }
func (h *hostBT) Alloc(size int64) (core.Buffer, error) {
	return core.NewHostBuffer(h, size)
}

type fakeDevice struct {
	name        string
	free, total int64
}

func (d *fakeDevice) Name() string                            { return d.name }
func (d *fakeDevice) Description() string                     { return "fake device " + d.name }
func (d *fakeDevice) Type() core.DeviceType                   { return core.DeviceGPU }
func (d *fakeDevice) Memory() (int64, int64)                  { return d.free, d.total }
func (d *fakeDevice) SupportsOp(*core.Tensor) bool            { return false }
func (d *fakeDevice) SupportsBufferType(core.BufferType) bool { return true }
func (d *fakeDevice) OffloadOp(*core.Tensor) bool             { return false }
func (d *fakeDevice) BufferType() core.BufferType             { return nil }
func (d *fakeDevice) NewBackend() (core.Backend, error)       { return nil, fmt.Errorf("fake device") }

// ---------------------------------------------------------------------------------------------
// Random graphs.

// genOpts shape a random graph.
type genOpts struct {
	nOps        int
	compute     bool // only ops the CPU backend can run
	viewOutputs bool // may flag views that have readers as outputs (ggml would not protect their source)
}

// genGraph is a random graph built from one seed: the same seed gives the same graph, values and
// all, so it can be built twice (once for the graph allocator, once for a no-reuse allocation).
type genGraph struct {
	ctx     *core.Context // NoAlloc: the graph's tensors
	wctx    *core.Context // host memory: "weights", already allocated (external to the allocator)
	g       *core.Graph
	inputs  []*core.Tensor // leafs of ctx, to be filled after allocation
	values  [][]float32    // their values
	outputs []*core.Tensor // tensors whose final values are compared
}

var cpuDev = cpu.NewDevice()

func randShape(r *rand.Rand) [4]int64 {
	dims := []int64{1, 2, 3, 4, 8, 16, 32, 64}
	return [4]int64{dims[r.IntN(len(dims))], int64(1 + r.IntN(4)), int64(1 + r.IntN(2)), int64(1 + r.IntN(2))}
}

func randValues(r *rand.Rand, n int64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(0.5 + 1.5*r.Float64())
		if r.IntN(2) == 0 {
			v[i] = -v[i]
		}
	}
	return v
}

// divisorShape returns a shape that broadcasts into ne (each dim a divisor of ne's).
func divisorShape(r *rand.Rand, ne [4]int64) [4]int64 {
	var s [4]int64
	for i, n := range ne {
		var ds []int64
		for d := int64(1); d <= n; d++ {
			if n%d == 0 {
				ds = append(ds, d)
			}
		}
		s[i] = ds[r.IntN(len(ds))]
		if r.IntN(2) == 0 {
			s[i] = n
		}
	}
	return s
}

func genRandomGraph(seed uint64, o genOpts) *genGraph {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	gg := &genGraph{
		ctx:  core.NewContext(core.ContextParams{NoAlloc: true}),
		wctx: core.NewContext(core.ContextParams{MemSize: 16 << 20}),
	}
	ctx := gg.ctx
	var pool []*core.Tensor
	uses := map[*core.Tensor]int{}

	newLeaf := func(ne [4]int64) *core.Tensor {
		if r.IntN(4) == 0 {
			w := gg.wctx.NewTensor(core.TypeF32, ne[:]...)
			copy(w.Float32s(), randValues(r, w.NElements()))
			w.SetName(fmt.Sprintf("w%d", len(gg.wctx.Tensors())))
			return w
		}
		t := ctx.NewTensor(core.TypeF32, ne[:]...)
		t.SetName(fmt.Sprintf("in%d", len(gg.inputs)))
		if r.IntN(2) == 0 {
			t.SetInput()
		}
		gg.inputs = append(gg.inputs, t)
		gg.values = append(gg.values, randValues(r, t.NElements()))
		return t
	}
	pick := func() *core.Tensor {
		if len(pool) == 0 || r.IntN(8) == 0 {
			t := newLeaf(randShape(r))
			pool = append(pool, t)
			return t
		}
		// favour recent tensors (chains, in-place chances) but reach back sometimes (long lifetimes)
		if r.IntN(3) > 0 {
			return pool[max(0, len(pool)-1-r.IntN(min(4, len(pool))))]
		}
		return pool[r.IntN(len(pool))]
	}
	supported := func(t *core.Tensor) bool {
		return ctx.Err() == nil && t.Name != "invalid" && (!o.compute || cpuDev.SupportsOp(t))
	}
	add := func(t *core.Tensor, srcs ...*core.Tensor) {
		for _, s := range srcs {
			uses[s]++
		}
		pool = append(pool, t)
	}

	for step := 0; step < o.nOps; step++ {
		a := pick()
		switch k := r.IntN(12); {
		case k < 5: // binary with broadcasting
			var b *core.Tensor
			for _, c := range pool {
				if c != a && core.CanRepeat(c, a) && r.IntN(3) == 0 {
					b = c
					break
				}
			}
			if b == nil {
				b = newLeaf(divisorShape(r, a.Ne))
			}
			ops := []func(x, y *core.Tensor) *core.Tensor{ctx.Add, ctx.Sub, ctx.Mul, ctx.Div}
			t := ops[r.IntN(len(ops))](a, b)
			if supported(t) {
				add(t, a, b)
			}
		case k == 5: // reshape (contiguous only)
			if !a.IsContiguous() {
				continue
			}
			n := a.NElements()
			shapes := [][]int64{{n}, {a.Ne[0] * a.Ne[1], a.Ne[2] * a.Ne[3]}, {a.Ne[0], a.Ne[1] * a.Ne[2], a.Ne[3]}}
			t := ctx.Reshape(a, shapes[r.IntN(len(shapes))]...)
			if supported(t) {
				add(t, a)
			}
		case k == 6: // a view of some rows
			if a.Ne[1] < 2 || !a.IsContiguous() {
				continue
			}
			rows := 1 + r.Int64N(a.Ne[1]-1)
			first := r.Int64N(a.Ne[1] - rows + 1)
			if r.IntN(2) == 0 {
				first = 0
			}
			t := ctx.View2D(a, a.Ne[0], rows, a.Nb[1], first*a.Nb[1])
			if supported(t) {
				add(t, a)
			}
		case k == 7: // permute / transpose
			var t *core.Tensor
			if r.IntN(2) == 0 {
				t = ctx.Transpose(a)
			} else {
				t = ctx.Permute(a, 0, 2, 1, 3)
			}
			if supported(t) {
				add(t, a)
			}
		case k == 8: // mul_mat with a matching operand
			if a.Nb[0] != 4 || a.IsTransposed() {
				continue
			}
			w := newLeaf([4]int64{a.Ne[0], int64(1 + r.IntN(8)), 1, 1})
			if a.Ne[2] > 1 && r.IntN(2) == 0 {
				w = newLeaf([4]int64{a.Ne[0], int64(1 + r.IntN(8)), a.Ne[2], 1})
			}
			t := ctx.MulMat(w, a)
			if supported(t) {
				add(t, w, a)
			}
		default: // unary-ish ops, when their kernels exist
			cands := []func(x *core.Tensor) *core.Tensor{
				func(x *core.Tensor) *core.Tensor { return ctx.Scale(x, 0.5) },
				ctx.Sqr, ctx.Silu, ctx.Neg, ctx.Cont, ctx.Tanh,
				func(x *core.Tensor) *core.Tensor { return ctx.RMSNorm(x, 1e-5) },
				func(x *core.Tensor) *core.Tensor { return ctx.SoftMax(x) },
			}
			if !a.IsContiguous() {
				t := ctx.Cont(a)
				if supported(t) {
					add(t, a)
				}
				continue
			}
			t := cands[r.IntN(len(cands))](a)
			if ctx.Err() != nil {
				// a constructor refused (e.g. soft_max of a permuted tensor): start again
				return genRandomGraph(seed+0x5851f42d4c957f2d, o)
			}
			if supported(t) {
				add(t, a)
			}
		}
		if ctx.Err() != nil {
			return genRandomGraph(seed+0x5851f42d4c957f2d, o)
		}
	}

	// outputs: every op result nobody uses, plus a few flagged at random
	gg.g = core.NewGraph(4 * (o.nOps + 16))
	for _, t := range pool {
		if t.Op == core.OpNone {
			continue
		}
		if uses[t] == 0 || r.IntN(10) == 0 {
			if (uses[t] > 0 || r.IntN(4) == 0) && (t.ViewSrc == nil || o.viewOutputs || uses[t] == 0) {
				t.SetOutput()
			}
			gg.outputs = append(gg.outputs, t)
			gg.g.BuildForwardExpand(t)
		}
	}
	if len(gg.outputs) == 0 {
		t := ctx.Scale(pool[len(pool)-1], 1)
		if o.compute && !cpuDev.SupportsOp(t) {
			t = ctx.Add(pool[len(pool)-1], pool[len(pool)-1])
		}
		gg.outputs = append(gg.outputs, t)
		gg.g.BuildForwardExpand(t)
	}
	return gg
}

// setInputs writes the leafs' values (after allocation).
func (gg *genGraph) setInputs() error {
	for i, t := range gg.inputs {
		if t.Buffer == nil {
			continue // not part of the graph
		}
		if err := core.SetFloat32s(t, gg.values[i]); err != nil {
			return err
		}
	}
	return nil
}

// ---------------------------------------------------------------------------------------------
// Transformer layers (metadata only: weights and caches live in fake buffers).

type tfParams struct {
	nEmbd, nHead, nFF, nTokens, nKV, nLayers int64
}

var llama7B = tfParams{nEmbd: 4096, nHead: 32, nFF: 11008, nTokens: 512, nKV: 512, nLayers: 1}

// buildTransformer builds a llama-style decoder (rms_norm, q/k/v projections, rope, KV cache store,
// kq, scale, masked soft_max, kqv, merge heads, output projection, residual, SwiGLU FFN, residual)
// with nLayers layers; weights and the KV cache are allocated in wbt (external to the graph
// allocator).
func buildTransformer(p tfParams, wbt core.BufferType) (*core.Graph, error) {
	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	headDim := p.nEmbd / p.nHead
	f32 := core.TypeF32
	type layerW struct{ attnNorm, wq, wk, wv, wo, ffnNorm, wGate, wUp, wDown, kc, vc *core.Tensor }
	ws := make([]layerW, p.nLayers)
	for l := range ws {
		ws[l] = layerW{
			attnNorm: wctx.NewTensor1D(f32, p.nEmbd),
			wq:       wctx.NewTensor2D(f32, p.nEmbd, p.nEmbd),
			wk:       wctx.NewTensor2D(f32, p.nEmbd, p.nEmbd),
			wv:       wctx.NewTensor2D(f32, p.nEmbd, p.nEmbd),
			wo:       wctx.NewTensor2D(f32, p.nEmbd, p.nEmbd),
			ffnNorm:  wctx.NewTensor1D(f32, p.nEmbd),
			wGate:    wctx.NewTensor2D(f32, p.nEmbd, p.nFF),
			wUp:      wctx.NewTensor2D(f32, p.nEmbd, p.nFF),
			wDown:    wctx.NewTensor2D(f32, p.nFF, p.nEmbd),
			kc:       wctx.NewTensor1D(f32, p.nEmbd*p.nKV),
			vc:       wctx.NewTensor1D(f32, p.nEmbd*p.nKV),
		}
	}
	outNorm := wctx.NewTensor1D(f32, p.nEmbd)
	if _, err := AllocCtxTensorsFromBufferType(wctx, wbt); err != nil {
		return nil, err
	}

	g := core.NewGraph(int(p.nLayers*64 + 64))
	inpL := ctx.NewTensor2D(f32, p.nEmbd, p.nTokens).SetName("inp_embd").SetInput()
	pos := ctx.NewTensor1D(core.TypeI32, p.nTokens).SetName("inp_pos").SetInput()
	mask := ctx.NewTensor2D(f32, p.nKV, p.nTokens).SetName("kq_mask").SetInput()
	for l := range ws {
		w := ws[l]
		cur := ctx.Mul(ctx.RMSNorm(inpL, 1e-5), w.attnNorm)
		q := ctx.MulMat(w.wq, cur)
		k := ctx.MulMat(w.wk, cur)
		v := ctx.MulMat(w.wv, cur)
		q = ctx.Rope(ctx.Reshape3D(q, headDim, p.nHead, p.nTokens), pos, int(headDim), core.RopeNormal)
		k = ctx.Rope(ctx.Reshape3D(k, headDim, p.nHead, p.nTokens), pos, int(headDim), core.RopeNormal)
		// store k and v in the cache (k row-major per token, v transposed), as llama.cpp does
		kview := ctx.View1D(w.kc, p.nEmbd*p.nTokens, 0)
		g.BuildForwardExpand(ctx.Cpy(ctx.Reshape1D(k, p.nEmbd*p.nTokens), kview))
		vview := ctx.View2D(w.vc, p.nTokens, p.nEmbd, p.nKV*4, 0)
		g.BuildForwardExpand(ctx.Cpy(ctx.Transpose(v), vview))

		K := ctx.View3D(w.kc, headDim, p.nKV, p.nHead, p.nEmbd*4, headDim*4, 0)
		V := ctx.View3D(w.vc, p.nKV, headDim, p.nHead, p.nKV*4, p.nKV*headDim*4, 0)
		qp := ctx.Permute(q, 0, 2, 1, 3)
		kq := ctx.MulMat(K, qp)
		kq = ctx.Scale(kq, float32(1/math.Sqrt(float64(headDim))))
		kq = ctx.SoftMaxExt(kq, mask, 1, 0)
		kqv := ctx.MulMat(V, kq)
		merged := ctx.Permute(kqv, 0, 2, 1, 3)
		cur = ctx.ContShape(merged, p.nEmbd, p.nTokens)
		cur = ctx.MulMat(w.wo, cur)
		ffnInp := ctx.Add(cur, inpL)
		cur = ctx.Mul(ctx.RMSNorm(ffnInp, 1e-5), w.ffnNorm)
		gate := ctx.Silu(ctx.MulMat(w.wGate, cur))
		up := ctx.MulMat(w.wUp, cur)
		cur = ctx.MulMat(w.wDown, ctx.Mul(gate, up))
		inpL = ctx.Add(cur, ffnInp)
	}
	out := ctx.Mul(ctx.RMSNorm(inpL, 1e-5), outNorm).SetName("result_norm").SetOutput()
	g.BuildForwardExpand(out)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := wctx.Err(); err != nil {
		return nil, err
	}
	return g, g.Err()
}

// ---------------------------------------------------------------------------------------------
// Safety checker: independent of the allocator's internals.

// checkPlacement verifies, for a graph whose tensors have been placed: every tensor in one of the
// allocator's buffers lies inside it and is aligned; views point into their source; and no two
// tensors whose lifetimes overlap share bytes, except a node computed in place over the parent it
// reads with the same layout at the same address. Lifetimes: leafs and inputs from the start,
// nodes from their step; until their last read (through a view or not), or the end for outputs,
// tensors nobody reads (and whose views nobody reads), and inputs (tensors no op computes, and
// tensors flagged input or param).
func checkPlacement(g *core.Graph, ga *GraphAllocator) error {
	nodes := g.Nodes()
	step := map[*core.Tensor]int{}
	for i, n := range nodes {
		step[n] = i + 1
	}
	ours := map[core.Buffer]bool{}
	for id := 0; id < ga.NumBuffers(); id++ {
		for _, b := range ga.Buffers(id) {
			ours[b] = true
		}
	}
	const end = math.MaxInt
	root := func(t *core.Tensor) *core.Tensor { return t.DataSource() }

	var all []*core.Tensor
	seen := map[*core.Tensor]bool{}
	addT := func(t *core.Tensor) {
		if t != nil && !seen[t] {
			seen[t] = true
			all = append(all, t)
		}
	}
	for _, l := range g.Leafs() {
		addT(l)
	}
	for _, n := range nodes {
		for _, s := range n.Src {
			addT(s)
		}
		addT(n)
	}

	last := map[*core.Tensor]int{}
	readers := map[*core.Tensor]int{} // number of readers of a tensor itself
	for _, n := range nodes {
		for _, s := range n.Src {
			if s == nil {
				continue
			}
			readers[s]++
			if n.Op.IsView() {
				continue // reshapes and permutes read nothing
			}
			rt := root(s)
			last[rt] = max(last[rt], step[n])
		}
		if n.ViewSrc != nil && !n.Op.IsView() && n.Op != core.OpNone {
			last[n.ViewSrc] = max(last[n.ViewSrc], step[n]) // CPY / SET_ROWS write their view
		}
	}
	for _, t := range all {
		rt := root(t)
		if t.Flags&core.FlagOutput != 0 || (readers[t] == 0 && t.Op != core.OpNone) || (t.ViewSrc == nil && t.Op == core.OpNone) || t.Flags&(core.FlagInput|core.FlagParam) != 0 {
			last[rt] = end
		}
	}

	type live struct {
		t          *core.Tensor
		birth, die int
		off, size  int64
	}
	var placed []live
	for _, t := range all {
		if t.Buffer == nil || !ours[t.Buffer] {
			continue
		}
		if t.ViewSrc != nil {
			rt := t.ViewSrc
			if t.Buffer != rt.Buffer || t.Offset != rt.Offset+t.ViewOffs {
				return fmt.Errorf("view %v at %v+%d does not point into its source %v at %v+%d (+%d)",
					t, t.Buffer, t.Offset, rt, rt.Buffer, rt.Offset, t.ViewOffs)
			}
			if t.ViewOffs+t.NBytes() > rt.NBytes() {
				return fmt.Errorf("view %v reaches past its source %v", t, rt)
			}
			continue
		}
		bt := t.Buffer.Type()
		size := bt.AllocSize(t)
		if t.Offset%bt.Alignment() != 0 {
			return fmt.Errorf("tensor %v at offset %d is not %d-aligned", t, t.Offset, bt.Alignment())
		}
		if t.Offset < 0 || t.Offset+size > t.Buffer.Size() {
			return fmt.Errorf("tensor %v at [%d,%d) lies outside its %d-byte buffer", t, t.Offset, t.Offset+size, t.Buffer.Size())
		}
		birth := step[t]
		if t.Op == core.OpNone || t.Flags&core.FlagInput != 0 {
			birth = 0
		}
		die, ok := last[t]
		if !ok {
			die = birth
		}
		placed = append(placed, live{t, birth, die, t.Offset, size})
	}
	inplaceOK := func(x, n *live) bool {
		// n computed in place over x, which it reads for the last time
		if x.die != n.birth || !n.t.Op.CanInplace() || x.t.Flags&core.FlagOutput != 0 {
			return false
		}
		var via []*core.Tensor
		for _, s := range n.t.Src {
			if s != nil && root(s) == x.t {
				via = append(via, s)
			}
		}
		if len(via) != 1 {
			return false
		}
		s := via[0]
		return core.SameLayout(s, n.t) && s.Buffer == n.t.Buffer && s.Offset == n.t.Offset
	}
	for i := range placed {
		for j := i + 1; j < len(placed); j++ {
			x, y := &placed[i], &placed[j]
			if x.t.Buffer != y.t.Buffer || x.off >= y.off+y.size || y.off >= x.off+x.size || x.size == 0 || y.size == 0 {
				continue
			}
			if x.die < y.birth || y.die < x.birth {
				continue
			}
			if inplaceOK(x, y) || inplaceOK(y, x) {
				continue
			}
			return fmt.Errorf("%v [%d,%d) live %d..%d overlaps %v [%d,%d) live %d..%d",
				x.t, x.off, x.off+x.size, x.birth, x.die, y.t, y.off, y.off+y.size, y.birth, y.die)
		}
	}
	return nil
}
