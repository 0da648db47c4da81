package tests

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// FuzzGraph decodes the fuzz bytes into a graph of random ops on random shapes, views (sensible and
// hostile offsets and strides), permutes, reshapes and broadcasts. Building must never panic (errors
// are fine). A graph that builds is computed on the CPU backend with the SIMD kernels and with the
// reference kernels (cpu.Options.Reference): both must succeed or fail alike, no kernel may panic,
// and every node, computed from the same inputs on both, must agree within ggml's NMSE limits
// (exact for copies to the same type).
func FuzzGraph(f *testing.F) {
	for _, seed := range fzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fzCheck(t, data)
	})
}

// fzSeeds are built-in seeds besides testdata/fuzz/FuzzGraph (each a tiny program, see fzBuild).
var fzSeeds = [][]byte{
	{},
	{2, 1, 2, 3, 4, 5, 6, 1, 0, 0, 0},
	{3, 0, 11, 0, 3, 0, 13, 1, 0, 12, 0, 6, 0, 0},
}

// fzReader hands out the fuzz bytes; past the end it gives zeros.
type fzReader struct {
	b []byte
	i int
}

func (r *fzReader) u8() byte {
	if r.i >= len(r.b) {
		return 0
	}
	v := r.b[r.i]
	r.i++
	return v
}

func (r *fzReader) intn(n int) int { return int(r.u8()) % n }

// dim is a size: mostly 1 to 6, sometimes 0 (an empty tensor).
func (r *fzReader) dim() int64 {
	v := r.u8()
	if v >= 250 {
		return 0
	}
	return int64(v%6) + 1
}

// num is a size, stride or offset: usually near want, sometimes hostile (negative, huge, overflowing).
func (r *fzReader) num(want int64) int64 {
	switch v := r.u8(); v % 16 {
	case 0:
		return -int64(r.u8()) - 1
	case 1:
		return math.MaxInt64 - int64(r.u8())
	case 2:
		return 1<<62 + int64(r.u8())
	case 3:
		return int64(r.u8()) * 4
	case 4:
		return want + int64(r.u8()%8)
	case 5:
		return math.MinInt64 + int64(r.u8())
	default:
		return want
	}
}

// fzTypes are the leaf types the fuzzer creates (quantized only where rows hold whole blocks).
var fzTypes = []core.Type{core.TypeF32, core.TypeF32, core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ8_0, core.TypeQ4_0}

// fzBuilder builds one graph from the bytes.
type fzBuilder struct {
	r    *fzReader
	c    *core.Context
	pool []*core.Tensor
}

func (b *fzBuilder) pick() *core.Tensor { return b.pool[b.r.intn(len(b.pool))] }

func (b *fzBuilder) leaf(typ core.Type, ne ...int64) *core.Tensor {
	t := b.c.NewTensor(typ, ne...)
	return t
}

// newLeaf makes a leaf of a random type and shape.
func (b *fzBuilder) newLeaf() *core.Tensor {
	typ := fzTypes[b.r.intn(len(fzTypes))]
	ne := []int64{b.r.dim(), b.r.dim(), b.r.dim(), b.r.dim()}
	if typ.IsQuantized() {
		ne[0] *= typ.BlockSize()
	}
	return b.leaf(typ, ne[:1+b.r.intn(4)]...)
}

// like makes a leaf shaped like a, each dimension kept or (for broadcasting) set to 1.
func (b *fzBuilder) like(a *core.Tensor, typ core.Type) *core.Tensor {
	var ne [4]int64
	m := b.r.u8()
	for i := range ne {
		ne[i] = a.Ne[i]
		if m&(1<<i) != 0 {
			ne[i] = 1
		}
	}
	return b.leaf(typ, ne[:]...)
}

// other is a second operand: a random tensor of the pool or a fresh one broadcastable to a.
func (b *fzBuilder) other(a *core.Tensor) *core.Tensor {
	if b.r.intn(3) == 0 {
		return b.pick()
	}
	return b.like(a, core.TypeF32)
}

