package build

// FLASH_ATTN_EXT: flash_attn_ext.comp and pass 1 of the key split (flash_attn_split.comp) for
// every pair of f32, f16 and q8_0 keys and values, with an f32 (or no) mask and with an f16 mask;
// the split's pass 2 (COMBINE) once.
func init() {
	types := []struct{ name, def string }{{"f32", "F32"}, {"f16", "F16"}, {"q8_0", "Q8_0"}}
	for _, k := range types {
		for _, v := range types {
			name := "flash_attn_ext_k" + k.name + "_v" + v.name
			defs := []string{"K_" + k.def, "V_" + v.def}
			Register(
				Variant{Name: name, Source: "flash_attn_ext.comp", Defines: defs},
				Variant{Name: name + "_mask_f16", Source: "flash_attn_ext.comp", Defines: append(defs[:2:2], "MASK_F16")},
			)
			split := "flash_attn_split_k" + k.name + "_v" + v.name
			Register(
				Variant{Name: split, Source: "flash_attn_split.comp", Defines: defs},
				Variant{Name: split + "_mask_f16", Source: "flash_attn_split.comp", Defines: append(defs[:2:2], "MASK_F16")},
			)
		}
	}
	Register(Variant{Name: "flash_attn_split_combine", Source: "flash_attn_split.comp", Defines: []string{"COMBINE"}})
}
