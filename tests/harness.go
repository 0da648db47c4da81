package tests

import (
	"bytes"
	bin "encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// Case is one op test: Build makes the inputs and the op in a metadata-only context and returns the
// tensor to check. Every other non-view node is checked too.
type Case struct {
	Name  string
	Build func(ctx *core.Context) *core.Tensor
	// Init fills an input (a leaf); nil means uniform [-1, 1) (quantized through the reference
	// quantizer), which suits most ops.
	Init func(t *core.Tensor, r *rand.Rand) error
	// MaxNMSE is the error limit; 0 means 1e-7.
	MaxNMSE float64
}

// Result is the outcome of one case on one backend.
type Result struct {
	Case        string
	Backend     string
	Supported   bool
	Passed      bool
	NMSE        float64
	Problem     string
	CheckedNode string
	// Ops are the computing ops of the case's graph (views left out), in graph order.
	Ops []core.Op
	// Note is set when the case passed only against the reference computed with f32 denormals
	// flushed to zero (see Run); callers log it.
	Note string
}

// sentinelBytes separate tensors in the buffers under test; out-of-bounds writes change them.
const sentinelBytes = 4096

// Run runs c on backend be and on a fresh CPU reference backend and compares them. A nil be, or
// a case without Build, is reported as a problem.
//
// A GPU backend (Vulkan, GL: see mayFlushDenormals) may flush f32 denormals to zero, in its inputs,
// its intermediates and its results: Vulkan leaves denormal handling to the implementation unless
// a shader declares DenormPreserve (ours do not), and GL does not define it; an NVIDIA H200 flushes
// them. When the f32 inputs of a case hold denormals and such a device's results fail the
// comparison, they are compared again, by the same rule, with a second CPU reference computed from
// the inputs with every f32 denormal flushed to a zero of its sign and with every denormal of its
// results flushed likewise; passing that is a pass, with Result.Note saying so. Any other backend
// (the CPU, RPC) is compared with the plain reference only.
func Run(c Case, be core.Backend, seed uint64) Result {
	res := Result{Case: c.Name}
	if be == nil || c.Build == nil {
		res.Problem = "nil backend or case without Build"
		return res
	}
	res.Backend = be.Name()
	test, err := newInstance(c, be.DefaultBufferType())
	if err != nil {
		res.Problem = err.Error()
		return res
	}
	defer test.free()
	for _, n := range test.g.Nodes() {
		if !n.Op.IsView() {
			res.Ops = append(res.Ops, n.Op)
		}
	}
	for _, n := range test.g.Nodes() {
		if !be.Device().SupportsOp(n) {
			return res // unsupported: not a failure
		}
	}
	res.Supported = true
	ref, err := newInstance(c, core.HostBufferType())
	if err != nil {
		res.Problem = "reference: " + err.Error()
		return res
	}
	defer ref.free()

	r := rand.New(rand.NewPCG(seed, 0x7a5e))
	// inputs keeps every input's bytes (before any op writes into its inputs) for a second
	// reference with f32 denormals flushed, when the device may flush them and they occur.
	inputs := make([][]byte, len(ref.inputs))
	denormals := false
	for i, l := range ref.inputs {
		if err := initInput(c, l, r); err != nil {
			res.Problem = fmt.Sprintf("init %v: %v", l, err)
			return res
		}
		raw := make([]byte, l.NBytes())
		if err := core.TensorGet(l, raw, 0); err != nil {
			res.Problem = err.Error()
			return res
		}
		if err := core.TensorSet(test.inputs[i], raw, 0); err != nil {
			res.Problem = err.Error()
			return res
		}
		inputs[i] = raw
		denormals = denormals || (l.Type == core.TypeF32 && hasDenormalsF32(raw))
	}
	// Outputs start as NaN bytes on the device so unwritten elements show.
	for _, n := range test.g.Nodes() {
		if !n.Op.IsView() && n.ViewSrc == nil {
			_ = core.TensorMemset(n, 0xff, 0, n.NBytes())
		}
	}
	refCPU, err := cpu.New(cpu.Options{Threads: 2, Reference: true})
	if err != nil {
		res.Problem = err.Error()
		return res
	}
	defer refCPU.Close()
	if err := refCPU.GraphCompute(ref.g); err != nil {
		res.Problem = "reference compute: " + err.Error()
		return res
	}
	if err := be.GraphCompute(test.g); err != nil {
		res.Problem = "compute: " + err.Error()
		return res
	}
	if err := be.Synchronize(); err != nil {
		res.Problem = "synchronize: " + err.Error()
		return res
	}
	if p := test.checkSentinels(); p != "" {
		res.Problem = p
		return res
	}
	limit := c.MaxNMSE
	if limit == 0 {
		limit = 1e-7
	}
	res.NMSE, res.CheckedNode, res.Problem = compareNodes(test, ref, limit, false)
	if res.Problem == "" {
		res.Passed = true
		return res
	}
	if !denormals || !mayFlushDenormals(be) {
		return res
	}
	// The second reference: inputs and results with f32 denormals flushed to zero.
	ftz, err := newInstance(c, core.HostBufferType())
	if err != nil {
		res.Problem += "; flushed reference: " + err.Error()
		return res
	}
	defer ftz.free()
	for i, l := range ftz.inputs {
		raw := append([]byte(nil), inputs[i]...)
		if l.Type == core.TypeF32 {
			flushDenormalsF32(raw)
		}
		if err := core.TensorSet(l, raw, 0); err != nil {
			res.Problem += "; flushed reference: " + err.Error()
			return res
		}
	}
	if err := refCPU.GraphCompute(ftz.g); err != nil {
		res.Problem += "; flushed reference compute: " + err.Error()
		return res
	}
	nmse, checked, problem := compareNodes(test, ftz, limit, true)
	if problem != "" {
		res.Problem += "; against the reference with f32 denormals flushed to zero: " + problem
		return res
	}
	res.Note = fmt.Sprintf("%s %s: passed only against the reference with f32 denormals flushed to zero (the device flushes them; plain reference: %s)", res.Backend, c.Name, res.Problem)
	res.NMSE, res.CheckedNode, res.Problem, res.Passed = nmse, checked, "", true
	return res
}

// compareNodes compares every non-view node of test with the same node of ref by Compare and the
// NMSE limit: the largest NMSE, the last node compared and the first problem. flush flushes the
// f32 denormals of ref's values to zeros of their sign before comparing.
func compareNodes(test, ref *instance, limit float64, flush bool) (nmse float64, checked, problem string) {
	for i, n := range test.g.Nodes() {
		if n.Op.IsView() {
			continue
		}
		m := ref.g.Nodes()[i]
		a, err := core.GetFloat32s(n)
		if err != nil {
			return nmse, checked, fmt.Sprintf("read %v: %v", n, err)
		}
		b, err := core.GetFloat32s(m)
		if err != nil {
			return nmse, checked, fmt.Sprintf("read reference %v: %v", m, err)
		}
		if flush {
			for j, v := range b {
				b[j] = flushDenormal(v)
			}
		}
		e, p := Compare(a, b)
		checked = n.String()
		if p != "" {
			return nmse, checked, fmt.Sprintf("node %d %v: %s", i, n, p)
		}
		nmse = max(nmse, e)
		if e > limit {
			return nmse, checked, fmt.Sprintf("node %d %v: NMSE %.3g > %.3g", i, n, e, limit)
		}
	}
	return nmse, checked, ""
}

// mayFlushDenormals reports whether be is a GPU backend (Vulkan or GL, by name: "Vulkan0",
// "GL0"), whose device may flush f32 denormals to zero. The CPU and RPC backends (whose server
// computes like the CPU here) may not.
func mayFlushDenormals(be core.Backend) bool {
	switch strings.TrimRight(be.Name(), "0123456789") {
	case "Vulkan", "GL":
		return true
	}
	return false
}

// flushDenormal returns v, or a zero of v's sign when v is an f32 denormal.
func flushDenormal(v float32) float32 {
	if b := math.Float32bits(v); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return v
}

// hasDenormalsF32 reports whether the little-endian f32 values in raw hold a denormal.
func hasDenormalsF32(raw []byte) bool {
	for i := 0; i+4 <= len(raw); i += 4 {
		if b := bin.LittleEndian.Uint32(raw[i:]); b&0x7f800000 == 0 && b&0x007fffff != 0 {
			return true
		}
	}
	return false
}

// flushDenormalsF32 replaces every f32 denormal among the little-endian values in raw by a zero of
// its sign.
func flushDenormalsF32(raw []byte) {
	for i := 0; i+4 <= len(raw); i += 4 {
		v := math.Float32frombits(bin.LittleEndian.Uint32(raw[i:]))
		bin.LittleEndian.PutUint32(raw[i:], math.Float32bits(flushDenormal(v)))
	}
}

// Compare is the comparison every cross-device check uses (the harness here, the bench's NMSE
// column): got against the reference ref, NaN/Inf-aware. The non-finite pattern must be the same
// (NaN exactly where ref has NaN; ±Inf where it has ±Inf, of the same sign, a ±MaxFloat32 standing
// for an infinity as in ggml's harness), else problem says where it differs; then nmse is
// Σ(got−ref)²/Σref² over the finite rest (the plain squared error when ref is all zeros).
func Compare(got, ref []float32) (nmse float64, problem string) {
	num, den, problem := compareParts(got, ref)
	if problem != "" || den == 0 {
		return num, problem
	}
	return num / den, ""
}

// NMSE is Compare as one number: +Inf when the values differ in length or non-finite pattern, or
// when a zero reference meets a non-zero value.
func NMSE(got, ref []float32) float64 {
	num, den, problem := compareParts(got, ref)
	switch {
	case problem != "":
		return math.Inf(1)
	case num == 0:
		return 0
	case den == 0:
		return math.Inf(1)
	}
	return num / den
}

func compareParts(a, b []float32) (num, den float64, problem string) {
	if len(a) != len(b) {
		return 0, 0, fmt.Sprintf("%d values vs %d", len(a), len(b))
	}
	infOrMax := func(v float64) bool { return math.IsInf(v, 0) || math.Abs(v) == math.MaxFloat32 }
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		if math.IsNaN(x) || math.IsNaN(y) {
			if math.IsNaN(x) && math.IsNaN(y) {
				continue
			}
			return 0, 0, fmt.Sprintf("NaN at %d: got %v want %v", i, a[i], b[i])
		}
		if infOrMax(x) || infOrMax(y) {
			if !infOrMax(x) || !infOrMax(y) || math.Signbit(x) != math.Signbit(y) {
				return 0, 0, fmt.Sprintf("infinity mismatch at %d: got %v want %v", i, a[i], b[i])
			}
			continue
		}
		d := x - y
		num += d * d
		den += y * y
	}
	return num, den, ""
}

