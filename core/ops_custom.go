package core

import (
	"errors"
	"fmt"
	"math"
)

// Custom ops: ggml_map_custom1/2/3 (MAP_CUSTOM1..3) and ggml_custom_4d / ggml_custom_inplace
// (CUSTOM), a Go function run as a graph node. Only the CPU backend runs them: GPU backends cannot
// run Go code, and RPC cannot send a function (ggml's RPC cannot either), so they report them
// unsupported and a scheduler keeps such a node on the CPU, copying its sources there and its
// result back. The function is called once per task, on the CPU backend's threads in parallel,
// with its task index ith and the number of tasks nth (ggml's n_tasks: the tasks asked for, at
// most the backend's threads); it reads the sources' and writes dst's host memory (Tensor.Data,
// Float32s) and should split the work by ith/nth. A panic in it fails the graph's compute with an
// error naming the node. The function travels with the node (tensor copies, the scheduler's
// shadow nodes) but not in Params: Params[0] holds the task count. ggml's backward has no
// gradient for custom ops.

// NTasksMax asks for one task per thread of the backend (GGML_N_TASKS_MAX).
const NTasksMax = -1

// Custom1Func computes task ith of nth of a MAP_CUSTOM1 node dst from a (ggml_custom1_op_t; the
// closure stands in for ggml's userdata).
type Custom1Func func(dst, a *Tensor, ith, nth int)

// Custom2Func computes task ith of nth of a MAP_CUSTOM2 node dst from a and b (ggml_custom2_op_t).
type Custom2Func func(dst, a, b *Tensor, ith, nth int)

// Custom3Func computes task ith of nth of a MAP_CUSTOM3 node dst from a, b and c
// (ggml_custom3_op_t).
type Custom3Func func(dst, a, b, c *Tensor, ith, nth int)

// CustomFunc computes task ith of nth of a CUSTOM node dst, whose sources are dst.Src
// (ggml_custom_op_t).
type CustomFunc func(dst *Tensor, ith, nth int)

// customOp is the function of a custom node: exactly one field is set, by the node's op.
type customOp struct {
	f1 Custom1Func
	f2 Custom2Func
	f3 Custom3Func
	f  CustomFunc
}

// checkTasks validates a custom op's task count.
func checkTasks(op string, nTasks int) error {
	if nTasks != NTasksMax && (nTasks < 1 || nTasks > math.MaxInt32) {
		return fmt.Errorf("%s: %d tasks, want ≥ 1 or NTasksMax", op, nTasks)
	}
	return nil
}

// mapCustom builds a MAP_CUSTOM node over srcs (a first), a copy of a's shape and type or a view
// of a when inplace.
func (c *Context) mapCustom(op Op, srcs []*Tensor, fn *customOp, isNil bool, nTasks int, inplace bool) *Tensor {
	name := op.String()
	if err := c.check(name, srcs...); err != nil {
		return c.fail(name, err)
	}
	if isNil {
		return c.errorf("%s: the function is nil", name)
	}
	if err := checkTasks(name, nTasks); err != nil {
		return c.failErr(errorfNoCtx("%v", err))
	}
	a := srcs[0]
	var t *Tensor
	if inplace {
		t = c.inplaceOp(op, a)
	} else {
		t = c.newOp(op, a.Type, a.Ne, srcs...)
	}
	if t.err != nil {
		return t
	}
	copy(t.Src[:], srcs)
	t.Params[0] = int32(nTasks)
	t.custom = fn
	return t
}

// MapCustom1 is a node of a's shape and type computed by fn from a (ggml_map_custom1), run in
// nTasks tasks (NTasksMax: one per thread). Only the CPU backend runs it (see the package's
// custom ops). A nil operand or function (or a nil context) records an error on the context and
// returns a placeholder.
func (c *Context) MapCustom1(a *Tensor, fn Custom1Func, nTasks int) *Tensor {
	return c.mapCustom(OpMapCustom1, []*Tensor{a}, &customOp{f1: fn}, fn == nil, nTasks, false)
}

// MapCustom1Inplace is MapCustom1 writing into a's memory (ggml_map_custom1_inplace): dst is a view
// of a. A nil operand or function (or a nil context) records an error on the context and returns a
// placeholder.
func (c *Context) MapCustom1Inplace(a *Tensor, fn Custom1Func, nTasks int) *Tensor {
	return c.mapCustom(OpMapCustom1, []*Tensor{a}, &customOp{f1: fn}, fn == nil, nTasks, true)
}

// MapCustom2 is a node of a's shape and type computed by fn from a and b (ggml_map_custom2). A nil
// operand or function (or a nil context) records an error on the context and returns a
// placeholder.
func (c *Context) MapCustom2(a, b *Tensor, fn Custom2Func, nTasks int) *Tensor {
	return c.mapCustom(OpMapCustom2, []*Tensor{a, b}, &customOp{f2: fn}, fn == nil, nTasks, false)
}

// MapCustom2Inplace is MapCustom2 writing into a's memory (ggml_map_custom2_inplace). A nil operand
// or function (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) MapCustom2Inplace(a, b *Tensor, fn Custom2Func, nTasks int) *Tensor {
	return c.mapCustom(OpMapCustom2, []*Tensor{a, b}, &customOp{f2: fn}, fn == nil, nTasks, true)
}

