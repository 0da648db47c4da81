package build

import "strings"

// Copy and row-gather/scatter shaders: cpy.comp (element copies and conversions),
// cpy_quant.comp (quantize on write), get_rows.comp and set_rows.comp.
func init() {
	def := func(side, t string) string { return side + "_" + strings.ToUpper(t) }
	Register(
		Variant{Name: "cpy_u32", Source: "cpy.comp", Defines: []string{"RAW32"}},
		Variant{Name: "cpy_u16", Source: "cpy.comp", Defines: []string{"RAW16"}},
		Variant{Name: "cpy_mxfp4_raw", Source: "cpy.comp", Defines: []string{"RAW_MXFP4"}},
	)
	// Converting copies (ggml's rule: a quantized source needs a float destination;
	// i32 converts only to and from f32).
	conv := map[string][]string{
		"f32":  {"f16", "bf16", "i32"},
		"f16":  {"f32", "bf16"},
		"bf16": {"f32", "f16"},
		"i32":  {"f32"},
		"q4_0": {"f32", "f16", "bf16"},
		"q4_1": {"f32", "f16", "bf16"},
		"q8_0": {"f32", "f16", "bf16"},
	}
	for _, t := range kquantTypes {
		conv[t] = []string{"f32", "f16", "bf16"}
	}
	for src, dsts := range conv {
		for _, dst := range dsts {
			Register(Variant{Name: "cpy_" + src + "_" + dst, Source: "cpy.comp", Defines: []string{def("SRC", src), def("DST", dst)}})
		}
	}
	for _, src := range []string{"f32", "f16", "bf16"} {
		for _, dst := range quantDsts {
			Register(Variant{Name: "cpy_" + src + "_" + dst, Source: "cpy_quant.comp", Defines: []string{def("SRC", src), def("DST", dst)}})
		}
	}
	for _, src := range append([]string{"f32", "f16", "bf16", "i32", "q4_0", "q4_1", "q8_0"}, kquantTypes...) {
		dst := "f32"
		if src == "i32" {
			dst = "i32"
		}
		Register(Variant{Name: "get_rows_" + src, Source: "get_rows.comp", Defines: []string{def("SRC", src), def("DST", dst)}})
	}
	for _, dst := range append([]string{"f32", "f16", "bf16"}, quantDsts...) {
		Register(Variant{Name: "set_rows_" + dst, Source: "set_rows.comp", Defines: []string{def("DST", dst)}})
		Register(Variant{Name: "set_rows_src_f16_" + dst, Source: "set_rows.comp", Defines: []string{def("SRC", "f16"), def("DST", dst)}})
	}
}

// kquantTypes are the Q5, K-quant, IQ4, FP4, Q1_0, ternary, Q2_0, IQ3, IQ2 and IQ1 types whose
// loaders live in kquants.glsl.
var kquantTypes = []string{"q5_0", "q5_1", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "q8_K", "iq4_nl", "iq4_xs",
	"mxfp4", "nvfp4", "q1_0", "tq1_0", "tq2_0", "q2_0", "iq3_xxs", "iq3_s", "iq2_xxs", "iq2_xs", "iq2_s", "iq1_s", "iq1_m"}

// quantDsts are the block types the row shaders quantize into (rows.glsl's dst_store_block).
var quantDsts = []string{"q4_0", "q4_1", "q8_0", "q5_0", "q5_1", "iq4_nl", "q4_K", "q5_K", "q6_K", "iq4_xs",
	"nvfp4", "q1_0", "tq1_0", "tq2_0", "q2_0", "mxfp4", "q2_K", "q3_K"}
