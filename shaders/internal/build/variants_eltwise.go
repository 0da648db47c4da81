package build

// The elementwise family: unary functions, GLU, reductions, arg ops, REPEAT and CONCAT, and the
// generator, fill and index ops (eltwise_index). The function of a shader is chosen by a
// specialization constant, so variants differ only in the element type.
func init() {
	for _, t := range []string{"f32", "f16", "bf16"} {
		def := "TYPE_" + map[string]string{"f32": "F32", "f16": "F16", "bf16": "BF16"}[t]
		Register(
			Variant{Name: "eltwise_unary_" + t, Source: "eltwise_unary.comp", Defines: []string{def}},
			Variant{Name: "eltwise_glu_" + t, Source: "eltwise_glu.comp", Defines: []string{def}},
			Variant{Name: "eltwise_reduce_" + t, Source: "eltwise_reduce.comp", Defines: []string{def}},
		)
	}
	Register(
		Variant{Name: "eltwise_argmax_f32", Source: "eltwise_argmax.comp"},
		Variant{Name: "eltwise_argsort_f32", Source: "eltwise_argsort.comp"},
		Variant{Name: "eltwise_argsort_long_f32", Source: "eltwise_argsort.comp", Defines: []string{"LONG"}},
		Variant{Name: "eltwise_copy_b32", Source: "eltwise_copy.comp", Defines: []string{"ELEM_B32"}},
		Variant{Name: "eltwise_copy_b16", Source: "eltwise_copy.comp", Defines: []string{"ELEM_B16"}},
		Variant{Name: "eltwise_copy_b8", Source: "eltwise_copy.comp", Defines: []string{"ELEM_B8"}},
		Variant{Name: "eltwise_index", Source: "eltwise_index.comp"},
	)
}
