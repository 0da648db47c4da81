package rpc

import (
	"fmt"
	"math"
	"slices"

	"github.com/tandem-ml/tandem/core"
)

// maxGraphDepth bounds source chains while a graph is rebuilt.
const maxGraphDepth = 1 << 16

// graphBuilder rebuilds a GRAPH_COMPUTE payload into tandem tensors. Every op is rebuilt with
// tandem's own op constructors from its sources and parameters, so shapes, types and layouts are
// checked exactly as for a local graph; the result must then match the wire tensor field by field.
type graphBuilder struct {
	c      *conn
	ctx    *core.Context
	wire   map[uint64]*wireTensor
	built  map[uint64]*core.Tensor
	state  map[uint64]uint8 // 1 while its sources are being built, 2 when done
	leafs  []*core.Tensor
	used   map[*sbuf]struct{}
	closed []*sbuf
}

func (c *conn) graphCompute(p []byte) error {
	gp, err := decodeGraph(p)
	if err != nil {
		return err
	}
	d, be, err := c.device(p)
	if err != nil {
		return err
	}
	delete(c.last, uint32(d)) // the new graph replaces the stored one (a rejected one closes the connection)
	gs, bufs, err := c.buildGraph(gp, be)
	if err != nil {
		return err
	}
	if err := c.run(d, be, gs, bufs); err != nil {
		return fmt.Errorf("compute on %s: %w", be.Name(), err)
	}
	c.last[uint32(d)] = &storedGraph{gs: gs, bufs: bufs}
	return nil
}

// graphRecompute runs the graph stored for a device by the last GRAPH_COMPUTE of this connection
// again, as ggml's server does, after checking that a graph was stored and that none of its
// buffers was freed since (ggml's server does not check, and computes on freed memory).
func (c *conn) graphRecompute(p []byte) error {
	d, be, err := c.device(p)
	if err != nil {
		return err
	}
	sg := c.last[uint32(d)]
	if sg == nil {
		return fmt.Errorf("GRAPH_RECOMPUTE: device %d has no graph stored on this connection", d)
	}
	for _, b := range sg.bufs {
		if c.bufs[b.handle] != b {
			return fmt.Errorf("GRAPH_RECOMPUTE: the graph stored for device %d uses buffer %#x, freed since", d, b.handle)
		}
	}
	if err := c.run(d, be, sg.gs, sg.bufs); err != nil {
		return fmt.Errorf("recompute on %s: %w", be.Name(), err)
	}
	return nil
}

// run computes gs in order on device d, holding the locks of d and of every device whose buffers
// they use; it stops at the first error.
func (c *conn) run(d int, be core.Backend, gs []*core.Graph, bufs []*sbuf) error {
	devs := make([]int, 0, 1+len(bufs))
	devs = append(devs, d)
	for _, b := range bufs {
		devs = append(devs, b.dev)
	}
	defer c.s.lockDevices(devs...)()
	for _, g := range gs {
		if err := be.GraphCompute(g); err != nil {
			return err
		}
	}
	return nil
}

