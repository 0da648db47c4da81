package tests

import (
	"github.com/tandem-ml/tandem/core"
)

// ACC (ggml_acc): b added into a view of a copy of a, at byte strides and an offset; b dense or
// transposed, the view inside one row or across rows and planes.

func init() {
	extraCases = append(extraCases, accCases)
}

func accCases() []Case {
	f32 := core.TypeF32
	var cs []Case
	add := func(name string, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: "train/" + name, Build: build})
	}
	add("ACC(3d block at an offset)", func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 9, 4, 5)
		return c.Acc(a, c.NewTensor(f32, 5, 2, 3), a.Nb[1], a.Nb[2], a.Nb[3], 3*a.Nb[0]+2*a.Nb[1])
	})
	add("ACC(1d into a row)", func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 16, 3)
		return c.Acc(a, c.NewTensor(f32, 9), a.Nb[1], a.Nb[2], a.Nb[3], 11*4)
	})
	add("ACC(transposed b)", func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 7, 6)
		return c.Acc(a, c.Transpose(c.NewTensor(f32, 4, 3)), a.Nb[1], a.Nb[2], a.Nb[3], 4)
	})
	add("ACC(strided view: every other row)", func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 10, 8, 2)
		return c.Acc(a, c.NewTensor(f32, 10, 4, 2), 2*a.Nb[1], a.Nb[2], a.Nb[3], a.Nb[1])
	})
	return cs
}