func initInput(c Case, t *core.Tensor, r *rand.Rand) error {
	if c.Init != nil {
		return c.Init(t, r)
	}
	return Uniform(t, r, -1, 1)
}

// Uniform fills t with uniform values in [lo, hi) (quantized for quantized types; random valid
// blocks for quantized types without a quantizer; indices for I32 are drawn in [lo, hi) too).
func Uniform(t *core.Tensor, r *rand.Rand, lo, hi float32) error {
	if t.Type.IsQuantized() && !t.Type.CanConvert() {
		return randomBlocks(t, r) // no quantizer: random valid blocks instead of values in [lo, hi)
	}
	v := make([]float32, t.NElements())
	for i := range v {
		v[i] = lo + r.Float32()*(hi-lo)
	}
	if t.Type == core.TypeI32 {
		iv := make([]int32, len(v))
		for i := range v {
			iv[i] = int32(math.Floor(float64(v[i])))
		}
		return core.SetInt32s(t, iv)
	}
	return core.SetFloat32s(t, v)
}

// instance is one built copy of a case, allocated in one buffer with sentinels between tensors.
type instance struct {
	ctx       *core.Context
	g         *core.Graph
	inputs    []*core.Tensor
	buf       core.Buffer
	sentinels []sentinel
}

type sentinel struct {
	off  int64
	data []byte
}

