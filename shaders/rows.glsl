// rows.glsl: exact element conversions, typed element loaders and storers, and
// ggml's reference block quantizers, shared by the copy (cpy*.comp), get_rows and
// set_rows shaders.
//
// Everything here is written to give the same bits as package core/quant on any
// conforming Vulkan device: f16/bf16 conversions are done with integer ops (the
// rounding of GLSL's packHalf2x16 is implementation-defined), quantizer arithmetic
// is marked precise (no contraction into fma), and the divisions of the
// quantizers (d = amax/127, 1/d, ...) are corrected to the correctly rounded
// quotient (Vulkan only promises 2.5 ulp for a division).
//
// Loader (one of SRC_F32, SRC_F16, SRC_BF16, SRC_I32, SRC_Q4_0, SRC_Q4_1, SRC_Q8_0, or a
// type of kquants.glsl: SRC_Q5_0, SRC_Q5_1, SRC_Q2_K ... SRC_Q6_K, SRC_Q8_K, SRC_IQ4_NL, SRC_IQ4_XS;
// binding SRC_BINDING, default 0) declares data_s (uint[] for 32-bit types,
// uint16_t[] otherwise) and provides
//   float src_load(uint row, uint i0, uint nb0)
//       element i0 of the row starting at array unit 'row'; nb0 is the element
//       stride (block stride for block types) in array units.
//   uint src_bits(uint row, uint i0, uint nb0)   (SRC_F32 / SRC_I32 only) raw bits.
//
// Storer (one of DST_F32, DST_F16, DST_BF16, DST_I32, DST_Q4_0, DST_Q4_1, DST_Q8_0, DST_Q5_0,
// DST_Q5_1, DST_IQ4_NL;
// binding DST_BINDING, default 1) declares data_d and provides
//   void dst_store(uint idx, float v)          element types: store v at unit idx
//   void dst_store_bits(uint idx, uint bits)   DST_F32 / DST_I32: raw bits
//   void dst_store_block(uint base, float x[32])
//       block types: quantize 32 values into the block at 16-bit word 'base'.

#ifndef TANDEM_ROWS_GLSL
#define TANDEM_ROWS_GLSL

#if !defined(SRC_F32) && !defined(SRC_I32) && !defined(SRC_NONE)
#define ROWS_NEED_16BIT
#endif
#if !defined(DST_F32) && !defined(DST_I32) && !defined(DST_NONE)
#define ROWS_NEED_16BIT
#endif
#if defined(ROWS_NEED_16BIT)
#extension GL_EXT_shader_16bit_storage : require
#endif

#ifndef SRC_BINDING
#define SRC_BINDING 0
#endif
#ifndef DST_BINDING
#define DST_BINDING 1
#endif

// ---- exact conversions (bit patterns) ----

// f16_to_f32_bits decodes a binary16 pattern exactly; NaNs come back quiet with
// their payload (as core/quant.FP16ToFP32).
uint f16_to_f32_bits(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    if (e == 0x1fu) {
        return m == 0u ? (sign | 0x7f800000u) : (sign | 0x7fc00000u | (m << 13));
    }
    if (e != 0u) {
        return sign | ((e + 112u) << 23) | (m << 13);
    }
    if (m == 0u) {
        return sign;
    }
    uint p = uint(findMSB(m)); // 0..9
    return sign | ((p + 103u) << 23) | ((m << (23u - p)) & 0x7fffffu);
}

// f32_bits_to_f16 rounds to the nearest binary16, ties to even (core/quant.FP32ToFP16).
uint f32_bits_to_f16(uint b) {
    uint sign = (b >> 16) & 0x8000u;
    uint a = b & 0x7fffffffu;
    if (a - 0x38800000u < 0x47800000u - 0x38800000u) {
        return sign | ((((a + 0x0fffu + ((a >> 13) & 1u)) >> 13) - (112u << 10)) & 0xffffu);
    }
    if (a > 0x7f800000u) {
        return sign | 0x7e00u | ((a >> 13) & 0x3ffu);
    }
    if (a >= 0x47800000u) {
        return sign | 0x7c00u;
    }
    if (a >= 0x33000000u) {
        uint m = (a & 0x7fffffu) | 0x800000u;
        uint shift = 126u - (a >> 23); // 14..24
        return sign | ((m + ((1u << (shift - 1u)) - 1u) + ((m >> shift) & 1u)) >> shift);
    }
    return sign;
}

