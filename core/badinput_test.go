package core_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

const (
	f32  = core.TypeF32
	f16  = core.TypeF16
	i8   = core.TypeI8
	i32  = core.TypeI32
	q4_0 = core.TypeQ4_0
)

// TestBadInput is issue 10's sweep for core: every hostile call returns (or records) an error whose
// text names the problem, and none panics.
func TestBadInput(t *testing.T) {
	var cases []badCase
	cases = append(cases, overflowCases(t)...)
	cases = append(cases, viewCases(t)...)
	cases = append(cases, nilCases(t)...)
	cases = append(cases, silentCases(t)...)
	counts := runBadCases(t, cases)
	t.Logf("bad-input cases per class: overflow (1) %d, views/strides/empty (2) %d, nil (3) %d, silent writes (6) %d; total %d",
		counts[1], counts[2], counts[3], counts[6], len(cases))
	if len(cases) < 100 {
		t.Errorf("only %d cases", len(cases))
	}
}

// Class 1: arithmetic on sizes, strides and offsets that would overflow.
func overflowCases(t *testing.T) []badCase {
	const big = math.MaxInt64
	a8 := func() *core.Tensor { return hostF32(t, 8) }
	ov := []string{"overflow"}
	return []badCase{
		{1, "NewTensor1D 1<<62+8 f32", ov, func() error { return build(func(c *core.Context) { c.NewTensor1D(f32, 1<<62+8) }) }},
		{1, "NewTensor2D 1<<31 x 1<<31 f32", ov, func() error {
			return build(func(c *core.Context) { c.NewTensor2D(f32, 1<<31, 1<<31) })
		}},
		{1, "NewTensor4D element count wraps", ov, func() error {
			return build(func(c *core.Context) { c.NewTensor4D(f32, 1<<16, 1<<16, 1<<16, 1<<16) })
		}},
		{1, "NewTensor3D f16 2^63 elements", ov, func() error {
			return build(func(c *core.Context) { c.NewTensor3D(f16, 1<<21, 1<<21, 1<<21) })
		}},
		{1, "NewTensor1D i8 past MaxTensorBytes", []string{"overflow", "address space"}, func() error {
			return build(func(c *core.Context) { c.NewTensor1D(i8, 1<<62+1) })
		}},
		{1, "NewTensor1D q4_0 block bytes wrap", ov, func() error {
			return build(func(c *core.Context) { c.NewTensor1D(q4_0, (big/32)*32) })
		}},
		{1, "NewTensor in a host context", ov, func() error {
			return buildHost(func(c *core.Context) { c.NewTensor2D(f32, 1<<40, 1<<40) })
		}},
		{1, "NewTensor beyond MemSize", []string{"out of memory"}, func() error {
			return buildHost(func(c *core.Context) { c.NewTensor1D(f32, 1<<30) })
		}},
		{1, "NewTensorLike of a hand-grown tensor", ov, func() error {
			return build(func(c *core.Context) {
				a := c.NewTensor1D(f32, 4)
				a.Ne[1] = 1 << 62
				c.NewTensorLike(a)
			})
		}},
		{1, "Reshape2D product wraps to the count", ov, func() error {
			return build(func(c *core.Context) { c.Reshape2D(c.NewTensor1D(f32, 4), 1<<62+1, 4) })
		}},
		{1, "Reshape4D product past int64", ov, func() error {
			return build(func(c *core.Context) { c.Reshape4D(c.NewTensor1D(f32, 4), 1<<32, 1<<32, 4, 1) })
		}},
		{1, "ContShape product past int64", ov, func() error {
			return build(func(c *core.Context) { c.ContShape(c.NewTensor1D(f32, 4), 1<<40, 1<<40) })
		}},
		{1, "View1D span past int64", ov, func() error {
			return build(func(c *core.Context) { c.View1D(c.NewTensor1D(f32, 8), 1<<62, 0) })
		}},
		{1, "View2D row stride times rows wraps", ov, func() error {
			return build(func(c *core.Context) { c.View2D(c.NewTensor1D(f32, 8), 2, 1<<62, 1<<62, 0) })
		}},
		{1, "View4D dimension 3 span wraps", ov, func() error {
			return build(func(c *core.Context) { c.View4D(c.NewTensor1D(f32, 8), 1, 1, 1, 1<<62, 4, 4, 4, 0) })
		}},
		{1, "View1D offset + size wraps", ov, func() error {
			return build(func(c *core.Context) { c.View1D(c.NewTensor1D(f32, 8), 2, big-4) })
		}},
		{1, "View of a view offsets wrap", ov, func() error {
			return build(func(c *core.Context) { c.View1D(c.View1D(c.NewTensor1D(f32, 8), 1, 4), 1, big-2) })
		}},
		{1, "View missing strides wrap", ov, func() error {
			return build(func(c *core.Context) {
				c.View(c.NewTensor1D(f32, 8), []int64{1, 1 << 40, 1 << 40}, []int64{4, 4}, 0)
			})
		}},
		{1, "Concat sum past MaxTensorBytes", ov, func() error {
			return build(func(c *core.Context) { c.Concat(c.NewTensor1D(i8, 3<<60), c.NewTensor1D(i8, 3<<60), 0) })
		}},
		{1, "GetRows result past int64", ov, func() error {
			return build(func(c *core.Context) { c.GetRows(c.NewTensor2D(f32, 1<<40, 2), c.NewTensor1D(i32, 1<<40)) })
		}},
		{1, "MulMat result past int64", ov, func() error {
			return build(func(c *core.Context) { c.MulMat(c.NewTensor2D(f32, 1, 1<<40), c.NewTensor2D(f32, 1, 1<<40)) })
		}},
		{1, "OutProd result past int64", ov, func() error {
			return build(func(c *core.Context) { c.OutProd(c.NewTensor2D(f32, 1<<40, 1), c.NewTensor2D(f32, 1<<40, 1)) })
		}},
		{1, "Repeat to a hand-grown shape", ov, func() error {
			return build(func(c *core.Context) {
				b := c.NewTensor1D(f32, 4)
				b.Ne = [4]int64{1 << 40, 1 << 40, 1, 1}
				c.Repeat(c.NewTensor1D(f32, 1), b)
			})
		}},
		{1, "Im2Col dilation times kernel wraps", ov, func() error {
			return build(func(c *core.Context) {
				c.Im2Col(c.NewTensor3D(f32, 1<<40, 1, 1), c.NewTensor3D(f32, 8, 1, 1),
					core.Im2ColParams{S0: 1, D0: math.MaxInt32}, f32)
			})
		}},
		{1, "Im2Col stride past int32", []string{"int32"}, func() error {
			return build(func(c *core.Context) {
				c.Im2Col(c.NewTensor3D(f32, 3, 1, 1), c.NewTensor3D(f32, 8, 1, 1), core.Im2ColParams{S0: 1 << 40, D0: 1}, f32)
			})
		}},
		{1, "DiagMaskInf n_past past int32", []string{"int32"}, func() error {
			return build(func(c *core.Context) { c.DiagMaskInf(c.NewTensor2D(f32, 4, 4), 1<<40) })
		}},
		{1, "Pool1D kernel past int32", []string{"invalid"}, func() error {
			return build(func(c *core.Context) { c.Pool1D(c.NewTensor1D(f32, 8), core.PoolMax, 1<<40, 1, 0) })
		}},
		{1, "RopeExt n_ctx_orig past int32", []string{"int32"}, func() error {
			return build(func(c *core.Context) {
				c.RopeExt(c.NewTensor3D(f32, 4, 2, 3), c.NewTensor1D(i32, 3), nil, core.RopeParams{NDims: 4, NCtxOrig: 1 << 40})
			})
		}},
		{1, "TensorSet offset MaxInt64-1", ov, func() error { return core.TensorSet(a8(), make([]byte, 4), big-1) }},
		{1, "TensorGet offset MaxInt64-1", ov, func() error { return core.TensorGet(a8(), make([]byte, 4), big-1) }},
		{1, "TensorMemset offset MaxInt64-1", ov, func() error { return core.TensorMemset(a8(), 0, big-1, 8) }},
		{1, "TensorMemset size MaxInt64", ov, func() error { return core.TensorMemset(a8(), 0, 4, big) }},
		{1, "TensorAlloc offset MaxInt64-1", ov, func() error {
			x := core.NewContext(core.ContextParams{NoAlloc: true}).NewTensor1D(f32, 4)
			buf, _ := core.HostBufferType().Alloc(64)
			return core.TensorAlloc(buf, x, big-1)
		}},
		{1, "TensorAlloc of a hand-grown tensor", ov, func() error {
			x := core.NewContext(core.ContextParams{NoAlloc: true}).NewTensor1D(f32, 4)
			x.Ne[0] = 1 << 62
			buf, _ := core.HostBufferType().Alloc(64)
			return core.TensorAlloc(buf, x, 0)
		}},
		{1, "TensorSet on a hand-grown tensor", ov, func() error {
			x := a8()
			x.Ne[1] = 1 << 62
			return core.TensorSet(x, make([]byte, 4), 0)
		}},
		{1, "GetFloat32s of a hand-grown tensor", ov, func() error {
			x := a8()
			x.Ne = [4]int64{1 << 32, 1 << 32, 1, 1}
			_, err := core.GetFloat32s(x)
			return err
		}},
		{1, "HostData of a hand-grown tensor", ov, func() error {
			x := a8()
			x.Nb[1], x.Ne[1] = 1<<62, 4
			_, err := x.HostData()
			return err
		}},
		{1, "ViewInit with a view offset moved to MaxInt64", ov, func() error {
			c := core.NewContext(core.ContextParams{NoAlloc: true})
			a := c.NewTensor1D(f32, 8)
			v := c.View1D(a, 2, 0)
			buf, _ := core.HostBufferType().Alloc(64)
			if err := core.TensorAlloc(buf, a, 0); err != nil {
				return nil
			}
			v.ViewOffs = big - 2
			return core.ViewInit(v)
		}},
		{1, "CheckedBytes of a hand-grown tensor", ov, func() error {
			x := a8()
			x.Ne[2] = big
			_, err := x.CheckedBytes()
			return err
		}},
	}
}