func newInstance(c Case, bt core.BufferType) (*instance, error) {
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	out := c.Build(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	if err := g.Err(); err != nil {
		return nil, err
	}
	in := &instance{ctx: ctx, g: g}
	// Lay out every non-view tensor of the context with a sentinel gap before and after it.
	align := bt.Alignment()
	off := int64(sentinelBytes)
	offs := map[*core.Tensor]int64{}
	var order []*core.Tensor
	for _, t := range ctx.Tensors() {
		if t.ViewSrc != nil || !g.Contains(t) {
			continue
		}
		off = core.AlignUp(off, align)
		offs[t] = off
		order = append(order, t)
		off += core.AlignUp(bt.AllocSize(t), align) + sentinelBytes
	}
	buf, err := bt.Alloc(off)
	if err != nil {
		return nil, err
	}
	in.buf = buf
	pattern := func(k int) []byte {
		p := make([]byte, sentinelBytes)
		for i := range p {
			p[i] = byte(0xA5 ^ (i*7 + k))
		}
		return p
	}
	in.sentinels = append(in.sentinels, sentinel{0, pattern(0)})
	for k, t := range order {
		if err := core.TensorAlloc(buf, t, offs[t]); err != nil {
			return nil, err
		}
		// The gap after each tensor is at least sentinelBytes long (see the layout above).
		in.sentinels = append(in.sentinels, sentinel{offs[t] + t.NBytes(), pattern(k + 1)})
	}
	for _, t := range ctx.Tensors() {
		if t.ViewSrc != nil && t.Buffer == nil && t.ViewSrc.Buffer != nil {
			if err := core.ViewInit(t); err != nil {
				return nil, err
			}
		}
	}
	for _, l := range g.Leafs() {
		in.inputs = append(in.inputs, l)
	}
	for _, s := range in.sentinels {
		if err := writeRaw(buf, s.off, s.data); err != nil {
			return nil, err
		}
	}
	return in, nil
}

// writeRaw and readRaw reach arbitrary bytes of a buffer through a scratch tensor placed there.
func writeRaw(buf core.Buffer, off int64, data []byte) error {
	t := scratchTensor(buf, off, int64(len(data)))
	return buf.SetTensor(t, data, 0)
}

func readRaw(buf core.Buffer, off int64, n int64) ([]byte, error) {
	t := scratchTensor(buf, off, n)
	out := make([]byte, n)
	return out, buf.GetTensor(t, out, 0)
}

func scratchTensor(buf core.Buffer, off, n int64) *core.Tensor {
	t := &core.Tensor{Type: core.TypeI8, Ne: [4]int64{n, 1, 1, 1}, Nb: [4]int64{1, n, n, n}}
	t.Buffer, t.Offset = buf, off
	return t
}

func (in *instance) checkSentinels() string {
	for _, s := range in.sentinels {
		got, err := readRaw(in.buf, s.off, int64(len(s.data)))
		if err != nil {
			return "reading sentinel: " + err.Error()
		}
		if !bytes.Equal(got, s.data) {
			for i := range got {
				if got[i] != s.data[i] {
					return fmt.Sprintf("out-of-bounds write: sentinel byte at buffer offset %d changed", s.off+int64(i))
				}
			}
		}
	}
	return ""
}

func (in *instance) free() {
	if in.buf != nil {
		in.buf.Free()
	}
}
