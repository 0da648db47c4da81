package core

import "fmt"

// newOp creates the result tensor of an op: type typ, shape ne, sources srcs.
func (c *Context) newOp(op Op, typ Type, ne [4]int64, srcs ...*Tensor) *Tensor {
	t := c.newTensor(typ, ne, nil, 0)
	if t.Name == "invalid" {
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
	t := c.newTensorStrided(typ, ne, nb, a, offs)
	if t.Name == "invalid" {
		return t
	}
	t.Op = op
	t.Src[0] = a
	if a.Name != "" {
		t.Name = a.Name + " (view)"
	}
	return t
}

// check validates operands: nil tensors and tensors of a failed construction give an error.
func (c *Context) check(op string, ts ...*Tensor) error {
	for i, t := range ts {
		if t == nil {
			return fmt.Errorf("tandem: %s: operand %d is nil", op, i)
		}
	}
	return nil
}

func isFloatType(t Type) bool { return t == TypeF32 || t == TypeF16 || t == TypeBF16 }

// requireFloat records an error unless every tensor has a float type.
func (c *Context) requireTypes(op string, allowed func(Type) bool, what string, ts ...*Tensor) bool {
	for _, t := range ts {
		if !allowed(t.Type) {
			c.setErr(fmt.Errorf("tandem: %s: %v has type %v, want %s", op, t, t.Type, what))
			return false
		}
	}
	return true
}

func (c *Context) fail(op string, err error) *Tensor {
	c.setErr(fmt.Errorf("tandem: %s: %w", op, err))
	return c.placeholder()
}

func errorfNoCtx(format string, args ...any) error { return fmt.Errorf("tandem: "+format, args...) }