// buildGraph rebuilds gp into the graphs that run its node list, to be computed in order.
//
// ggml computes a node list entry by entry, so a node listed again is computed again (ggml's
// test-backend-ops in perf mode lists its op many times in one graph), and for an in-place or
// accumulating op each run changes the result. A core.Graph holds a tensor once, so the list is
// cut into segments, a new one wherever the next node is already in the current one; computed one
// after the other they run the list as ggml does. A list without repeats is one graph. A segment
// equal to the one before it is the same graph (a backend's plan for it is reused), and the stored
// graph for GRAPH_RECOMPUTE is the whole sequence.
func (c *conn) buildGraph(gp *graphPayload, be core.Backend) ([]*core.Graph, []*sbuf, error) {
	b := &graphBuilder{c: c, ctx: core.NewContext(core.ContextParams{NoAlloc: true}),
		wire: make(map[uint64]*wireTensor, len(gp.Tensors)), built: map[uint64]*core.Tensor{},
		state: map[uint64]uint8{}, used: map[*sbuf]struct{}{}}
	for i := range gp.Tensors {
		w := &gp.Tensors[i]
		if w.ID == 0 {
			return nil, nil, fmt.Errorf("graph: tensor %d of the list has id 0", i)
		}
		if _, dup := b.wire[w.ID]; !dup {
			b.wire[w.ID] = w // the first entry wins, as in ggml
		}
	}
	var nodes []*core.Tensor
	var ends []int                   // where each segment ends in nodes
	inSeg := map[*core.Tensor]bool{} // the nodes of the current segment
	for i, id := range gp.Nodes {
		if id == 0 {
			return nil, nil, fmt.Errorf("graph: node %d has id 0", i)
		}
		t, err := b.get(id, 0)
		if err != nil {
			return nil, nil, err
		}
		if b.wire[id].Flags&flagCompute == 0 {
			continue // ggml's CPU backend skips nodes without the COMPUTE flag
		}
		if t.Op != core.OpNone && !t.Op.IsView() && !be.Device().SupportsOp(t) {
			return nil, nil, fmt.Errorf("graph: %s does not support node %v", be.Name(), t)
		}
		if inSeg[t] {
			ends = append(ends, len(nodes))
			clear(inSeg)
		}
		inSeg[t] = true
		nodes = append(nodes, t)
	}
	ends = append(ends, len(nodes))
	gs := make([]*core.Graph, 0, len(ends))
	start := 0
	for _, end := range ends {
		seg := nodes[start:end:end]
		if n := len(gs); n > 0 && slices.Equal(gs[n-1].Nodes(), seg) {
			gs = append(gs, gs[n-1])
		} else {
			gs = append(gs, core.NewGraphFromLists(seg, b.leafs))
		}
		start = end
	}
	bufs := make([]*sbuf, 0, len(b.used))
	for sb := range b.used {
		bufs = append(bufs, sb)
	}
	return gs, bufs, nil
}

func (b *graphBuilder) get(id uint64, depth int) (*core.Tensor, error) {
	switch b.state[id] {
	case 2:
		return b.built[id], nil
	case 1:
		return nil, fmt.Errorf("graph: tensor %#x depends on itself (cycle)", id)
	}
	if depth > maxGraphDepth {
		return nil, fmt.Errorf("graph: source chain deeper than %d", maxGraphDepth)
	}
	w := b.wire[id]
	if w == nil {
		return nil, fmt.Errorf("graph: tensor %#x is not in the tensor list", id)
	}
	b.state[id] = 1
	t, err := b.make(w, depth)
	if err != nil {
		return nil, err
	}
	if err := b.place(t, w); err != nil {
		return nil, err
	}
	t.Name = w.name()
	t.Flags = core.Flags(w.Flags) & (core.FlagInput | core.FlagOutput | core.FlagParam | core.FlagLoss)
	b.built[id], b.state[id] = t, 2
	if t.Op == core.OpNone {
		b.leafs = append(b.leafs, t)
	}
	return t, nil
}

func (b *graphBuilder) src(w *wireTensor, i, depth int) (*core.Tensor, error) {
	if w.Src[i] == 0 {
		return nil, nil
	}
	return b.get(w.Src[i], depth+1)
}

