package build

import (
	"strings"

	"github.com/tandem-ml/tandem/shaders/typelist"
)

func init() {
	// Tiled matrix-matrix products (mul_mm.comp), one variant per weight type;
	// tile sizes are specialization constants.
	for _, t := range typelist.MatMulWeights {
		Register(Variant{
			Name:    "mul_mm_" + t + "_f32",
			Source:  "mul_mm.comp",
			Defines: []string{"A_" + strings.ToUpper(t)},
		})
	}
	for _, t := range typelist.MatMulF16B {
		Register(Variant{
			Name:    "mul_mm_" + t + "_f16",
			Source:  "mul_mm.comp",
			Defines: []string{"A_" + strings.ToUpper(t), "B_F16"},
		})
	}
}

func init() {
	// OUT_PROD over the MUL_MAT weight types.
	for _, t := range typelist.MatMulWeights {
		Register(Variant{
			Name:    "out_prod_" + t + "_f32",
			Source:  "out_prod.comp",
			Defines: []string{"A_" + strings.ToUpper(t)},
		})
	}
}
