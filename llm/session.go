package llm

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
	"github.com/tandem-ml/tandem/scheduler"
)

// FlashAttn chooses the attention kernel of a session.
type FlashAttn int

const (
	// FlashAttnAuto uses FLASH_ATTN_EXT when every device holding a layer runs it (llama.cpp's
	// default), the soft_max path otherwise.
	FlashAttnAuto FlashAttn = iota
	// FlashAttnOn always uses FLASH_ATTN_EXT (ops a device lacks run on the CPU).
	FlashAttnOn
	// FlashAttnOff uses MUL_MAT, SOFT_MAX and MUL_MAT (needs an F16 or F32 KV cache).
	FlashAttnOff
)

// DefaultBatchSize is the micro-batch a prompt is evaluated in (llama.cpp's n_ubatch).
const DefaultBatchSize = 512

// SessionOptions configure NewSession.
type SessionOptions struct {
	// ContextSize is the number of positions the KV cache holds (rounded up to a multiple of 256;
	// 0: the model's training context, at most 4096).
	ContextSize int
	// KVType is the cache's element type (llama.cpp's -ctk/-ctv): KVF16 (the default), KVF32 or
	// KVQ8_0 (which needs flash attention).
	KVType KVType
	// FlashAttn picks the attention kernel (FlashAttnAuto by default).
	FlashAttn FlashAttn
	// BatchSize is the most tokens evaluated in one graph (0: DefaultBatchSize).
	BatchSize int
}

// KVType is the element type of a KV cache. (A type of its own because core.TypeF32 is ggml's
// type 0: as a core.Type the zero value could not mean the F16 default.)
type KVType int

// The KV cache types.
const (
	KVF16  KVType = iota // F16, the default
	KVF32                // F32: with FlashAttnOff, the setting that matches llama.cpp exactly
	KVQ8_0               // Q8_0 (needs flash attention)
)

// Type is the tensor type of the cache.
func (t KVType) Type() (core.Type, error) {
	switch t {
	case KVF16:
		return core.TypeF16, nil
	case KVF32:
		return core.TypeF32, nil
	case KVQ8_0:
		return core.TypeQ8_0, nil
	}
	return 0, fmt.Errorf("tandem: llm: unknown KVType %d (KVF16, KVF32 or KVQ8_0)", int(t))
}

// String is llama.cpp's name of the type (f16, f32, q8_0).
func (t KVType) String() string {
	switch t {
	case KVF16:
		return "f16"
	case KVF32:
		return "f32"
	case KVQ8_0:
		return "q8_0"
	}
	return fmt.Sprintf("KVType(%d)", int(t))
}

