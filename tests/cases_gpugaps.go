package tests

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// Type combinations and sizes the GPU backends once lacked (issue 22): MUL_MAT with bf16 weights
// and with f16 weights times f16 activations (mat-vec, tiled, unaligned K, broadcast, permuted
// activations); ADD, SUB, MUL and DIV over f16 and bf16 operands (src1 of the same type or f32,
// and f32 src0 with an f16 src1), broadcast and permuted; CPY (f32, f16 and bf16 sources, permuted)
// and SET_ROWS (i32 and i64 indices, broadcast) into Q5_0, Q5_1 and IQ4_NL, quantized on the
// device as core/quant's reference quantizers; ARGSORT of rows longer than a workgroup's shared
// memory holds (the multi-pass sort), with ties, signed zeros, infinities and NaNs.
func init() {
	extraCases = append(extraCases, gpuGapCases)
}

func gpuGapCases() []Case {
	var cs []Case
	add := func(name string, limit float64, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: name, Build: build, MaxNMSE: limit})
	}
	f32, f16, bf16 := core.TypeF32, core.TypeF16, core.TypeBF16
	for _, ab := range [][2]core.Type{{bf16, f32}, {f16, f16}} {
		a, b := ab[0], ab[1]
		for _, n := range []int64{1, 3, 33} {
			n := n
			add(fmt.Sprintf("MUL_MAT(%v x %v,m=17,n=%d,k=64)", a, b, n), nmseMatMul, func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(a, 64, 17), c.NewTensor(b, 64, n))
			})
		}
		add(fmt.Sprintf("MUL_MAT(%v x %v,m=33,n=17,k=37)", a, b), nmseMatMul, func(c *core.Context) *core.Tensor {
			return c.MulMat(c.NewTensor(a, 37, 33), c.NewTensor(b, 37, 17))
		})
		add(fmt.Sprintf("MUL_MAT(%v x %v,k=37,n=1)", a, b), nmseMatMul, func(c *core.Context) *core.Tensor {
			return c.MulMat(c.NewTensor(a, 37, 9), c.NewTensor(b, 37, 1))
		})
		add(fmt.Sprintf("MUL_MAT(%v x %v,broadcast 2+3,n=20)", a, b), nmseMatMul, func(c *core.Context) *core.Tensor {
			return c.MulMat(c.NewTensor(a, 64, 33, 2, 1), c.NewTensor(b, 64, 20, 6, 2))
		})
		add(fmt.Sprintf("MUL_MAT(%v x %v,permuted b,n=21)", a, b), nmseMatMul, func(c *core.Context) *core.Tensor {
			return c.MulMat(c.NewTensor(a, 64, 9, 3), c.Permute(c.NewTensor(b, 64, 3, 21), 0, 2, 1, 3))
		})
	}
	for _, op := range []string{"ADD", "SUB", "MUL", "DIV"} {
		for _, ab := range [][2]core.Type{{f16, f16}, {bf16, bf16}, {f16, f32}, {bf16, f32}, {f32, f16}} {
			op, a, b := op, ab[0], ab[1]
			cs = append(cs, Case{Name: fmt.Sprintf("%s(%v,%v,broadcast)", op, a, b), Init: binaryInit(op),
				Build: func(c *core.Context) *core.Tensor {
					return binary(c, op, c.NewTensor(a, 5, 7, 3, 2), c.NewTensor(b, 5, 1, 3, 1))
				}})
			cs = append(cs, Case{Name: fmt.Sprintf("%s(%v,%v,permuted a)", op, a, b), Init: binaryInit(op),
				Build: func(c *core.Context) *core.Tensor {
					x := c.Permute(c.NewTensor(a, 7, 5, 3, 2), 1, 0, 2, 3)
					return binary(c, op, x, c.NewTensor(b, 5, 7, 3, 2))
				}})
		}
	}
	for _, q := range []core.Type{core.TypeQ5_0, core.TypeQ5_1, core.TypeIQ4_NL} {
		q := q
		for _, from := range []core.Type{f32, f16, bf16} {
			from := from
			cs = append(cs, Case{Name: fmt.Sprintf("CPY(%v->%v,permuted)", from, q), MaxNMSE: rowsExact, Init: copyInit(0),
				Build: func(c *core.Context) *core.Tensor {
					a := c.Permute(c.NewTensor(from, 64, 3, 5, 1), 0, 2, 1, 3)
					return c.Cpy(a, c.NewTensor(q, 64, 5, 3, 1))
				}})
		}
		cs = append(cs, Case{Name: fmt.Sprintf("CPY(f32->%v,reshape)", q), MaxNMSE: rowsExact, Init: copyInit(0),
			Build: func(c *core.Context) *core.Tensor {
				return c.Cpy(c.NewTensor(f32, 48, 4, 2), c.NewTensor(q, 128, 3))
			}})
		for _, it := range []core.Type{core.TypeI32, core.TypeI64} {
			it := it
			cs = append(cs, Case{Name: fmt.Sprintf("SET_ROWS(%v,%v,broadcast)", q, it), MaxNMSE: rowsExact, Init: copyInit(10),
				Build: func(c *core.Context) *core.Tensor {
					return c.SetRows(c.NewTensor(q, 64, 10, 3, 2), c.NewTensor(f32, 64, 7, 3, 2), c.NewTensor(it, 7, 1, 2).SetName("idx"))
				}})
		}
	}
	for _, order := range []core.SortOrder{core.SortAsc, core.SortDesc} {
		order := order
		cs = append(cs, Case{Name: fmt.Sprintf("ARGSORT(%d,ne0=10000,ties,long row)", order), MaxNMSE: nmseExact, Init: eltDiscrete(true),
			Build: func(c *core.Context) *core.Tensor {
				return c.Argsort(c.NewTensor(f32, 10000, 2), order)
			}})
	}
	return cs
}