// f32_bits_to_bf16 is ggml's fp32 -> bf16 (round to nearest even, NaN made quiet).
uint f32_bits_to_bf16(uint b) {
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        return ((b >> 16) | 0x40u) & 0xffffu;
    }
    return ((b + 0x7fffu + ((b >> 16) & 1u)) >> 16) & 0xffffu;
}

float half_to_float(uint h) {
    return uintBitsToFloat(f16_to_f32_bits(h));
}

// ---- correctly rounded division ----

// two_prod_err returns the exact error a*b - fl(a*b) (Dekker/Veltkamp; needs
// |a|, |b| well inside the float range, which div_rn checks).
float two_prod_err(float a, float b, float p) {
    precise float ca = 4097.0 * a;
    precise float ah = ca - (ca - a);
    precise float al = a - ah;
    precise float cb = 4097.0 * b;
    precise float bh = cb - (cb - b);
    precise float bl = b - bh;
    precise float e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    return e;
}

// div_rn returns a/b rounded to nearest (IEEE division) for finite operands of
// moderate size: the device's quotient (within 2.5 ulp) is corrected by comparing
// the exact residuals a - b*q of its neighbours. Outside the safe range it returns
// the device's quotient.
float div_rn(float a, float b) {
    float q = a / b;
    float aq = abs(q), ab = abs(b), aa = abs(a);
    if (!(aq > 1e-30 && aq < 1e30 && ab > 1e-30 && ab < 1e30 && aa > 1e-30 && aa < 1e30)) {
        return q;
    }
    uint qb = floatBitsToUint(q);
    float best = q;
    float bestr = 3.4e38;
    for (int k = -3; k <= 3; k++) {
        float c = uintBitsToFloat(uint(int(qb) + k));
        precise float p = b * c;
        float e = two_prod_err(b, c, p);
        precise float r = (a - p) - e; // a - p is exact (p is within a factor 2 of a)
        if (abs(r) < bestr) {
            bestr = abs(r);
            best = c;
        }
    }
    return best;
}

// round_half_away is C's roundf.
float round_half_away(float v) {
    float t = trunc(v);
    precise float f = v - t; // exact
    if (abs(f) >= 0.5) {
        t += sign(v);
    }
    return t;
}

// ---- loaders ----

#if defined(SRC_F32) || defined(SRC_I32)

layout(std430, binding = SRC_BINDING) readonly buffer BufS { uint data_s[]; };
uint src_bits(uint row, uint i0, uint nb0) {
    return data_s[row + i0 * nb0];
}
float src_load(uint row, uint i0, uint nb0) {
#if defined(SRC_F32)
    return uintBitsToFloat(data_s[row + i0 * nb0]);
#else
    return float(int(data_s[row + i0 * nb0]));
#endif
}

#elif defined(SRC_F16) || defined(SRC_BF16)

layout(std430, binding = SRC_BINDING) readonly buffer BufS { uint16_t data_s[]; };
float src_load(uint row, uint i0, uint nb0) {
    uint h = uint(data_s[row + i0 * nb0]);
#if defined(SRC_F16)
    return half_to_float(h);
#else
    return uintBitsToFloat(h << 16);
#endif
}

#elif defined(SRC_Q4_0) || defined(SRC_Q4_1) || defined(SRC_Q8_0)

