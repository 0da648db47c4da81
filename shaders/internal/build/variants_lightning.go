package build

import "strings"

// LIGHTNING_INDEXER (lightning_indexer.comp), one variant per key type: every type with a float
// conversion that rows.glsl loads (i32, f32, f16, bf16, q4_0, q4_1, q8_0 and the kquants.glsl
// types that core can also quantize into, so no IQ3/IQ2/IQ1, which core.LightningIndexer
// refuses); and DeepSeek V4's hyper-connection ops (dsv4_hc.comp, the op a specialization
// constant).
func init() {
	for _, k := range []string{"f32", "f16", "bf16", "i32", "q4_0", "q4_1", "q8_0", "q5_0", "q5_1", "q2_K", "q3_K",
		"q4_K", "q5_K", "q6_K", "q8_K", "iq4_nl", "iq4_xs", "mxfp4", "nvfp4", "q1_0", "tq1_0", "tq2_0", "q2_0"} {
		Register(Variant{Name: "lightning_indexer_" + k, Source: "lightning_indexer.comp", Defines: []string{"SRC_" + strings.ToUpper(k)}})
	}
	Register(Variant{Name: "dsv4_hc", Source: "dsv4_hc.comp"})
}
