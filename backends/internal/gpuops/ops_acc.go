package gpuops

import "github.com/tandem-ml/tandem/core"

// ACC (ggml_acc): dst = a, then b added into the view of dst at ACC's byte strides and offset.
// Two dispatches of the existing shaders: the element copy of a into dst (none when dst already
// is a's memory), then the binary ADD over the view, in place; the encoder's hazard tracking puts
// a barrier between them.

func init() {
	registerOp(core.OpAcc, opImpl{supports: supportsAcc, encode: (*Encoder).encodeAcc})
}

// supportsAcc: f32 throughout (the constructor's rule), the view's strides and offset whole
// floats.
func supportsAcc(d *Device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || a.Type != core.TypeF32 || b.Type != core.TypeF32 || t.Type != core.TypeF32 || t.Ne != a.Ne {
		return false
	}
	nb1, nb2, nb3, off := core.AccParamsOf(t)
	if nb1%4 != 0 || nb2%4 != 0 || nb3%4 != 0 || off%4 != 0 || !t.IsContiguous() {
		return false
	}
	cp := *t
	cp.Op, cp.Src = core.OpDup, [core.MaxSrc]*core.Tensor{a}
	return supportsCopy(d, &cp) && supportsBinary(d, accView(t, t))
}

// accView is the view of dst's memory that ACC node n adds its b into, as the tensor of an
// in-place ADD (source 0 and result the same view).
func accView(n, dst *core.Tensor) *core.Tensor {
	b := n.Src[1]
	nb1, nb2, nb3, off := core.AccParamsOf(n)
	v := *dst
	v.Op, v.Src, v.ViewSrc = core.OpNone, [core.MaxSrc]*core.Tensor{}, nil
	v.Ne, v.Nb = b.Ne, [4]int64{4, nb1, nb2, nb3}
	v.Offset += off
	add := v
	add.Op, add.Src = core.OpAdd, [core.MaxSrc]*core.Tensor{&v, b}
	return &add
}

// accNodes returns the copy of a into n's memory (nil when n is a's memory: nothing to copy) and
// the in-place ADD over the view.
func accNodes(n *core.Tensor) (cp, add *core.Tensor) {
	a := n.Src[0]
	if a.Buffer != n.Buffer || a.Offset != n.Offset {
		c := *n
		c.Op, c.Src = core.OpDup, [core.MaxSrc]*core.Tensor{a}
		cp = &c
	}
	return cp, accView(n, n)
}

func (e *Encoder) encodeAcc(n *core.Tensor) error {
	cp, add := accNodes(n)
	if cp != nil {
		if err := e.encodeCopy(cp); err != nil {
			return err
		}
	}
	return e.encodeBinary(add)
}
