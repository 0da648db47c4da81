// dequant.glsl: per-type loaders for the "A" operand of a shader.
//
// The including shader defines exactly one of A_F32, A_F16, A_BF16, A_Q4_0, A_Q4_1, A_Q8_0,
// A_Q5_0, A_Q5_1, A_Q2_K ... A_Q6_K, A_Q8_K, A_IQ4_NL, A_IQ4_XS,
// A_MXFP4, A_NVFP4, A_Q1_0, A_TQ1_0, A_TQ2_0,
// A_Q2_0, A_IQ3_XXS, A_IQ3_S, A_IQ2_XXS, A_IQ2_XS, A_IQ2_S, A_IQ1_S, A_IQ1_M (those via
// kquants.glsl; MXFP4 in bytes)
// and A_BINDING (the binding number of A, default 0). This file declares the
// readonly array data_a (float for A_F32, float16_t for A_F16, uint16_t for A_BF16
// and words for the block types) and provides:
//
//   A_FLOAT              defined for f32/f16/bf16 (element-addressable types)
//   A_QK                 elements per block (1 for f32/f16/bf16)
//   A_BLOCK_UNITS        array units per block (1 for f32/f16/bf16, words for blocks)
//   vec4 a_load4(uint base, uint k)
//        four consecutive elements k..k+3 of a row starting at array unit 'base'
//        (k must be a multiple of 4; for block types base is the first word of the
//        row's first block and k < row length)
//   float a_load1(uint base, uint k)
//        one element (f32/f16/bf16 only; block types are always whole blocks).

#ifndef TANDEM_DEQUANT_GLSL
#define TANDEM_DEQUANT_GLSL

#include "types.glsl"

#ifndef A_BINDING
#define A_BINDING 0
#endif

#if defined(A_F32)

#define A_FLOAT
#define A_QK 1u
#define A_BLOCK_UNITS 1u
layout(std430, binding = A_BINDING) readonly buffer BufA { float data_a[]; };

vec4 a_load4(uint base, uint k) {
    uint i = base + k;
    return vec4(data_a[i], data_a[i + 1u], data_a[i + 2u], data_a[i + 3u]);
}
float a_load1(uint base, uint k) {
    return data_a[base + k];
}

#elif defined(A_F16)

#define A_FLOAT
#define A_QK 1u
#define A_BLOCK_UNITS 1u
layout(std430, binding = A_BINDING) readonly buffer BufA { float16_t data_a[]; };

vec4 a_load4(uint base, uint k) {
    uint i = base + k;
    return vec4(float(data_a[i]), float(data_a[i + 1u]), float(data_a[i + 2u]), float(data_a[i + 3u]));
}
float a_load1(uint base, uint k) {
    return float(data_a[base + k]);
}

#elif defined(A_BF16)

// bf16: the top half of an f32, exact to widen.
#define A_FLOAT
#define A_QK 1u
#define A_BLOCK_UNITS 1u
layout(std430, binding = A_BINDING) readonly buffer BufA { uint16_t data_a[]; };

vec4 a_load4(uint base, uint k) {
    uint i = base + k;
    return uintBitsToFloat(uvec4(uint(data_a[i]), uint(data_a[i + 1u]), uint(data_a[i + 2u]), uint(data_a[i + 3u])) << 16);
}
float a_load1(uint base, uint k) {
    return uintBitsToFloat(uint(data_a[base + k]) << 16);
}

#elif defined(A_Q4_0) || defined(A_Q4_1)

#if defined(A_Q4_0)
#define A_QK QK4_0
#define A_BLOCK_UNITS Q4_0_WORDS
#define A_QS_WORD 1u
#else
#define A_QK QK4_1
#define A_BLOCK_UNITS Q4_1_WORDS
#define A_QS_WORD 2u
#endif
layout(std430, binding = A_BINDING) readonly buffer BufA { uint16_t data_a[]; };

vec4 a_load4(uint base, uint k) {
    uint ib = base + (k / A_QK) * A_BLOCK_UNITS;
    uint j = k % A_QK;          // 0, 4, ..., 28
    uint jj = j & 15u;          // byte index of the first element
    uint shift = j < 16u ? 0u : 4u;
    uint w = uint(data_a[ib + A_QS_WORD + jj / 2u]) | (uint(data_a[ib + A_QS_WORD + jj / 2u + 1u]) << 16);
    uvec4 q = (uvec4(w, w >> 8, w >> 16, w >> 24) >> shift) & 0xFu;
    float d = half_bits_to_float(uint(data_a[ib]));
#if defined(A_Q4_0)
    return (vec4(q) - 8.0) * d;
#else
    float m = half_bits_to_float(uint(data_a[ib + 1u]));
    return vec4(q) * d + m;
#endif
}

