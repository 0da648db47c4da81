//go:build cgo && !novulkan

package vulkan

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"regexp"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestFusedRMSNormMul: MUL(RMS_NORM(x), w) recorded as one dispatch gives both nodes' results bit
// for bit as the two dispatches do — for w repeated over rows, over rows and one more dimension,
// with RMS_NORM's result also read by another node, and with MUL writing over RMS_NORM's memory
// (as an allocator reusing a parent's memory does) — and the fused graph has one dispatch less.
func TestFusedRMSNormMul(t *testing.T) {
	be := newBackend(t)
	defer be.sh.Encoder().UseFusion(true)
	for _, c := range []struct {
		name    string
		wShape  [4]int64
		inPlace bool
	}{
		{"w_row", [4]int64{300, 1, 1, 1}, false},
		{"w_rows_and_dim2", [4]int64{300, 5, 1, 1}, false},
		{"mul_over_norm", [4]int64{300, 1, 1, 1}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var results [2][3][]byte
			var dispatches [2]int
			for run, fuse := range []bool{false, true} {
				ctx := core.NewContext(core.ContextParams{NoAlloc: true})
				x := ctx.NewTensor(core.TypeF32, 300, 5, 4)
				w := ctx.NewTensor(core.TypeF32, c.wShape[0], c.wShape[1], c.wShape[2], c.wShape[3])
				norm := ctx.RMSNorm(x, 1e-6)
				mul := ctx.Mul(norm, w)
				other := ctx.Add(x, x) // keeps the graph longer than the pair
				if !c.inPlace {
					other = ctx.Add(norm, x) // RMS_NORM's result read again after the pair
				}
				if err := ctx.Err(); err != nil {
					t.Fatal(err)
				}
				var over map[*core.Tensor]*core.Tensor
				if c.inPlace {
					over = map[*core.Tensor]*core.Tensor{mul: norm}
				}
				place(t, be, over, x, w, norm, mul, other)
				r := rand.New(rand.NewPCG(3, 4))
				randomize(t, r, x, -3, 3)
				randomize(t, r, w, -2, 2)
				g := core.NewGraph(core.DefaultGraphSize)
				g.BuildForwardExpand(mul)
				g.BuildForwardExpand(other)
				be.sh.Encoder().UseFusion(fuse)
				d0 := be.sh.Dispatches()
				if err := be.GraphCompute(g); err != nil {
					t.Fatal(err)
				}
				dispatches[run] = be.sh.Dispatches() - d0
				for i, tt := range []*core.Tensor{norm, mul, other} {
					results[run][i] = make([]byte, tt.NBytes())
					if err := core.TensorGet(tt, results[run][i], 0); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i, name := range []string{"RMS_NORM", "MUL", "ADD"} {
				if i == 0 && c.inPlace {
					continue // overwritten by MUL in both runs
				}
				if !bytes.Equal(results[0][i], results[1][i]) {
					t.Errorf("%s: fused result differs from the unfused one", name)
				}
			}
			if dispatches[1] != dispatches[0]-1 {
				t.Errorf("%d dispatches fused, %d unfused: want one less", dispatches[1], dispatches[0])
			}
		})
	}
}

// TestFusedAddRMSNormMul: MUL(RMS_NORM(ADD(a, b)), w), the residual sum and the next weighted
// norm, recorded as one dispatch gives the three nodes' results bit for bit as three dispatches
// do — with the sum read again later (as the next residual), written over a (an in-place ADD),
// and for rows longer than the shader keeps in registers — with two dispatches less; an ADD that
// broadcasts b stays a node of its own.
func TestFusedAddRMSNormMul(t *testing.T) {
	be := newBackend(t)
	defer be.sh.Encoder().UseFusion(true)
	for _, c := range []struct {
		name      string
		ne0       int64
		inPlace   bool
		broadcast bool
	}{
		{"sum_read_later", 300, false, false},
		{"add_over_a", 300, true, false},
		{"long_rows", 5000, false, false},
		{"b_broadcast", 300, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var results [2][4][]byte
			var dispatches [2]int
			for run, fuse := range []bool{false, true} {
				ctx := core.NewContext(core.ContextParams{NoAlloc: true})
				a := ctx.NewTensor(core.TypeF32, c.ne0, 5, 2)
				b := ctx.NewTensor(core.TypeF32, c.ne0, 5, 2)
				if c.broadcast {
					b = ctx.NewTensor(core.TypeF32, c.ne0, 1, 1)
				}
				w := ctx.NewTensor(core.TypeF32, c.ne0)
				sum := ctx.Add(a, b)
				norm := ctx.RMSNorm(sum, 1e-5)
				mul := ctx.Mul(norm, w)
				next := ctx.Add(mul, sum) // the sum read again after the three
				if err := ctx.Err(); err != nil {
					t.Fatal(err)
				}
				var over map[*core.Tensor]*core.Tensor
				if c.inPlace {
					over = map[*core.Tensor]*core.Tensor{sum: a}
				}
				place(t, be, over, a, b, w, sum, norm, mul, next)
				r := rand.New(rand.NewPCG(5, 6))
				randomize(t, r, a, -3, 3)
				randomize(t, r, b, -3, 3)
				randomize(t, r, w, -2, 2)
				g := core.NewGraph(core.DefaultGraphSize)
				g.BuildForwardExpand(next)
				be.sh.Encoder().UseFusion(fuse)
				d0 := be.sh.Dispatches()
				if err := be.GraphCompute(g); err != nil {
					t.Fatal(err)
				}
				dispatches[run] = be.sh.Dispatches() - d0
				for i, tt := range []*core.Tensor{sum, norm, mul, next} {
					results[run][i] = make([]byte, tt.NBytes())
					if err := core.TensorGet(tt, results[run][i], 0); err != nil {
						t.Fatal(err)
					}
				}
			}
			for i, name := range []string{"ADD", "RMS_NORM", "MUL", "next ADD"} {
				if !bytes.Equal(results[0][i], results[1][i]) {
					t.Errorf("%s: fused result differs from the unfused one", name)
				}
			}
			want := dispatches[0] - 2
			if c.broadcast {
				want = dispatches[0] - 1 // RMS_NORM + MUL only
			}
			if dispatches[1] != want {
				t.Errorf("%d dispatches fused, %d unfused: want %d", dispatches[1], dispatches[0], want)
			}
		})
	}
}

