package build

import "strings"

func init() {
	// Tiled matrix-matrix products (mul_mm.comp), one variant per weight type;
	// tile sizes are specialization constants.
	for _, t := range []string{"f32", "f16", "q4_0", "q4_1", "q8_0", "q5_0", "q5_1", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs"} {
		Register(Variant{
			Name:    "mul_mm_" + t + "_f32",
			Source:  "mul_mm.comp",
			Defines: []string{"A_" + strings.ToUpper(t)},
		})
	}
}

func init() {
	// OUT_PROD over the MUL_MAT weight types.
	for _, t := range []string{"f32", "f16", "q4_0", "q4_1", "q8_0", "q5_0", "q5_1", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs"} {
		Register(Variant{
			Name:    "out_prod_" + t + "_f32",
			Source:  "out_prod.comp",
			Defines: []string{"A_" + strings.ToUpper(t)},
		})
	}
}
