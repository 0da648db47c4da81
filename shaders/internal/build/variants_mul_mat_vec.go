package build

import (
	"strings"

	"github.com/tandem-ml/tandem/shaders/typelist"
)

func init() {
	for _, t := range typelist.MatMulWeights {
		// Shared-memory reduction (any device) and subgroupAdd reduction
		// (devices with subgroup arithmetic in compute shaders).
		Register(Variant{
			Name:    "mul_mat_vec_" + t + "_f32",
			Source:  "mul_mat_vec.comp",
			Defines: []string{"A_" + strings.ToUpper(t)},
		}, Variant{
			Name:    "mul_mat_vec_" + t + "_f32_subgroup",
			Source:  "mul_mat_vec.comp",
			Defines: []string{"A_" + strings.ToUpper(t), "REDUCE_SUBGROUP"},
		})
	}
	for _, t := range typelist.MatMulF16B { // f16 activations
		Register(Variant{
			Name:    "mul_mat_vec_" + t + "_f16",
			Source:  "mul_mat_vec.comp",
			Defines: []string{"A_" + strings.ToUpper(t), "B_F16"},
		}, Variant{
			Name:    "mul_mat_vec_" + t + "_f16_subgroup",
			Source:  "mul_mat_vec.comp",
			Defines: []string{"A_" + strings.ToUpper(t), "B_F16", "REDUCE_SUBGROUP"},
		})
	}
}
