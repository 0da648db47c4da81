package build

// Row-wise normalization and attention helpers: norm.comp (NORM, RMS_NORM),
// soft_max.comp, diag_mask_inf.comp and rope.comp.
func init() {
	Register(
		Variant{Name: "norm_f32", Source: "norm.comp"},
		Variant{Name: "rms_norm_f32", Source: "norm.comp", Defines: []string{"RMS"}},
		Variant{Name: "rms_norm_mul_f32", Source: "norm.comp", Defines: []string{"RMS", "MUL"}},
		Variant{Name: "add_rms_norm_mul_f32", Source: "norm.comp", Defines: []string{"RMS", "MUL", "ADD"}},
		Variant{Name: "soft_max_f32", Source: "soft_max.comp"},
		Variant{Name: "soft_max_f32_mask_f16", Source: "soft_max.comp", Defines: []string{"MASK_F16"}},
		Variant{Name: "diag_mask_inf_f32", Source: "diag_mask_inf.comp"},
		Variant{Name: "rope_f32", Source: "rope.comp"},
		Variant{Name: "rope_f16", Source: "rope.comp", Defines: []string{"ROPE_F16"}},
		// ROPE of one token fused with the SET_ROWS storing it in a KV cache of each float type
		Variant{Name: "rope_set_rows_f32", Source: "rope.comp", Defines: []string{"SET_ROWS", "CACHE_F32"}},
		Variant{Name: "rope_set_rows_f16", Source: "rope.comp", Defines: []string{"SET_ROWS", "CACHE_F16"}},
		Variant{Name: "rope_set_rows_bf16", Source: "rope.comp", Defines: []string{"SET_ROWS", "CACHE_BF16"}},
	)
}
