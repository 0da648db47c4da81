// Package typelist holds the type lists shared by the shader build and the Vulkan backend, so
// that the variants built and the variants the backend asks for come from one place.
package typelist

// MatMulWeights are the weight types (by their core type names) that MUL_MAT's shaders read: the
// mat-vec, per-row mat-vec and tiled variants, and OUT_PROD's, are built for each of them, and the
// Vulkan backend supports MUL_MAT for exactly these.
var MatMulWeights = []string{
	"f32", "f16", "bf16", "q4_0", "q4_1", "q8_0", "q5_0", "q5_1",
	"q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs",
	"mxfp4", "nvfp4", "q1_0", "tq1_0", "tq2_0", "q2_0", "iq3_xxs", "iq3_s",
	"iq2_xxs", "iq2_xs", "iq2_s", "iq1_s", "iq1_m",
}

// MatMulF16B are the weight types whose MUL_MAT shaders also come with f16 activations (B_F16):
// the mat-vec, per-row mat-vec and tiled variants named ..._f16 instead of ..._f32.
var MatMulF16B = []string{"f16"}