// ParseKVType reads llama.cpp's -ctk/-ctv names: f16, f32, q8_0.
func ParseKVType(s string) (KVType, error) {
	for _, t := range []KVType{KVF16, KVF32, KVQ8_0} {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("tandem: llm: unknown KV cache type %q (f16, f32 or q8_0)", s)
}

// Logits selects which rows of logits Eval returns.
type Logits int

const (
	// LastLogits returns the logits of the last token only.
	LastLogits Logits = iota
	// AllLogits returns one row per input token.
	AllLogits
	// NoLogits only fills the KV cache.
	NoLogits
)

// ErrContextFull is returned (wrapped) when tokens would not fit the session's context.
var ErrContextFull = errors.New("tandem: llm: context full")

// Session is one conversation with a model: a KV cache holding the positions evaluated so far and
// a scheduler that runs the model's graphs over the model's devices. Its methods are safe for
// concurrent use (calls are serialized); sessions of one model may run from different goroutines.
type Session struct {
	mu     sync.Mutex
	m      *Model
	sched  *scheduler.Scheduler
	kv     *kvCache
	flash  bool
	batch  int
	pos    int
	closed bool

	last    *ubatchGraph // the last graph built, reused while the shapes match
	lastRan bool         // last's latest run succeeded: its inputs keep their memory
	scratch []byte       // input bytes, reused
	stats   SessionStats
	timings Timings
}

// SessionStats count a session's work.
type SessionStats struct {
	Graphs  int // graphs computed
	Builds  int // graphs built (a graph is reused while its shapes stay the same)
	Plans   int // scheduler plans made (a new plan each time the graph changes)
	Tokens  int // tokens evaluated
	Splits  int // scheduler splits of the last graph
	Copies  int // cross-device copies per run of the last graph
	KVBytes int64
	// ComputeBytes is the size of the compute buffers, all devices together: they grow to the
	// largest graph run so far (a full micro-batch once a prompt has been evaluated).
	ComputeBytes int64
}

// NewSession creates a session with an empty KV cache placed with the model's layers.
func (m *Model) NewSession(opts SessionOptions) (*Session, error) {
	if m == nil || m.weights == nil {
		return nil, errZeroModel
	}
	m.sessMu.Lock()
	closed := m.closed
	m.sessMu.Unlock()
	if closed {
		return nil, errors.New("tandem: llm: NewSession on a closed model")
	}
	h := &m.HParams
	n := opts.ContextSize
	switch {
	case n < 0:
		return nil, fmt.Errorf("tandem: llm: ContextSize %d is negative", n)
	case n == 0:
		n = min(h.NCtxTrain, 4096)
		if n <= 0 {
			n = 4096
		}
	case n > 1<<24:
		return nil, fmt.Errorf("tandem: llm: ContextSize %d is too large", n)
	}
	n = padTo(n, kvPad)
	typ, err := opts.KVType.Type()
	if err != nil {
		return nil, err
	}
	if bs := typ.BlockSize(); int64(h.HeadDimK)%bs != 0 || int64(h.HeadDimV)%bs != 0 {
		return nil, fmt.Errorf("tandem: llm: a %v KV cache needs head sizes that are multiples of %d (this model's: keys %d, values %d)",
			typ, bs, h.HeadDimK, h.HeadDimV)
	}
	if opts.BatchSize < 0 {
		return nil, fmt.Errorf("tandem: llm: BatchSize %d is negative", opts.BatchSize)
	}
	batch := opts.BatchSize
	if batch == 0 {
		batch = DefaultBatchSize
	}
	var flash bool
	switch opts.FlashAttn {
	case FlashAttnOn:
		flash = true
	case FlashAttnOff:
		if typ == core.TypeQ8_0 {
			return nil, errors.New("tandem: llm: a Q8_0 KV cache needs flash attention (FlashAttnOn or FlashAttnAuto)")
		}
	case FlashAttnAuto:
		flash = typ == core.TypeQ8_0 || m.devicesRunFlashAttn(typ)
	default:
		return nil, fmt.Errorf("tandem: llm: unknown FlashAttn %d", opts.FlashAttn)
	}
	kv, err := newKVCache(m, n, typ, !flash)
	if err != nil {
		return nil, err
	}
	sched, err := scheduler.New(m.backends, scheduler.Options{GraphSize: graphSize(m) * 2})
	if err != nil {
		kv.free()
		return nil, core.Errorf("tandem: llm: %w", err)
	}
	s := &Session{m: m, sched: sched, kv: kv, flash: flash, batch: batch}
	s.stats.KVBytes = kv.bytes()
	m.sessMu.Lock()
	defer m.sessMu.Unlock()
	if m.closed {
		s.closed = true
		return nil, errors.Join(errors.New("tandem: llm: NewSession on a closed model"), sched.Close(), kv.free())
	}
	if m.sessions == nil {
		m.sessions = map[*Session]struct{}{}
	}
	m.sessions[s] = struct{}{}
	return s, nil
}

// devicesRunFlashAttn reports whether every device holding a layer supports FLASH_ATTN_EXT with a
// cache of type typ.
func (m *Model) devicesRunFlashAttn(typ core.Type) bool {
	h := &m.HParams
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	q := ctx.NewTensor3D(core.TypeF32, int64(h.HeadDimK), 1, int64(h.NHead))
	k := ctx.NewTensor3D(typ, int64(h.HeadDimK), kvPad, int64(h.NHeadKV))
	v := ctx.NewTensor3D(typ, int64(h.HeadDimV), kvPad, int64(h.NHeadKV))
	mask := ctx.NewTensor2D(core.TypeF16, kvPad, 1)
	fa := ctx.FlashAttnExt(q, k, v, mask, 1, 0, 0)
	if ctx.Err() != nil {
		return false
	}
	seen := map[int]bool{}
	for _, l := range m.layers {
		if seen[l.dev] {
			continue
		}
		seen[l.dev] = true
		if !m.backends[l.dev].Device().SupportsOp(fa) {
			return false
		}
	}
	return true
}

// FlashAttn reports whether the session uses flash attention.
func (s *Session) FlashAttn() bool { return s.flash }

// ContextSize is the number of positions the session's cache holds (0 for a zero Session).
func (s *Session) ContextSize() int {
	if s.kv == nil {
		return 0
	}
	return s.kv.size
}

// KVType is the element type of the session's cache (F32 for a zero Session).
func (s *Session) KVType() core.Type {
	if s.kv == nil {
		return core.TypeF32
	}
	return s.kv.typ
}

// Pos is the number of positions held in the KV cache (the next token's position).
func (s *Session) Pos() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pos
}