var fzUnary = []func(*core.Context, *core.Tensor) *core.Tensor{
	(*core.Context).Silu, (*core.Context).Gelu, (*core.Context).GeluQuick, (*core.Context).Sqr,
	(*core.Context).Sqrt, (*core.Context).Log, (*core.Context).Sin, (*core.Context).Cos,
	(*core.Context).Neg, (*core.Context).Abs, (*core.Context).Sgn, (*core.Context).Step,
	(*core.Context).Tanh, (*core.Context).Elu, (*core.Context).Relu, (*core.Context).Sigmoid,
	(*core.Context).Hardswish, (*core.Context).Hardsigmoid, (*core.Context).Exp,
	(*core.Context).Expm1, (*core.Context).Softplus, (*core.Context).GeluErf, (*core.Context).Floor,
	(*core.Context).Ceil, (*core.Context).Round, (*core.Context).Trunc,
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Xielu(a, 0.8, 0.8, 0.5, -1e-6) },
	(*core.Context).Swiglu, (*core.Context).Geglu, (*core.Context).Reglu,
	(*core.Context).GegluErf, (*core.Context).GegluQuick,
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.SwigluOAI(a, 1.702, 7, false) },
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.L2Norm(a, 1e-6) },
	(*core.Context).Cumsum, (*core.Context).Diag,
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Fill(a, 0.5) },
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Tri(a, core.TriLowerDiag) },
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Roll(a, 1, -1, 0, 0) },
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Pad(a, 1, 0, 2, 0) },
	func(c *core.Context, a *core.Tensor) *core.Tensor {
		return c.PadExt(a, core.PadParams{Left: [4]int{1, 1}, Right: [4]int{0, 1}, Circular: true})
	},
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.PadReflect1D(a, 1, 1) },
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.TopK(a, 1) },
	// convolution nodes: a as the input (or columns), a fresh kernel
	func(c *core.Context, a *core.Tensor) *core.Tensor {
		return c.Conv2DDirect(c.NewTensor(core.TypeF16, 2, 2, a.Ne[2], 3), a, 1, 2, 1, 0, 1, 1)
	},
	func(c *core.Context, a *core.Tensor) *core.Tensor {
		return c.Conv2DDwDirect(c.NewTensor(core.TypeF32, 3, 1, 1, a.Ne[2]), a, 2, 1, 1, 1, 1, 1)
	},
	func(c *core.Context, a *core.Tensor) *core.Tensor {
		return c.ConvTranspose2DP0(c.NewTensor(core.TypeF32, 2, 3, 2, a.Ne[2]), a, 2)
	},
	func(c *core.Context, a *core.Tensor) *core.Tensor {
		return c.ConvTranspose1D(c.NewTensor(core.TypeF16, 3, 2, a.Ne[1]), a, 2, 0, 1)
	},
	func(c *core.Context, a *core.Tensor) *core.Tensor {
		p := core.Conv3DParams{S0: 1, S1: 2, S2: 1, P0: 1, P1: 0, P2: 1, D0: 1, D1: 1, D2: 2}
		if a.Ne[3] > 1 {
			return c.Conv3DDirect(c.NewTensor(core.TypeF32, 2, 1, 2, a.Ne[3]*2), a, p, int(a.Ne[3]), 1, 2)
		}
		return c.Im2Col3D(c.NewTensor(core.TypeF32, 2, 1, 2, 1), a, 1, p, core.TypeF16)
	},
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Col2Im1D(a, 2, 1, 1) },
	func(c *core.Context, a *core.Tensor) *core.Tensor {
		return c.SolveTri(c.Tri(a, core.TriLowerDiag), a, true, true, false)
	},
	func(c *core.Context, a *core.Tensor) *core.Tensor {
		return c.SSMConv(a, c.View2D(a, 2, a.Ne[1], a.Nb[1], 0))
	},
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.GroupNorm(a, 2, 1e-5) },
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Upscale(a, 2, core.ScaleBilinear) },
	func(c *core.Context, a *core.Tensor) *core.Tensor {
		return c.Interpolate(a, a.Ne[0]+1, max(a.Ne[1]-1, 1), a.Ne[2], a.Ne[3], core.ScaleBicubic|core.ScaleAlignCorners)
	},
	func(c *core.Context, a *core.Tensor) *core.Tensor { return c.WinPart(a, 2) },
	// DeepSeek V4 hyper-connections: a as the streams [n_embd, hc, n_tokens]
	func(c *core.Context, a *core.Tensor) *core.Tensor {
		return c.Dsv4HcPre(a, c.NewTensor(core.TypeF32, a.Ne[1], a.Ne[2]))
	},
	func(c *core.Context, a *core.Tensor) *core.Tensor {
		return c.Dsv4HcPost(c.NewTensor(core.TypeF32, a.Ne[0], a.Ne[2]), a, c.NewTensor(core.TypeF32, a.Ne[1], a.Ne[2]),
			c.NewTensor(core.TypeF32, a.Ne[1], a.Ne[1], a.Ne[2]))
	},
}

