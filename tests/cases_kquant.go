package tests

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// kquantTypes are the Q5, K-quant and IQ4 weight types (shaders/kquants.glsl on Vulkan).
var kquantTypes = []core.Type{core.TypeQ5_0, core.TypeQ5_1, core.TypeQ2_K, core.TypeQ3_K, core.TypeQ4_K,
	core.TypeQ5_K, core.TypeQ6_K, core.TypeIQ4_NL, core.TypeIQ4_XS}

// MUL_MAT (mat-vec and tiled, odd row counts, broadcast batches), GET_ROWS and dequantizing
// copies for every Q5, K-quant and IQ4 type; GET_ROWS and copies are exact.
func init() {
	extraCases = append(extraCases, func() []Case {
		var cs []Case
		f32 := core.TypeF32
		for _, typ := range kquantTypes {
			typ := typ
			k := typ.BlockSize() * 2
			if k < 256 {
				k = 256
			}
			for _, n := range []int64{1, 3, 9} {
				n := n
				cs = append(cs, Case{Name: fmt.Sprintf("MUL_MAT(%v,m=17,n=%d,k=%d)", typ, n, k), MaxNMSE: nmseMatMul,
					Build: func(c *core.Context) *core.Tensor {
						return c.MulMat(c.NewTensor(typ, k, 17), c.NewTensor(f32, k, n))
					}})
			}
			cs = append(cs, Case{Name: fmt.Sprintf("MUL_MAT(%v,broadcast)", typ), MaxNMSE: nmseMatMul,
				Build: func(c *core.Context) *core.Tensor {
					return c.MulMat(c.NewTensor(typ, k, 9, 2, 1), c.NewTensor(f32, k, 5, 6, 2))
				}})
			cs = append(cs, Case{Name: fmt.Sprintf("MUL_MAT(%v,broadcast,n=1)", typ), MaxNMSE: nmseMatMul,
				Build: func(c *core.Context) *core.Tensor {
					return c.MulMat(c.NewTensor(typ, k, 7, 2, 1), c.NewTensor(f32, k, 1, 4, 3))
				}})
			cs = append(cs, Case{Name: fmt.Sprintf("GET_ROWS(%v)", typ), MaxNMSE: rowsExact,
				Build: func(c *core.Context) *core.Tensor {
					return c.GetRows(c.NewTensor(typ, k, 11, 3), c.NewTensor(core.TypeI32, 7, 3))
				}, Init: indicesOr(11)})
			for _, to := range []core.Type{f32, core.TypeF16} {
				to := to
				cs = append(cs, Case{Name: fmt.Sprintf("CPY(%v->%v,permuted)", typ, to), MaxNMSE: rowsExact, Init: copyInit(0),
					Build: func(c *core.Context) *core.Tensor {
						a := c.Permute(c.NewTensor(typ, k, 3, 5, 1), 0, 2, 1, 3)
						return c.Cpy(a, c.NewTensor(to, k, 5, 3, 1))
					}})
			}
		}
		cs = append(cs, Case{Name: "GET_ROWS(q8_K)", MaxNMSE: rowsExact,
			Build: func(c *core.Context) *core.Tensor {
				return c.GetRows(c.NewTensor(core.TypeQ8_K, 256, 5, 1), c.NewTensor(core.TypeI32, 3, 1))
			}, Init: indicesOr(5)})
		return cs
	})
}

// OUT_PROD with a Q5, K-quant or IQ4 first operand (dequantized on the fly).
func init() {
	extraCases = append(extraCases, func() []Case {
		var cs []Case
		for _, typ := range kquantTypes {
			typ := typ
			cs = append(cs, Case{Name: fmt.Sprintf("OUT_PROD(%v,broadcast)", typ), MaxNMSE: nmseMatMul,
				Build: func(c *core.Context) *core.Tensor {
					return c.OutProd(c.NewTensor(typ, 256, 13, 2, 1), c.NewTensor(core.TypeF32, 7, 13, 4, 2))
				}})
		}
		return cs
	})
}
