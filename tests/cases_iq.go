package tests

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// ggml's IQ2_XXS, IQ2_XS, IQ2_S (2-bit lattice codebooks) and IQ1_S, IQ1_M (ternary grids shifted
// by ±1/8) in the ops test-backend-ops runs them through: MUL_MAT (mat-vec, odd row counts,
// broadcast batches, permuted activations, a single super-block), MUL_MAT_ID, OUT_PROD (plain and
// broadcast), GET_ROWS, CPY from (dense and permuted) into f32/f16 and FLASH_ATTN_EXT with K and
// V of the type. ggml has no quantizer for these types (no CPY or SET_ROWS into them); the inputs
// are random valid blocks (randomBlocks). The GPU backends decode them in every op here.

// iqTypes are the types of this family.
var iqTypes = []core.Type{core.TypeIQ2_XXS, core.TypeIQ2_XS, core.TypeIQ2_S, core.TypeIQ1_S, core.TypeIQ1_M}

func init() {
	extraCases = append(extraCases, iqCases)
}

func iqCases() []Case { return iqFamily("iq/", iqTypes) }

// iqFamily is iqTypeCases for every type of types, the case names prefixed with prefix.
func iqFamily(prefix string, types []core.Type) []Case {
	var cs []Case
	add := func(c Case) { c.Name = prefix + c.Name; cs = append(cs, c) }
	for _, typ := range types {
		iqTypeCases(typ, add)
	}
	return cs
}

// iqTypeCases adds the cases of one IQ-family type: quantTypeCases at k = 512, a MUL_MAT of a
// single block and FLASH_ATTN_EXT with K and V of the type (d = 256).
func iqTypeCases(typ core.Type, add func(Case)) {
	f32, bs := core.TypeF32, typ.BlockSize()
	quantTypeCases(typ, 512, add)
	add(Case{Name: fmt.Sprintf("MUL_MAT(%v,m=3,n=2,k=%d)", typ, bs), MaxNMSE: nmseMatMul,
		Build: func(c *core.Context) *core.Tensor {
			return c.MulMat(c.NewTensor(typ, bs, 3), c.NewTensor(f32, bs, 2))
		}})
	s := attnShape{kt: typ, vt: typ, dk: 256, dv: 256, nq: 3, nkv: 19, nh: 4, nhk: 2, ne3: 1, mt: core.TypeF16,
		m2: 1, m3: 1, scale: 0.06}
	add(Case{Name: s.name(), Build: s.build, MaxNMSE: nmseMatMul, Init: normInit(0, 0)})
}