// step appends one op (or leaf) chosen by the bytes to the pool.
func (b *fzBuilder) step() {
	r, c := b.r, b.c
	a := b.pick()
	var t *core.Tensor
	switch r.intn(24) {
	case 0:
		t = b.newLeaf()
	case 1:
		t = c.Add(a, b.other(a))
	case 2:
		t = c.Sub(a, b.other(a))
	case 3:
		t = c.Mul(a, b.other(a))
	case 4:
		t = c.Div(a, b.other(a))
	case 5:
		t = fzUnary[r.intn(len(fzUnary))](c, a)
	case 6:
		s := float32(int(r.u8())-128) / 32
		switch r.intn(4) {
		case 0:
			t = c.Scale(a, s)
		case 1:
			t = c.ScaleBias(a, s, float32(r.u8())/64)
		case 2:
			t = c.Clamp(a, -s, s)
		default:
			t = c.LeakyRelu(a, s)
		}
	case 7:
		switch r.intn(3) {
		case 0:
			t = c.SoftMax(a)
		case 1:
			mask := b.leaf([]core.Type{core.TypeF32, core.TypeF16}[r.intn(2)], a.Ne[0], a.Ne[1])
			t = c.SoftMaxExt(a, mask, float32(r.u8())/64, 0)
		default:
			t = c.DiagMaskInf(a, r.intn(4))
		}
	case 8:
		eps := float32(r.u8()) * 1e-6
		if r.intn(2) == 0 {
			t = c.RMSNorm(a, eps)
		} else {
			t = c.Norm(a, eps)
		}
	case 9:
		switch r.intn(5) {
		case 0:
			t = c.SumRows(a)
		case 1:
			t = c.Sum(a)
		case 2:
			t = c.Mean(a)
		case 3:
			t = c.Argmax(a)
		default:
			t = c.Argsort(a, core.SortOrder(r.intn(2)))
		}
	case 10:
		// MUL_MAT with a fresh right operand (k shared, broadcast over dims 2 and 3) or any tensor.
		var rhs *core.Tensor
		if r.intn(4) == 0 {
			rhs = b.pick()
		} else {
			rhs = b.leaf(core.TypeF32, a.Ne[0], r.dim(), a.Ne[2]*int64(1+r.intn(2)), a.Ne[3])
		}
		t = c.MulMat(a, rhs)
	case 11:
		// Weights of a quantized or half type times a.
		typ := fzTypes[3+r.intn(len(fzTypes)-3)]
		k := a.Ne[0]
		if typ.IsQuantized() {
			k = typ.BlockSize() * int64(1+r.intn(2))
		}
		w := b.leaf(typ, k, r.dim())
		x := a
		if a.Ne[0] != k {
			x = b.leaf(core.TypeF32, k, r.dim(), r.dim())
		}
		t = c.MulMat(w, x)
	case 12:
		if r.intn(2) == 0 {
			t = c.Cont(a)
		} else {
			t = c.Dup(a)
		}
	case 13:
		if r.intn(3) == 0 {
			t = c.Transpose(a)
		} else {
			p := rand.New(rand.NewPCG(uint64(r.u8()), 1)).Perm(4)
			if r.intn(8) == 0 {
				p[r.intn(4)] = int(int8(r.u8())) // hostile axis
			}
			t = c.Permute(a, p[0], p[1], p[2], p[3])
		}
	case 14:
		n := a.NElements()
		if r.intn(4) != 0 {
			// a reshape that keeps the element count
			d := r.dim()
			if d == 0 || n%d != 0 {
				d = 1
			}
			t = c.Reshape3D(a, d, n/d, 1)
			break
		}
		switch r.intn(5) {
		case 0:
			t = c.Reshape1D(a, r.num(n))
		case 1:
			d := r.dim()
			if d == 0 || n%d != 0 {
				d = 1
			}
			t = c.Reshape2D(a, r.num(d), r.num(n/d))
		case 2:
			t = c.Reshape3D(a, r.num(a.Ne[0]), r.num(a.Ne[1]), r.num(a.Ne[2]*a.Ne[3]))
		case 3:
			t = c.Reshape4D(a, r.num(a.Ne[0]), r.num(a.Ne[1]), r.num(a.Ne[2]), r.num(a.Ne[3]))
		default:
			t = c.ContShape(a, r.num(n))
		}
	case 15:
		t = b.view(a)
	case 16:
		switch r.intn(3) {
		case 0:
			dst := b.leaf(fzTypes[r.intn(5)], a.Ne[0], a.Ne[1], a.Ne[2], a.Ne[3])
			t = c.Cpy(a, dst)
		case 1:
			dst := b.pick()
			t = c.Cpy(a, dst)
		default:
			t = c.Cast(a, fzTypes[r.intn(5)])
		}
	case 17:
		idx := b.leaf(core.TypeI32, r.dim(), a.Ne[2], a.Ne[3])
		if r.intn(4) == 0 {
			idx = b.leaf(core.TypeI32, r.dim(), r.dim()%3+1)
		}
		idx.SetName(fmt.Sprintf("idx:%d", a.Ne[1]))
		t = c.GetRows(a, idx)
	case 18:
		t = c.Repeat(a, b.leaf(core.TypeF32, a.Ne[0]*int64(1+r.intn(2)), a.Ne[1]*int64(1+r.intn(2)), a.Ne[2], a.Ne[3]*int64(1+r.intn(2))))
	case 19:
		t = c.Concat(a, b.other(a), r.intn(5)-r.intn(2))
	case 20:
		bb := b.other(a)
		switch r.intn(4) {
		case 0:
			t = c.SwigluSplit(a, bb)
		case 1:
			t = c.GegluSplit(a, bb)
		case 2:
			t = c.GegluQuickSplit(a, bb)
		default:
			t = c.SwigluOAISplit(a, bb, 1.702, 7, r.intn(2) == 0)
		}
	case 21:
		pos := b.leaf(core.TypeI32, a.Ne[2])
		pos.SetName("pos")
		t = c.Rope(a, pos, int(a.Ne[0])-2*r.intn(2), 0)
	case 22:
		idx := b.leaf(core.TypeI32, r.dim(), a.Ne[2], a.Ne[3])
		idx.SetName(fmt.Sprintf("idx:%d", a.Ne[1]))
		src := b.leaf(core.TypeF32, a.Ne[0], idx.Ne[0], a.Ne[2], a.Ne[3])
		t = c.SetRows(a, src, idx)
	default:
		t = c.Add1(a, b.leaf(core.TypeF32, 1))
	}
	if t != nil {
		b.pool = append(b.pool, t)
	}
}

