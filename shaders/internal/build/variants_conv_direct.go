package build

func init() {
	// CONV_2D, CONV_3D, CONV_2D_DW (conv_direct) and CONV_TRANSPOSE_1D/2D (conv_transpose) with f32
	// or f16 kernels; IM2COL_3D to f32 or f16; COL2IM_1D of f32, f16 or bf16.
	Register(Variant{Name: "conv_direct_f32", Source: "conv_direct.comp", Defines: []string{"MODE_CONV"}},
		Variant{Name: "conv_direct_f16", Source: "conv_direct.comp", Defines: []string{"MODE_CONV", "K_F16"}},
		Variant{Name: "conv_transpose_f32", Source: "conv_direct.comp", Defines: []string{"MODE_CONVT"}},
		Variant{Name: "conv_transpose_f16", Source: "conv_direct.comp", Defines: []string{"MODE_CONVT", "K_F16"}},
		Variant{Name: "im2col_3d_f32", Source: "conv_direct.comp", Defines: []string{"MODE_IM2COL3D", "DST_F32"}},
		Variant{Name: "im2col_3d_f16", Source: "conv_direct.comp", Defines: []string{"MODE_IM2COL3D", "DST_F16"}},
		Variant{Name: "col2im_1d_f32", Source: "conv_direct.comp", Defines: []string{"MODE_COL2IM", "SRC_F32", "DST_F32"}},
		Variant{Name: "col2im_1d_f16", Source: "conv_direct.comp", Defines: []string{"MODE_COL2IM", "SRC_F16", "DST_F16"}},
		Variant{Name: "col2im_1d_bf16", Source: "conv_direct.comp", Defines: []string{"MODE_COL2IM", "SRC_BF16", "DST_BF16"}})
}