layout(std430, binding = SRC_BINDING) readonly buffer BufS { uint16_t data_s[]; };
float src_load(uint row, uint i0, uint nb0) {
    uint b = row + (i0 >> 5) * nb0; // first word of the block
    uint j = i0 & 31u;
    float d = half_to_float(uint(data_s[b]));
#if defined(SRC_Q8_0)
    uint w = uint(data_s[b + 1u + (j >> 1)]);
    int q = bitfieldExtract(int(w), int((j & 1u) * 8u), 8);
    return float(q) * d;
#else
#if defined(SRC_Q4_0)
    const uint qs = 1u;
#else
    const uint qs = 2u;
#endif
    uint jj = j & 15u; // byte holding element j (low nibble) or j-16 (high nibble)
    uint w = uint(data_s[b + qs + (jj >> 1)]);
    uint q = (w >> ((jj & 1u) * 8u + (j >> 4) * 4u)) & 0xfu;
#if defined(SRC_Q4_0)
    return float(int(q) - 8) * d;
#else
    float m = half_to_float(uint(data_s[b + 1u]));
    precise float qd = float(q) * d;
    precise float v = qd + m;
    return v;
#endif
#endif
}

#elif defined(SRC_Q5_0) || defined(SRC_Q5_1) || defined(SRC_Q2_K) || defined(SRC_Q3_K) || defined(SRC_Q4_K) || defined(SRC_Q5_K) || defined(SRC_Q6_K) || defined(SRC_Q8_K) || defined(SRC_IQ4_NL) || defined(SRC_IQ4_XS)

#if defined(SRC_Q5_0)
#define KQ_Q5_0
#elif defined(SRC_Q5_1)
#define KQ_Q5_1
#elif defined(SRC_Q2_K)
#define KQ_Q2_K
#elif defined(SRC_Q3_K)
#define KQ_Q3_K
#elif defined(SRC_Q4_K)
#define KQ_Q4_K
#elif defined(SRC_Q5_K)
#define KQ_Q5_K
#elif defined(SRC_Q6_K)
#define KQ_Q6_K
#elif defined(SRC_Q8_K)
#define KQ_Q8_K
#elif defined(SRC_IQ4_NL)
#define KQ_IQ4_NL
#elif defined(SRC_IQ4_XS)
#define KQ_IQ4_XS
#endif
layout(std430, binding = SRC_BINDING) readonly buffer BufS { uint16_t data_s[]; };
#define KQ_DATA data_s
#include "kquants.glsl"
float src_load(uint row, uint i0, uint nb0) {
    return kq_load(row + (i0 / KQ_QK) * nb0, i0 % KQ_QK);
}

#endif

// ---- storers ----

#if defined(DST_F32) || defined(DST_I32)

layout(std430, binding = DST_BINDING) buffer BufD { uint data_d[]; };
void dst_store_bits(uint idx, uint bits) {
    data_d[idx] = bits;
}
void dst_store(uint idx, float v) {
#if defined(DST_F32)
    data_d[idx] = floatBitsToUint(v);
#else
    data_d[idx] = uint(int(v));
#endif
}

#elif defined(DST_F16) || defined(DST_BF16)

layout(std430, binding = DST_BINDING) buffer BufD { uint16_t data_d[]; };
void dst_store(uint idx, float v) {
#if defined(DST_F16)
    data_d[idx] = uint16_t(f32_bits_to_f16(floatBitsToUint(v)));
#else
    data_d[idx] = uint16_t(f32_bits_to_bf16(floatBitsToUint(v)));
#endif
}

#elif defined(DST_Q4_0) || defined(DST_Q4_1) || defined(DST_Q8_0) || defined(DST_Q5_0) || defined(DST_Q5_1) || defined(DST_IQ4_NL)

layout(std430, binding = DST_BINDING) buffer BufD { uint16_t data_d[]; };

#define DST_BLOCK

#if defined(DST_Q4_0) || defined(DST_Q4_1) || defined(DST_Q8_0)

