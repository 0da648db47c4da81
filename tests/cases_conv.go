package tests

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// IM2COL, POOL_1D/POOL_2D and the CONV_1D/CONV_2D composites beyond the base table: f16
// results, padding, dilation and stride combinations, non-contiguous inputs, f16 pooling sources,
// and convolutions with more than 8 output channels (the tiled MUL_MAT).
func init() {
	extraCases = append(extraCases, func() []Case {
		var cs []Case
		add := func(name string, limit float64, build func(*core.Context) *core.Tensor) {
			cs = append(cs, Case{Name: name, Build: build, MaxNMSE: limit})
		}
		f32, f16 := core.TypeF32, core.TypeF16
		for _, dst := range []core.Type{f32, f16} {
			dst := dst
			add(fmt.Sprintf("IM2COL(1d,%v,s=1,p=2,d=2)", dst), 0, func(c *core.Context) *core.Tensor {
				return c.Im2Col(c.NewTensor(f32, 3, 4, 6), c.NewTensor(f32, 13, 4, 3), core.Im2ColParams{S0: 1, P0: 2, D0: 2}, dst)
			})
			add(fmt.Sprintf("IM2COL(2d,%v,s=2x1,p=1x2,d=1x1)", dst), 0, func(c *core.Context) *core.Tensor {
				return c.Im2Col(c.NewTensor(f32, 3, 2, 3, 5), c.NewTensor(f32, 10, 7, 3, 2),
					core.Im2ColParams{S0: 2, S1: 1, P0: 1, P1: 2, D0: 1, D1: 1, Is2D: true}, dst)
			})
		}
		add("IM2COL(2d,permuted input)", 0, func(c *core.Context) *core.Tensor {
			// Input stored [W, C, H, N] and viewed as [W, H, C, N].
			b := c.Permute(c.NewTensor(f32, 9, 3, 8, 2), 0, 2, 1, 3)
			return c.Im2Col(c.NewTensor(f32, 3, 3, 3, 4), b, core.Im2ColParams{S0: 1, S1: 1, P0: 1, P1: 1, D0: 1, D1: 1, Is2D: true}, f32)
		})
		add("IM2COL(1d,strided input view)", 0, func(c *core.Context) *core.Tensor {
			big := c.NewTensor(f32, 20, 4, 2)
			b := c.View3D(big, 15, 4, 2, big.Nb[1], big.Nb[2], 2*4)
			return c.Im2Col(c.NewTensor(f32, 5, 4, 2), b, core.Im2ColParams{S0: 3, P0: 1, D0: 1}, f32)
		})
		add("CONV_2D(oc=12,s=2,d=2)", nmseMatMul, func(c *core.Context) *core.Tensor {
			return c.Conv2D(c.NewTensor(f32, 3, 3, 4, 12), c.NewTensor(f32, 13, 11, 4, 2), 2, 1, 1, 2, 2, 1)
		})
		add("CONV_1D(oc=16,s=2,p=1)", nmseMatMul, func(c *core.Context) *core.Tensor {
			return c.Conv1D(c.NewTensor(f32, 3, 5, 16), c.NewTensor(f32, 40, 5, 2), 2, 1, 1)
		})

		for _, op := range []core.PoolOp{core.PoolMax, core.PoolAvg} {
			op := op
			for _, src := range []core.Type{f32, f16} {
				src := src
				add(fmt.Sprintf("POOL_1D(%d,%v,k=4,s=4,p=0)", op, src), 0, func(c *core.Context) *core.Tensor {
					return c.Pool1D(c.NewTensor(src, 24, 3, 2, 2), op, 4, 4, 0)
				})
				add(fmt.Sprintf("POOL_2D(%d,%v,k=3x2,s=1x2,p=1x1)", op, src), 0, func(c *core.Context) *core.Tensor {
					return c.Pool2D(c.NewTensor(src, 10, 9, 3, 2), op, 3, 2, 1, 2, 1, 1)
				})
			}
			add(fmt.Sprintf("POOL_1D(%d,k=5,s=3,p=2)", op), 0, func(c *core.Context) *core.Tensor {
				return c.Pool1D(c.NewTensor(f32, 19, 4, 3), op, 5, 3, 2)
			})
			// Padding at and past the kernel size (ggml allows it): windows wholly in the padding
			// give 0 (avg) or -FLT_MAX (max).
			add(fmt.Sprintf("POOL_1D(%d,k=2,s=1,p=3)", op), 0, func(c *core.Context) *core.Tensor {
				return c.Pool1D(c.NewTensor(f32, 7, 3, 2), op, 2, 1, 3)
			})
			add(fmt.Sprintf("POOL_1D(%d,f16,k=3,s=2,p=3)", op), 0, func(c *core.Context) *core.Tensor {
				return c.Pool1D(c.NewTensor(f16, 10, 4), op, 3, 2, 3)
			})
			add(fmt.Sprintf("POOL_2D(%d,k=2x3,s=1x2,p=2x4)", op), 0, func(c *core.Context) *core.Tensor {
				return c.Pool2D(c.NewTensor(f32, 6, 5, 3), op, 2, 3, 1, 2, 2, 4)
			})
			add(fmt.Sprintf("POOL_2D(%d,f16,k=1x1,s=2x2,p=1x1)", op), 0, func(c *core.Context) *core.Tensor {
				return c.Pool2D(c.NewTensor(f16, 5, 4, 2), op, 1, 1, 2, 2, 1, 1)
			})
			add(fmt.Sprintf("POOL_2D(%d,permuted)", op), 0, func(c *core.Context) *core.Tensor {
				// Planes stored [W, C, H] and viewed as [W, H, C].
				return c.Pool2D(c.Permute(c.NewTensor(f32, 12, 3, 8), 0, 2, 1, 3), op, 2, 2, 2, 2, 0, 0)
			})
		}
		return cs
	})
}
