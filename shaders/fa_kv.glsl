// fa_kv.glsl: the key and value readers of flash_attn_ext.comp and flash_attn_split.comp.
//
// K and V are two buffers of possibly different types, so the one-buffer loaders of
// dequant.glsl do not serve: the including shader declares data_k and data_v (float for f32,
// uint16_t words for every other type), defines one of K_F32, K_F16, K_BF16, K_Q8_0, K_Q4_0,
// K_Q4_1, K_Q5_0, K_Q5_1, K_IQ4_NL, K_Q1_0, K_Q2_0 or a type of kquants.glsl (K_Q2_K, K_Q3_K,
// K_Q4_K, K_Q5_K, K_Q6_K, K_IQ4_XS, K_MXFP4, K_NVFP4, K_IQ3_XXS, K_IQ3_S, K_IQ2_XXS, K_IQ2_XS,
// K_IQ2_S, K_IQ1_S, K_IQ1_M) and one of the same V_ types (V of a kquants.glsl type only with K
// of that type: FA_K_KQ, FA_V_KQ), and includes this file after the declarations. The
// kquants.glsl types are decoded by its loaders (kq_load, kq_load4; core/quant's arithmetic);
// the IQ3/IQ2/IQ1 ones need kq_grid_init() first in main (KQ_GRID_SHARED), and MXFP4's K and V
// are addressed in bytes (units of 1 byte instead of 16-bit words). The arrays are read by name in k_word and v_word only (the
// GL translation rewrites 16-bit arrays' accesses by name); the decoders below take the buffer
// as an argument, FA_K or FA_V, a constant at every call, which the compiler folds.
//
// Provided:
//   K_T, V_T, K_QK, V_QK, K_WORDS, V_WORDS: the type codes (FA_T*), elements per block (1 for
//       f32, f16, bf16) and 16-bit words per block.
//   float fa_q_conv(float x): a query element as the CPU converts it for K's vec-dot type:
//       rounded to f16 for f16 keys and to bf16 (to nearest even) for bf16 keys; kept in f32 for
//       the block types (the CPU quantizes it to q8_0 or q8_1 there: the f32 query is the more
//       precise of the two, well inside ggml's 5e-4 bound for the op).
//   vec2 fa_dm(buf, t, w0): the scale d and offset m (0 for the symmetric types) of the block
//       at word w0.
//   float fa_code(buf, t, w0, j): element j's quantized value c; the element is c*d + m.
//   float k_at(row, i), v_at(row, d): element i of the key (value) row starting at unit row,
//       with core/quant's arithmetic (c*d rounded, then + m), so exactly the CPU's f32 values.
//
// Block layouts (ggml's; bytes): q8_0 d, int8[32]; q4_0 d, qs[16] (element j the low nibble of
// byte j&15 for j < 16, the high nibble for j >= 16), c = nibble - 8; q4_1 d, m, qs[16], c =
// nibble; q5_0 d, qh u32 (bit j: element j's fifth bit), qs[16], c = code - 16; q5_1 d, m, qh,
// qs[16], c = code; iq4_nl d, qs[16], c = kvalues[nibble]; q1_0 d, bits[16] (element j bit j%8
// of byte j/8, 128 a block), c = bit ? 1 : -1; q2_0 d, qs[16] (element j at bits 2(j%4) of
// byte j/4, 64 a block), c = q - 1.

#ifndef TANDEM_FA_KV_GLSL
#define TANDEM_FA_KV_GLSL

#define FA_K 0u
#define FA_V 1u

#define FA_TF32 0u
#define FA_TF16 1u
#define FA_TBF16 2u
#define FA_TQ8_0 3u
#define FA_TQ4_0 4u
#define FA_TQ4_1 5u
#define FA_TQ5_0 6u
#define FA_TQ5_1 7u
#define FA_TIQ4_NL 8u
#define FA_TQ1_0 9u
#define FA_TQ2_0 10u
#define FA_TKQ 11u // a type of kquants.glsl (K and V both of it)

#if defined(K_F32)
#define K_T FA_TF32
#elif defined(K_F16)
#define K_T FA_TF16
#elif defined(K_BF16)
#define K_T FA_TBF16
#elif defined(K_Q8_0)
#define K_T FA_TQ8_0
#elif defined(K_Q4_0)
#define K_T FA_TQ4_0
#elif defined(K_Q4_1)
#define K_T FA_TQ4_1
#elif defined(K_Q5_0)
#define K_T FA_TQ5_0
#elif defined(K_Q5_1)
#define K_T FA_TQ5_1
#elif defined(K_IQ4_NL)
#define K_T FA_TIQ4_NL
#elif defined(K_Q1_0)
#define K_T FA_TQ1_0
#elif defined(K_Q2_0)
#define K_T FA_TQ2_0
#elif defined(K_Q2_K)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_Q2_K
#elif defined(K_Q3_K)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_Q3_K
#elif defined(K_Q4_K)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_Q4_K
#elif defined(K_Q5_K)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_Q5_K
#elif defined(K_Q6_K)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_Q6_K
#elif defined(K_IQ4_XS)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_IQ4_XS
#elif defined(K_MXFP4)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_MXFP4
#elif defined(K_NVFP4)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_NVFP4
#elif defined(K_IQ3_XXS)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_IQ3_XXS
#elif defined(K_IQ3_S)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_IQ3_S
#elif defined(K_IQ2_XXS)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_IQ2_XXS
#elif defined(K_IQ2_XS)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_IQ2_XS
#elif defined(K_IQ2_S)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_IQ2_S
#elif defined(K_IQ1_S)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_IQ1_S
#elif defined(K_IQ1_M)
#define K_T FA_TKQ
#define FA_K_KQ
#define KQ_IQ1_M
#else
#error "fa_kv.glsl: define the K type"
#endif

