package core_test

import (
	"math"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestVisionAndCustomBadInput: the constructors of GROUP_NORM, UPSCALE, WIN_PART, WIN_UNPART,
// GET_REL_POS, ADD_REL_POS and the custom ops refuse what ggml asserts on (or would misread) with
// an error naming the op and the problem, and accept ggml's shapes with ggml's op_params.
func TestVisionAndCustomBadInput(t *testing.T) {
	nop1 := func(dst, a *core.Tensor, ith, nth int) {}
	nop := func(dst *core.Tensor, ith, nth int) {}
	bad := []struct {
		name, want string
		build      func(c *core.Context) *core.Tensor
	}{
		{"group norm f16", "want f32", func(c *core.Context) *core.Tensor { return c.GroupNorm(c.NewTensor(f16, 4, 4, 4), 2, 1e-5) }},
		{"group norm 0 groups", "groups", func(c *core.Context) *core.Tensor { return c.GroupNorm(c.NewTensor(f32, 4, 4, 4), 0, 1e-5) }},
		{"group norm eps NaN", "eps", func(c *core.Context) *core.Tensor {
			return c.GroupNorm(c.NewTensor(f32, 4, 4, 4), 2, float32(math.NaN()))
		}},
		{"group norm transposed", "unit stride", func(c *core.Context) *core.Tensor {
			return c.GroupNorm(c.Transpose(c.NewTensor(f32, 4, 4, 4)), 2, 1e-5)
		}},
		{"upscale factor 1", "scale factor", func(c *core.Context) *core.Tensor { return c.Upscale(c.NewTensor(f32, 4, 4), 1, 0) }},
		{"upscale mode 3", "mode", func(c *core.Context) *core.Tensor { return c.Interpolate(c.NewTensor(f32, 4, 4), 8, 8, 1, 1, 3) }},
		{"upscale stray flag", "mode", func(c *core.Context) *core.Tensor {
			return c.Interpolate(c.NewTensor(f32, 4, 4), 8, 8, 1, 1, 1<<10)
		}},
		{"upscale antialias bicubic", "antialias", func(c *core.Context) *core.Tensor {
			return c.Interpolate(c.NewTensor(f32, 4, 4), 8, 8, 1, 1, core.ScaleBicubic|core.ScaleAntialias)
		}},
		{"upscale negative size", "sizes", func(c *core.Context) *core.Tensor { return c.Interpolate(c.NewTensor(f32, 4, 4), -8, 8, 1, 1, 0) }},
		{"upscale i32", "want f32", func(c *core.Context) *core.Tensor { return c.Upscale(c.NewTensor(i32, 4, 4), 2, 0) }},
		{"upscale overflow", "overflow", func(c *core.Context) *core.Tensor {
			return c.Upscale(c.NewTensor(f32, 1<<40, 4), 1<<30, 0)
		}},
		{"win part ne3", "ne3", func(c *core.Context) *core.Tensor { return c.WinPart(c.NewTensor(f32, 4, 4, 4, 2), 2) }},
		{"win part w 0", "window", func(c *core.Context) *core.Tensor { return c.WinPart(c.NewTensor(f32, 4, 4, 4), 0) }},
		{"win part strided", "contiguous", func(c *core.Context) *core.Tensor {
			return c.WinPart(c.Permute(c.NewTensor(f32, 4, 5, 6), 0, 2, 1, 3), 2)
		}},
		{"win unpart shape", "windows", func(c *core.Context) *core.Tensor { return c.WinUnpart(c.NewTensor(f32, 4, 3, 2, 4), 4, 4, 2) }},
		{"win unpart too few", "holds", func(c *core.Context) *core.Tensor { return c.WinUnpart(c.NewTensor(f32, 4, 2, 2, 3), 4, 4, 2) }},
		{"rel pos qh != kh", "qh", func(c *core.Context) *core.Tensor { return c.GetRelPos(c.NewTensor(f16, 4, 5), 3, 2) }},
		{"rel pos rows", "rows", func(c *core.Context) *core.Tensor { return c.GetRelPos(c.NewTensor(f16, 4, 6), 3, 3) }},
		{"rel pos f32", "want f16", func(c *core.Context) *core.Tensor { return c.GetRelPos(c.NewTensor(f32, 4, 5), 3, 3) }},
		{"add rel pos shapes", "one shape", func(c *core.Context) *core.Tensor {
			return c.AddRelPos(c.NewTensor(f32, 4, 6, 2), c.NewTensor(f32, 2, 3, 2, 2), c.NewTensor(f32, 2, 3, 1, 2))
		}},
		{"add rel pos ne0", "squared", func(c *core.Context) *core.Tensor {
			return c.AddRelPos(c.NewTensor(f32, 5, 6, 2), c.NewTensor(f32, 2, 3, 2, 2), c.NewTensor(f32, 2, 3, 2, 2))
		}},
		{"add rel pos heads", "ne3", func(c *core.Context) *core.Tensor {
			return c.AddRelPos(c.NewTensor(f32, 4, 6, 3), c.NewTensor(f32, 2, 3, 2, 2), c.NewTensor(f32, 2, 3, 2, 2))
		}},
		{"custom nil function", "function is nil", func(c *core.Context) *core.Tensor { return c.MapCustom1(c.NewTensor(f32, 4), nil, 1) }},
		{"custom 0 tasks", "tasks", func(c *core.Context) *core.Tensor { return c.MapCustom1(c.NewTensor(f32, 4), nop1, 0) }},
		{"custom too many args", "arguments", func(c *core.Context) *core.Tensor {
			args := make([]*core.Tensor, core.MaxSrc)
			for i := range args {
				args[i] = c.NewTensor(f32, 1)
			}
			return c.Custom4D(f32, 4, 1, 1, 1, args, nop, 1)
		}},
		{"custom nil arg", "nil", func(c *core.Context) *core.Tensor {
			return c.Custom4D(f32, 4, 1, 1, 1, []*core.Tensor{nil}, nop, 1)
		}},
		{"custom bad type", "type", func(c *core.Context) *core.Tensor { return c.Custom4D(core.Type(99), 4, 1, 1, 1, nil, nop, 1) }},
	}
	for _, b := range bad {
		c := core.NewContext(core.ContextParams{NoAlloc: true})
		out := b.build(c)
		err := c.Err()
		if err == nil || out == nil || out.Err() == nil {
			t.Errorf("%s: accepted (%v)", b.name, out)
			continue
		}
		if !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: error %q does not mention %q", b.name, err, b.want)
		}
	}

	c := core.NewContext(core.ContextParams{NoAlloc: true})
	img := c.NewTensor(f32, 3, 7, 5)
	checks := []struct {
		t      *core.Tensor
		ne     [4]int64
		params []int32
	}{
		{c.GroupNorm(img, 2, 0.5), [4]int64{3, 7, 5, 1}, []int32{2, 0x3f000000}},
		{c.Upscale(img, 2, core.ScaleBilinear|core.ScaleAntialias), [4]int64{6, 14, 5, 1}, []int32{0x201}},
		{c.Interpolate(img, 2, 3, 4, 5, core.ScaleNearest), [4]int64{2, 3, 4, 5}, []int32{0}},
		{c.WinPart(img, 3), [4]int64{3, 3, 3, 6}, []int32{3, 2, 3}},
		{c.WinUnpart(c.NewTensor(f32, 3, 3, 3, 6), 7, 5, 3), [4]int64{3, 7, 5, 1}, []int32{3}},
		{c.GetRelPos(c.NewTensor(f16, 8, 5), 3, 3), [4]int64{8, 3, 3, 1}, nil},
		{c.AddRelPosInplace(c.NewTensor(f32, 4, 6, 2), c.NewTensor(f32, 2, 3, 2, 2), c.NewTensor(f32, 2, 3, 2, 2)), [4]int64{4, 6, 2, 1}, []int32{1}},
		{c.MapCustom2(img, img, func(dst, a, b *core.Tensor, ith, nth int) {}, core.NTasksMax), [4]int64{3, 7, 5, 1}, []int32{-1}},
	}
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
	for _, ch := range checks {
		if ch.t.Ne != ch.ne {
			t.Errorf("%v: shape %v, want %v", ch.t, ch.t.Ne, ch.ne)
		}
		for i, p := range ch.params {
			if ch.t.Params[i] != p {
				t.Errorf("%v: op_params[%d] = %#x, want %#x", ch.t, i, ch.t.Params[i], p)
			}
		}
	}
	if typ := checks[5].t.Type; typ != f16 {
		t.Errorf("GET_REL_POS type %v, want f16", typ)
	}
	if checks[6].t.ViewSrc == nil {
		t.Error("ADD_REL_POS inplace is no view")
	}
}