// store_nonfinite_block writes a block of x that holds NaN or ±Inf by core/quant's rule
// (core/quant/nonfinite.go) and reports whether it did: Q8_0 gets d = NaN and zero quants when
// a NaN is present, else d = +Inf and ±127 at the infinities; Q4_0/Q4_1 become NaN blocks.
// Exponent bits are tested directly so no fast-math assumption can drop the check.
bool store_nonfinite_block(uint base, float x[32]) {
    bool nan = false, inf = false;
    for (uint j = 0u; j < 32u; j++) {
        uint b = floatBitsToUint(x[j]);
        if ((b & 0x7f800000u) == 0x7f800000u) {
            if ((b & 0x007fffffu) != 0u) {
                nan = true;
            } else {
                inf = true;
            }
        }
    }
    if (!nan && !inf) {
        return false;
    }
#if defined(DST_Q8_0)
    data_d[base] = uint16_t(nan ? 0x7e00u : 0x7c00u);
    for (uint j = 0u; j < 32u; j += 2u) {
        uint q[2];
        for (uint k = 0u; k < 2u; k++) {
            uint b = floatBitsToUint(x[j + k]);
            q[k] = 0u;
            if (!nan && (b & 0x7fffffffu) == 0x7f800000u) {
                q[k] = (b >> 31) != 0u ? 0x81u : 0x7fu; // -127 or 127
            }
        }
        data_d[base + 1u + (j >> 1)] = uint16_t(q[0] | (q[1] << 8));
    }
#elif defined(DST_Q4_0)
    data_d[base] = uint16_t(0x7e00u);
    for (uint j = 1u; j < 9u; j++) {
        data_d[base + j] = uint16_t(0x8888u);
    }
#else // DST_Q4_1
    data_d[base] = uint16_t(0x7e00u);
    data_d[base + 1u] = uint16_t(0x7e00u);
    for (uint j = 2u; j < 10u; j++) {
        data_d[base + j] = uint16_t(0u);
    }
#endif
    return true;
}
#endif

#if defined(DST_IQ4_NL)
// iq4_best returns the index of the IQ4_NL value nearest to x (core/quant's bestIndexInt8: the
// lower one on a tie), by bisection over the sorted table.
const float IQ4_VALUES[16] = float[16](-127.0, -104.0, -83.0, -65.0, -49.0, -35.0, -22.0, -10.0,
                                       1.0, 13.0, 25.0, 38.0, 53.0, 69.0, 89.0, 113.0);
