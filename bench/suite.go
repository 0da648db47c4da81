package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path"
	"strings"

	"github.com/tandem-ml/tandem/core"
)

// Metric says how a case's throughput is counted.
type Metric int

const (
	// MetricFLOPs: floating-point operations per second (MUL_MAT: 2·m·n·k; the block: the sum over
	// its MUL_MAT nodes), shown as GFLOPS.
	MetricFLOPs Metric = iota
	// MetricBytes: bytes moved per second (the sum of the bytes of every input and of the output),
	// shown as GB/s (10⁹ bytes).
	MetricBytes
	// MetricTokens: tokens of a language model evaluated per second (the model families), shown
	// as tokens/s.
	MetricTokens
)

// Unit is the throughput's unit as the table and chart print it.
func (m Metric) Unit() string {
	switch m {
	case MetricFLOPs:
		return "GFLOPS"
	case MetricTokens:
		return "tokens/s"
	}
	return "GB/s"
}

// scale is what a work count per second is divided by to print it in the unit (10⁹ for GFLOPS
// and GB/s, 1 for tokens/s).
func (m Metric) scale() float64 {
	if m == MetricTokens {
		return 1
	}
	return 1e9
}

// Family is one op with one weight type and layout, run over a ladder of sizes. Its ID is a
// slash-separated path (op/kind/type) that -ops matches against.
type Family struct {
	ID     string
	Title  string  // the case column: "MUL_MAT q4_0 mat-vec"
	XLabel string  // what the size N is, for the chart's x axis
	Metric Metric  // how throughput is counted
	Ladder []int64 // default sizes, increasing
	Quick  []int64 // sizes for -quick, increasing
	Limit  float64 // NMSE above which a result is marked wrong
	Sched  bool    // also run through the scheduler (each Vulkan device + CPU)
	Like   string  // a family whose throughput predicts this one's first size ("": the best seen)
	Full   bool    // too big for -quick: left out of it unless -ops selects the family
	// model, for the model families (-model), is the language model their cases run; their rows
	// are (target, -ngl) pairs run by Runner.runModelOn instead of graphs built by Case.Build.
	model *modelSource
	// make returns the case of size n (n is rounded to the nearest valid size first).
	make func(n int64) *Case
}

// Case is one family at one size: how to build its graph and how much work one run does.
type Case struct {
	Family *Family
	N      int64   // the size parameter (after rounding)
	Shape  string  // human-readable shape
	FLOPs  float64 // floating-point operations per run (0 when unknown)
	Bytes  float64 // bytes moved per run: inputs + output
	// Build creates the case's tensors: weights in w, activations and ops in x (w == x when one
	// backend runs everything). It returns the output and every tensor that needs data.
	Build func(w, x *core.Context) (*core.Tensor, []Input)
}

// Work is the amount the case's metric counts per run.
func (c *Case) Work() float64 {
	switch c.Family.Metric {
	case MetricFLOPs:
		return c.FLOPs
	case MetricTokens:
		return float64(c.N)
	}
	return c.Bytes
}

// Label is "MUL_MAT q4_0 mat-vec 1024×1024" style, for progress lines.
func (c *Case) Label() string { return c.Family.Title + " " + c.Shape }

// Input is a tensor that needs data before the graph runs, and how to make it.
type Input struct {
	T    *core.Tensor
	Fill Fill
}

// Fill describes deterministic input data.
type Fill struct {
	Kind   FillKind
	Lo, Hi float32   // uniform range
	Mod    int32     // ids in [0, Mod)
	Offset int32     // first position
	Values []float32 // FillValues
}

// FillKind selects the data generator.
type FillKind int

const (
	FillUniform FillKind = iota // uniform floats in [Lo, Hi)
	FillIDs                     // int32 ids in [0, Mod)
	FillPos                     // int32 positions Offset, Offset+1, ...
	FillCausal                  // f32 causal mask: 0 on and below the diagonal, -inf above
	FillValues                  // exactly Values (an optimizer's hyper-parameters)
)