// view makes View1D..4D of a: usually a sensible window (sizes up to a's, a's strides or wider
// ones, an offset that keeps it inside), sometimes hostile (negative, huge or overflowing values).
func (b *fzBuilder) view(a *core.Tensor) *core.Tensor {
	r, c := b.r, b.c
	es := a.Type.Size()
	var ne, nb [4]int64
	var off int64
	if r.intn(4) == 0 {
		for i := range ne {
			ne[i] = r.num(max(1, a.Ne[i]-int64(r.intn(2))))
			nb[i] = r.num(a.Nb[i])
		}
		off = r.num(es * int64(r.intn(4)))
	} else {
		for i := range ne {
			ne[i] = 1 + int64(r.u8())%max(1, a.Ne[i])
			nb[i] = a.Nb[i]
		}
		if a.Type.BlockSize() > 1 {
			ne[0] = a.Ne[0]
		} else if k := a.Ne[0] - ne[0]; k > 0 {
			off = es * (int64(r.u8()) % (k + 1))
		}
		if r.intn(3) == 0 && ne[1] > 1 {
			// rows further apart than the source's, within its bytes
			ne[1] = max(1, ne[1]/2)
			nb[1] *= 2
		}
	}
	switch r.intn(4) {
	case 0:
		return c.View1D(a, ne[0], off)
	case 1:
		return c.View2D(a, ne[0], ne[1], nb[1], off)
	case 2:
		return c.View3D(a, ne[0], ne[1], ne[2], nb[1], nb[2], off)
	default:
		return c.View4D(a, ne[0], ne[1], ne[2], ne[3], nb[1], nb[2], nb[3], off)
	}
}

