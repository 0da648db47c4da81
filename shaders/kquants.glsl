// kquants.glsl: element loaders for ggml's Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K,
// Q8_K, IQ4_NL, IQ4_XS, MXFP4, NVFP4, Q1_0, TQ1_0, TQ2_0, Q2_0, IQ3_XXS, IQ3_S, IQ2_XXS, IQ2_XS,
// IQ2_S, IQ1_S and IQ1_M blocks,
// shared by dequant.glsl (A operands) and rows.glsl (copies and row gathers).
//
// The including file declares the uint16_t array holding the blocks, defines KQ_DATA
// as its name (or KQ_WORD(i), the 16-bit word i as a uint, where the blocks come from more than
// one array: fa_kv.glsl) and exactly one of KQ_Q5_0, KQ_Q5_1, KQ_Q2_K, KQ_Q3_K, KQ_Q4_K, KQ_Q5_K,
// KQ_Q6_K, KQ_Q8_K, KQ_IQ4_NL, KQ_IQ4_XS, KQ_MXFP4, KQ_NVFP4, KQ_Q1_0, KQ_TQ1_0, KQ_TQ2_0,
// KQ_Q2_0, KQ_IQ3_XXS, KQ_IQ3_S, KQ_IQ2_XXS, KQ_IQ2_XS, KQ_IQ2_S, KQ_IQ1_S, KQ_IQ1_M.
// Provided:
//
//   KQ_QK      elements per block (32, 64, 128 or 256)
//   KQ_WORDS   16-bit words per block (bytes for MXFP4, whose blocks are 17 bytes: KQ_BYTES)
//   float kq_load(uint b, uint j), vec4 kq_load4(uint b, uint j) (j a multiple of 4)
//       element j (0 .. KQ_QK-1) of the block starting at word b (or j..j+3), with the
//       arithmetic of core/quant's dequantizers (each product rounded, no fma), so
//       results are bit-identical to the CPU.
//
// Layouts (byte offsets; f16 fields are little endian, all at even offsets):
//   q5_0  22 B: d@0, qh u32@2 (bit e = 5th bit of element e), qs[16]@6 (element j low
//         nibble of byte j&15 when j<16, high nibble when j>=16); value (q-16)*d.
//   q5_1  24 B: d@0, m@2, qh@4, qs@8; value q*d + m.
//   q2_K  84 B: scales[16]@0 (low nibble scale, high nibble min of sub-block e/16),
//         qs[64]@16 (element 128h+32k+l at bits 2k of byte 32h+l), d@80, dmin@82;
//         value (d*sc)*q - dmin*m.
//   q3_K 110 B: hmask[32]@0 (bit e/32 of byte e%32 = 3rd bit), qs[64]@32 (as q2_K),
//         scales[12]@96 (16 six-bit values u, sc = u-32), d@108;
//         value (d*sc)*(q2 - (hbit ? 0 : 4)).
//   q4_K 144 B: d@0, dmin@2, scales[12]@4 (6-bit scales and mins, get_scale_min_k4),
//         qs[128]@16 (element 64c+l low nibble of byte 32c+l, 64c+32+l high nibble);
//         value (d*sc)*q - dmin*m.
//   q5_K 176 B: as q4_K with qh[32]@16 (bit e/32 of byte e%32 = 5th bit), qs@48.
//   q6_K 210 B: ql[128]@0, qh[64]@128, scales int8[16]@192, d@208;
//         value (d*sc)*(q-32).
//   q8_K 292 B: d f32@0, qs int8[256]@4, bsums@260; value d*q.
//   iq4_nl 18 B: d@0, qs[16]@2 (as q5_0); value d*kvalues[code].
//   iq4_xs 136 B: d@0, scales_h u16@2, scales_l[4]@4, qs[128]@8 (sub-block ib at
//         16ib, nibbles as iq4_nl); value (d*(ls-32))*kvalues[code].
//   mxfp4  17 B: e (E8M0)@0, qs[16]@1 (nibbles as q5_0); value fp4[code]*2^(e-128) (ggml's
//         doubled E2M1 table and halved scale). The only odd-sized block: KQ_BYTES is
//         defined, b and KQ_WORDS count bytes (still read through the 16-bit array).
//   nvfp4  36 B: 4 UE4M3 scales@0 (one per 16 elements), qs[32]@4 (element 16s+i low nibble
//         of byte 4+8s+i, 16s+8+i high nibble); value fp4[code]*ue4m3(scale)/2.
//   q1_0   18 B: d@0, bits[16]@2 (element j is bit j%8 of byte j/8); value set ? d : -d.
//   tq1_0  54 B: qs[48]@0 (5 trits a byte), qh[4]@48 (4 trits a byte), d@52; trit n of byte
//         q is ((q*3^n mod 256)*3 >> 8) - 1; element 32n+m of byte m (j<160), 160+16n+m of
//         byte 32+m (j<240), 240+4n+m of byte 48+m; value trit*d.
//   tq2_0  66 B: qs[64]@0 (element 128h+32n+m at bits 2n of byte 32h+m), d@64; value (q-1)*d.
//   q2_0   18 B: d@0, qs[16]@2 (element j at bits 2(j%4) of byte j/4); value (q-1)*d.
//   iq3_xxs 98 B: d@0, grid indices[64]@2 (8 per group of 32), per group g a u32@66+4g: four
//         7-bit sign indices (ksigns_iq2xs: the 7 bits plus their parity, bit l of group
//         eighth l) and a 4-bit scale s (bits 28..31); value (d*(0.5+s))*0.5*grid*sign.
//   iq3_s 110 B: d@0, qs[64]@2 (low bytes of 9-bit grid indices), qh[8]@66 (bit i of byte g:
//         high bit of index i of group g), signs[32]@74 (one byte per eight values),
//         scales[4]@106 (4 bits per group, low nibble even groups); value d*(1+2s)*grid*sign.
//   The IQ2 and IQ1 types: groups of 32 (g = j/32) of four eighths (l = j/8 % 4), each eighth an
//   entry of a grid of eight values (iq_grids.glsl: 2-bit codes of the magnitudes 8, 25, 43 for
//   IQ2, of -1, 0, 1 for IQ1).
//   iq2_xxs 66 B: d@0, per group a u32 pair@2+8g: grid indices (byte l) and a u32@6+8g of four
//         7-bit sign indices (ksigns_iq2xs, as iq3_xxs) and the scale s (bits 28..31);
//         value ((d*(0.5+s))*0.25)*grid*sign.
//   iq2_xs 74 B: d@0, u16@2+8g+2l (9-bit grid index, 7-bit sign index on top), scales[8]@66
//         (low nibble for the first 16 values of a group, high for the next); value as iq2_xxs.
//   iq2_s  82 B: d@0, qs[32]@2 (low 8 bits of the 10-bit index of eighth 4g+l), signs[32]@34 (one
//         byte an eighth), qh[8]@66 (bits 2l, 2l+1 of byte g: the index's top bits), scales[8]@74
//         as iq2_xs; value as iq2_xxs.
//   iq1_s  50 B: d@0, qs[32]@2 (low 8 bits of the 11-bit index of eighth 4g+l), u16 qh@34+2g
//         (bits 3l..3l+2 top index bits, 12..14 the scale s, 15 the delta's sign);
//         value (d*(2s+1))*(grid + delta), delta = -1/8 with the sign bit set, else +1/8.
//   iq1_m  56 B: qs[32]@0 (low index bits), qh[16]@32 (nibble l%2 of byte 32+2g+l/2: 3 top index
//         bits and, bit 3, the delta's sign), four u16 scales@48 (3-bit s of the 16 values
//         16h+32g.. at bits 6(g%2)+3h of u16 g/2; their top nibbles the f16 block scale d, low
//         nibble first); value as iq1_s.