// Data generates the values of a tensor of n elements (cols = ne0 for the mask): []float32 or
// []int32. seed makes it reproducible.
func (f Fill) Data(seed uint64, n, cols int64) any {
	r := rand.New(rand.NewPCG(seed, 0x7a6d))
	switch f.Kind {
	case FillIDs:
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(r.IntN(int(max(f.Mod, 1))))
		}
		return out
	case FillPos:
		out := make([]int32, n)
		for i := range out {
			out[i] = f.Offset + int32(i)
		}
		return out
	case FillValues:
		out := make([]float32, n)
		copy(out, f.Values)
		return out
	case FillCausal:
		out := make([]float32, n)
		for i := range out {
			if int64(i)%cols > int64(i)/cols {
				out[i] = float32(math.Inf(-1))
			}
		}
		return out
	}
	out := make([]float32, n)
	lo, hi := f.Lo, f.Hi
	if lo == 0 && hi == 0 {
		lo, hi = -1, 1
	}
	for i := range out {
		out[i] = lo + (hi-lo)*r.Float32()
	}
	return out
}

var uniform = Fill{Kind: FillUniform, Lo: -1, Hi: 1}

// Suite returns every family, in the order they run and print.
func Suite() []*Family {
	var fams []*Family
	for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeQ4_0, core.TypeQ8_0} {
		fams = append(fams, mulMatFamily(typ, false))
	}
	for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeQ4_0, core.TypeQ8_0} {
		fams = append(fams, mulMatFamily(typ, true))
	}
	for _, typ := range []core.Type{core.TypeQ4_0, core.TypeQ8_0, core.TypeQ4_K, core.TypeQ5_K, core.TypeQ6_K, core.TypeIQ4_XS} {
		fams = append(fams, ffnFamily(typ))
	}
	fams = append(fams,
		binaryFamily(core.OpAdd),
		binaryFamily(core.OpMul),
		softMaxFamily(),
		rmsNormFamily(),
		ropeFamily(),
		blockFamily(),
		trainFamily(),
		trainBlockFamily(),
	)
	return fams
}

// roundUp rounds n up to a positive multiple of m.
func roundUp(n, m int64) int64 {
	if n < m {
		return m
	}
	return (n + m - 1) / m * m
}

// mulMatFamily: MUL_MAT with weights of type typ, either the square matrix product (m = n = k = N)
// or the matrix-vector product (N×N weights times one column, the token-generation case).
func mulMatFamily(typ core.Type, vec bool) *Family {
	kind, title := "mat", "matrix"
	ladder, quick := []int64{64, 128, 256, 512, 1024, 2048}, []int64{64, 128, 256}
	xlabel := "n (m = n = k)"
	if vec {
		kind, title = "vec", "mat-vec"
		ladder, quick = []int64{512, 1024, 2048, 4096, 8192}, []int64{512, 1024, 2048}
		xlabel = "n (n×n weights · 1 column)"
	}
	f := &Family{
		ID:     "mul_mat/" + kind + "/" + typ.String(),
		Title:  "MUL_MAT " + typ.String() + " " + title,
		XLabel: xlabel,
		Metric: MetricFLOPs,
		Ladder: ladder,
		Quick:  quick,
		Limit:  5e-4,
	}
	f.make = func(n int64) *Case {
		n = roundUp(n, 32)
		cols := n
		if vec {
			cols = 1
		}
		c := &Case{Family: f, N: n, FLOPs: 2 * float64(n) * float64(n) * float64(cols)}
		c.Shape = fmt.Sprintf("%d×%d · %d×%d", n, n, n, cols)
		c.Bytes = float64(typ.RowSize(n)*n) + 4*float64(n*cols) + 4*float64(n*cols)
		c.Build = func(w, x *core.Context) (*core.Tensor, []Input) {
			a := w.NewTensor2D(typ, n, n).SetName("a")
			b := x.NewTensor2D(core.TypeF32, n, cols).SetName("b").SetInput()
			return x.MulMat(a, b).SetName("out"), []Input{{a, uniform}, {b, uniform}}
		}
		return c
	}
	return f
}

