package core_test

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

func TestMulMatIDShape(t *testing.T) {
	for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ8_0, core.TypeQ4_K, core.TypeIQ4_XS} {
		c := core.NewContext(core.ContextParams{NoAlloc: true})
		as := c.NewTensor3D(typ, 256, 6, 8)         // 8 experts of 6 rows
		b := c.NewTensor3D(core.TypeF32, 256, 1, 5) // one row per token, broadcast over the slots
		ids := c.NewTensor2D(core.TypeI32, 2, 5)    // 2 experts per token
		r := c.MulMatID(as, b, ids)
		if err := c.Err(); err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		if r.Op != core.OpMulMatID || r.Type != core.TypeF32 || r.Ne != [4]int64{6, 2, 5, 1} {
			t.Fatalf("%v: got %v op %v type %v", typ, r.Ne, r.Op, r.Type)
		}
		if r.Src[0] != as || r.Src[1] != b || r.Src[2] != ids {
			t.Fatalf("%v: sources %v", typ, r.Src[:3])
		}
		// b with one row per slot
		r = c.MulMatID(as, c.NewTensor3D(core.TypeF32, 256, 2, 5), ids)
		if err := c.Err(); err != nil || r.Ne != [4]int64{6, 2, 5, 1} {
			t.Fatalf("%v: per-slot rows: %v %v", typ, r.Ne, err)
		}
	}
}

func TestMulMatIDBadInput(t *testing.T) {
	f32, i32 := core.TypeF32, core.TypeI32
	cases := []struct {
		name  string
		want  string
		build func(c *core.Context) *core.Tensor
	}{
		{"nil ids", "nil", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor3D(f32, 4, 3, 2), c.NewTensor3D(f32, 4, 1, 5), nil)
		}},
		{"i32 weights", "unsupported type", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor3D(i32, 4, 3, 2), c.NewTensor3D(f32, 4, 1, 5), c.NewTensor2D(i32, 2, 5))
		}},
		{"f16 activations", "must be f32", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor3D(f32, 4, 3, 2), c.NewTensor3D(core.TypeF16, 4, 1, 5), c.NewTensor2D(i32, 2, 5))
		}},
		{"f32 ids", "must be i32", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor3D(f32, 4, 3, 2), c.NewTensor3D(f32, 4, 1, 5), c.NewTensor2D(f32, 2, 5))
		}},
		{"4-D weights", "3-D", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor4D(f32, 4, 3, 2, 2), c.NewTensor3D(f32, 4, 1, 5), c.NewTensor2D(i32, 2, 5))
		}},
		{"4-D activations", "3-D", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor3D(f32, 4, 3, 2), c.NewTensor4D(f32, 4, 1, 5, 2), c.NewTensor2D(i32, 2, 5))
		}},
		{"3-D ids", "2-D", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor3D(f32, 4, 3, 2), c.NewTensor3D(f32, 4, 1, 5), c.NewTensor3D(i32, 2, 5, 2))
		}},
		{"k differs", "inner dimensions differ", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor3D(f32, 4, 3, 2), c.NewTensor3D(f32, 8, 1, 5), c.NewTensor2D(i32, 2, 5))
		}},
		{"token count differs", "token id lists", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor3D(f32, 4, 3, 2), c.NewTensor3D(f32, 4, 1, 5), c.NewTensor2D(i32, 2, 4))
		}},
		{"rows do not broadcast", "do not broadcast", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor3D(f32, 4, 3, 2), c.NewTensor3D(f32, 4, 3, 5), c.NewTensor2D(i32, 2, 5))
		}},
		{"no activation rows", "do not broadcast", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor3D(f32, 4, 3, 2), c.NewTensor3D(f32, 4, 0, 5), c.NewTensor2D(i32, 2, 5))
		}},
		{"k = 0", "inner dimension k is 0", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor3D(f32, 0, 3, 2), c.NewTensor3D(f32, 0, 1, 5), c.NewTensor2D(i32, 2, 5))
		}},
		{"transposed weights", "transposed", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.Transpose(c.NewTensor3D(f32, 4, 4, 2)), c.NewTensor3D(f32, 4, 1, 5), c.NewTensor2D(i32, 2, 5))
		}},
		{"strided activation elements", "contiguous", func(c *core.Context) *core.Tensor {
			b := c.Permute(c.NewTensor3D(f32, 2, 4, 5), 1, 0, 2, 3) // [4, 2, 5], elements 8 bytes apart
			return c.MulMatID(c.NewTensor3D(f32, 4, 3, 2), b, c.NewTensor2D(i32, 2, 5))
		}},
		{"no experts", "empty", func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor3D(f32, 4, 3, 0), c.NewTensor3D(f32, 4, 1, 5), c.NewTensor2D(i32, 2, 5))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := core.NewContext(core.ContextParams{NoAlloc: true})
			r := tc.build(c)
			err := c.Err()
			if err == nil {
				t.Fatalf("no error; result %v", r)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "MUL_MAT_ID") {
				t.Fatalf("error %q, want one naming MUL_MAT_ID and %q", err, tc.want)
			}
			if r == nil || r.Err() == nil {
				t.Fatalf("returned %v, want a placeholder carrying the error", r)
			}
		})
	}
	// A nil context.
	var nc *core.Context
	other := core.NewContext(core.ContextParams{NoAlloc: true})
	if r := nc.MulMatID(other.NewTensor3D(f32, 4, 3, 2), other.NewTensor3D(f32, 4, 1, 5), other.NewTensor2D(i32, 2, 5)); r.Err() == nil {
		t.Fatal("nil context: no error")
	}
}
