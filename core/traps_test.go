package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/tests/zerotest"
)

// Reading the result of a failed op gives the op's error (an *OpError naming MUL_MAT and the
// operands' shapes), not "tensor invalid(NONE …) has no memory".
func TestFailedOpResultReportsOpError(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
	a := ctx.NewTensor2D(core.TypeF32, 3, 2).SetName("a")
	b := ctx.NewTensor2D(core.TypeF32, 4, 2).SetName("b")
	r := ctx.MulMat(a, b)

	reads := map[string]error{}
	_, reads["GetFloat32s"] = core.GetFloat32s(r)
	_, reads["HostData"] = r.HostData()
	reads["TensorGet"] = core.TensorGet(r, make([]byte, 4), 0)
	reads["SetFloat32s"] = core.SetFloat32s(r, []float32{1})
	_, reads["GetInt32s"] = core.GetInt32s(r)
	reads["SetInt32s"] = core.SetInt32s(r, []int32{1})
	for name, err := range reads {
		if err == nil {
			t.Fatalf("%s of a failed MUL_MAT: no error", name)
		}
		msg := err.Error()
		if strings.Contains(msg, "has no memory") || strings.Contains(msg, "invalid(") {
			t.Errorf("%s: %q hides the op error", name, msg)
		}
		if !strings.Contains(msg, "MUL_MAT: inner dimensions differ") || strings.Count(msg, "tandem: ") != 1 || !strings.HasPrefix(msg, "tandem: ") {
			t.Errorf("%s: %q, want the MUL_MAT error with one prefix", name, msg)
		}
		var oe *core.OpError
		if !errors.As(err, &oe) {
			t.Fatalf("%s: %v is not an *OpError", name, err)
		}
		if oe.Op != "MUL_MAT" || len(oe.Operands) != 2 ||
			oe.Operands[0].Name != "a" || oe.Operands[0].Ne != [4]int64{3, 2, 1, 1} ||
			oe.Operands[1].Name != "b" || oe.Operands[1].Ne != [4]int64{4, 2, 1, 1} ||
			!strings.HasPrefix(oe.Reason, "inner dimensions differ") {
			t.Errorf("%s: OpError %+v", name, *oe)
		}
	}
}

// Unnamed tensors of two contexts print differently.
func TestUnnamedTensorsOfTwoContextsDiffer(t *testing.T) {
	c1 := core.NewContext(core.ContextParams{NoAlloc: true})
	c2 := core.NewContext(core.ContextParams{NoAlloc: true})
	a, b := c1.NewTensor1D(core.TypeF32, 4), c2.NewTensor1D(core.TypeF32, 4)
	if a.String() == b.String() {
		t.Fatalf("two unnamed tensors of different contexts both print as %s", a)
	}
	c1.Add(a, c1.NewTensor1D(core.TypeF32, 3))
	if err := c1.Err(); err == nil || !strings.Contains(err.Error(), a.String()) {
		t.Fatalf("error %v does not name %s", err, a)
	}
}

// Conv1D and Conv2D errors name the op the caller wrote, not the IM2COL they are built from.
func TestConvErrorsNameConv(t *testing.T) {
	for _, tc := range []struct {
		op    string
		build func(c *core.Context) *core.Tensor
	}{
		{"CONV_2D", func(c *core.Context) *core.Tensor { // 3 input channels vs 2
			return c.Conv2D(c.NewTensor4D(core.TypeF32, 3, 3, 3, 4), c.NewTensor4D(core.TypeF32, 8, 8, 2, 1), 1, 1, 0, 0, 1, 1)
		}},
		{"CONV_2D", func(c *core.Context) *core.Tensor { // kernel larger than the input
			return c.Conv2D(c.NewTensor4D(core.TypeF32, 9, 9, 2, 4), c.NewTensor4D(core.TypeF32, 8, 8, 2, 1), 1, 1, 0, 0, 1, 1)
		}},
		{"CONV_2D", func(c *core.Context) *core.Tensor { // zero stride
			return c.Conv2D(c.NewTensor4D(core.TypeF32, 3, 3, 2, 4), c.NewTensor4D(core.TypeF32, 8, 8, 2, 1), 0, 1, 0, 0, 1, 1)
		}},
		{"CONV_1D", func(c *core.Context) *core.Tensor {
			return c.Conv1D(c.NewTensor3D(core.TypeF32, 3, 3, 4), c.NewTensor3D(core.TypeF32, 8, 2, 1), 1, 0, 1)
		}},
	} {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		r := tc.build(ctx)
		err := ctx.Err()
		var oe *core.OpError
		if !errors.As(err, &oe) || oe.Op != tc.op || strings.Contains(err.Error(), "IM2COL") || r.Err() != err {
			t.Errorf("%s: error %v (placeholder error %v), want an OpError of %s not naming IM2COL", tc.op, err, r.Err(), tc.op)
		}
	}
}

