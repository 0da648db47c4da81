package core

import (
	"fmt"
	"math"
)

// maxEmptyWalk bounds the rows of nothing (the product of an empty tensor's non-zero sizes) a
// kernel may walk for an empty operand of a non-empty result beyond the result's own size: SUM of a
// [0, 2⁶²] tensor would otherwise loop for ages to produce one 0.
const maxEmptyWalk = 1 << 24

// emptyWalk is the product of t's non-zero sizes (saturating).
func emptyWalk(t *Tensor) int64 {
	p := int64(1)
	for _, n := range t.Ne {
		if n != 0 {
			var ok bool
			if p, ok = CheckedMul(p, n); !ok {
				return math.MaxInt64
			}
		}
	}
	return p
}

// emptyInputOK lists the ops whose kernels give a defined non-empty result from an empty operand:
// the sums of no terms (0), the mean of no terms (NaN, as 0/0 in ggml), the argmax of an empty row
// (0, tandem's convention on every backend), and CONCAT, which never reads the empty part.
func emptyInputOK(op Op) bool {
	return op == OpConcat || op == OpSum || op == OpSumRows || op == OpMean || op == OpArgmax
}

// newOp creates the result tensor of an op: type typ, shape ne, sources srcs. It is the gate for
// empty operands (see the package documentation): an op with an empty result is never run by a
// backend, so empty operands flow through it as a zero-size result; an op whose result has elements
// may read an empty operand only where emptyInputOK says the result is defined, otherwise the
// constructor records an error naming the empty operand.
func (c *Context) newOp(op Op, typ Type, ne [4]int64, srcs ...*Tensor) *Tensor {
	if ne[0] != 0 && ne[1] != 0 && ne[2] != 0 && ne[3] != 0 {
		outElems, _ := checkedProduct(ne[:]...)
		for i, s := range srcs {
			if s == nil || !s.IsEmpty() {
				continue
			}
			if !emptyInputOK(op) {
				return c.errorf("%v: operand %d %v is empty (0 elements) but the result %v would not be; "+
					"an op with a non-empty result needs non-empty operands", op, i, s, ne)
			}
			if walk := emptyWalk(s); walk > max(outElems, maxEmptyWalk) {
				return c.errorf("%v: empty operand %d %v spans %d rows of nothing that a kernel would walk "+
					"(more than %d and than the result's %d elements)", op, i, s, walk, int64(maxEmptyWalk), outElems)
			}
		}
	}
	t := c.newTensor(op.String(), typ, ne, nil, 0)
	if t.err != nil {
		return t
	}
	t.Op = op
	copy(t.Src[:], srcs)
	return t
}

// viewOp creates a tensor of shape ne that aliases a's memory at byte offset offs.
func (c *Context) viewOp(op Op, a *Tensor, typ Type, ne [4]int64, offs int64) *Tensor {
	return c.viewOpStrided(op, a, typ, ne, nil, offs)
}

// viewOpStrided is viewOp with explicit strides.
func (c *Context) viewOpStrided(op Op, a *Tensor, typ Type, ne [4]int64, nb *[4]int64, offs int64) *Tensor {
	t := c.newTensorStrided(op.String(), typ, ne, nb, a, offs)
	if t.err != nil {
		return t
	}
	t.Op = op
	t.Src[0] = a
	if a.Name != "" {
		t.Name = a.Name + " (view)"
	}
	return t
}

// check validates the context and the operands: a nil context, nil tensors, placeholders of a
// failed construction and layouts made invalid by hand (negative or overflowing sizes and strides)
// give an error.
func (c *Context) check(op string, ts ...*Tensor) error {
	if c == nil {
		return errNilContext
	}
	for i, t := range ts {
		if t == nil {
			return fmt.Errorf("operand %d is nil", i)
		}
	}
	for i, t := range ts {
		if t.err != nil {
			return fmt.Errorf("operand %d is the placeholder of a failed op: %w", i, bare{t.err})
		}
		if _, err := layoutBytes(t.Type, t.Ne, t.Nb); err != nil {
			// fields changed by hand after construction
			return fmt.Errorf("operand %d %v has an invalid layout: %w", i, t, err)
		}
	}
	return nil
}

func isFloatType(t Type) bool { return t == TypeF32 || t == TypeF16 || t == TypeBF16 }

// requireTypes records an error and returns a placeholder carrying it unless every tensor has a
// type allowed accepts (what names those types); it returns nil when they all do.
func (c *Context) requireTypes(op string, allowed func(Type) bool, what string, ts ...*Tensor) *Tensor {
	for _, t := range ts {
		if !allowed(t.Type) {
			return c.errorf("%s: %v has type %v, want %s", op, t, t.Type, what)
		}
	}
	return nil
}

// fail records err, a failure of op (such as check's), as an *OpError of op.
func (c *Context) fail(op string, err error) *Tensor {
	return c.failErr(asOpError(op, err))
}

// fitsI32 reports whether v fits an op parameter word.
func fitsI32(v int) bool { return v >= math.MinInt32 && v <= math.MaxInt32 }

// errorfNoCtx is the *OpError of a constructor's message "OP: reason" (see Context.errorf) for
// code that records it itself.
func errorfNoCtx(format string, args ...any) error {
	return newOpError(fmt.Sprintf(format, args...), args, nil)
}
