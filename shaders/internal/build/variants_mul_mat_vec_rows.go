package build

import "strings"

func init() {
	// One invocation per row, for CPU-type devices (llvmpipe).
	for _, t := range []string{"f32", "f16", "q4_0", "q4_1", "q8_0", "q5_0", "q5_1", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs"} {
		Register(Variant{
			Name:    "mul_mat_vec_rows_" + t + "_f32",
			Source:  "mul_mat_vec_rows.comp",
			Defines: []string{"A_" + strings.ToUpper(t)},
		})
	}
}
