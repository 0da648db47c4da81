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
// CONT (permuted, to another shape), CPY and CONCAT. The GPU backends decode the ternary blocks;
// the cases they refuse are listed in tq_gpu_test.go.

// tqTypes are the ternary types of this family.
var tqTypes = []core.Type{core.TypeTQ1_0, core.TypeTQ2_0}

func init() {
	extraCases = append(extraCases, tqCases)
}

func tqCases() []Case {
	var cs []Case
	add := func(c Case) { c.Name = "tq/" + c.Name; cs = append(cs, c) }
	f64 := core.TypeF64
	for _, typ := range tqTypes {
		typ := typ
		const k = 512
		quantTypeCases(typ, k, add)
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