// TestRunCustomRefusesHandMadeNodes: a custom op node made by hand (no function) is an error, not
// a crash.
func TestRunCustomRefusesHandMadeNodes(t *testing.T) {
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	x := c.Sqr(c.NewTensor(f32, 4))
	x.Op = core.OpMapCustom1
	if err := core.RunCustom(x, 0, 1); err == nil || !strings.Contains(err.Error(), "without a function") {
		t.Errorf("RunCustom on a hand-made node: %v", err)
	}
	if err := core.RunCustom(nil, 0, 1); err == nil {
		t.Error("RunCustom(nil) succeeded")
	}
}

// TestVisionOpsHaveNoGradient: ggml's backward has no case for GROUP_NORM, UPSCALE, GET_REL_POS,
// ADD_REL_POS or the custom ops (and WIN_PART/WIN_UNPART fall through into UNARY's case, no
// gradient either): BuildBackward says so, naming the op.
func TestVisionOpsHaveNoGradient(t *testing.T) {
	for _, b := range []struct {
		op    string
		build func(c *core.Context, w *core.Tensor) *core.Tensor
	}{
		{"GROUP_NORM", func(c *core.Context, w *core.Tensor) *core.Tensor { return c.GroupNorm(w, 2, 1e-5) }},
		{"UPSCALE", func(c *core.Context, w *core.Tensor) *core.Tensor { return c.Upscale(w, 2, core.ScaleBilinear) }},
		{"WIN_PART", func(c *core.Context, w *core.Tensor) *core.Tensor { return c.WinPart(w, 2) }},
		{"MAP_CUSTOM1", func(c *core.Context, w *core.Tensor) *core.Tensor {
			return c.MapCustom1(w, func(dst, a *core.Tensor, ith, nth int) {}, 1)
		}},
	} {
		c := core.NewContext(core.ContextParams{NoAlloc: true})
		w := c.NewTensor(f32, 4, 4, 4).SetParam()
		loss := c.Sum(b.build(c, w))
		c.SetLoss(loss)
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(loss)
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := core.BuildBackward(c, g); err == nil || !strings.Contains(err.Error(), "no gradient for "+b.op) {
			t.Errorf("%s: BuildBackward error %v, want no gradient for %s", b.op, err, b.op)
		}
	}
}