// TestFusedRopeSetRows: the rotated keys of one token stored as a row of a KV cache (ROPE, the
// reshape, SET_ROWS), recorded as one dispatch, give ROPE's result and the cache bit for bit as
// the two dispatches do — for f16, f32 and bf16 caches, NORMAL and NEOX modes, freq factors,
// fewer rotated dimensions than the head, i32 and i64 indices — with one dispatch less; an index
// past the cache gives the same error both ways; two tokens, or a multi-section mode, stay two
// dispatches.
func TestFusedRopeSetRows(t *testing.T) {
	be := newBackend(t)
	defer be.sh.Encoder().UseFusion(true)
	for _, c := range []struct {
		name   string
		cache  core.Type
		mode   int
		nDims  int
		ff     bool
		i64    bool
		tokens int64
		index  int64
		fused  bool
	}{
		{"f16_neox", core.TypeF16, core.RopeNeox, 64, false, true, 1, 5, true},
		{"f32_normal_i32", core.TypeF32, core.RopeNormal, 64, false, false, 1, 31, true},
		{"bf16_ff_partial_dims", core.TypeBF16, core.RopeNeox, 32, true, true, 1, 0, true},
		{"bad_index", core.TypeF16, core.RopeNeox, 64, false, true, 1, 32, true},
		{"two_tokens", core.TypeF16, core.RopeNeox, 64, false, true, 2, 3, false},
		{"mrope", core.TypeF16, core.RopeMrope, 64, false, true, 1, 3, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			const hd, heads, cells = 64, 4, 32
			var results [2][2][]byte
			var errs [2]error
			var dispatches [2]int
			for run, fuse := range []bool{false, true} {
				ctx := core.NewContext(core.ContextParams{NoAlloc: true})
				k := ctx.NewTensor(core.TypeF32, hd, heads, c.tokens)
				npos := c.tokens
				if c.mode == core.RopeMrope {
					npos *= 4
				}
				pos := ctx.NewTensor(core.TypeI32, npos)
				var ff *core.Tensor
				if c.ff {
					ff = ctx.NewTensor(core.TypeF32, int64(c.nDims/2))
				}
				rp := core.RopeParams{NDims: c.nDims, Mode: c.mode, NCtxOrig: 4096, FreqBase: 10000, FreqScale: 1,
					AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
				if c.mode == core.RopeMrope {
					rp.Sections = [4]int{8, 12, 12, 0}
				}
				rope := ctx.RopeExt(k, pos, ff, rp)
				cache := ctx.NewTensor(c.cache, hd*heads, cells)
				it := core.TypeI32
				if c.i64 {
					it = core.TypeI64
				}
				idx := ctx.NewTensor(it, c.tokens)
				set := ctx.SetRows(cache, ctx.Reshape2D(rope, hd*heads, c.tokens), idx)
				if err := ctx.Err(); err != nil {
					t.Fatal(err)
				}
				ts := []*core.Tensor{k, pos, cache, idx, rope}
				if ff != nil {
					ts = append(ts, ff)
				}
				place(t, be, nil, ts...)
				for _, v := range []*core.Tensor{set.Src[1], set} { // the reshape, SET_ROWS's view of the cache
					if err := core.ViewInit(v); err != nil {
						t.Fatal(err)
					}
				}
				r := rand.New(rand.NewPCG(7, 8))
				randomize(t, r, k, -2, 2)
				randomize(t, r, cache, -1, 1)
				if ff != nil {
					randomize(t, r, ff, 0.5, 2)
				}
				p := make([]int32, npos)
				for i := range p {
					p[i] = int32(1000 + 37*i)
				}
				if err := core.SetInt32s(pos, p); err != nil {
					t.Fatal(err)
				}
				raw := make([]byte, idx.NBytes())
				for i := range c.tokens {
					v := uint64(c.index + i)
					if c.i64 {
						binary.LittleEndian.PutUint64(raw[8*i:], v)
					} else {
						binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
					}
				}
				if err := core.TensorSet(idx, raw, 0); err != nil {
					t.Fatal(err)
				}
				g := core.NewGraph(core.DefaultGraphSize)
				g.BuildForwardExpand(set)
				be.sh.Encoder().UseFusion(fuse)
				d0 := be.sh.Dispatches()
				errs[run] = be.GraphCompute(g)
				dispatches[run] = be.sh.Dispatches() - d0
				for i, tt := range []*core.Tensor{rope, cache} {
					results[run][i] = make([]byte, tt.NBytes())
					if err := core.TensorGet(tt, results[run][i], 0); err != nil {
						t.Fatal(err)
					}
				}
			}
			if c.index+c.tokens > cells {
				ctxName := regexp.MustCompile(`c\d+#`) // the two runs' contexts number their tensors apart
				if errs[0] == nil || errs[1] == nil ||
					ctxName.ReplaceAllString(errs[0].Error(), "c#") != ctxName.ReplaceAllString(errs[1].Error(), "c#") {
					t.Errorf("index %d of %d cells: unfused error %v, fused %v: want the same error", c.index, cells, errs[0], errs[1])
				}
			} else if errs[0] != nil || errs[1] != nil {
				t.Fatalf("unfused: %v; fused: %v", errs[0], errs[1])
			}
			for i, name := range []string{"ROPE", "the cache"} {
				if !bytes.Equal(results[0][i], results[1][i]) {
					t.Errorf("%s: fused result differs from the unfused one", name)
				}
			}
			want := dispatches[0]
			if c.fused {
				want--
			}
			if dispatches[1] != want {
				t.Errorf("%d dispatches fused, %d unfused: want %d", dispatches[1], dispatches[0], want)
			}
		})
	}
}

// place allocates ts one after the other in a buffer of be's (freed at the test's end); a tensor
// that over maps to an earlier one takes that one's memory instead (an in-place node).
func place(t *testing.T, be *Backend, over map[*core.Tensor]*core.Tensor, ts ...*core.Tensor) {
	t.Helper()
	bt := be.DefaultBufferType()
	var size int64
	for _, tt := range ts {
		size += core.AlignUp(bt.AllocSize(tt), bt.Alignment())
	}
	buf, err := bt.Alloc(size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { buf.Free() })
	off := int64(0)
	for _, tt := range ts {
		at := off
		if o := over[tt]; o != nil {
			at = o.Offset
		} else {
			off = core.AlignUp(off+bt.AllocSize(tt), bt.Alignment())
		}
		if err := core.TensorAlloc(buf, tt, at); err != nil {
			t.Fatal(err)
		}
	}
}
