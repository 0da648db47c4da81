package build

import "strings"

func init() {
	for _, t := range []string{"f32", "f16", "q4_0", "q4_1", "q8_0", "q5_0", "q5_1", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs"} {
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