// Truncate forgets the positions from n on, so the next Eval continues at position n.
func (s *Session) Truncate(n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 0 || n > s.pos {
		return fmt.Errorf("tandem: llm: Truncate(%d) outside 0..%d", n, s.pos)
	}
	s.pos = n
	return nil
}

// Reset empties the session's KV cache.
func (s *Session) Reset() {
	s.mu.Lock()
	s.pos = 0
	s.mu.Unlock()
}

// Stats returns the session's counters.
func (s *Session) Stats() SessionStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Close frees the session's cache and compute buffers.
func (s *Session) Close() error {
	if s == nil || s.m == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.m.sessMu.Lock()
	delete(s.m.sessions, s)
	s.m.sessMu.Unlock()
	return errors.Join(s.sched.Close(), s.kv.free())
}

// Eval evaluates ids at the next positions and returns the logits asked for: one row of
// HParams.NVocab values per token (AllLogits), for the last token (LastLogits), or none. The
// prompt is run in micro-batches; evaluating it whole, in chunks or token by token gives the same
// logits. On error (a bad id, a full context, a cancelled ctx) the session keeps its previous
// positions.
func (s *Session) Eval(ctx context.Context, ids []int32, which Logits) ([][]float32, error) {
	flat, err := s.EvalTo(ctx, ids, which, nil)
	if err != nil || len(flat) == 0 {
		return nil, err
	}
	nv := s.m.HParams.NVocab
	rows := make([][]float32, len(flat)/nv)
	for i := range rows {
		rows[i] = flat[i*nv : (i+1)*nv : (i+1)*nv]
	}
	return rows, nil
}

// EvalTo is Eval appending the logits rows, one after the other, to dst and returning the
// extended slice. With the capacity for them in dst (dst[:0] of the previous call's result, say)
// it allocates nothing, which suits a generation loop.
func (s *Session) EvalTo(ctx context.Context, ids []int32, which Logits, dst []float32) ([]float32, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if s.m == nil {
		return dst, errZeroSession
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return dst, errors.New("tandem: llm: Eval on a closed session")
	}
	if len(ids) == 0 {
		return dst, errors.New("tandem: llm: Eval needs at least one token")
	}
	if which != LastLogits && which != AllLogits && which != NoLogits {
		return dst, fmt.Errorf("tandem: llm: unknown Logits %d", which)
	}
	nv := int32(s.m.HParams.NVocab)
	for i, id := range ids {
		if id < 0 || id >= nv {
			return dst, fmt.Errorf("tandem: llm: token %d at index %d is out of range [0, %d)", id, i, nv)
		}
	}
	if s.pos+len(ids) > s.kv.size {
		return dst, core.Errorf("%w: %d positions held + %d tokens > context size %d", ErrContextFull, s.pos, len(ids), s.kv.size)
	}
	n0 := len(dst)
	pos := s.pos
	for start := 0; start < len(ids); start += s.batch {
		if err := ctx.Err(); err != nil {
			return dst[:n0], core.Errorf("tandem: llm: eval stopped: %w", err)
		}
		end := min(start+s.batch, len(ids))
		nOut := 0
		switch {
		case which == AllLogits:
			nOut = end - start
		case which == LastLogits && end == len(ids):
			nOut = 1
		}
		var err error
		if dst, err = s.evalUBatch(ctx, ids[start:end], pos, nOut, dst); err != nil {
			return dst[:n0], err
		}
		pos += end - start
	}
	s.pos = pos
	return dst, nil
}

// evalUBatch runs one micro-batch at positions pos.. and appends the logits of its last nOut
// rows to dst.
func (s *Session) evalUBatch(ctx context.Context, ids []int32, pos, nOut int, dst []float32) ([]float32, error) {
	n := len(ids)
	nKV := min(s.kv.size, padTo(pos+n, kvPad))
	// the last graph is reused when the shapes match (consecutive tokens within a block of kvPad
	// cells): the scheduler then keeps its plan and allocation, and only the inputs change
	ub := s.last
	if ub == nil || ub.n != n || ub.nKV != nKV || ub.nOut != nOut {
		ub = s.buildGraph(n, nKV, nOut)
		if err := ub.ctx.Err(); err != nil {
			return dst, core.Errorf("tandem: llm: building the graph: %w", err)
		}
		s.last, s.lastRan = ub, false
		s.stats.Builds++
	}
	m := s.m
	m.computeMu.Lock()
	defer m.computeMu.Unlock()
	// A graph that ran keeps its allocation: its inputs are written where they were, and the
	// scheduler checks the graph against its plan as the run starts. Should the plan have gone
	// meanwhile (the inputs then have no memory, or are placed anew and fail as unwritten), a
	// failed run is repeated once after an explicit allocation. This saves a second look at every
	// node per generated token.
	err := s.runUBatch(ctx, ub, ids, pos, !s.lastRan)
	if err != nil && s.lastRan {
		err = s.runUBatch(ctx, ub, ids, pos, true)
	}
	s.lastRan = err == nil
	if err != nil {
		return dst, err
	}
	s.stats.Graphs++
	s.stats.Tokens += n
	s.stats.Plans = s.sched.Stats().Plans
	s.stats.Splits = s.sched.NSplits()
	s.stats.Copies = s.sched.NCopies()
	s.stats.ComputeBytes = 0
	for i := range s.sched.NBackends() {
		s.stats.ComputeBytes += s.sched.BufferSize(i)
	}
	if nOut == 0 {
		return dst, nil
	}
	// The logits node is a dense f32 [n_vocab, nOut] tensor: its values are the rows in order.
	nv := int(ub.logits.NElements())
	dst = slices.Grow(dst, nv)
	if err := core.TensorGetF32(ub.logits, dst[len(dst):len(dst)+nv], 0); err != nil {
		return dst, core.Errorf("tandem: llm: reading the logits: %w", err)
	}
	return dst[:len(dst)+nv], nil
}