// ffnFamily: MUL_MAT with a model-sized weight of type typ, 4096 columns by 14336 rows (a
// feed-forward up projection), times N tokens of f32 activations: N = 1 is the mat-vec of token
// generation, N = 512 a prompt batch. It puts the quantization types real GGUF files use side by
// side.
func ffnFamily(typ core.Type) *Family {
	const k, m = 4096, 14336
	f := &Family{
		ID:     "mul_mat/ffn/" + typ.String(),
		Title:  "MUL_MAT " + typ.String() + " 4096×14336",
		XLabel: "tokens (4096×14336 weights · 4096×N)",
		Metric: MetricFLOPs,
		Ladder: []int64{1, 512},
		Quick:  []int64{1, 32},
		Limit:  5e-4,
		Full:   true, // making and quantizing 58.7M weights alone takes seconds per type
	}
	f.make = func(n int64) *Case {
		c := &Case{Family: f, N: n, FLOPs: 2 * float64(k) * float64(m) * float64(n)}
		c.Shape = fmt.Sprintf("%d×%d · %d×%d", k, m, k, n)
		c.Bytes = float64(typ.RowSize(k)*m) + 4*float64(k*n) + 4*float64(m*n)
		c.Build = func(w, x *core.Context) (*core.Tensor, []Input) {
			a := w.NewTensor2D(typ, k, m).SetName("a")
			b := x.NewTensor2D(core.TypeF32, k, n).SetName("b").SetInput()
			return x.MulMat(a, b).SetName("out"), []Input{{a, uniform}, {b, uniform}}
		}
		return c
	}
	return f
}

// activations lays out n elements as rows of cols: [cols, ceil(n/cols)].
func activations(n, cols int64) (int64, int64) {
	n = roundUp(n, cols)
	return cols, n / cols
}

var elementLadder = []int64{64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20}
var elementQuick = []int64{64 << 10, 256 << 10, 1 << 20}

func binaryFamily(op core.Op) *Family {
	f := &Family{
		ID:     strings.ToLower(op.String()) + "/f32",
		Title:  op.String() + " f32",
		XLabel: "elements",
		Metric: MetricBytes,
		Ladder: elementLadder,
		Quick:  elementQuick,
		Limit:  1e-7,
	}
	f.make = func(n int64) *Case {
		cols, rows := activations(n, 4096)
		c := &Case{Family: f, N: cols * rows, Shape: fmt.Sprintf("%d×%d", cols, rows)}
		c.Bytes = 3 * 4 * float64(c.N)
		c.FLOPs = float64(c.N)
		c.Build = func(w, x *core.Context) (*core.Tensor, []Input) {
			a := x.NewTensor2D(core.TypeF32, cols, rows).SetName("a").SetInput()
			b := x.NewTensor2D(core.TypeF32, cols, rows).SetName("b").SetInput()
			var out *core.Tensor
			if op == core.OpMul {
				out = x.Mul(a, b)
			} else {
				out = x.Add(a, b)
			}
			return out.SetName("out"), []Input{{a, uniform}, {b, uniform}}
		}
		return c
	}
	return f
}

func softMaxFamily() *Family {
	return rowOpFamily("soft_max/f32", "SOFT_MAX f32", 1024, 1e-6, Fill{Lo: -8, Hi: 8},
		func(x *core.Context, a *core.Tensor) *core.Tensor { return x.SoftMaxExt(a, nil, 0.125, 0) })
}

func rmsNormFamily() *Family {
	return rowOpFamily("rms_norm/f32", "RMS_NORM f32", 4096, 1e-7, uniform,
		func(x *core.Context, a *core.Tensor) *core.Tensor { return x.RMSNorm(a, 1e-5) })
}

// rowOpFamily is a family of a one-input row op over f32 rows of rowLen, measured in bytes moved
// (the input and the output).
func rowOpFamily(id, title string, rowLen int64, limit float64, fill Fill, op func(x *core.Context, a *core.Tensor) *core.Tensor) *Family {
	f := &Family{
		ID:     id,
		Title:  title,
		XLabel: fmt.Sprintf("elements (rows of %d)", rowLen),
		Metric: MetricBytes,
		Ladder: elementLadder[:4],
		Quick:  elementQuick,
		Limit:  limit,
	}
	f.make = func(n int64) *Case {
		cols, rows := activations(n, rowLen)
		c := &Case{Family: f, N: cols * rows, Shape: fmt.Sprintf("%d×%d", cols, rows)}
		c.Bytes = 2 * 4 * float64(c.N)
		c.Build = func(w, x *core.Context) (*core.Tensor, []Input) {
			a := x.NewTensor2D(core.TypeF32, cols, rows).SetName("a").SetInput()
			return op(x, a).SetName("out"), []Input{{a, fill}}
		}
		return c
	}
	return f
}