#elif defined(A_Q8_0)

#define A_QK QK8_0
#define A_BLOCK_UNITS Q8_0_WORDS
layout(std430, binding = A_BINDING) readonly buffer BufA { uint16_t data_a[]; };

vec4 a_load4(uint base, uint k) {
    uint ib = base + (k / A_QK) * A_BLOCK_UNITS;
    uint j = k % A_QK;          // 0, 4, ..., 28
    int w = int(uint(data_a[ib + 1u + j / 2u]) | (uint(data_a[ib + 2u + j / 2u]) << 16));
    ivec4 q = ivec4(bitfieldExtract(w, 0, 8), bitfieldExtract(w, 8, 8),
                    bitfieldExtract(w, 16, 8), bitfieldExtract(w, 24, 8));
    float d = half_bits_to_float(uint(data_a[ib]));
    return vec4(q) * d;
}

#elif defined(A_Q5_0) || defined(A_Q5_1) || defined(A_Q2_K) || defined(A_Q3_K) || defined(A_Q4_K) || defined(A_Q5_K) || defined(A_Q6_K) || defined(A_Q8_K) || defined(A_IQ4_NL) || defined(A_IQ4_XS) || defined(A_MXFP4) || defined(A_NVFP4) || defined(A_Q1_0) || defined(A_TQ1_0) || defined(A_TQ2_0) || defined(A_Q2_0) || defined(A_IQ3_XXS) || defined(A_IQ3_S) || defined(A_IQ2_XXS) || defined(A_IQ2_XS) || defined(A_IQ2_S) || defined(A_IQ1_S) || defined(A_IQ1_M)

#if defined(A_Q5_0)
#define KQ_Q5_0
#elif defined(A_Q5_1)
#define KQ_Q5_1
#elif defined(A_Q2_K)
#define KQ_Q2_K
#elif defined(A_Q3_K)
#define KQ_Q3_K
#elif defined(A_Q4_K)
#define KQ_Q4_K
#elif defined(A_Q5_K)
#define KQ_Q5_K
#elif defined(A_Q6_K)
#define KQ_Q6_K
#elif defined(A_Q8_K)
#define KQ_Q8_K
#elif defined(A_IQ4_NL)
#define KQ_IQ4_NL
#elif defined(A_IQ4_XS)
#define KQ_IQ4_XS
#elif defined(A_MXFP4)
#define KQ_MXFP4
#elif defined(A_NVFP4)
#define KQ_NVFP4
#elif defined(A_Q1_0)
#define KQ_Q1_0
#elif defined(A_TQ1_0)
#define KQ_TQ1_0
#elif defined(A_TQ2_0)
#define KQ_TQ2_0
#elif defined(A_Q2_0)
#define KQ_Q2_0
#elif defined(A_IQ3_XXS)
#define KQ_IQ3_XXS
#elif defined(A_IQ3_S)
#define KQ_IQ3_S
#elif defined(A_IQ2_XXS)
#define KQ_IQ2_XXS
#elif defined(A_IQ2_XS)
#define KQ_IQ2_XS
#elif defined(A_IQ2_S)
#define KQ_IQ2_S
#elif defined(A_IQ1_S)
#define KQ_IQ1_S
#elif defined(A_IQ1_M)
#define KQ_IQ1_M
#endif
layout(std430, binding = A_BINDING) readonly buffer BufA { uint16_t data_a[]; };
#define KQ_DATA data_a
#include "kquants.glsl"
#define A_QK KQ_QK
#define A_BLOCK_UNITS KQ_WORDS

vec4 a_load4(uint base, uint k) {
    uint ib = base + (k / A_QK) * A_BLOCK_UNITS;
    uint j = k % A_QK;
    return kq_load4(ib, j);
}

#else
#error "define one of A_F32, A_F16, A_BF16, A_Q4_0, A_Q4_1, A_Q8_0 or a type of kquants.glsl"
#endif

#endif // TANDEM_DEQUANT_GLSL
