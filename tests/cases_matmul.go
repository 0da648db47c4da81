package tests

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// MUL_MAT and OUT_PROD beyond the base table: products that span several tiles of the tiled kernel
// with sizes that are not multiples of the tile, broadcast over dims 2 and 3, permuted, strided and
// misaligned activations, row-strided weights, and OUT_PROD over every weight type.
func init() {
	extraCases = append(extraCases, func() []Case {
		var cs []Case
		add := func(name string, build func(*core.Context) *core.Tensor) {
			cs = append(cs, Case{Name: name, Build: build, MaxNMSE: nmseMatMul})
		}
		f32 := core.TypeF32
		weights := []core.Type{core.TypeF32, core.TypeF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0}
		for _, typ := range weights {
			typ := typ
			add(fmt.Sprintf("MUL_MAT(%v,m=67,n=45,k=96)", typ), func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(typ, 96, 67), c.NewTensor(f32, 96, 45))
			})
			add(fmt.Sprintf("MUL_MAT(%v,m=130,n=70,k=128)", typ), func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(typ, 128, 130), c.NewTensor(f32, 128, 70))
			})
			add(fmt.Sprintf("MUL_MAT(%v,broadcast 2+3,n=20)", typ), func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(typ, 64, 33, 2, 1), c.NewTensor(f32, 64, 20, 6, 2))
			})
			add(fmt.Sprintf("MUL_MAT(%v,row-strided a,n=12)", typ), func(c *core.Context) *core.Tensor {
				big := c.NewTensor(typ, 128, 19, 2)
				a := c.View3D(big, 64, 19, 2, big.Nb[1], big.Nb[2], big.Nb[1]/2) // second half of each row
				return c.MulMat(a, c.NewTensor(f32, 64, 12, 2))
			})
		}
		// Precisions (core.MulMatSetPrec): at PrecBF16 the CPU rounds F16 products of 64 and more
		// rows to bf16 where it multiplies bf16 pairs; every backend stays within ggml's bound.
		for _, prec := range []core.Prec{core.PrecF32, core.PrecBF16} {
			for _, typ := range []core.Type{core.TypeF16, core.TypeBF16, core.TypeQ8_0} {
				typ, prec := typ, prec
				add(fmt.Sprintf("MUL_MAT(%v,prec=%d,m=67,n=70,k=96)", typ, prec), func(c *core.Context) *core.Tensor {
					r := c.MulMat(c.NewTensor(typ, 96, 67), c.NewTensor(f32, 96, 70))
					c.MulMatSetPrec(r, prec)
					return r
				})
			}
		}
		for _, typ := range []core.Type{core.TypeF32, core.TypeF16} {
			typ := typ
			add(fmt.Sprintf("MUL_MAT(%v,m=33,n=17,k=37)", typ), func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(typ, 37, 33), c.NewTensor(f32, 37, 17))
			})
			add(fmt.Sprintf("MUL_MAT(%v,m=9,n=40,k=3)", typ), func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(typ, 3, 9), c.NewTensor(f32, 3, 40))
			})
		}
		for _, typ := range []core.Type{core.TypeF32, core.TypeQ4_0} {
			typ := typ
			add(fmt.Sprintf("MUL_MAT(%v,permuted b,n=21)", typ), func(c *core.Context) *core.Tensor {
				// b stored [k, batch, n] and viewed as [k, n, batch].
				return c.MulMat(c.NewTensor(typ, 64, 9, 3), c.Permute(c.NewTensor(f32, 64, 3, 21), 0, 2, 1, 3))
			})
			add(fmt.Sprintf("MUL_MAT(%v,permuted b dims 1-3,n=10)", typ), func(c *core.Context) *core.Tensor {
				// b stored [k, b3, n, b2] and viewed as [k, n, b2, b3].
				return c.MulMat(c.NewTensor(typ, 32, 11, 1, 1), c.Permute(c.NewTensor(f32, 32, 2, 10, 3), 0, 3, 1, 2))
			})
			add(fmt.Sprintf("MUL_MAT(%v,strided misaligned b,n=35)", typ), func(c *core.Context) *core.Tensor {
				big := c.NewTensor(f32, 70, 35, 2)
				b := c.View3D(big, 64, 35, 2, big.Nb[1], big.Nb[2], 3*4)
				return c.MulMat(c.NewTensor(typ, 64, 25, 2), b)
			})
		}

		// OUT_PROD: dst[i, j] = Σ_l a[i, l]·b[j, l], a broadcast over the batch by division.
		for _, typ := range weights {
			typ := typ
			add(fmt.Sprintf("OUT_PROD(%v,broadcast)", typ), func(c *core.Context) *core.Tensor {
				return c.OutProd(c.NewTensor(typ, 64, 13, 2, 1), c.NewTensor(f32, 7, 13, 4, 2))
			})
		}
		add("OUT_PROD(f32,ne0=9,transposed b)", func(c *core.Context) *core.Tensor {
			return c.OutProd(c.NewTensor(f32, 9, 13, 2), c.Transpose(c.NewTensor(f32, 13, 6, 2)))
		})
		add("OUT_PROD(f16,ne0=70,k=1)", func(c *core.Context) *core.Tensor {
			return c.OutProd(c.NewTensor(core.TypeF16, 70, 1), c.NewTensor(f32, 5, 1))
		})
		add("OUT_PROD(f32,large)", func(c *core.Context) *core.Tensor {
			return c.OutProd(c.NewTensor(f32, 300, 40), c.NewTensor(f32, 33, 40))
		})
		return cs
	})
}
