package build

import (
	"strings"

	"github.com/tandem-ml/tandem/shaders/typelist"
)

func init() {
	// MUL_MAT_ID (mul_mat_id.comp), one variant per MUL_MAT weight type.
	for _, t := range typelist.MatMulWeights {
		Register(Variant{
			Name:    "mul_mat_id_" + t + "_f32",
			Source:  "mul_mat_id.comp",
			Defines: []string{"A_" + strings.ToUpper(t)},
		})
	}
}
