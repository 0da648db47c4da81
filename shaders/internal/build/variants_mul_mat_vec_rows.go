package build

import "strings"

func init() {
	// One invocation per row, for CPU-type devices (llvmpipe).
	for _, t := range []string{"f32", "f16", "q4_0", "q4_1", "q8_0"} {
		Register(Variant{
			Name:    "mul_mat_vec_rows_" + t + "_f32",
			Source:  "mul_mat_vec_rows.comp",
			Defines: []string{"A_" + strings.ToUpper(t)},
		})
	}
}
