package tests

import (
	"github.com/tandem-ml/tandem/core"
)

// ggml's IQ3_XXS and IQ3_S (3-bit lattice codebooks, read-only: ggml has no CPU quantizer for
// them, the inputs are random valid blocks from randomBlocks) and Q2_0 (2-bit codes −d, 0, d, 2d
// per 64 values, with ggml's reference quantizer) through iqTypeCases: MUL_MAT (mat-vec, odd row
// counts, broadcast batches, permuted activations, a single block), MUL_MAT_ID, OUT_PROD (plain
// and broadcast), GET_ROWS, CPY from (dense and permuted) into f32/f16, for Q2_0 also CPY from
// f32/f16/bf16 and SET_ROWS into it, and FLASH_ATTN_EXT with K and V of the type. The GPU
// backends run every case (iq3_gpu_test.go lists what they would refuse).

// iq3Types are the types of this family.
var iq3Types = []core.Type{core.TypeIQ3_XXS, core.TypeIQ3_S, core.TypeQ2_0}

func init() {
	extraCases = append(extraCases, iq3Cases)
}

func iq3Cases() []Case { return iqFamily("iq3/", iq3Types) }