// runUBatch writes the inputs of ub and runs it, allocating it first when alloc is set.
func (s *Session) runUBatch(ctx context.Context, ub *ubatchGraph, ids []int32, pos int, alloc bool) error {
	if alloc {
		if err := s.sched.AllocGraph(ub.g); err != nil {
			return core.Errorf("tandem: llm: allocating the graph: %w", err)
		}
	}
	if err := s.setInputs(ub, ids, pos); err != nil {
		return err
	}
	var err error
	if alloc {
		err = s.sched.GraphComputeContext(ctx, ub.g)
	} else {
		// The graph that ran last, its nodes untouched since (the session builds its graphs and
		// changes only their inputs' data): the scheduler need not compare them with its plan.
		err = s.sched.GraphComputeReused(ctx, ub.g)
	}
	if err != nil {
		return core.Errorf("tandem: llm: computing %d tokens at position %d: %w", len(ids), pos, err)
	}
	return nil
}

// setInputs writes the micro-batch's tokens, positions, cache cells, mask and output rows, through
// one scratch buffer the session keeps (no allocation per token).
func (s *Session) setInputs(ub *ubatchGraph, ids []int32, pos int) error {
	n := len(ids)
	le := binary.LittleEndian
	buf := func(size int) []byte {
		if cap(s.scratch) < size {
			s.scratch = make([]byte, size)
		}
		return s.scratch[:size]
	}
	b := buf(4 * n)
	for i, id := range ids {
		le.PutUint32(b[4*i:], uint32(id))
	}
	if err := core.TensorSet(ub.tokens, b, 0); err != nil {
		return err
	}
	for i := range n {
		le.PutUint32(b[4*i:], uint32(pos+i))
	}
	if err := core.TensorSet(ub.pos, b, 0); err != nil {
		return err
	}
	b = buf(8 * n)
	for i := range n {
		le.PutUint64(b[8*i:], uint64(pos+i))
	}
	if err := core.TensorSet(ub.kIdx, b, 0); err != nil {
		return err
	}
	if s.kv.vTrans {
		nv := s.m.HParams.NEmbdVGQA()
		b = buf(8 * n * nv)
		for i := range n {
			for j := range nv {
				le.PutUint64(b[8*(i*nv+j):], uint64(j*s.kv.size+pos+i))
			}
		}
		if err := core.TensorSet(ub.vIdx, b, 0); err != nil {
			return err
		}
	}
	// causal mask: token i (position pos+i) sees cells 0..pos+i; -inf (in the mask's type) elsewhere
	size := int(ub.mask.Type.Size())
	var negInf [4]byte
	if size == 4 {
		le.PutUint32(negInf[:], math.Float32bits(float32(math.Inf(-1))))
	} else {
		le.PutUint16(negInf[:], quant.FP32ToFP16(float32(math.Inf(-1))))
	}
	b = buf(size * ub.nKV * n)
	clear(b)
	for i := range n {
		for c := pos + i + 1; c < ub.nKV; c++ {
			copy(b[size*(i*ub.nKV+c):], negInf[:size])
		}
	}
	if err := core.TensorSet(ub.mask, b, 0); err != nil {
		return err
	}
	if ub.outIDs != nil {
		b = buf(4 * ub.nOut)
		for i := range ub.nOut {
			le.PutUint32(b[4*i:], uint32(n-ub.nOut+i))
		}
		if err := core.TensorSet(ub.outIDs, b, 0); err != nil {
			return err
		}
	}
	return nil
}