// make builds the tensor for w (not yet placed in memory).
func (b *graphBuilder) make(w *wireTensor, depth int) (*core.Tensor, error) {
	typ := core.Type(w.Type)
	if w.Type > math.MaxInt32 || !typ.Valid() || typ.BlockSize() <= 0 {
		return nil, fmt.Errorf("graph: tensor %q: unknown type %d", w.name(), w.Type)
	}
	if int64(w.Ne[0])%typ.BlockSize() != 0 {
		return nil, fmt.Errorf("graph: tensor %q: %d elements per row is not a whole number of %v blocks", w.name(), w.Ne[0], typ)
	}
	var ne [4]int64
	for i := range ne {
		ne[i] = int64(w.Ne[i])
	}
	if w.Op == ggmlOpNone {
		if uint64(w.Nb[0]) != uint64(typ.Size()) {
			return nil, fmt.Errorf("graph: leaf %q: nb[0] = %d, want the %v element size %d", w.name(), w.Nb[0], typ, typ.Size())
		}
		t := b.ctx.NewTensor(typ, ne[:]...)
		if err := b.ctx.Err(); err != nil {
			return nil, fmt.Errorf("graph: leaf %q: %w", w.name(), err)
		}
		for i := range t.Nb {
			t.Nb[i] = int64(w.Nb[i])
		}
		for i, s := range w.Src {
			if s != 0 {
				return nil, fmt.Errorf("graph: leaf %q has source %d", w.name(), i)
			}
		}
		if w.ViewSrc != 0 {
			v, err := b.get(w.ViewSrc, depth+1)
			if err != nil {
				return nil, err
			}
			if w.ViewOffs > math.MaxInt64/2 {
				return nil, fmt.Errorf("graph: leaf %q: view offset %d too large", w.name(), w.ViewOffs)
			}
			t.ViewSrc, t.ViewOffs = v, int64(w.ViewOffs)
			if v.ViewSrc != nil {
				t.ViewSrc, t.ViewOffs = v.ViewSrc, v.ViewOffs+int64(w.ViewOffs)
			}
		}
		return t, nil
	}
	op, ok := fromGGML[w.Op]
	if !ok {
		if w.Op >= ggmlOpCount {
			return nil, fmt.Errorf("graph: tensor %q: op id %d is out of range", w.name(), w.Op)
		}
		return nil, fmt.Errorf("graph: tensor %q: ggml op %d is not supported by tandem", w.name(), w.Op)
	}
	cast := op == core.OpCpy && w.Src[1] == w.ID
	var s [maxSrc]*core.Tensor
	for i := range s {
		if cast && i == 1 {
			continue
		}
		t, err := b.src(w, i, depth)
		if err != nil {
			return nil, err
		}
		s[i] = t
	}
	t, err := b.construct(op, w, typ, ne, s, cast)
	if err != nil {
		return nil, err
	}
	// The rebuilt tensor must be what the client described.
	if t.Type != typ || t.Ne != ne {
		return nil, fmt.Errorf("graph: %v node %q: client says %v %v, the op gives %v %v", op, w.name(), typ, ne, t.Type, t.Ne)
	}
	// Strides address nothing in a dimension of size 1 or in an empty tensor (ggml's clients
	// send them unnormalized there): only the others must agree.
	for i := range t.Nb {
		if t.Ne[i] > 1 && t.NElements() > 0 && t.Nb[i] != int64(w.Nb[i]) {
			return nil, fmt.Errorf("graph: %v node %q: strides %v, the op gives %v", op, w.name(), w.Nb, t.Nb)
		}
	}
	if wp := wireParams(t); wp != w.Params {
		return nil, fmt.Errorf("graph: %v node %q: op_params %v not supported (want %v)", op, w.name(), w.Params, wp)
	}
	ws := wireSources(t)
	for i := range ws {
		want := (*core.Tensor)(nil)
		if w.Src[i] != 0 {
			want = b.built[w.Src[i]]
			if cast && i == 1 {
				want = t
			}
		}
		if ws[i] != want {
			return nil, fmt.Errorf("graph: %v node %q: source %d does not match the op's", op, w.name(), i)
		}
	}
	switch {
	case t.ViewSrc != nil:
		if w.ViewSrc == 0 {
			return nil, fmt.Errorf("graph: %v node %q: the op makes a view but no view source is given", op, w.name())
		}
		v, err := b.get(w.ViewSrc, depth+1)
		if err != nil {
			return nil, err
		}
		if v != t.ViewSrc && v.ViewSrc != t.ViewSrc {
			return nil, fmt.Errorf("graph: %v node %q: view source does not match the op's", op, w.name())
		}
	case w.ViewSrc != 0:
		// An in-place variant: the node writes into its view source's memory.
		v, err := b.get(w.ViewSrc, depth+1)
		if err != nil {
			return nil, err
		}
		if w.ViewOffs > math.MaxInt64/2 {
			return nil, fmt.Errorf("graph: %q: view offset %d too large", w.name(), w.ViewOffs)
		}
		t.ViewSrc, t.ViewOffs = v, int64(w.ViewOffs)
		if v.ViewSrc != nil {
			t.ViewSrc, t.ViewOffs = v.ViewSrc, v.ViewOffs+int64(w.ViewOffs)
		}
	}
	return t, nil
}