#ifndef TANDEM_KQUANTS_GLSL
#define TANDEM_KQUANTS_GLSL

// KQ_WORD(i) is 16-bit word i of the blocks' array: every read of the blocks goes through it.
#if !defined(KQ_WORD)
#define KQ_WORD(i) uint(KQ_DATA[i])
#endif

#if defined(KQ_Q5_0)
#define KQ_QK 32u
#define KQ_WORDS 11u
#elif defined(KQ_Q5_1)
#define KQ_QK 32u
#define KQ_WORDS 12u
#elif defined(KQ_Q2_K)
#define KQ_QK 256u
#define KQ_WORDS 42u
#elif defined(KQ_Q3_K)
#define KQ_QK 256u
#define KQ_WORDS 55u
#elif defined(KQ_Q4_K)
#define KQ_QK 256u
#define KQ_WORDS 72u
#elif defined(KQ_Q5_K)
#define KQ_QK 256u
#define KQ_WORDS 88u
#elif defined(KQ_Q6_K)
#define KQ_QK 256u
#define KQ_WORDS 105u
#elif defined(KQ_Q8_K)
#define KQ_QK 256u
#define KQ_WORDS 146u
#elif defined(KQ_IQ4_NL)
#define KQ_QK 32u
#define KQ_WORDS 9u
#elif defined(KQ_IQ4_XS)
#define KQ_QK 256u
#define KQ_WORDS 68u
#elif defined(KQ_MXFP4)
#define KQ_QK 32u
#define KQ_WORDS 17u
#define KQ_BYTES
#elif defined(KQ_NVFP4)
#define KQ_QK 64u
#define KQ_WORDS 18u
#elif defined(KQ_Q1_0)
#define KQ_QK 128u
#define KQ_WORDS 9u
#elif defined(KQ_TQ1_0)
#define KQ_QK 256u
#define KQ_WORDS 27u
#elif defined(KQ_TQ2_0)
#define KQ_QK 256u
#define KQ_WORDS 33u
#elif defined(KQ_Q2_0)
#define KQ_QK 64u
#define KQ_WORDS 9u
#elif defined(KQ_IQ3_XXS)
#define KQ_QK 256u
#define KQ_WORDS 49u
#elif defined(KQ_IQ3_S)
#define KQ_QK 256u
#define KQ_WORDS 55u
#elif defined(KQ_IQ2_XXS)
#define KQ_QK 256u
#define KQ_WORDS 33u
#elif defined(KQ_IQ2_XS)
#define KQ_QK 256u
#define KQ_WORDS 37u
#elif defined(KQ_IQ2_S)
#define KQ_QK 256u
#define KQ_WORDS 41u
#elif defined(KQ_IQ1_S)
#define KQ_QK 256u
#define KQ_WORDS 25u
#elif defined(KQ_IQ1_M)
#define KQ_QK 256u
#define KQ_WORDS 28u
#else
#error "kquants.glsl: define one of the KQ_<type> macros"
#endif