func ropeFamily() *Family {
	const headD, nHead = 128, 32
	f := &Family{
		ID:     "rope/f32",
		Title:  "ROPE f32 neox",
		XLabel: "elements (128 dims × 32 heads × tokens)",
		Metric: MetricBytes,
		Ladder: elementLadder[:4],
		Quick:  elementQuick,
		Limit:  1e-7,
	}
	f.make = func(n int64) *Case {
		_, tok := activations(n, headD*nHead)
		c := &Case{Family: f, N: headD * nHead * tok, Shape: fmt.Sprintf("%d×%d×%d", headD, nHead, tok)}
		c.Bytes = 2*4*float64(c.N) + 4*float64(tok)
		c.Build = func(w, x *core.Context) (*core.Tensor, []Input) {
			a := x.NewTensor3D(core.TypeF32, headD, nHead, tok).SetName("a").SetInput()
			pos := x.NewTensor1D(core.TypeI32, tok).SetName("pos").SetInput()
			out := x.Rope(a, pos, headD, core.RopeNeox).SetName("out")
			return out, []Input{{a, uniform}, {pos, Fill{Kind: FillPos, Offset: 7}}}
		}
		return c
	}
	return f
}

// blockTokens is the number of tokens the transformer-like block processes per run.
const blockTokens = 32

// blockFamily is a transformer-like layer (a prompt chunk of blockTokens tokens): embedding lookup,
// rms_norm, q4_0 Q/K/V/O projections, rope, causal soft_max attention, a SwiGLU feed-forward with
// q4_0 gate/up and q8_0 down weights, residual adds. N is n_embd (heads of 64).
func blockFamily() *Family {
	f := &Family{
		ID:     "block/q4_0",
		Title:  "BLOCK q4_0/q8_0",
		XLabel: fmt.Sprintf("n_embd (%d tokens)", blockTokens),
		Metric: MetricFLOPs,
		Ladder: []int64{128, 256, 512, 1024},
		Quick:  []int64{128, 256},
		Limit:  2e-3, // the CPU's quantized activations compound over seven products
		Sched:  true,
		Like:   "mul_mat/mat/q4_0",
	}
	f.make = func(n int64) *Case {
		nEmbd := roundUp(n, 64)
		c := &Case{Family: f, N: nEmbd}
		nFF := roundUp(nEmbd*8/3, 64)
		c.Shape = fmt.Sprintf("n_embd %d, ff %d, %d tok", nEmbd, nFF, blockTokens)
		c.Build = func(w, x *core.Context) (*core.Tensor, []Input) {
			out, ins, _ := buildBlock(w, x, nEmbd, nFF, blockTokens, core.TypeQ4_0, core.TypeQ8_0)
			return out, ins
		}
		// The work counts come from the graph itself (same code as the runner's).
		w := core.NewContext(core.ContextParams{NoAlloc: true})
		out, _ := c.Build(w, w)
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(out)
		c.FLOPs, c.Bytes = graphWork(g)
		return c
	}
	return f
}