// Class 2: views must lie inside their source by their real extent, strides are non-negative, and
// empty tensors never reach a kernel in a state that panics.
func viewCases(t *testing.T) []badCase {
	a8 := func(c *core.Context) *core.Tensor { return c.NewTensor1D(f32, 8) } // 32 bytes
	out := []string{"outside"}
	return []badCase{
		{2, "View2D negative row stride", []string{"negative stride"}, func() error {
			return build(func(c *core.Context) { c.View2D(a8(c), 4, 2, -4096, 0) })
		}},
		{2, "View3D negative plane stride", []string{"negative stride"}, func() error {
			return build(func(c *core.Context) { c.View3D(a8(c), 1, 2, 2, 4, -8, 0) })
		}},
		{2, "View4D negative stride with one element", []string{"negative stride"}, func() error {
			return build(func(c *core.Context) { c.View4D(a8(c), 1, 1, 1, 1, 4, 4, -4, 0) })
		}},
		{2, "View1D negative offset", []string{"negative offset"}, func() error {
			return build(func(c *core.Context) { c.View1D(a8(c), 4, -4) })
		}},
		{2, "View1D longer than its source", out, func() error {
			return build(func(c *core.Context) { c.View1D(a8(c), 9, 0) })
		}},
		{2, "View1D starting at the end", out, func() error {
			return build(func(c *core.Context) { c.View1D(a8(c), 1, 32) })
		}},
		{2, "View2D last byte past the end", out, func() error {
			return build(func(c *core.Context) { c.View2D(a8(c), 2, 3, 16, 0) })
		}},
		{2, "View2D first byte inside, last outside", out, func() error {
			return build(func(c *core.Context) { c.View2D(a8(c), 2, 2, 8, 20) })
		}},
		{2, "empty View2D past the end", out, func() error {
			return build(func(c *core.Context) { c.View2D(a8(c), 0, 3, 4, 64) })
		}},
		{2, "View1D of an empty source", out, func() error {
			return build(func(c *core.Context) { c.View1D(c.NewTensor1D(f32, 0), 1, 0) })
		}},
		{2, "view of a view past the root", out, func() error {
			return build(func(c *core.Context) { c.View1D(c.View1D(a8(c), 4, 16), 4, 4) })
		}},
		{2, "View3D planes past the end", out, func() error {
			return build(func(c *core.Context) { c.View3D(a8(c), 2, 2, 2, 8, 32, 0) })
		}},
		{2, "View with strides missing", []string{"strides"}, func() error {
			return build(func(c *core.Context) { c.View(a8(c), []int64{2, 2}, nil, 0) })
		}},
		{2, "View row not a whole q4_0 block", []string{"block size"}, func() error {
			return build(func(c *core.Context) { c.View1D(c.NewTensor1D(q4_0, 64), 16, 0) })
		}},
		{2, "View negative size", []string{"negative size"}, func() error {
			return build(func(c *core.Context) { c.View2D(a8(c), 2, -1, 8, 0) })
		}},
		{2, "NewTensor negative size", []string{"negative size"}, func() error {
			return build(func(c *core.Context) { c.NewTensor2D(f32, 4, -2) })
		}},
		{2, "Reshape negative size", []string{"negative size"}, func() error {
			return build(func(c *core.Context) { c.Reshape2D(a8(c), -2, -4) })
		}},
		{2, "Reshape of a non-contiguous view", []string{"not contiguous"}, func() error {
			return build(func(c *core.Context) { c.Reshape1D(c.Transpose(c.NewTensor2D(f32, 2, 4)), 8) })
		}},
		{2, "Permute with a repeated axis", []string{"permutation"}, func() error {
			return build(func(c *core.Context) { c.Permute(a8(c), 0, 0, 1, 2) })
		}},
		{2, "MulMat with k = 0", []string{"inner dimension k is 0"}, func() error {
			err := build(func(c *core.Context) { c.MulMat(c.NewTensor2D(f32, 0, 3), c.NewTensor2D(f32, 0, 2)) })
			if err != nil && containsFold(err.Error(), "transposed") {
				return errors.New("k = 0 reported as transposed weights: " + err.Error())
			}
			return err
		}},
		{2, "MulMat of empty strided views", []string{"inner dimension k is 0"}, func() error {
			return build(func(c *core.Context) {
				a := a8(c)
				c.MulMat(c.View2D(a, 0, 3, 4, 0), c.View2D(a, 0, 3, 4, 0))
			})
		}},
		{2, "MulMat with really transposed weights", []string{"transposed"}, func() error {
			return build(func(c *core.Context) { c.MulMat(c.Transpose(c.NewTensor2D(f32, 4, 4)), c.NewTensor2D(f32, 4, 2)) })
		}},
		{2, "MulMat batch of 0 weights", []string{"broadcast"}, func() error {
			return build(func(c *core.Context) { c.MulMat(c.NewTensor3D(f32, 4, 2, 0), c.NewTensor3D(f32, 4, 2, 3)) })
		}},
		{2, "OutProd with k = 0", []string{"empty"}, func() error {
			return build(func(c *core.Context) { c.OutProd(c.NewTensor2D(f32, 3, 0), c.NewTensor2D(f32, 2, 0)) })
		}},
		{2, "Add broadcasting an empty b into a non-empty a", []string{"cannot be broadcast"}, func() error {
			return build(func(c *core.Context) { c.Add(c.NewTensor2D(f32, 4, 3), c.View2D(a8(c), 0, 3, 4, 0)) })
		}},
		{2, "Argsort keeps empty rows empty but GetRows from no rows", []string{"empty"}, func() error {
			return build(func(c *core.Context) { c.GetRows(c.NewTensor2D(f32, 4, 0), c.NewTensor1D(i32, 2)) })
		}},
		{2, "Repeat of an empty view into a non-empty shape", []string{"cannot be tiled"}, func() error {
			return build(func(c *core.Context) {
				e := c.Norm(c.View2D(a8(c), 0, 2, 4, 0), 1e-5)
				c.Repeat(e, c.NewTensor2D(f32, 4, 2))
			})
		}},
		{2, "Conv1D with an empty kernel", []string{"empty"}, func() error {
			return build(func(c *core.Context) { c.Conv1D(c.NewTensor3D(f32, 0, 1, 1), c.NewTensor3D(f32, 8, 1, 1), 1, 0, 1) })
		}},
		{2, "Conv2D with an empty input", []string{"empty"}, func() error {
			return build(func(c *core.Context) {
				c.Conv2D(c.NewTensor4D(f32, 1, 1, 1, 1), c.NewTensor4D(f32, 4, 4, 1, 0), 1, 1, 0, 0, 1, 1)
			})
		}},
		{2, "Pool1D kernel wider than the input", []string{"does not fit"}, func() error {
			return build(func(c *core.Context) { c.Pool1D(c.NewTensor1D(f32, 2), core.PoolAvg, 4, 1, 0) })
		}},
		{2, "Im2Col kernel wider than the input", []string{"does not fit"}, func() error {
			return build(func(c *core.Context) {
				c.Im2Col(c.NewTensor3D(f32, 9, 1, 1), c.NewTensor3D(f32, 4, 1, 1), core.Im2ColParams{S0: 1, D0: 1}, f32)
			})
		}},
		{2, "SoftMaxExt mask with 0 heads", []string{"broadcast"}, func() error {
			return build(func(c *core.Context) {
				c.SoftMaxExt(c.NewTensor3D(f32, 4, 2, 2), c.NewTensor3D(f32, 4, 2, 0), 1, 0)
			})
		}},
		{2, "SetRows with empty index batches", []string{"do not match"}, func() error {
			return build(func(c *core.Context) {
				c.SetRows(c.NewTensor2D(f32, 4, 4), c.NewTensor2D(f32, 4, 0), c.NewTensor2D(i32, 0, 0))
			})
		}},
		{2, "Concat in dimension 5", []string{"out of range"}, func() error {
			return build(func(c *core.Context) { c.Concat(a8(c), a8(c), 5) })
		}},
		{2, "TensorSet past the end of a view", []string{"out of range"}, func() error {
			a := hostF32(t, 8)
			v := a.Context().View1D(a, 2, 8)
			return core.TensorSet(v, make([]byte, 12), 0)
		}},
		{2, "ViewInit of a view moved outside by hand", out, func() error {
			c := core.NewContext(core.ContextParams{NoAlloc: true})
			a := c.NewTensor1D(f32, 8)
			v := c.View1D(a, 2, 0)
			buf, _ := core.HostBufferType().Alloc(64)
			if err := core.TensorAlloc(buf, a, 0); err != nil {
				return nil
			}
			v.ViewOffs = 28
			return core.ViewInit(v)
		}},
		{2, "GetFloat32s with a stride set negative by hand", []string{"negative stride"}, func() error {
			x := hostF32(t, 2, 2)
			x.Nb[1] = -8
			_, err := core.GetFloat32s(x)
			return err
		}},
		{2, "Add of an operand given a negative stride by hand", []string{"invalid layout", "negative stride"}, func() error {
			return build(func(c *core.Context) {
				x := c.NewTensor2D(f32, 2, 2)
				x.Nb[1] = -8
				c.Add(x, x)
			})
		}},
		{1, "MulMat of an operand grown by hand", []string{"invalid layout", "overflow"}, func() error {
			return build(func(c *core.Context) {
				x := c.NewTensor2D(f32, 2, 2)
				x.Ne[1] = 1 << 62
				c.MulMat(x, c.NewTensor2D(f32, 2, 2))
			})
		}},
		{1, "GetFloat32s of a zero-stride view with 2^44 elements", []string{"elements"}, func() error {
			a := hostF32(t, 4)
			v := a.Context().View2D(a, 4, 1<<40, 0, 0)
			if err := a.Context().Err(); err != nil {
				return nil
			}
			_, err := core.GetFloat32s(v)
			return err
		}},
		{2, "Sum over 2^62 rows of nothing", []string{"rows of nothing"}, func() error {
			return build(func(c *core.Context) { c.Sum(c.NewTensor2D(f32, 0, 1<<62)) })
		}},
		{2, "TensorCopy to a tensor with a negative stride", []string{"negative stride"}, func() error {
			x, y := hostF32(t, 2, 2), hostF32(t, 2, 2)
			x.Nb[1], y.Nb[1] = -8, -8
			return core.TensorCopy(x, y)
		}},
	}
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
