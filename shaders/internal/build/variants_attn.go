package build

// FLASH_ATTN_EXT: flash_attn_ext.comp and pass 1 of the key split (flash_attn_split.comp), each
// with an f32 (or no) mask and with an f16 mask, for the K/V type pairs of gpuops' faPair: every
// pair of f32, f16 and q8_0; bf16, q4_0, q4_1, q5_0, q5_1, iq4_nl, q1_0, q2_0 and the K-quant,
// IQ4_XS, FP4, IQ3, IQ2 and IQ1 types each with itself;
// and the mixed pairs of ggml's test-backend-ops (q8_0/q4_0, q4_0 with f16 and q8_0, q1_0 and q2_0
// with q4_0 and f16). The split's pass 2 (COMBINE) once.
func init() {
	type kv struct{ name, def string }
	f32, f16, q80, q40 := kv{"f32", "F32"}, kv{"f16", "F16"}, kv{"q8_0", "Q8_0"}, kv{"q4_0", "Q4_0"}
	q10, q20 := kv{"q1_0", "Q1_0"}, kv{"q2_0", "Q2_0"}
	var pairs [][2]kv
	for _, k := range []kv{f32, f16, q80} {
		for _, v := range []kv{f32, f16, q80} {
			pairs = append(pairs, [2]kv{k, v})
		}
	}
	for _, t := range []kv{{"bf16", "BF16"}, q40, {"q4_1", "Q4_1"}, {"q5_0", "Q5_0"}, {"q5_1", "Q5_1"},
		{"iq4_nl", "IQ4_NL"}, q10, q20} {
		pairs = append(pairs, [2]kv{t, t})
	}
	// The types fa_kv.glsl decodes with kquants.glsl's loaders, each with itself.
	for _, t := range []kv{{"q2_K", "Q2_K"}, {"q3_K", "Q3_K"}, {"q4_K", "Q4_K"}, {"q5_K", "Q5_K"}, {"q6_K", "Q6_K"},
		{"iq4_xs", "IQ4_XS"}, {"mxfp4", "MXFP4"}, {"nvfp4", "NVFP4"}, {"iq3_xxs", "IQ3_XXS"}, {"iq3_s", "IQ3_S"},
		{"iq2_xxs", "IQ2_XXS"}, {"iq2_xs", "IQ2_XS"}, {"iq2_s", "IQ2_S"}, {"iq1_s", "IQ1_S"}, {"iq1_m", "IQ1_M"}} {
		pairs = append(pairs, [2]kv{t, t})
	}
	pairs = append(pairs, [2]kv{q80, q40}, [2]kv{q40, q80}, [2]kv{q40, f16}, [2]kv{f16, q40},
		[2]kv{q10, q40}, [2]kv{q40, q10}, [2]kv{q10, f16}, [2]kv{q20, q40}, [2]kv{q40, q20}, [2]kv{q20, f16})
	for _, pr := range pairs {
		k, v := pr[0], pr[1]
		suffix := "_k" + k.name + "_v" + v.name
		defs := []string{"K_" + k.def, "V_" + v.def}
		for _, src := range []string{"flash_attn_ext", "flash_attn_split"} {
			Register(
				Variant{Name: src + suffix, Source: src + ".comp", Defines: defs},
				Variant{Name: src + suffix + "_mask_f16", Source: src + ".comp", Defines: append(defs[:2:2], "MASK_F16")},
			)
		}
	}
	Register(Variant{Name: "flash_attn_split_combine", Source: "flash_attn_split.comp", Defines: []string{"COMBINE"}})
}