// place gives t its memory from w's buffer and data address, checked against the buffer; a view
// must sit exactly at its source's memory plus its offset.
func (b *graphBuilder) place(t *core.Tensor, w *wireTensor) error {
	if w.Buffer == 0 {
		return fmt.Errorf("graph: tensor %q has no buffer", w.name())
	}
	_, sb, err := b.c.tensor(w)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	if sb.buf == nil {
		return fmt.Errorf("graph: tensor %q lies in an empty buffer", w.name())
	}
	// Elements may not overlap (no zero or overlapping strides): the work an op does is then
	// bounded by the memory it reads, and kernels never walk more elements than bytes allow.
	if n, _ := extent(t.Type, w.Ne, w.Nb); t.NElements() > 0 && t.Type.RowSize(t.Ne[0]) > int64(n)/max(t.NRows(), 1) {
		return fmt.Errorf("graph: tensor %q: ne %v with strides %v overlaps itself", w.name(), w.Ne, w.Nb)
	}
	t.Buffer, t.Offset = sb.buf, int64(w.Data-sb.base)
	b.used[sb] = struct{}{}
	if v := t.ViewSrc; v != nil {
		if v.Buffer != t.Buffer || v.Offset+t.ViewOffs != t.Offset {
			return fmt.Errorf("graph: view %q: data is not its source's data + %d", w.name(), t.ViewOffs)
		}
	}
	return nil
}

func f32(p int32) float32 { return math.Float32frombits(uint32(p)) }

