package tests

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// ggml's MXFP4 (E2M1 codes, an E8M0 scale per 32 values), NVFP4 (E2M1 codes, a UE4M3 scale per
// 16 values, blocks of 64) and Q1_0 (sign bits, an f16 magnitude per 128 values) in every op
// test-backend-ops runs them through: MUL_MAT (mat-vec, odd row counts, broadcast batches,
// permuted activations), MUL_MAT_ID, OUT_PROD (plain and broadcast), GET_ROWS, CPY from (dense and
// permuted) and into f32/f16/bf16, SET_ROWS
// (i32 and i64 indices, broadcast) and FLASH_ATTN_EXT with K and V of the type. The GPU backends
// decode the blocks; the cases they refuse are listed in fp4_gpu_test.go.

// fp4Types are the types of this family.
var fp4Types = []core.Type{core.TypeMXFP4, core.TypeNVFP4, core.TypeQ1_0}

func init() {
	extraCases = append(extraCases, fp4Cases)
}

func fp4Cases() []Case {
	var cs []Case
	add := func(c Case) { c.Name = "fp4/" + c.Name; cs = append(cs, c) }
	f16 := core.TypeF16
	for _, typ := range fp4Types {
		typ := typ
		k := max(typ.BlockSize()*2, 256)
		quantTypeCases(typ, int64(k), add)
		s := attnShape{kt: typ, vt: typ, dk: 128, dv: 128, nq: 3, nkv: 19, nh: 4, nhk: 2, ne3: 1, mt: f16, m2: 1, m3: 1, scale: 0.09}
		add(Case{Name: s.name(), Build: s.build, MaxNMSE: nmseMatMul, Init: normInit(0, 0)})
	}
	return cs
}

// quantTypeCases adds the cases test-backend-ops runs a quantized weight type through, for typ
// with rows of k elements: MUL_MAT (mat-vec, odd row counts, broadcast batches, permuted
// activations), MUL_MAT_ID, OUT_PROD (plain and broadcast), GET_ROWS, CPY from (dense and
// permuted) and into f32/f16/bf16, SET_ROWS (i32 and i64 indices, broadcast); the copies into typ
// and SET_ROWS only where typ has a quantizer.
func quantTypeCases(typ core.Type, k int64, add func(Case)) {
	f32, f16, bf16 := core.TypeF32, core.TypeF16, core.TypeBF16
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
	if !typ.CanConvert() {
		return // no quantizer (ggml's IQ2, IQ3 and IQ1 types): nothing copies or sets rows into typ
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