// kq_byte returns byte off of the block at word b (at byte b for KQ_BYTES).
uint kq_byte(uint b, uint off) {
#if defined(KQ_BYTES)
    uint a = b + off;
    return (KQ_WORD(a >> 1) >> ((a & 1u) * 8u)) & 0xffu;
#else
    return (KQ_WORD(b + (off >> 1)) >> ((off & 1u) * 8u)) & 0xffu;
#endif
}

// kq_half_bits converts the f16 bits h exactly, subnormals included.
float kq_half_bits(uint h) {
    uint s = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    if (e == 0u) {
        // m * 2^-24 is exact in f32.
        float v = float(m) * 5.9604644775390625e-8;
        return uintBitsToFloat(floatBitsToUint(v) | s);
    }
    if (e == 31u) {
        return uintBitsToFloat(s | 0x7f800000u | (m << 13));
    }
    return uintBitsToFloat(s | ((e + 112u) << 23) | (m << 13));
}

// kq_half converts the f16 at byte off (even) of the block at word b.
float kq_half(uint b, uint off) {
    return kq_half_bits(KQ_WORD(b + (off >> 1)));
}

#if defined(KQ_IQ4_NL) || defined(KQ_IQ4_XS)
const float kq_values[16] = float[16](-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
                                      1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
#endif

#if defined(KQ_MXFP4) || defined(KQ_NVFP4)
// ggml's kvalues_mxfp4: twice the E2M1 value of each code (code 8, a negative zero, is 0).
const float kq_fp4[16] = float[16](0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0,
                                   0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -12.0);
#endif

#if defined(KQ_MXFP4)
// kq_e8m0_half is half the E8M0 scale e, 2^(e-128) (e 0 and 1 give the subnormals 2^-128 and
// 2^-127, as core/quant.E8M0ToFP32Half).
float kq_e8m0_half(uint e) {
    return e < 2u ? uintBitsToFloat(0x00200000u << e) : uintBitsToFloat((e - 1u) << 23);
}
#endif

#if defined(KQ_NVFP4)
// kq_ue4m3_half is half the UE4M3 scale x (bias 7, 3 mantissa bits, bit 7 ignored; 0 and 0x7F
// give 0), exactly as core/quant.UE4M3ToFP32Half.
float kq_ue4m3_half(uint x) {
    uint e = (x >> 3) & 0xfu, m = x & 7u;
    if (x == 0u || x == 0x7fu) {
        return 0.0;
    }
    if (e == 0u) {
        return float(m) * (1.0 / 1024.0);
    }
    return uintBitsToFloat(((e + 119u) << 23) | (m << 20));
}
#endif

#if defined(KQ_IQ3_XXS) || defined(KQ_IQ3_S)
// The grid is kq_grid in shared memory: the including shader calls kq_grid_init() first in main,
// in uniform control flow (iq3_grids.glsl).
#define KQ_GRID_SHARED
#include "iq3_grids.glsl"
#endif

#if defined(KQ_IQ3_XXS)
// kq_iq3xxs_aux is the u32 of group g (grid signs and scale) of the block at word b.
uint kq_iq3xxs_aux(uint b, uint g) {
    return KQ_WORD(b + 33u + 2u * g) | (KQ_WORD(b + 34u + 2u * g) << 16);
}
#endif

#if defined(KQ_IQ3_XXS) || defined(KQ_IQ3_S)
// kq_iq3_entry returns, for element j of the block at word b, its grid entry (x: four values,
// byte j%4 is j's) and its sign byte shifted to it (y: bit i is the sign of element j+i within
// its eighth). Elements 4k..4k+3 share both: kq_load4 looks the grid up once (every lookup site
// of the large constant grid costs llvmpipe compile time in the unrolled MUL_MAT loops).
uvec2 kq_iq3_entry(uint b, uint j) {
    uint g = j >> 5, l = (j >> 3) & 3u, jj = j & 7u; // group of 32, its eighth, the value in it
#if defined(KQ_IQ3_XXS)
    uint si = (kq_iq3xxs_aux(b, g) >> (7u * l)) & 127u;
    uint s = si | ((uint(bitCount(si)) & 1u) << 7);
    uint gi = kq_byte(b, 2u + 8u * g + 2u * l + (jj >> 2));
#else
    uint idx = 2u * l + (jj >> 2);
    uint gi = kq_byte(b, 2u + 8u * g + idx) | (((kq_byte(b, 66u + g) >> idx) & 1u) << 8);
    uint s = kq_byte(b, 74u + 4u * g + l);
#endif
    uint grid = kq_grid[gi >> 2][gi & 3u];
    return uvec2(grid, s >> jj);
}
#endif

#if defined(KQ_IQ2_XXS) || defined(KQ_IQ2_XS) || defined(KQ_IQ2_S) || defined(KQ_IQ1_S) || defined(KQ_IQ1_M)
// The grid is kq_grid in shared memory: the including shader calls kq_grid_init() first in main,
// in uniform control flow (iq_grids.glsl).
#define KQ_GRID_SHARED
#define KQ_IQ_GRID8
#include "iq_grids.glsl"

#if defined(KQ_IQ2_XXS) || defined(KQ_IQ2_XS)
// kq_ksigns is ggml's ksigns_iq2xs[si]: the 7 sign bits si and their parity as the eighth.
uint kq_ksigns(uint si) {
    return si | ((uint(bitCount(si)) & 1u) << 7);
}
#endif

// kq_iq_entry returns, for element j of the block at word b, the 2-bit codes of its grid entry
// shifted to it (x: bits 2i hold element j+i of its eighth) and, for the IQ2 types, its sign
// byte shifted to it (y: bit i is the sign of element j+i). Elements 4k..4k+3 share both:
// kq_load4 looks the grid up once for the four.
uvec2 kq_iq_entry(uint b, uint j) {
    uint g = j >> 5, l = (j >> 3) & 3u, jj = j & 7u; // group of 32, its eighth, the value in it
    uint s = 0u, gi;
#if defined(KQ_IQ2_XXS)
    uint aux = KQ_WORD(b + 3u + 4u * g) | (KQ_WORD(b + 4u + 4u * g) << 16);
    s = kq_ksigns((aux >> (7u * l)) & 127u);
    gi = kq_byte(b, 2u + 8u * g + l);
#elif defined(KQ_IQ2_XS)
    uint q = KQ_WORD(b + 1u + 4u * g + l);
    s = kq_ksigns(q >> 9);
    gi = q & 511u;
#elif defined(KQ_IQ2_S)
    gi = kq_byte(b, 2u + 4u * g + l) | (((kq_byte(b, 66u + g) >> (2u * l)) & 3u) << 8);
    s = kq_byte(b, 34u + 4u * g + l);
#elif defined(KQ_IQ1_S)
    gi = kq_byte(b, 2u + 4u * g + l) | (((KQ_WORD(b + 17u + g) >> (3u * l)) & 7u) << 8);
#else // KQ_IQ1_M
    gi = kq_byte(b, 4u * g + l) | (((kq_byte(b, 32u + 2u * g + (l >> 1)) >> (4u * (l & 1u))) & 7u) << 8);
#endif
    uint e = kq_grid[gi >> 3][(gi >> 1) & 3u]; // entries gi & ~1 and gi | 1
    return uvec2(e >> (16u * (gi & 1u) + 2u * jj), s >> jj);
}
#endif

#if defined(KQ_Q4_K) || defined(KQ_Q5_K)
// kq_scale_min unpacks the 6-bit scale (x) and min (y) of sub-block j.
uvec2 kq_scale_min(uint b, uint j) {
    if (j < 4u) {
        return uvec2(kq_byte(b, 4u + j) & 63u, kq_byte(b, 8u + j) & 63u);
    }
    uint s = kq_byte(b, 8u + j);
    return uvec2((s & 0xfu) | ((kq_byte(b, j) >> 6) << 4), (s >> 4) | ((kq_byte(b, 4u + j) >> 6) << 4));
}
#endif

// kq_params returns what elements of one sub-block share: (scale, offset) as used by
// kq_value. j..j+3 share them when j is a multiple of 4.
vec2 kq_params(uint b, uint j) {
#if defined(KQ_Q5_0) || defined(KQ_IQ4_NL)
    return vec2(kq_half(b, 0u), 0.0);
#elif defined(KQ_Q5_1)
    return vec2(kq_half(b, 0u), kq_half(b, 2u));
#elif defined(KQ_Q2_K)
    uint sc = kq_byte(b, j >> 4);
    precise float dl = kq_half(b, 80u) * float(sc & 0xfu);
    precise float ml = kq_half(b, 82u) * float(sc >> 4);
    return vec2(dl, ml);
#elif defined(KQ_Q3_K)
    uint g = j >> 4;
    uint lo = g < 8u ? kq_byte(b, 96u + g) & 0xfu : kq_byte(b, 96u + g - 8u) >> 4;
    uint hi = (kq_byte(b, 104u + (g & 3u)) >> (2u * (g >> 2))) & 3u;
    precise float dl = kq_half(b, 108u) * float(int(lo | (hi << 4)) - 32);
    return vec2(dl, 0.0);
#elif defined(KQ_Q4_K) || defined(KQ_Q5_K)
    uvec2 sm = kq_scale_min(b, j >> 5);
    precise float d1 = kq_half(b, 0u) * float(sm.x);
    precise float m1 = kq_half(b, 2u) * float(sm.y);
    return vec2(d1, m1);
#elif defined(KQ_Q6_K)
    int sc = bitfieldExtract(int(kq_byte(b, 192u + (j >> 4))), 0, 8);
    precise float dl = kq_half(b, 208u) * float(sc);
    return vec2(dl, 0.0);
#elif defined(KQ_Q8_K)
    return vec2(uintBitsToFloat(KQ_WORD(b) | (KQ_WORD(b + 1u) << 16)), 0.0);
#elif defined(KQ_IQ4_XS)
    uint ib = j >> 5;
    uint ls = ((kq_byte(b, 4u + (ib >> 1)) >> (4u * (ib & 1u))) & 0xfu) |
              (((KQ_WORD(b + 1u) >> (2u * ib)) & 3u) << 4);
    precise float dl = kq_half(b, 0u) * float(int(ls) - 32);
    return vec2(dl, 0.0);
#elif defined(KQ_MXFP4)
    return vec2(kq_e8m0_half(kq_byte(b, 0u)), 0.0);
#elif defined(KQ_NVFP4)
    return vec2(kq_ue4m3_half(kq_byte(b, j >> 4)), 0.0);
#elif defined(KQ_Q1_0)
    return vec2(kq_half(b, 0u), 0.0);
#elif defined(KQ_TQ1_0)
    return vec2(kq_half(b, 52u), 0.0);
#elif defined(KQ_TQ2_0)
    return vec2(kq_half(b, 64u), 0.0);
#elif defined(KQ_Q2_0)
    return vec2(kq_half(b, 0u), 0.0);
#elif defined(KQ_IQ3_XXS)
    precise float ds = kq_half(b, 0u) * (0.5 + float(kq_iq3xxs_aux(b, j >> 5) >> 28));
    precise float db = ds * 0.5;
    return vec2(db, 0.0);
#elif defined(KQ_IQ3_S)
    uint g = j >> 5;
    uint sc = (kq_byte(b, 106u + (g >> 1)) >> (4u * (g & 1u))) & 0xfu;
    precise float db = kq_half(b, 0u) * float(1u + 2u * sc);
    return vec2(db, 0.0);
#elif defined(KQ_IQ2_XXS) || defined(KQ_IQ2_XS) || defined(KQ_IQ2_S)
    // core/quant's iq2Scale: (d*(0.5+s))*0.25, s the scale of j's 32 (XXS) or 16 values.
#if defined(KQ_IQ2_XXS)
    uint s = KQ_WORD(b + 4u + 4u * (j >> 5)) >> 12;
#elif defined(KQ_IQ2_XS)
    uint s = (kq_byte(b, 66u + (j >> 5)) >> (4u * ((j >> 4) & 1u))) & 0xfu;
#else
    uint s = (kq_byte(b, 74u + (j >> 5)) >> (4u * ((j >> 4) & 1u))) & 0xfu;
#endif
    precise float ds = kq_half(b, 0u) * (0.5 + float(s));
    precise float db = ds * 0.25;
    return vec2(db, 0.0);
#elif defined(KQ_IQ1_S)
    uint qh = KQ_WORD(b + 17u + (j >> 5));
    precise float dl = kq_half(b, 0u) * float(2u * ((qh >> 12) & 7u) + 1u);
    return vec2(dl, (qh & 0x8000u) != 0u ? -0.125 : 0.125);
#elif defined(KQ_IQ1_M)
    uint g = j >> 5;
    uint d = (KQ_WORD(b + 24u) >> 12) | ((KQ_WORD(b + 25u) >> 8) & 0xf0u) |
             ((KQ_WORD(b + 26u) >> 4) & 0xf00u) | (KQ_WORD(b + 27u) & 0xf000u);
    uint s = (KQ_WORD(b + 24u + (g >> 1)) >> (6u * (g & 1u) + 3u * ((j >> 4) & 1u))) & 7u;
    uint l = (j >> 3) & 3u;
    uint qh = kq_byte(b, 32u + 2u * g + (l >> 1)) >> (4u * (l & 1u));
    precise float dl = kq_half_bits(d) * float(2u * s + 1u);
    return vec2(dl, (qh & 8u) != 0u ? -0.125 : 0.125);
#endif
}

// kq_value returns element j of the block at word b given its sub-block's kq_params p.
float kq_value(uint b, uint j, vec2 p) {
#if defined(KQ_Q5_0) || defined(KQ_Q5_1) || defined(KQ_IQ4_NL)
#if defined(KQ_Q5_0)
    const uint qs = 6u;
#elif defined(KQ_Q5_1)
    const uint qs = 8u;
#else
    const uint qs = 2u;
#endif
    uint code = (kq_byte(b, qs + (j & 15u)) >> ((j >> 4) * 4u)) & 0xfu;
#if defined(KQ_IQ4_NL)
    precise float v = p.x * kq_values[code];
    return v;
#else
#if defined(KQ_Q5_0)
    uint qh = KQ_WORD(b + 1u) | (KQ_WORD(b + 2u) << 16);
#else
    uint qh = KQ_WORD(b + 2u) | (KQ_WORD(b + 3u) << 16);
#endif
    code |= ((qh >> j) & 1u) << 4;
#if defined(KQ_Q5_0)
    precise float v = float(int(code) - 16) * p.x;
    return v;
#else
    precise float qd = float(code) * p.x;
    precise float v = qd + p.y;
    return v;
#endif
#endif

#elif defined(KQ_Q2_K) || defined(KQ_Q3_K)
    uint h = j >> 7, k = (j >> 5) & 3u, l = j & 31u;
#if defined(KQ_Q2_K)
    uint q = (kq_byte(b, 16u + 32u * h + l) >> (2u * k)) & 3u;
    precise float dq = p.x * float(q);
    precise float v = dq - p.y;
    return v;
#else
    int q = int((kq_byte(b, 32u + 32u * h + l) >> (2u * k)) & 3u);
    if ((kq_byte(b, l) & (1u << (j >> 5))) == 0u) {
        q -= 4;
    }
    precise float v = p.x * float(q);
    return v;
#endif

#elif defined(KQ_Q4_K) || defined(KQ_Q5_K)
#if defined(KQ_Q4_K)
    const uint qs = 16u;
#else
    const uint qs = 48u;
#endif
    uint sub = j >> 5;
    uint q = (kq_byte(b, qs + 32u * (j >> 6) + (j & 31u)) >> (4u * (sub & 1u))) & 0xfu;
#if defined(KQ_Q5_K)
    q |= ((kq_byte(b, 16u + (j & 31u)) >> sub) & 1u) << 4;
#endif
    precise float dq = p.x * float(q);
    precise float v = dq - p.y;
    return v;

#elif defined(KQ_Q6_K)
    uint h = j >> 7, k = (j >> 5) & 3u, l = j & 31u;
    uint lo = (kq_byte(b, 64u * h + 32u * (k & 1u) + l) >> (4u * (k >> 1))) & 0xfu;
    uint hi = (kq_byte(b, 128u + 32u * h + l) >> (2u * k)) & 3u;
    precise float v = p.x * float(int(lo | (hi << 4)) - 32);
    return v;

#elif defined(KQ_Q8_K)
    int q = bitfieldExtract(int(kq_byte(b, 4u + j)), 0, 8);
    precise float v = p.x * float(q);
    return v;

#elif defined(KQ_IQ4_XS)
    uint ib = j >> 5, jj = j & 31u;
    uint code = (kq_byte(b, 8u + 16u * ib + (jj & 15u)) >> ((jj >> 4) * 4u)) & 0xfu;
    precise float v = p.x * kq_values[code];
    return v;

#elif defined(KQ_MXFP4) || defined(KQ_NVFP4)
#if defined(KQ_MXFP4)
    uint code = (kq_byte(b, 1u + (j & 15u)) >> ((j >> 4) * 4u)) & 0xfu;
#else
    uint jj = j & 15u;
    uint code = (kq_byte(b, 4u + 8u * (j >> 4) + (jj & 7u)) >> ((jj >> 3) * 4u)) & 0xfu;
#endif
    precise float v = kq_fp4[code] * p.x;
    return v;

#elif defined(KQ_Q1_0)
    uint bit = (kq_byte(b, 2u + (j >> 3)) >> (j & 7u)) & 1u;
    return bit != 0u ? p.x : -p.x;

#elif defined(KQ_TQ1_0)
    uint off, n;
    if (j < 160u) {
        off = j & 31u;
        n = j >> 5;
    } else if (j < 240u) {
        off = 32u + ((j - 160u) & 15u);
        n = (j - 160u) >> 4;
    } else {
        off = 48u + ((j - 240u) & 3u);
        n = (j - 240u) >> 2;
    }
    // 3^n for n = 0..4, the byte product wrapping as the CPU's uint8 one.
    uint pw = n == 0u ? 1u : n == 1u ? 3u : n == 2u ? 9u : n == 3u ? 27u : 81u;
    uint q = (kq_byte(b, off) * pw) & 0xffu;
    precise float v = float(int((q * 3u) >> 8) - 1) * p.x;
    return v;

#elif defined(KQ_TQ2_0)
    uint q = (kq_byte(b, 32u * (j >> 7) + (j & 31u)) >> (2u * ((j >> 5) & 3u))) & 3u;
    precise float v = float(int(q) - 1) * p.x;
    return v;

#elif defined(KQ_Q2_0)
    uint q = (kq_byte(b, 2u + (j >> 2)) >> (2u * (j & 3u))) & 3u;
    precise float v = float(int(q) - 1) * p.x;
    return v;

#elif defined(KQ_IQ3_XXS) || defined(KQ_IQ3_S)
    uvec2 e = kq_iq3_entry(b, j);
    precise float v = p.x * float((e.x >> (8u * (j & 3u))) & 0xffu);
    return (e.y & 1u) != 0u ? -v : v;

#elif defined(KQ_IQ2_XXS) || defined(KQ_IQ2_XS) || defined(KQ_IQ2_S)
    uvec2 e = kq_iq_entry(b, j);
    uint c = e.x & 3u; // code 0, 1, 2: magnitude 8, 25, 43
    precise float v = p.x * float(8u + 17u * c + (c >> 1));
    return (e.y & 1u) != 0u ? -v : v;

#elif defined(KQ_IQ1_S) || defined(KQ_IQ1_M)
    uint c = kq_iq_entry(b, j).x & 3u; // code 0, 1, 2: value -1, 0, 1
    precise float t = float(int(c) - 1) + p.y;
    precise float v = p.x * t;
    return v;
#endif
}

float kq_load(uint b, uint j) {
    return kq_value(b, j, kq_params(b, j));
}

// kq_load4 returns elements j..j+3 (j a multiple of 4) of the block at word b.
vec4 kq_load4(uint b, uint j) {
    vec2 p = kq_params(b, j);
#if defined(KQ_IQ3_XXS) || defined(KQ_IQ3_S)
    uvec2 e = kq_iq3_entry(b, j); // one grid entry and sign byte for the four
    precise vec4 v = p.x * vec4((uvec4(e.x) >> uvec4(0u, 8u, 16u, 24u)) & 0xffu);
    return mix(v, -v, notEqual((uvec4(e.y) >> uvec4(0u, 1u, 2u, 3u)) & 1u, uvec4(0u)));
#elif defined(KQ_IQ_GRID8)
    uvec2 e = kq_iq_entry(b, j); // one grid entry (and sign byte) for the four
    uvec4 c = (uvec4(e.x) >> uvec4(0u, 2u, 4u, 6u)) & 3u;
#if defined(KQ_IQ1_S) || defined(KQ_IQ1_M)
    precise vec4 t = vec4(ivec4(c) - 1) + p.y;
    precise vec4 v = p.x * t;
    return v;
#else
    precise vec4 v = p.x * vec4(8u + 17u * c + (c >> 1));
    return mix(v, -v, notEqual((uvec4(e.y) >> uvec4(0u, 1u, 2u, 3u)) & 1u, uvec4(0u)));
#endif
#else
    return vec4(kq_value(b, j, p), kq_value(b, j + 1u, p), kq_value(b, j + 2u, p), kq_value(b, j + 3u, p));
#endif
}

#endif // TANDEM_KQUANTS_GLSL
