// types.glsl: types and dequantization helpers shared by tandem's compute shaders.
//
// Quantized blocks use ggml's byte layouts. Every block is a multiple of 2 bytes,
// so quantized tensors are bound as arrays of uint16_t (GL_EXT_shader_16bit_storage,
// which ggml's Vulkan backend requires too) and decoded with integer ops:
//
//   q4_0: 18 B = f16 d, 16 B nibbles; byte j holds element j (low nibble) and
//         element j+16 (high nibble); value = (nibble - 8) * d.
//   q4_1: 20 B = f16 d, f16 m, 16 B nibbles (same order); value = nibble * d + m.
//   q8_0: 34 B = f16 d, 32 x int8; value = q * d.
//
// Byte b of a block lives in 16-bit word b/2, in bits 8*(b&1) .. 8*(b&1)+7 (little endian).

#ifndef TANDEM_TYPES_GLSL
#define TANDEM_TYPES_GLSL

#extension GL_EXT_shader_16bit_storage : require

#define QK4_0 32u
#define QK4_1 32u
#define QK8_0 32u

// Block sizes in 16-bit words.
#define Q4_0_WORDS 9u
#define Q4_1_WORDS 10u
#define Q8_0_WORDS 17u

float half_bits_to_float(uint h) {
    return unpackHalf2x16(h).x;
}

#endif // TANDEM_TYPES_GLSL