// A graph whose sources were edited by hand into a cycle is rejected when built, naming the
// tensor; it used to build and compute from its own memory.
func TestBuildRejectsCycle(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
	a := ctx.NewTensor1D(core.TypeF32, 4).SetName("a")
	b := ctx.NewTensor1D(core.TypeF32, 4).SetName("b")
	r := ctx.Add(a, b).SetName("r")
	r.Src[0] = r
	g := core.NewGraph(0)
	g.BuildForwardExpand(r)
	if err := g.Err(); err == nil || !strings.Contains(err.Error(), "cycle") || !strings.Contains(err.Error(), "r(ADD") {
		t.Fatalf("self-loop: Err() = %v, want a cycle error naming r", err)
	}

	// A longer loop: s = Mul(r2, b), r2.Src[1] = s.
	r2 := ctx.Add(a, b).SetName("r2")
	s := ctx.Mul(r2, b).SetName("s")
	r2.Src[1] = s
	g = core.NewGraph(0)
	g.BuildForwardExpand(s)
	if err := g.Err(); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Fatalf("two-node loop: Err() = %v, want a cycle error", err)
	}

	// A shared source (a diamond) is no cycle.
	d := ctx.Add(ctx.Mul(a, b), ctx.Sub(a, b))
	g = core.NewGraph(0)
	g.BuildForwardExpand(d)
	if err := g.Err(); err != nil || g.NNodes() != 3 {
		t.Fatalf("diamond: Err() = %v, %d nodes", err, g.NNodes())
	}
}

// A zero Graph works as NewGraph(DefaultGraphSize); a zero Context says how to make one.
func TestZeroValues(t *testing.T) {
	zerotest.Methods[core.Graph](t, "")
	// SetParam and SetLoss flag the tensor they are given (their errors here are about the nil one).
	zerotest.Methods[core.Context](t, "core.NewContext", "SetParam", "SetLoss")

	var g core.Graph
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	r := ctx.Add(ctx.NewTensor1D(core.TypeF32, 2), ctx.NewTensor1D(core.TypeF32, 2))
	g.BuildForwardExpand(r)
	if err := g.Err(); err != nil || g.NNodes() != 1 || len(g.Leafs()) != 2 || g.Size() != core.DefaultGraphSize {
		t.Fatalf("zero Graph: Err %v, %d nodes, %d leafs, size %d", err, g.NNodes(), len(g.Leafs()), g.Size())
	}

	var zc core.Context
	if err := zc.Err(); err == nil || !strings.Contains(err.Error(), "core.NewContext") {
		t.Fatalf("zero Context Err() = %v", err)
	}
	p := zc.NewTensor1D(core.TypeF32, 4)
	var oe *core.OpError
	if !errors.As(p.Err(), &oe) || !strings.Contains(oe.Error(), "create one with core.NewContext") {
		t.Fatalf("zero Context NewTensor1D: %v", p.Err())
	}
}

// Every construction error is an *OpError naming the op, its message has one prefix, and an
// error built on a failed operand unwraps to that operand's OpError.
func TestOpErrorNesting(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor2D(core.TypeF32, 4, 4)
	bad := ctx.Add(a, ctx.NewTensor1D(core.TypeF32, 3))
	out := ctx.Mul(bad, a)
	err := out.Err()
	if err == nil || strings.Count(err.Error(), "tandem: ") != 1 {
		t.Fatalf("nested error %q, want one prefix", err)
	}
	var oe *core.OpError
	if !errors.As(err, &oe) || oe.Op != "MUL" || !strings.Contains(oe.Reason, "ADD: ") {
		t.Fatalf("nested error %v: %+v", err, oe)
	}
	var inner *core.OpError
	if !errors.As(oe.Err, &inner) || inner.Op != "ADD" || len(inner.Operands) != 2 || inner.Operands[0].Ne != [4]int64{3, 1, 1, 1} {
		t.Fatalf("inner error %v: %+v", oe.Err, inner)
	}
	if !errors.Is(ctx.Err(), ctx.Err()) || ctx.Err() != error(inner) {
		t.Fatalf("context error %v, want the first (ADD) error", ctx.Err())
	}

	// Overflow errors stay matchable.
	big := ctx.NewTensor4D(core.TypeF32, 1<<40, 1<<40, 1, 1)
	if !errors.Is(big.Err(), core.ErrOverflow) || !errors.As(big.Err(), &oe) || oe.Op != "new tensor" {
		t.Fatalf("overflow: %v", big.Err())
	}
}
