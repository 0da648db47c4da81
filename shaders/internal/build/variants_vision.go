package build

// Image and vision-transformer ops: group_norm.comp (GROUP_NORM), upscale.comp (UPSCALE, every
// mode), win.comp (WIN_PART, WIN_UNPART, ADD_REL_POS) and get_rel_pos.comp (GET_REL_POS, f16).
func init() {
	Register(
		Variant{Name: "group_norm_f32", Source: "group_norm.comp"},
		Variant{Name: "upscale_f32", Source: "upscale.comp"},
		Variant{Name: "win_f32", Source: "win.comp"},
		Variant{Name: "get_rel_pos_f16", Source: "get_rel_pos.comp", Defines: []string{"SRC_F16", "DST_F16"}},
	)
}