// fzBuild builds the graph; it returns nil (and no error) when construction reported an error.
func fzBuild(data []byte) (ctx *core.Context, g *core.Graph, threads int, err error) {
	r := &fzReader{b: data}
	ctx = core.NewContext(core.ContextParams{MemSize: 4 << 20})
	b := &fzBuilder{r: r, c: ctx}
	threads = 1 + r.intn(4)
	nLeafs := 1 + r.intn(3)
	for range nLeafs {
		b.pool = append(b.pool, b.newLeaf())
	}
	nOps := 1 + r.intn(12)
	for range nOps {
		b.step()
		if ctx.Err() != nil {
			return nil, nil, 0, nil
		}
	}
	g = core.NewGraph(core.DefaultGraphSize)
	outs := 1 + r.intn(2)
	for i := range outs {
		g.BuildForwardExpand(b.pool[len(b.pool)-1-i%len(b.pool)])
	}
	if ctx.Err() != nil || g.Err() != nil {
		return nil, nil, 0, nil
	}
	return ctx, g, threads, nil
}

// fzFill gives every leaf of ctx deterministic values: uniform [-1, 1) for floats, indices from the
// bytes for I32 tensors named "idx:<rows>" (mostly in range, sometimes not), small positions for "pos".
func fzFill(ctx *core.Context, data []byte) error {
	h := fnv.New64a()
	h.Write(data)
	rng := rand.New(rand.NewPCG(h.Sum64(), 0xf022))
	for _, t := range ctx.Tensors() {
		if t.Op != core.OpNone || t.ViewSrc != nil || !fzSaneShape(t) || t.NElements() <= 0 || t.NElements() > 1<<22 || t.Data() == nil {
			continue // (sizes past the arena only pass construction bugs fzCoreProblem reports)
		}
		if t.Type == core.TypeI32 {
			v := make([]int32, t.NElements())
			var rows int64
			fmt.Sscanf(t.Name, "idx:%d", &rows)
			for i := range v {
				switch {
				case t.Name == "pos":
					v[i] = int32(rng.IntN(16))
				case rows > 0 && rng.IntN(16) != 0:
					v[i] = int32(rng.Int64N(rows))
				default:
					v[i] = int32(rng.IntN(64)) - 16
				}
			}
			if err := core.SetInt32s(t, v); err != nil {
				return err
			}
			continue
		}
		v := make([]float32, t.NElements())
		for i := range v {
			v[i] = rng.Float32()*2 - 1
		}
		if err := core.SetFloat32s(t, v); err != nil {
			return err
		}
	}
	return nil
}

// fzLimit is the NMSE limit for node n (0: bit-exact), as tests/ uses: matmul-like ops 5e-4,
// soft_max 1e-6, copies to the same type exact, to quantized types 1e-5, everything else 1e-7.
func fzLimit(n *core.Tensor) float64 {
	switch n.Op {
	case core.OpMulMat, core.OpOutProd:
		return 5e-4
	case core.OpSoftMax:
		return 1e-6
	case core.OpCpy, core.OpDup, core.OpCont, core.OpGetRows, core.OpSetRows, core.OpConcat, core.OpRepeat:
		switch {
		case n.Src[0] != nil && n.Src[0].Type == n.Type:
			return 0
		case n.Type.IsQuantized():
			return 1e-5
		}
	}
	return 1e-7
}