// construct rebuilds one op with tandem's constructors (the wire's source order already undone).
func (b *graphBuilder) construct(op core.Op, w *wireTensor, typ core.Type, ne [4]int64, s [maxSrc]*core.Tensor, cast bool) (*core.Tensor, error) {
	c, p := b.ctx, w.Params
	if s[0] == nil && op != core.OpArange {
		return nil, fmt.Errorf("graph: %v node %q has no source 0", op, w.name())
	}
	var t *core.Tensor
	switch op {
	case core.OpDup:
		t = c.Dup(s[0])
	case core.OpAdd:
		t = c.Add(s[0], s[1])
	case core.OpAdd1:
		t = c.Add1(s[0], s[1])
	case core.OpSub:
		t = c.Sub(s[0], s[1])
	case core.OpMul:
		t = c.Mul(s[0], s[1])
	case core.OpDiv:
		t = c.Div(s[0], s[1])
	case core.OpSqr:
		t = c.Sqr(s[0])
	case core.OpSqrt:
		t = c.Sqrt(s[0])
	case core.OpLog:
		t = c.Log(s[0])
	case core.OpSin:
		t = c.Sin(s[0])
	case core.OpCos:
		t = c.Cos(s[0])
	case core.OpSum:
		t = c.Sum(s[0])
	case core.OpSumRows:
		t = c.SumRows(s[0])
	case core.OpMean:
		t = c.Mean(s[0])
	case core.OpArgmax:
		t = c.Argmax(s[0])
	case core.OpRepeat:
		if s[0] == nil {
			return nil, fmt.Errorf("graph: REPEAT %q has no source", w.name())
		}
		tmpl := c.NewTensor(s[0].Type, ne[:]...)
		t = c.Repeat(s[0], tmpl)
		if c.Err() == nil {
			t.Src[1] = nil
		}
	case core.OpConcat:
		t = c.Concat(s[0], s[1], int(p[0]))
	case core.OpNorm:
		t = c.Norm(s[0], f32(p[0]))
	case core.OpRMSNorm:
		t = c.RMSNorm(s[0], f32(p[0]))
	case core.OpMulMat:
		t = c.MulMat(s[0], s[1])
		if c.Err() == nil {
			c.MulMatSetPrec(t, core.Prec(p[0])) // an unknown precision is the context's error
		}
	case core.OpMulMatID:
		t = c.MulMatID(s[0], s[1], s[2])
	case core.OpOutProd:
		t = c.OutProd(s[0], s[1])
	case core.OpScale:
		t = c.ScaleBias(s[0], f32(p[0]), f32(p[1]))
	case core.OpCpy:
		if cast {
			t = c.Cast(s[0], typ)
		} else {
			t = c.Cpy(s[0], s[1])
		}
	case core.OpCont:
		if s[0] != nil && s[0].Ne == ne {
			t = c.Cont(s[0])
		} else {
			t = c.ContShape(s[0], ne[:]...)
		}
	case core.OpReshape:
		t = c.Reshape(s[0], ne[:]...)
	case core.OpView:
		off := uint64(uint32(p[0])) | uint64(uint32(p[1]))<<32
		if off > math.MaxInt64/2 {
			return nil, fmt.Errorf("graph: VIEW %q: offset %d too large", w.name(), off)
		}
		t = c.View(s[0], ne[:], []int64{int64(w.Nb[1]), int64(w.Nb[2]), int64(w.Nb[3])}, int64(off))
	case core.OpPermute:
		t = c.Permute(s[0], int(p[0]), int(p[1]), int(p[2]), int(p[3]))
	case core.OpTranspose:
		t = c.Transpose(s[0])
	case core.OpGetRows:
		t = c.GetRows(s[0], s[1])
	case core.OpSetRows:
		t = c.SetRows(s[2], s[0], s[1])
	case core.OpDiagMaskInf:
		t = c.DiagMaskInf(s[0], int(p[0]))
	case core.OpSoftMax:
		t = c.SoftMaxExt(s[0], s[1], f32(p[0]), f32(p[1]))
		if s[2] != nil {
			t = c.SoftMaxAddSinks(t, s[2])
		}
	case core.OpRope:
		rope := c.RopeExt
		if w.ViewSrc != 0 {
			rope = c.RopeExtInplace // ggml_rope_*_inplace: a view of src0 with its strides
		}
		t = rope(s[0], s[1], s[2], core.RopeParams{NDims: int(p[1]), Mode: int(p[2]), NCtxOrig: int(p[4]),
			FreqBase: f32(p[5]), FreqScale: f32(p[6]), ExtFactor: f32(p[7]), AttnFactor: f32(p[8]),
			BetaFast: f32(p[9]), BetaSlow: f32(p[10]),
			Sections: [4]int{int(p[11]), int(p[12]), int(p[13]), int(p[14])}})
		if p[15] != 0 && t.Op == core.OpRope {
			t = c.RopeSetOffset(t, int(p[15]))
		}
	case core.OpClamp:
		t = c.Clamp(s[0], f32(p[0]), f32(p[1]))
	case core.OpIm2Col:
		t = c.Im2Col(s[0], s[1], core.Im2ColParams{S0: int(p[0]), S1: int(p[1]), P0: int(p[2]), P1: int(p[3]),
			D0: int(p[4]), D1: int(p[5]), Is2D: p[6] != 0}, typ)
	case core.OpPool1D:
		t = c.Pool1D(s[0], core.PoolOp(p[0]), int(p[1]), int(p[2]), int(p[3]))
	case core.OpPool2D:
		t = c.Pool2D(s[0], core.PoolOp(p[0]), int(p[1]), int(p[2]), int(p[3]), int(p[4]), int(p[5]), int(p[6]))
	case core.OpConvTranspose1D, core.OpIm2Col3D, core.OpCol2Im1D, core.OpConv2D, core.OpConv3D, core.OpConv2DDw, core.OpConvTranspose2D:
		t = constructConv(c, op, typ, s, p)
	case core.OpArgsort:
		t = c.Argsort(s[0], core.SortOrder(p[0]))
	case core.OpLeakyRelu:
		t = c.LeakyRelu(s[0], f32(p[0]))
	case core.OpFlashAttnExt:
		if p[3] != int32(core.PrecDefault) && p[3] != int32(core.PrecF32) {
			return nil, fmt.Errorf("graph: FLASH_ATTN_EXT %q: unknown precision %d", w.name(), p[3])
		}
		t = c.FlashAttnExt(s[0], s[1], s[2], s[3], f32(p[0]), f32(p[1]), f32(p[2]))
		c.FlashAttnExtAddSinks(t, s[4])
		c.FlashAttnExtSetPrec(t, core.Prec(p[3]))
	case core.OpUnary:
		if p[0] < 0 || p[0] >= int32(core.UnaryCount) {
			return nil, fmt.Errorf("graph: UNARY %q: unknown or unsupported unary kind %d", w.name(), p[0])
		}
		if core.UnaryOp(p[0]) == core.UnaryXielu {
			// The words hold the derived coefficients: build the node, then store them as sent.
			t = c.Xielu(s[0], 0, 0, 0, 0)
			if t.Op == core.OpUnary {
				for i := 1; i <= 4; i++ {
					t.SetParamI32(i, p[i])
				}
			}
		} else {
			t = c.Unary(s[0], core.UnaryOp(p[0]))
		}
	case core.OpGLU:
		if p[0] < 0 || p[0] >= int32(core.GLUCount) || p[1] != 0 && p[1] != 1 {
			return nil, fmt.Errorf("graph: GLU %q: unknown or unsupported kind %d (swapped %d)", w.name(), p[0], p[1])
		}
		switch {
		case core.GLUOp(p[0]) == core.GLUSwigluOAI && s[1] == nil:
			t = c.SwigluOAI(s[0], f32(p[2]), f32(p[3]), p[1] == 1)
		case core.GLUOp(p[0]) == core.GLUSwigluOAI:
			t = c.SwigluOAISplit(s[0], s[1], f32(p[2]), f32(p[3]), p[1] == 1)
		case s[1] == nil:
			t = c.GLUSingle(s[0], core.GLUOp(p[0]), p[1] == 1)
		default:
			t = c.GLU(s[0], s[1], core.GLUOp(p[0]), p[1] == 1)
		}
	case core.OpAddID:
		t = c.AddID(s[0], s[1], s[2])
	case core.OpCumsum:
		t = c.Cumsum(s[0])
	case core.OpCountEqual:
		t = c.CountEqual(s[0], s[1])
	case core.OpL2Norm:
		t = c.L2Norm(s[0], f32(p[0]))
	case core.OpSet:
		if p[4] != 0 && p[4] != 1 || p[0] < 0 || p[1] < 0 || p[2] < 0 || p[3] < 0 {
			return nil, fmt.Errorf("graph: SET %q: bad parameters %v", w.name(), p[:5])
		}
		if p[4] == 1 {
			t = c.SetInplace(s[0], s[1], int64(p[0]), int64(p[1]), int64(p[2]), int64(p[3]))
		} else {
			t = c.Set(s[0], s[1], int64(p[0]), int64(p[1]), int64(p[2]), int64(p[3]))
		}
	case core.OpDiag:
		t = c.Diag(s[0])
	case core.OpPad:
		var pp core.PadParams
		for i := range 4 {
			pp.Left[i], pp.Right[i] = int(p[2*i]), int(p[2*i+1])
		}
		if p[8] != 0 && p[8] != 1 {
			return nil, fmt.Errorf("graph: PAD %q: circular flag %d", w.name(), p[8])
		}
		pp.Circular = p[8] == 1
		t = c.PadExt(s[0], pp)
	case core.OpPadReflect1D:
		t = c.PadReflect1D(s[0], int(p[0]), int(p[1]))
	case core.OpRoll:
		t = c.Roll(s[0], int(p[0]), int(p[1]), int(p[2]), int(p[3]))
	case core.OpArange:
		t = c.Arange(f32(p[0]), f32(p[1]), f32(p[2]))
	case core.OpTimestepEmbedding:
		t = c.TimestepEmbedding(s[0], int(p[0]), int(p[1]))
	case core.OpTopK:
		if ne[0] < 1 || ne[0] > math.MaxInt32 {
			return nil, fmt.Errorf("graph: TOP_K %q: k = %d", w.name(), ne[0])
		}
		t = c.TopK(s[0], int(ne[0]))
	case core.OpTri:
		t = c.Tri(s[0], core.TriType(p[0]))
	case core.OpFill:
		t = c.Fill(s[0], f32(p[0])) // ggml_fill_inplace: the view source is attached below
	case core.OpGroupNorm:
		t = c.GroupNorm(s[0], int(p[0]), f32(p[1])) // ggml_group_norm_inplace: the view source is attached below
	case core.OpUpscale:
		t = c.Interpolate(s[0], ne[0], ne[1], ne[2], ne[3], core.ScaleMode(uint32(p[0])))
	case core.OpWinPart:
		t = c.WinPart(s[0], int(p[2])) // npx and npy are checked against the rebuilt node's
	case core.OpWinUnpart:
		t = c.WinUnpart(s[0], int(ne[1]), int(ne[2]), int(p[0]))
	case core.OpGetRelPos:
		t = c.GetRelPos(s[0], int(ne[2]), int(ne[1]))
	case core.OpAddRelPos:
		switch p[0] {
		case 0:
			t = c.AddRelPos(s[0], s[1], s[2])
		case 1:
			t = c.AddRelPosInplace(s[0], s[1], s[2])
		default:
			return nil, fmt.Errorf("graph: ADD_REL_POS %q: inplace flag %d", w.name(), p[0])
		}
	case core.OpSSMConv:
		t = c.SSMConv(s[0], s[1])
	case core.OpSSMScan:
		t = c.SSMScan(s[0], s[1], s[2], s[3], s[4], s[5], s[6], int(p[0]))
	case core.OpRWKVWKV6:
		t = c.RWKVWKV6(s[0], s[1], s[2], s[3], s[4], s[5])
	case core.OpGatedLinearAttn:
		t = c.GatedLinearAttn(s[0], s[1], s[2], s[3], s[4], f32(p[0]))
	case core.OpRWKVWKV7:
		t = c.RWKVWKV7(s[0], s[1], s[2], s[3], s[4], s[5], s[6])
	case core.OpSolveTri:
		t = c.SolveTri(s[0], s[1], true, true, false)
	case core.OpGatedDeltaNet:
		t = c.GatedDeltaNet(s[0], s[1], s[2], s[3], s[4], s[5], int(p[0]))
	case core.OpDsv4HcComb:
		t = c.Dsv4HcComb(s[0], s[1], s[2], f32(p[0]), int(p[1]))
	case core.OpDsv4HcPre:
		t = c.Dsv4HcPre(s[0], s[1])
	case core.OpDsv4HcPost:
		t = c.Dsv4HcPost(s[0], s[1], s[2], s[3])
	case core.OpLightningIndexer:
		t = c.LightningIndexer(s[0], s[1], s[2], s[3])
	case core.OpAcc:
		if p[4] != 0 && p[4] != 1 {
			return nil, fmt.Errorf("graph: ACC %q: inplace flag %d", w.name(), p[4])
		}
		t = c.Acc(s[0], s[1], int64(p[0]), int64(p[1]), int64(p[2]), int64(p[3]))
		if c.Err() == nil && p[4] == 1 {
			t.Params[4] = 1 // ggml_acc_inplace: dst is a view of a (attached below); the result is the same
		}
	case core.OpRepeatBack:
		t = c.RepeatBack(s[0], c.NewTensor(core.TypeF32, ne[:]...))
	case core.OpSiluBack:
		t = c.SiluBack(s[0], s[1])
	case core.OpRMSNormBack:
		t = c.RMSNormBack(s[0], s[1], f32(p[0]))
	case core.OpGetRowsBack:
		t = c.GetRowsBack(s[0], s[1], c.NewTensor(core.TypeF32, ne[:]...))
	case core.OpDiagMaskZero:
		t = c.DiagMaskZero(s[0], int(p[0]))
	case core.OpSoftMaxBack:
		t = c.SoftMaxExtBack(s[0], s[1], f32(p[0]), f32(p[1]))
	case core.OpRopeBack:
		// ggml_rope_ext_back and ggml_rope_multi_back are ROPE nodes with the op changed, as
		// tandem's RopeExtBack: rebuild the ROPE, then change its op.
		r, err := b.construct(core.OpRope, w, typ, ne, s, cast)
		if err != nil {
			return nil, err
		}
		r.Op = core.OpRopeBack
		t = r
	case core.OpIm2ColBack:
		t = c.Im2ColBack(s[0], s[1], ne, core.Im2ColParams{S0: int(p[0]), S1: int(p[1]), P0: int(p[2]), P1: int(p[3]),
			D0: int(p[4]), D1: int(p[5]), Is2D: p[6] != 0})
	case core.OpPool2DBack:
		t = c.Pool2DBack(s[0], s[1], core.PoolOp(p[0]), int(p[1]), int(p[2]), int(p[3]), int(p[4]), int(p[5]), int(p[6]))
	case core.OpCrossEntropyLoss:
		t = c.CrossEntropyLoss(s[0], s[1])
	case core.OpCrossEntropyLossBack:
		t = c.CrossEntropyLossBack(s[0], s[1], s[2])
	case core.OpOptStepAdamW:
		t = c.OptStepAdamW(s[0], s[1], s[2], s[3], s[4])
	case core.OpOptStepSGD:
		t = c.OptStepSGD(s[0], s[1], s[2])
	default:
		return nil, fmt.Errorf("graph: op %v cannot be rebuilt", op)
	}
	if err := c.Err(); err != nil {
		return nil, fmt.Errorf("graph: node %q: %w", w.name(), err)
	}
	return t, nil
}