#if defined(V_F32)
#define V_T FA_TF32
#elif defined(V_F16)
#define V_T FA_TF16
#elif defined(V_BF16)
#define V_T FA_TBF16
#elif defined(V_Q8_0)
#define V_T FA_TQ8_0
#elif defined(V_Q4_0)
#define V_T FA_TQ4_0
#elif defined(V_Q4_1)
#define V_T FA_TQ4_1
#elif defined(V_Q5_0)
#define V_T FA_TQ5_0
#elif defined(V_Q5_1)
#define V_T FA_TQ5_1
#elif defined(V_IQ4_NL)
#define V_T FA_TIQ4_NL
#elif defined(V_Q1_0)
#define V_T FA_TQ1_0
#elif defined(V_Q2_0)
#define V_T FA_TQ2_0
#elif defined(V_Q2_K)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_Q2_K)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_Q3_K)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_Q3_K)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_Q4_K)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_Q4_K)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_Q5_K)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_Q5_K)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_Q6_K)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_Q6_K)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_IQ4_XS)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_IQ4_XS)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_MXFP4)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_MXFP4)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_NVFP4)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_NVFP4)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_IQ3_XXS)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_IQ3_XXS)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_IQ3_S)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_IQ3_S)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_IQ2_XXS)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_IQ2_XXS)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_IQ2_XS)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_IQ2_XS)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_IQ2_S)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_IQ2_S)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_IQ1_S)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_IQ1_S)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#elif defined(V_IQ1_M)
#define V_T FA_TKQ
#define FA_V_KQ
#if !defined(K_IQ1_M)
#error "fa_kv.glsl: V of a kquants.glsl type needs K of the same type"
#endif
#else
#error "fa_kv.glsl: define the V type"
#endif

// fa_qk is the elements per block of type t (1 for the float types).
#define fa_qk(t) ((t) == FA_TKQ ? FA_KQ_QK : (t) <= FA_TBF16 ? 1u : (t) == FA_TQ1_0 ? 128u : (t) == FA_TQ2_0 ? 64u : 32u)
// fa_words is the 16-bit words per block of type t (1 for f16 and bf16; bytes for MXFP4).
#define fa_words(t) ((t) == FA_TKQ ? FA_KQ_WORDS : (t) == FA_TQ8_0 ? 17u : (t) == FA_TQ4_1 ? 10u : (t) == FA_TQ5_0 ? 11u : (t) == FA_TQ5_1 ? 12u : (t) <= FA_TBF16 ? 1u : 9u)

#define K_QK fa_qk(K_T)
#define V_QK fa_qk(V_T)
#define K_WORDS fa_words(K_T)
#define V_WORDS fa_words(V_T)

uint k_word(uint i) {
#if defined(K_F32)
    return floatBitsToUint(data_k[i]); // unused: f32 keys are read as floats
#else
    return uint(data_k[i]);
#endif
}

uint v_word(uint i) {
#if defined(V_F32)
    return floatBitsToUint(data_v[i]); // unused: f32 values are read as floats
#else
    return uint(data_v[i]);
#endif
}

// fa_word is 16-bit word i of K (buf FA_K) or V (FA_V).
uint fa_word(uint buf, uint i) {
    return buf == FA_K ? k_word(i) : v_word(i);
}

#if defined(FA_K_KQ)
// The types of kquants.glsl (K_<type> with V_<type> of the same type, or V of another type): one
// include of its loaders reads both buffers. A block address b (kq_load's) of V carries the tag
// FA_KQ_VB, which puts bit 30 on every word index derived from it (b counts words, or bytes for
// MXFP4, where the word index is b >> 1), and fa_kq_word reads V's array for it, K's without it.
// Word indices stay below 2^30 (buffers under 2 GiB).
#define FA_KQ_VW 0x40000000u
uint fa_kq_word(uint i) {
    return (i & FA_KQ_VW) != 0u ? v_word(i & ~FA_KQ_VW) : k_word(i);
}
#define KQ_WORD(i) fa_kq_word(i)
#include "kquants.glsl"
#define FA_KQ_QK KQ_QK
#define FA_KQ_WORDS KQ_WORDS
#if defined(KQ_BYTES)
#define FA_KQ_VB 0x80000000u
#else
#define FA_KQ_VB FA_KQ_VW
#endif
#else
#define FA_KQ_QK 1u
#define FA_KQ_WORDS 1u
#endif