// fzCompare returns NMSE of got against want, or a problem (NaN/Inf mismatch, or any difference
// when exact).
func fzCompare(got, want []float32, exact bool) (float64, string) {
	if len(got) != len(want) {
		return 0, fmt.Sprintf("%d values vs %d", len(got), len(want))
	}
	var num, den float64
	for i := range got {
		x, y := float64(got[i]), float64(want[i])
		xn, yn := math.IsNaN(x), math.IsNaN(y)
		if xn || yn {
			if xn != yn {
				return 0, fmt.Sprintf("NaN at %d: got %v want %v", i, got[i], want[i])
			}
			continue
		}
		if exact {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && x != y {
				return 0, fmt.Sprintf("copy differs at %d: got %v want %v", i, got[i], want[i])
			}
			continue
		}
		if math.IsInf(x, 0) || math.IsInf(y, 0) || math.Abs(x) >= math.MaxFloat32/2 || math.Abs(y) >= math.MaxFloat32/2 {
			if math.Signbit(x) != math.Signbit(y) {
				return 0, fmt.Sprintf("infinity mismatch at %d: got %v want %v", i, got[i], want[i])
			}
			continue
		}
		d := x - y
		num += d * d
		den += y * y
	}
	if den == 0 {
		return num, ""
	}
	return num / den, ""
}

// fzArena is the host arena all of ctx's tensors live in (nil if none).
func fzArena(ctx *core.Context) []byte {
	for _, t := range ctx.Tensors() {
		if hb, ok := t.Buffer.(core.HostBuffer); ok {
			b := hb.Bytes()
			if u := ctx.Used(); u >= 0 && u < int64(len(b)) {
				b = b[:u] // (Used is only off after a construction bug fzCoreProblem reports)
			}
			return b
		}
	}
	return nil
}

// fzNoKernelPanic fails when err says a kernel panicked: bad input must be rejected before any
// kernel runs.
func fzNoKernelPanic(t *testing.T, what string, err error) {
	t.Helper()
	var kp *cpu.KernelPanicError
	if errors.As(err, &kp) {
		t.Fatalf("%s: a kernel panicked: %v", what, err)
	}
}

