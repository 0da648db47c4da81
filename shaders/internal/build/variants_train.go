package build

// The training ops: the *_BACK gradient kernels, the cross-entropy loss and its
// gradient, and the optimizer steps.
func init() {
	Register(
		Variant{Name: "silu_back_f32", Source: "silu_back.comp"},
		Variant{Name: "rms_norm_back_f32", Source: "norm_back.comp"},
		Variant{Name: "soft_max_back_f32", Source: "norm_back.comp", Defines: []string{"SOFT_MAX"}},
		Variant{Name: "rope_back_f32", Source: "rope.comp", Defines: []string{"BACK"}},
		Variant{Name: "rope_back_f16", Source: "rope.comp", Defines: []string{"ROPE_F16", "BACK"}},
		Variant{Name: "get_rows_back_f32", Source: "get_rows_back.comp"},
		Variant{Name: "get_rows_back_f16", Source: "get_rows_back.comp", Defines: []string{"G_F16"}},
		Variant{Name: "repeat_back_f32", Source: "repeat_back.comp"},
		Variant{Name: "cross_entropy_loss_f32", Source: "cross_entropy.comp"},
		Variant{Name: "cross_entropy_loss_back_f32", Source: "cross_entropy.comp", Defines: []string{"BACK"}},
		Variant{Name: "opt_step_adamw_f32", Source: "opt_step.comp"},
		Variant{Name: "diag_mask_zero_f32", Source: "diag_mask_inf.comp", Defines: []string{"ZERO"}},
		Variant{Name: "opt_step_sgd_f32", Source: "opt_step.comp", Defines: []string{"SGD"}},
	)
}
