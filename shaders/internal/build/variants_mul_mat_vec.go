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
}