// MapCustom3 is a node of a's shape and type computed by fn from a, b and c (ggml_map_custom3). A
// nil operand or function (or a nil context) records an error on the context and returns a
// placeholder.
func (c *Context) MapCustom3(a, b, d *Tensor, fn Custom3Func, nTasks int) *Tensor {
	return c.mapCustom(OpMapCustom3, []*Tensor{a, b, d}, &customOp{f3: fn}, fn == nil, nTasks, false)
}

// MapCustom3Inplace is MapCustom3 writing into a's memory (ggml_map_custom3_inplace). A nil operand
// or function (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) MapCustom3Inplace(a, b, d *Tensor, fn Custom3Func, nTasks int) *Tensor {
	return c.mapCustom(OpMapCustom3, []*Tensor{a, b, d}, &customOp{f3: fn}, fn == nil, nTasks, true)
}

// Custom4D is a new tensor of type typ and shape ne0..ne3 computed by fn from args, its sources
// in order (ggml_custom_4d; at most MaxSrc-1 of them, none nil), in nTasks tasks (NTasksMax: one
// per thread). Only the CPU backend runs it. A nil argument or function (or a nil context) records
// an error on the context and returns a placeholder.
func (c *Context) Custom4D(typ Type, ne0, ne1, ne2, ne3 int64, args []*Tensor, fn CustomFunc, nTasks int) *Tensor {
	if err := c.check("CUSTOM", args...); err != nil {
		return c.fail("CUSTOM", err)
	}
	switch {
	case len(args) >= MaxSrc:
		return c.errorf("CUSTOM: %d arguments, want at most %d", len(args), MaxSrc-1)
	case fn == nil:
		return c.errorf("CUSTOM: the function is nil")
	case !typ.Valid():
		return c.errorf("CUSTOM: unknown type %v", typ)
	}
	if err := checkTasks("CUSTOM", nTasks); err != nil {
		return c.failErr(errorfNoCtx("%v", err))
	}
	t := c.newOp(OpCustom, typ, [4]int64{ne0, ne1, ne2, ne3}, args...)
	if t.err != nil {
		return t
	}
	t.Params[0] = int32(nTasks)
	t.custom = &customOp{f: fn}
	return t
}

// CustomInplace is a CUSTOM node writing into a's memory (ggml_custom_inplace): dst is a view of a,
// its sources a and then args (at most MaxSrc-2, none nil). A nil operand or function (or a nil
// context) records an error on the context and returns a placeholder.
func (c *Context) CustomInplace(a *Tensor, args []*Tensor, fn CustomFunc, nTasks int) *Tensor {
	if err := c.check("CUSTOM", append([]*Tensor{a}, args...)...); err != nil {
		return c.fail("CUSTOM", err)
	}
	switch {
	case len(args) >= MaxSrc-1:
		return c.errorf("CUSTOM: %d arguments besides %v, want at most %d", len(args), a, MaxSrc-2)
	case fn == nil:
		return c.errorf("CUSTOM: the function is nil")
	}
	if err := checkTasks("CUSTOM", nTasks); err != nil {
		return c.failErr(errorfNoCtx("%v", err))
	}
	t := c.inplaceOp(OpCustom, a)
	if t.err != nil {
		return t
	}
	copy(t.Src[1:], args)
	t.Params[0] = int32(nTasks)
	t.custom = &customOp{f: fn}
	return t
}

// IsCustom reports whether op runs a Go function (MAP_CUSTOM1..3, CUSTOM).
func (o Op) IsCustom() bool {
	return o == OpMapCustom1 || o == OpMapCustom2 || o == OpMapCustom3 || o == OpCustom
}

// CustomTasks returns the tasks a custom node asks for: NTasksMax or a count ≥ 1 (0 for a nil t
// or another op).
func CustomTasks(t *Tensor) int {
	if t == nil || !t.Op.IsCustom() {
		return 0
	}
	return int(t.Params[0])
}

var errNoCustomFunc = errors.New("custom node without a function (built by hand, not by a Custom constructor)")

// RunCustom calls task ith of nth of custom node t's function with t and its sources, for
// backends that run custom nodes. A nil t, another op, or a node without its function (one not
// made by a constructor) is an error; a panic in the function is not recovered here.
func RunCustom(t *Tensor, ith, nth int) error {
	if t == nil {
		return errNilTensor
	}
	fn := t.custom
	if !t.Op.IsCustom() || fn == nil {
		return fmt.Errorf("tandem: %v: %w", t, errNoCustomFunc)
	}
	switch {
	case t.Op == OpMapCustom1 && fn.f1 != nil:
		fn.f1(t, t.Src[0], ith, nth)
	case t.Op == OpMapCustom2 && fn.f2 != nil:
		fn.f2(t, t.Src[0], t.Src[1], ith, nth)
	case t.Op == OpMapCustom3 && fn.f3 != nil:
		fn.f3(t, t.Src[0], t.Src[1], t.Src[2], ith, nth)
	case t.Op == OpCustom && fn.f != nil:
		fn.f(t, ith, nth)
	default:
		return fmt.Errorf("tandem: %v: %w", t, errNoCustomFunc)
	}
	return nil
}