uint iq4_best(float x) {
    if (x <= IQ4_VALUES[0]) {
        return 0u;
    }
    if (x >= IQ4_VALUES[15]) {
        return 15u;
    }
    uint lo = 0u, hi = 15u;
    while (hi - lo > 1u) {
        uint mid = (lo + hi) / 2u;
        if (x < IQ4_VALUES[mid]) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    precise float dl = x - IQ4_VALUES[lo];
    precise float dh = IQ4_VALUES[hi] - x;
    return dl < dh ? lo : hi;
}
#endif

// dst_store_block quantizes x as quantize_row_*_ref does (see core/quant/blocks.go, q5.go,
// iq4.go); Q4_0, Q4_1 and Q8_0 blocks holding NaN or ±Inf by core/quant's rule (Q5_0, Q5_1 and
// IQ4_NL have none: their blocks are meant for finite values).
void dst_store_block(uint base, float x[32]) {
#if defined(DST_Q4_0) || defined(DST_Q4_1) || defined(DST_Q8_0)
    if (store_nonfinite_block(base, x)) {
        return;
    }
#endif
#if defined(DST_Q4_0)
    float amax = 0.0, vmax = 0.0;
    for (uint j = 0u; j < 32u; j++) {
        float av = abs(x[j]);
        if (amax < av) {
            amax = av;
            vmax = x[j];
        }
    }
    precise float d = vmax * -0.125; // vmax / -8, exact (all-zero block: -0)
    float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
    data_d[base] = uint16_t(f32_bits_to_f16(floatBitsToUint(d)));
    uint prev = 0u;
    for (uint j = 0u; j < 16u; j++) {
        precise float t0 = x[j] * id;
        precise float u0 = t0 + 8.5;
        precise float t1 = x[j + 16u] * id;
        precise float u1 = t1 + 8.5;
        uint q0 = uint(min(15, int(u0))) & 0xfu;
        uint q1 = uint(min(15, int(u1))) & 0xfu;
        uint byte = q0 | (q1 << 4);
        if ((j & 1u) == 0u) {
            prev = byte;
        } else {
            data_d[base + 1u + (j >> 1)] = uint16_t(prev | (byte << 8));
        }
    }
#elif defined(DST_Q4_1)
    float lo = 3.40282347e38, hi = -3.40282347e38;
    for (uint j = 0u; j < 32u; j++) {
        if (x[j] < lo) {
            lo = x[j];
        }
        if (x[j] > hi) {
            hi = x[j];
        }
    }
    precise float range = hi - lo;
    float d = div_rn(range, 15.0);
    float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
    data_d[base] = uint16_t(f32_bits_to_f16(floatBitsToUint(d)));
    data_d[base + 1u] = uint16_t(f32_bits_to_f16(floatBitsToUint(lo)));
    uint prev = 0u;
    for (uint j = 0u; j < 16u; j++) {
        precise float s0 = x[j] - lo;
        precise float t0 = s0 * id;
        precise float u0 = t0 + 0.5;
        precise float s1 = x[j + 16u] - lo;
        precise float t1 = s1 * id;
        precise float u1 = t1 + 0.5;
        uint q0 = uint(min(15, int(u0))) & 0xfu;
        uint q1 = uint(min(15, int(u1))) & 0xfu;
        uint byte = q0 | (q1 << 4);
        if ((j & 1u) == 0u) {
            prev = byte;
        } else {
            data_d[base + 2u + (j >> 1)] = uint16_t(prev | (byte << 8));
        }
    }
#elif defined(DST_Q5_0)
    // d = vmax / -16 (vmax: the first element of largest magnitude), code = min(31, trunc(x/d + 16.5)).
    float amax = 0.0, vmax = 0.0;
    for (uint j = 0u; j < 32u; j++) {
        float av = abs(x[j]);
        if (amax < av) {
            amax = av;
            vmax = x[j];
        }
    }
    precise float d = vmax * -0.0625; // vmax / -16, exact (all-zero block: -0)
    float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
    data_d[base] = uint16_t(f32_bits_to_f16(floatBitsToUint(d)));
    uint qh = 0u, prev = 0u;
    for (uint j = 0u; j < 16u; j++) {
        precise float t0 = x[j] * id;
        precise float u0 = t0 + 16.5;
        precise float t1 = x[j + 16u] * id;
        precise float u1 = t1 + 16.5;
        uint q0 = uint(min(31, int(u0))) & 0x1fu;
        uint q1 = uint(min(31, int(u1))) & 0x1fu;
        qh |= ((q0 >> 4) << j) | ((q1 >> 4) << (j + 16u));
        uint byte = (q0 & 0xfu) | ((q1 & 0xfu) << 4);
        if ((j & 1u) == 0u) {
            prev = byte;
        } else {
            data_d[base + 3u + (j >> 1)] = uint16_t(prev | (byte << 8));
        }
    }
    data_d[base + 1u] = uint16_t(qh & 0xffffu);
    data_d[base + 2u] = uint16_t(qh >> 16);
#elif defined(DST_Q5_1)
    // m = min, d = (max - min) / 31, code = trunc((x - m)/d + 0.5).
    float lo = 3.40282347e38, hi = -3.40282347e38;
    for (uint j = 0u; j < 32u; j++) {
        if (x[j] < lo) {
            lo = x[j];
        }
        if (x[j] > hi) {
            hi = x[j];
        }
    }
    precise float range = hi - lo;
    float d = div_rn(range, 31.0);
    float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
    data_d[base] = uint16_t(f32_bits_to_f16(floatBitsToUint(d)));
    data_d[base + 1u] = uint16_t(f32_bits_to_f16(floatBitsToUint(lo)));
    uint qh = 0u, prev = 0u;
    for (uint j = 0u; j < 16u; j++) {
        precise float s0 = x[j] - lo;
        precise float t0 = s0 * id;
        precise float u0 = t0 + 0.5;
        precise float s1 = x[j + 16u] - lo;
        precise float t1 = s1 * id;
        precise float u1 = t1 + 0.5;
        uint q0 = uint(int(u0)) & 0xffu;
        uint q1 = uint(int(u1)) & 0xffu;
        qh |= (((q0 >> 4) & 1u) << j) | (((q1 >> 4) & 1u) << (j + 16u));
        uint byte = (q0 & 0xfu) | ((q1 & 0xfu) << 4);
        if ((j & 1u) == 0u) {
            prev = byte;
        } else {
            data_d[base + 4u + (j >> 1)] = uint16_t(prev | (byte << 8));
        }
    }
    data_d[base + 2u] = uint16_t(qh & 0xffffu);
    data_d[base + 3u] = uint16_t(qh >> 16);
#elif defined(DST_IQ4_NL)
    // The reference IQ4_NL quantizer without a search: codes nearest to x/d0 with d0 = vmax/-127,
    // then d = Σ w·q·x / Σ w·q² with weights w = x². A block below 1e-15 gets d = 0 (its codes,
    // which core/quant takes from the previous block, are zero here: they dequantize to 0
    // either way).
    float amax = 0.0, vmax = 0.0;
    for (uint j = 0u; j < 32u; j++) {
        float av = abs(x[j]);
        if (av > amax) {
            amax = av;
            vmax = x[j];
        }
    }
    uint L[32];
    float d = 0.0;
    if (amax >= 1e-15) {
        float d0 = div_rn(vmax, -127.0);
        float id = div_rn(1.0, d0);
        float sumqx = 0.0, sumq2 = 0.0;
        for (uint j = 0u; j < 32u; j++) {
            precise float xi = id * x[j];
            uint l = iq4_best(xi);
            L[j] = l;
            float q = IQ4_VALUES[l];
            precise float w = x[j] * x[j];
            precise float wq = w * q;
            precise float tx = wq * x[j];
            precise float tq = wq * q;
            precise float nx = sumqx + tx;
            precise float nq = sumq2 + tq;
            sumqx = nx;
            sumq2 = nq;
        }
        d = sumq2 > 0.0 ? div_rn(sumqx, sumq2) : 0.0;
    } else {
        for (uint j = 0u; j < 32u; j++) {
            L[j] = 0u;
        }
    }
    data_d[base] = uint16_t(f32_bits_to_f16(floatBitsToUint(d)));
    for (uint j = 0u; j < 16u; j += 2u) {
        uint b0 = L[j] | (L[j + 16u] << 4);
        uint b1 = L[j + 1u] | (L[j + 17u] << 4);
        data_d[base + 1u + (j >> 1)] = uint16_t(b0 | (b1 << 8));
    }
#else // DST_Q8_0
    float amax = 0.0;
    for (uint j = 0u; j < 32u; j++) {
        float av = abs(x[j]);
        if (!(amax > av)) {
            amax = av;
        }
    }
    float d = div_rn(amax, 127.0);
    float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
    data_d[base] = uint16_t(f32_bits_to_f16(floatBitsToUint(d)));
    for (uint j = 0u; j < 32u; j += 2u) {
        precise float v0 = x[j] * id;
        precise float v1 = x[j + 1u] * id;
        uint q0 = uint(int(round_half_away(v0))) & 0xffu;
        uint q1 = uint(int(round_half_away(v1))) & 0xffu;
        data_d[base + 1u + (j >> 1)] = uint16_t(q0 | (q1 << 8));
    }
#endif
}

#endif

#endif // TANDEM_ROWS_GLSL