// buildBlock builds the block with projection weights of type wt and down-projection weights of
// type wdt; it returns the output, the tensors that need data and the weights.
func buildBlock(w, x *core.Context, nEmbd, nFF, nTok int64, wt, wdt core.Type) (*core.Tensor, []Input, []*core.Tensor) {
	const headD = 64
	const nVocab = 256
	nHead := nEmbd / headD
	var ins []Input
	var weights []*core.Tensor
	weight := func(t *core.Tensor) *core.Tensor {
		ins = append(ins, Input{t, Fill{Lo: -0.5, Hi: 0.5}})
		weights = append(weights, t)
		return t
	}
	tokEmbd := weight(w.NewTensor2D(core.TypeF32, nEmbd, nVocab).SetName("tok_embd"))
	attnNorm := weight(w.NewTensor1D(core.TypeF32, nEmbd).SetName("attn_norm"))
	wq := weight(w.NewTensor2D(wt, nEmbd, nEmbd).SetName("wq"))
	wk := weight(w.NewTensor2D(wt, nEmbd, nEmbd).SetName("wk"))
	wv := weight(w.NewTensor2D(wt, nEmbd, nEmbd).SetName("wv"))
	wo := weight(w.NewTensor2D(wt, nEmbd, nEmbd).SetName("wo"))
	ffnNorm := weight(w.NewTensor1D(core.TypeF32, nEmbd).SetName("ffn_norm"))
	wgu := weight(w.NewTensor2D(wt, nEmbd, 2*nFF).SetName("ffn_gate_up"))
	wdown := weight(w.NewTensor2D(wdt, nFF, nEmbd).SetName("ffn_down"))

	ids := x.NewTensor1D(core.TypeI32, nTok).SetName("ids").SetInput()
	pos := x.NewTensor1D(core.TypeI32, nTok).SetName("pos").SetInput()
	mask := x.NewTensor2D(core.TypeF32, nTok, nTok).SetName("mask").SetInput()
	ins = append(ins, Input{ids, Fill{Kind: FillIDs, Mod: nVocab}}, Input{pos, Fill{Kind: FillPos, Offset: 3}},
		Input{mask, Fill{Kind: FillCausal}})

	inp := x.GetRows(tokEmbd, ids).SetName("inp")
	cur := x.Mul(x.RMSNorm(inp, 1e-5), attnNorm).SetName("attn_in")
	q := x.Reshape3D(x.MulMat(wq, cur), headD, nHead, nTok)
	k := x.Reshape3D(x.MulMat(wk, cur), headD, nHead, nTok)
	v := x.Reshape3D(x.MulMat(wv, cur), headD, nHead, nTok)
	q = x.Rope(q, pos, headD, core.RopeNeox).SetName("q_rope")
	k = x.Rope(k, pos, headD, core.RopeNeox).SetName("k_rope")
	qp := x.Permute(q, 0, 2, 1, 3) // [headD, nTok, nHead]
	kp := x.Permute(k, 0, 2, 1, 3)
	kq := x.MulMat(kp, qp).SetName("kq") // [nTok(kv), nTok(q), nHead]
	kq = x.SoftMaxExt(kq, mask, float32(1/math.Sqrt(headD)), 0).SetName("kq_soft")
	vt := x.Cont(x.Permute(v, 1, 2, 0, 3)).SetName("vt") // [nTok, headD, nHead]
	kqv := x.MulMat(vt, kq).SetName("kqv")               // [headD, nTok, nHead]
	merged := x.Cont(x.Permute(kqv, 0, 2, 1, 3))         // [headD, nHead, nTok]
	attn := x.MulMat(wo, x.Reshape2D(merged, nEmbd, nTok)).SetName("attn_out")
	cur = x.Add(attn, inp).SetName("resid1")
	nrm := x.Mul(x.RMSNorm(cur, 1e-5), ffnNorm)
	h := x.Swiglu(x.MulMat(wgu, nrm)).SetName("ffn_h")
	out := x.Add(x.MulMat(wdown, h), cur).SetName("out").SetOutput()
	return out, ins, weights
}

// graphWork counts a graph's work: FLOPs of its MUL_MAT nodes (2·k per output element) and the
// bytes of every computing node's sources and result.
func graphWork(g *core.Graph) (flops, bytes float64) {
	for _, n := range g.Nodes() {
		if n.Op == core.OpNone || n.Op.IsView() {
			continue
		}
		if n.Op == core.OpMulMat {
			flops += 2 * float64(n.Src[0].Ne[0]) * float64(n.NElements())
		}
		bytes += float64(n.NBytes())
		for _, s := range n.Src {
			if s != nil {
				bytes += float64(s.NBytes())
			}
		}
	}
	return flops, bytes
}

// matchOp reports whether the -ops term matches the family ID: the whole ID, a leading path of it
// ("mul_mat", "mul_mat/vec"), any one part ("q4_0", "vec"), or a path.Match glob ("*/f16"),
// ignoring case ("q4_k" matches "mul_mat/ffn/q4_K").
func matchOp(term, id string) bool {
	term = strings.ToLower(strings.TrimSpace(term))
	id = strings.ToLower(id)
	if term == "" {
		return false
	}
	if term == id || strings.HasPrefix(id, term+"/") {
		return true
	}
	for _, p := range strings.Split(id, "/") {
		if p == term {
			return true
		}
	}
	ok, _ := path.Match(term, id)
	return ok
}

// selectFamilies keeps the families any term matches (all when terms is empty). It returns the terms
// that matched nothing, so a typo is reported instead of silently running nothing.
func selectFamilies(fams []*Family, terms []string) (sel []*Family, unmatched []string) {
	if len(terms) == 0 {
		return fams, nil
	}
	used := make([]bool, len(terms))
	for _, f := range fams {
		keep := false
		for i, t := range terms {
			if matchOp(t, f.ID) {
				keep, used[i] = true, true
			}
		}
		if keep {
			sel = append(sel, f)
		}
	}
	for i, t := range terms {
		if !used[i] {
			unmatched = append(unmatched, t)
		}
	}
	return sel, unmatched
}
