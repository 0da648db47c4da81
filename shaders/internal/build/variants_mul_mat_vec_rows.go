package build

import (
	"strings"

	"github.com/tandem-ml/tandem/shaders/typelist"
)

func init() {
	// One invocation per row, for CPU-type devices (llvmpipe).
	for _, t := range typelist.MatMulWeights {
		Register(Variant{
			Name:    "mul_mat_vec_rows_" + t + "_f32",
			Source:  "mul_mat_vec_rows.comp",
			Defines: []string{"A_" + strings.ToUpper(t)},
		})
	}
	for _, t := range typelist.MatMulF16B { // f16 activations
		Register(Variant{
			Name:    "mul_mat_vec_rows_" + t + "_f16",
			Source:  "mul_mat_vec_rows.comp",
			Defines: []string{"A_" + strings.ToUpper(t), "B_F16"},
		})
	}
}