#if defined(K_IQ4_NL) || defined(V_IQ4_NL)
const float fa_iq4nl[16] = float[16](-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
                                     1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
#endif

float fa_q_conv(float x) {
#if defined(K_F16)
    return unpackHalf2x16(packHalf2x16(vec2(x, 0.0))).x;
#elif defined(K_BF16)
    uint b = floatBitsToUint(x);
    b = (b & 0x7fffffffu) > 0x7f800000u ? b | 0x00400000u : b + 0x7fffu + ((b >> 16) & 1u);
    return uintBitsToFloat(b & 0xffff0000u);
#else
    return x;
#endif
}

vec2 fa_dm(uint buf, uint t, uint w0) {
    float d = half_bits_to_float(fa_word(buf, w0));
    float m = t == FA_TQ4_1 || t == FA_TQ5_1 ? half_bits_to_float(fa_word(buf, w0 + 1u)) : 0.0;
    return vec2(d, m);
}

float fa_code(uint buf, uint t, uint w0, uint j) {
    if (t == FA_TQ8_0) {
        return float(bitfieldExtract(int(fa_word(buf, w0 + 1u + j / 2u)), int(8u * (j & 1u)), 8));
    }
    if (t == FA_TQ1_0) {
        uint by = j >> 3;
        return ((fa_word(buf, w0 + 1u + by / 2u) >> (8u * (by & 1u) + (j & 7u))) & 1u) != 0u ? 1.0 : -1.0;
    }
    if (t == FA_TQ2_0) {
        uint by = j >> 2;
        uint q = (fa_word(buf, w0 + 1u + by / 2u) >> (8u * (by & 1u) + 2u * (j & 3u))) & 3u;
        return float(int(q) - 1);
    }
    // The nibble types: qs starts at word 1 (q4_0, iq4_nl), 2 (q4_1), 3 (q5_0) or 4 (q5_1).
    uint qw = t == FA_TQ4_1 ? 2u : t == FA_TQ5_0 ? 3u : t == FA_TQ5_1 ? 4u : 1u;
    uint by = j & 15u;
    uint nib = (fa_word(buf, w0 + qw + by / 2u) >> (8u * (by & 1u) + 4u * (j >> 4))) & 0xfu;
    if (t == FA_TQ4_0) {
        return float(int(nib) - 8);
    }
    if (t == FA_TQ4_1) {
        return float(nib);
    }
#if defined(K_IQ4_NL) || defined(V_IQ4_NL)
    if (t == FA_TIQ4_NL) {
        return fa_iq4nl[nib];
    }
#endif
    // q5_0 and q5_1: the fifth bit from qh (words 1-2 or 2-3).
    uint hw = t == FA_TQ5_0 ? 1u : 2u;
    uint qh = fa_word(buf, w0 + hw) | (fa_word(buf, w0 + hw + 1u) << 16);
    uint code = nib | (((qh >> j) & 1u) << 4);
    return t == FA_TQ5_0 ? float(int(code) - 16) : float(code);
}

// fa_at is element i of the row starting at word row of buffer buf (of the 16-bit types).
float fa_at(uint buf, uint t, uint row, uint i) {
    if (t == FA_TF16) {
        return half_bits_to_float(fa_word(buf, row + i));
    }
    if (t == FA_TBF16) {
        return uintBitsToFloat(fa_word(buf, row + i) << 16);
    }
    uint qk = fa_qk(t);
    uint w0 = row + (i / qk) * fa_words(t);
    vec2 dm = fa_dm(buf, t, w0);
    precise float x = fa_code(buf, t, w0, i % qk) * dm.x;
    if (t == FA_TQ4_1 || t == FA_TQ5_1) {
        precise float y = x + dm.y;
        return y;
    }
    return x;
}

// k_at is element i of the key row that starts at unit 'row'.
float k_at(uint row, uint i) {
#if defined(K_F32)
    return data_k[row + i];
#elif defined(FA_K_KQ)
    return kq_load(row + (i / KQ_QK) * KQ_WORDS, i % KQ_QK);
#else
    return fa_at(FA_K, K_T, row, i);
#endif
}

// v_at is element d of the value row that starts at unit 'row'.
float v_at(uint row, uint d) {
#if defined(V_F32)
    return data_v[row + d];
#elif defined(FA_V_KQ)
    return kq_load((row | FA_KQ_VB) + (d / KQ_QK) * KQ_WORDS, d % KQ_QK);
#else
    return fa_at(FA_V, V_T, row, d);
#endif
}

#endif // TANDEM_FA_KV_GLSL
