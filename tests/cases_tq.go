package tests

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// ggml's ternary TQ1_0 (five trits per byte) and TQ2_0 (2-bit codes), an f16 scale per 256
// values, in every op test-backend-ops runs its quantized types through: MUL_MAT (mat-vec, odd
// row counts, broadcast batches, permuted activations), MUL_MAT_ID, OUT_PROD (plain and
// broadcast), GET_ROWS, CPY from (dense and permuted) and into f32/f16/bf16, SET_ROWS (i32 and
// i64 indices, broadcast). F64, which ggml's CPU only copies into F64 and concatenates, in DUP,
// CONT (permuted, to another shape), CPY and CONCAT. The GPU backends list every case
// unsupported (tq_gpu_test.go): their shaders decode neither.

// tqTypes are the ternary types of this family.
var tqTypes = []core.Type{core.TypeTQ1_0, core.TypeTQ2_0}

func init() {
	extraCases = append(extraCases, tqCases)
}

func tqCases() []Case {
	var cs []Case
	add := func(c Case) { c.Name = "tq/" + c.Name; cs = append(cs, c) }
	f32, f16, bf16, f64 := core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeF64
	for _, typ := range tqTypes {
		typ := typ
		const k = 512
		for _, n := range []int64{1, 3, 9} {
			n := n
			add(Case{Name: fmt.Sprintf("MUL_MAT(%v,m=17,n=%d,k=%d)", typ, n, k), MaxNMSE: nmseMatMul,
				Build: func(c *core.Context) *core.Tensor {
					return c.MulMat(c.NewTensor(typ, k, 17), c.NewTensor(f32, k, n))
				}})
		}
		add(Case{Name: fmt.Sprintf("MUL_MAT(%v,broadcast)", typ), MaxNMSE: nmseMatMul,
			Build: func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(typ, k, 9, 2, 1), c.NewTensor(f32, k, 5, 6, 2))
			}})
		add(Case{Name: fmt.Sprintf("MUL_MAT(%v,permuted b,n=7)", typ), MaxNMSE: nmseMatMul,
			Build: func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(typ, k, 5, 3), c.Permute(c.NewTensor(f32, k, 3, 7), 0, 2, 1, 3))
			}})
		add(Case{Name: fmt.Sprintf("MUL_MAT_ID(%v,k=%d,m=9,experts=4,used=2,b broadcast,tokens=5)", typ, k), MaxNMSE: nmseMatMul,
			Init: moeIDs(4), Build: func(c *core.Context) *core.Tensor {
				return c.MulMatID(c.NewTensor(typ, k, 9, 4), c.NewTensor(f32, k, 1, 5), c.NewTensor(core.TypeI32, 2, 5))
			}})
		add(Case{Name: fmt.Sprintf("MUL_MAT_ID(%v,k=%d,m=5,experts=3,used=3,b per slot,tokens=2)", typ, k), MaxNMSE: nmseMatMul,
			Init: moeIDs(3), Build: func(c *core.Context) *core.Tensor {
				return c.MulMatID(c.NewTensor(typ, k, 5, 3), c.NewTensor(f32, k, 3, 2), c.NewTensor(core.TypeI32, 3, 2))
			}})
		add(Case{Name: fmt.Sprintf("OUT_PROD(%v,broadcast)", typ), MaxNMSE: nmseMatMul,
			Build: func(c *core.Context) *core.Tensor {
				return c.OutProd(c.NewTensor(typ, k, 13, 2, 1), c.NewTensor(f32, 7, 13, 4, 2))
			}})
		add(Case{Name: fmt.Sprintf("OUT_PROD(%v)", typ), MaxNMSE: nmseMatMul,
			Build: func(c *core.Context) *core.Tensor {
				return c.OutProd(c.NewTensor(typ, k, 13, 2, 1), c.NewTensor(f32, 7, 13, 2, 1))
			}})
		add(Case{Name: fmt.Sprintf("GET_ROWS(%v)", typ), MaxNMSE: rowsExact, Init: indicesOr(11),
			Build: func(c *core.Context) *core.Tensor {
				return c.GetRows(c.NewTensor(typ, k, 11, 3), c.NewTensor(core.TypeI32, 7, 3))
			}})
		for _, to := range []core.Type{f32, f16} {
			to := to
			add(Case{Name: fmt.Sprintf("CPY(%v->%v,permuted)", typ, to), MaxNMSE: rowsExact, Init: copyInit(0),
				Build: func(c *core.Context) *core.Tensor {
					a := c.Permute(c.NewTensor(typ, k, 3, 5, 1), 0, 2, 1, 3)
					return c.Cpy(a, c.NewTensor(to, k, 5, 3, 1))
				}})
			add(Case{Name: fmt.Sprintf("CPY(%v->%v)", typ, to), MaxNMSE: rowsExact, Init: copyInit(0),
				Build: func(c *core.Context) *core.Tensor {
					return c.Cpy(c.NewTensor(typ, k, 5, 3), c.NewTensor(to, k, 5, 3))
				}})
		}
		for _, from := range []core.Type{f32, f16, bf16} {
			from := from
			add(Case{Name: fmt.Sprintf("CPY(%v->%v)", from, typ), MaxNMSE: rowsExact, Init: copyInit(0),
				Build: func(c *core.Context) *core.Tensor {
					return c.Cpy(c.NewTensor(from, k, 5, 3), c.NewTensor(typ, k, 5, 3))
				}})
		}
		for _, it := range []core.Type{core.TypeI32, core.TypeI64} {
			it := it
			add(Case{Name: fmt.Sprintf("SET_ROWS(%v,%v,broadcast)", typ, it), MaxNMSE: rowsExact, Init: copyInit(10),
				Build: func(c *core.Context) *core.Tensor {
					return c.SetRows(c.NewTensor(typ, k, 10, 3, 2), c.NewTensor(f32, k, 7, 3, 2), c.NewTensor(it, 7, 1, 2).SetName("idx"))
				}})
		}
	}
	add(Case{Name: "DUP(f64)", MaxNMSE: rowsExact, Build: func(c *core.Context) *core.Tensor {
		return c.Dup(c.NewTensor(f64, 13, 5, 3))
	}})
	add(Case{Name: "CONT(f64,permuted)", MaxNMSE: rowsExact, Build: func(c *core.Context) *core.Tensor {
		return c.Cont(c.Permute(c.NewTensor(f64, 7, 5, 3, 2), 2, 0, 1, 3))
	}})
	add(Case{Name: "CONT(f64,transposed,to 35x6)", MaxNMSE: rowsExact, Build: func(c *core.Context) *core.Tensor {
		return c.ContShape(c.Transpose(c.NewTensor(f64, 7, 5, 6)), 35, 6)
	}})
	add(Case{Name: "CPY(f64->f64,permuted)", MaxNMSE: rowsExact, Build: func(c *core.Context) *core.Tensor {
		return c.Cpy(c.Permute(c.NewTensor(f64, 9, 4, 3), 0, 2, 1, 3), c.NewTensor(f64, 9, 3, 4))
	}})
	for dim := range 4 {
		dim := dim
		add(Case{Name: fmt.Sprintf("CONCAT(f64,dim=%d)", dim), MaxNMSE: rowsExact, Build: func(c *core.Context) *core.Tensor {
			ne := [4]int64{10, 5, 5, 5}
			ne[dim] = 3
			return c.Concat(c.NewTensor4D(f64, 10, 5, 5, 5), c.NewTensor4D(f64, ne[0], ne[1], ne[2], ne[3]), dim)
		}})
	}
	return cs
}