func fzCheck(t *testing.T, data []byte) {
	var (
		ctx     *core.Context
		g       *core.Graph
		threads int
	)
	func() {
		defer func() {
			if v := recover(); v != nil {
				t.Fatalf("building the graph panicked: %v", v)
			}
		}()
		ctx, g, threads, _ = fzBuild(data)
	}()
	if g == nil || g.NNodes() == 0 {
		return
	}
	if problem := fzCoreProblem(ctx); problem != "" {
		dir := os.Getenv("TANDEM_FUZZ_KNOWN_CORE")
		if dir == "" {
			t.Fatalf("construction accepted a bad tensor: %s", problem)
		}
		// Fuzzing past known construction bugs: keep the input for the report, and check that the
		// CPU backend still turns the bad tensor into an error (or computes it alike on both kernel
		// sets) without a kernel panic.
		fzKeep(dir, problem, data)
	}
	if err := fzFill(ctx, data); err != nil {
		t.Fatalf("filling the inputs: %v", err)
	}
	simd, err := cpu.New(cpu.Options{Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	defer simd.Close()
	ref, err := cpu.New(cpu.Options{Threads: 2, Reference: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	arena := fzArena(ctx)
	start := append([]byte(nil), arena...)

	// The whole graph on both kernel sets: no panic, and the same verdict.
	errSIMD := simd.GraphCompute(g)
	fzNoKernelPanic(t, "SIMD", errSIMD)
	copy(arena, start)
	errRef := ref.GraphCompute(g)
	fzNoKernelPanic(t, "reference", errRef)
	if (errSIMD == nil) != (errRef == nil) {
		t.Fatalf("SIMD and reference disagree on the graph: SIMD %v, reference %v", errSIMD, errRef)
	}
	if errRef != nil {
		return
	}

	// Node by node from the same state: the reference result, then SIMD's from the same bytes.
	copy(arena, start)
	pre := make([]byte, len(arena))
	for i, n := range g.Nodes() {
		if n.Op == core.OpNone || n.Op.IsView() || n.NElements() == 0 {
			continue
		}
		// Outputs of their own start as NaN bytes, so an element a kernel leaves unwritten shows.
		if n.ViewSrc == nil {
			if d := n.Data(); d != nil {
				for j := range d {
					d[j] = 0xff
				}
			}
		}
		copy(pre, arena)
		one := g.View(i, i+1)
		if err := ref.GraphCompute(one); err != nil {
			t.Fatalf("node %d %v: reference alone: %v (the whole graph ran)", i, n, err)
		}
		want, err := core.GetFloat32s(n)
		if err != nil {
			t.Fatalf("node %d %v: reading the reference: %v", i, n, err)
		}
		if n.ViewSrc == nil && n.Type == core.TypeF32 {
			for j, v := range want {
				if math.Float32bits(v) == 0xffffffff {
					t.Fatalf("node %d %v (sources %s): the reference kernel left element %d unwritten", i, n, fzSources(n), j)
				}
			}
		}
		post := append([]byte(nil), arena...)
		copy(arena, pre)
		if err := simd.GraphCompute(one); err != nil {
			t.Fatalf("node %d %v: SIMD alone: %v", i, n, err)
		}
		got, err := core.GetFloat32s(n)
		if err != nil {
			t.Fatalf("node %d %v: reading the SIMD result: %v", i, n, err)
		}
		limit := fzLimit(n)
		e, problem := fzCompare(got, want, limit == 0)
		if problem == "" && e > limit {
			problem = fmt.Sprintf("NMSE %.3g > %.3g", e, limit)
			// NMSE is ggml's metric for outputs of ordinary size; a few outputs that nearly cancel
			// (a dot product or a sum close to 0) can exceed it while every value is within the
			// rounding the kernels may differ by. Accept those when each value is within its bound.
			if bound := fzBound(n); bound != nil && fzWithin(got, want, bound) {
				problem = ""
			}
		}
		if problem != "" {
			t.Fatalf("node %d %v (sources %s): SIMD vs reference: %s", i, n, fzSources(n), problem)
		}
		copy(arena, post)
	}
}

// fzBound gives, per output element of a reduction, the largest difference two correct kernels may
// show: activations rounded to the weights' vec-dot type (f16: 2^-11 relative, q8_0: 1/254 of the
// block's largest value) or summed in another order. nil for other ops.
func fzBound(n *core.Tensor) []float64 {
	a, b := n.Src[0], n.Src[1]
	switch n.Op {
	case core.OpMulMat:
		av, err1 := core.GetFloat32s(a)
		bv, err2 := core.GetFloat32s(b)
		if err1 != nil || err2 != nil || a.Ne[0] != b.Ne[0] || a.Ne[2] == 0 || a.Ne[3] == 0 {
			return nil
		}
		k := a.Ne[0]
		r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
		out := make([]float64, 0, n.NElements())
		for i3 := range n.Ne[3] {
			for i2 := range n.Ne[2] {
				for i1 := range n.Ne[1] {
					brow := bv[((i3*b.Ne[2]+i2)*b.Ne[1]+i1)*k:][:k]
					var bmax float64
					for _, x := range brow {
						bmax = max(bmax, math.Abs(float64(x)))
					}
					for i0 := range n.Ne[0] {
						arow := av[((i3/r3*a.Ne[2]+i2/r2)*a.Ne[1]+i0)*k:][:k]
						var sw, swx float64
						for j, w := range arow {
							sw += math.Abs(float64(w))
							swx += math.Abs(float64(w) * float64(brow[j]))
						}
						out = append(out, 4e-3*sw*bmax+1e-6*swx+1e-30)
					}
				}
			}
		}
		return out
	case core.OpSumRows, core.OpSum, core.OpMean:
		av, err := core.GetFloat32s(a)
		if err != nil {
			return nil
		}
		row := a.Ne[0]
		if n.Op == core.OpSum {
			row = int64(len(av))
		}
		if row == 0 || int64(len(av))/row != n.NElements() {
			return nil
		}
		out := make([]float64, n.NElements())
		for i := range out {
			var s float64
			for _, x := range av[int64(i)*row:][:row] {
				s += math.Abs(float64(x))
			}
			if n.Op == core.OpMean {
				s /= float64(row)
			}
			out[i] = 1e-6*s + 1e-30
		}
		return out
	}
	return nil
}

// fzWithin reports whether every finite value of got is within bound of want.
func fzWithin(got, want []float32, bound []float64) bool {
	if len(bound) != len(got) || len(got) != len(want) {
		return false
	}
	for i := range got {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if d > bound[i] && !math.IsNaN(d) {
			return false
		}
	}
	return true
}

// fzCoreProblem checks what construction accepted: no negative size or stride, an element count
// and byte extent that fit int64 and the context, and every view inside its source (first and
// last byte). It returns the first problem.
func fzCoreProblem(ctx *core.Context) string {
	for _, t := range ctx.Tensors() {
		empty := false
		for i := range t.Ne {
			if t.Ne[i] < 0 || t.Nb[i] < 0 {
				return fmt.Sprintf("%v has ne %v nb %v (negative)", t, t.Ne, t.Nb)
			}
			empty = empty || t.Ne[i] == 0
		}
		if empty {
			continue
		}
		n := int64(1)
		for i := range t.Ne {
			if n > (1<<40)/t.Ne[i] {
				return fmt.Sprintf("%v has ne %v: more than 2^40 elements", t, t.Ne)
			}
			n *= t.Ne[i]
		}
		ext, ok := fzExtent(t)
		if !ok {
			return fmt.Sprintf("%v with ne %v nb %v spans more bytes than an int64 holds", t, t.Ne, t.Nb)
		}
		if ext < 0 {
			continue // a permuted block type: extent not derivable here
		}
		if t.NBytes() != ext {
			return fmt.Sprintf("%v with ne %v nb %v has NBytes %d, its strides span %d", t, t.Ne, t.Nb, t.NBytes(), ext)
		}
		if src := t.ViewSrc; src != nil {
			if t.ViewOffs < 0 || t.ViewOffs > src.NBytes() || ext > src.NBytes()-t.ViewOffs {
				return fmt.Sprintf("view %v (ne %v nb %v offset %d) reaches bytes %d..%d of its %d-byte source %v", t, t.Ne, t.Nb, t.ViewOffs, t.ViewOffs, t.ViewOffs+ext, src.NBytes(), src)
			}
		}
	}
	return ""
}

// fzSaneShape reports whether t's sizes and strides are non-negative, its element count is at most
// 2^40 and its byte extent fits an int64.
func fzSaneShape(t *core.Tensor) bool {
	n := int64(1)
	for i := range t.Ne {
		if t.Ne[i] < 0 || t.Nb[i] < 0 {
			return false
		}
		if t.Ne[i] == 0 {
			return true
		}
		if n > (1<<40)/t.Ne[i] {
			return false
		}
		n *= t.Ne[i]
	}
	_, ok := fzExtent(t)
	return ok
}

// fzExtent is the byte span of t's elements, overflow-checked (false on overflow); -1 when t's
// first dimension is not its block dimension.
func fzExtent(t *core.Tensor) (int64, bool) {
	mulAdd := func(acc, a, b int64) (int64, bool) {
		if a != 0 && b > (math.MaxInt64-acc)/a {
			return 0, false
		}
		return acc + a*b, true
	}
	bs := t.Type.BlockSize()
	var ext int64
	ok := true
	if bs == 1 {
		ext, ok = mulAdd(t.Type.Size(), t.Ne[0]-1, t.Nb[0])
	} else {
		if t.Nb[0] != t.Type.Size() || t.Ne[0]%bs != 0 {
			return -1, true
		}
		ext, ok = mulAdd(0, t.Ne[0]/bs, t.Nb[0])
	}
	for i := 1; ok && i < len(t.Ne); i++ {
		ext, ok = mulAdd(ext, t.Ne[i]-1, t.Nb[i])
	}
	return ext, ok
}

// fzKept counts inputs kept per problem kind, so fuzzing past a known bug keeps a few of each.
var (
	fzKeptMu sync.Mutex
	fzKept   = map[string]int{}
)

func fzKeep(dir, problem string, data []byte) {
	kind := problem
	if i := strings.IndexAny(kind, "(["); i > 0 {
		kind = kind[:i]
	}
	if j := strings.Index(problem, ") "); j > 0 {
		kind = problem[j:min(len(problem), j+24)]
	}
	fzKeptMu.Lock()
	defer fzKeptMu.Unlock()
	if fzKept[kind] >= 3 {
		return
	}
	fzKept[kind]++
	h := fnv.New64a()
	h.Write(data)
	name := fmt.Sprintf("%s/FuzzGraph-core-%016x", dir, h.Sum64())
	body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
	_ = os.WriteFile(name, []byte(body), 0o644)
	_ = os.WriteFile(name+".txt", []byte(problem+"\n"), 0o644)
}

func fzSources(n *core.Tensor) string {
	var s []string
	for _, x := range n.Src {
		if x != nil {
			s = append(s, fmt.Sprintf("%v nb%v", x, x.Nb))
		}
	}
	return strings.Join(s, ", ")
}
