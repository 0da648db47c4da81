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
// type of kquants.glsl: SRC_Q5_0, SRC_Q5_1, SRC_Q2_K ... SRC_Q6_K, SRC_Q8_K, SRC_IQ4_NL, SRC_IQ4_XS,
// SRC_MXFP4 (addressed in bytes), SRC_NVFP4, SRC_Q1_0, SRC_TQ1_0, SRC_TQ2_0,
// SRC_Q2_0, SRC_IQ3_XXS, SRC_IQ3_S, SRC_IQ2_XXS, SRC_IQ2_XS, SRC_IQ2_S, SRC_IQ1_S, SRC_IQ1_M;
// binding SRC_BINDING, default 0) declares data_s (uint[] for 32-bit types,
// uint16_t[] otherwise) and provides
//   float src_load(uint row, uint i0, uint nb0)
//       element i0 of the row starting at array unit 'row'; nb0 is the element
//       stride (block stride for block types) in array units.
//   uint src_bits(uint row, uint i0, uint nb0)   (SRC_F32 / SRC_I32 only) raw bits.
//
// Storer (one of DST_F32, DST_F16, DST_BF16, DST_I32, DST_Q4_0, DST_Q4_1, DST_Q8_0, DST_Q5_0,
// DST_Q5_1, DST_IQ4_NL, DST_Q2_K, DST_Q3_K, DST_Q4_K, DST_Q5_K, DST_Q6_K, DST_IQ4_XS, or DST_NVFP4, DST_Q1_0,
// DST_TQ1_0, DST_TQ2_0, DST_Q2_0, DST_MXFP4 (lowbit_store.glsl; MXFP4 addressed in bytes);
// binding DST_BINDING, default 1) declares data_d and provides
//   void dst_store(uint idx, float v)          element types: store v at unit idx
//   void dst_store_bits(uint idx, uint bits)   DST_F32 / DST_I32: raw bits
//   void dst_store_block(uint base, float x[DST_QK])
//       block types: quantize DST_QK values (32; 256 for the K-quants, IQ4_XS and TQ; 64 for
//       NVFP4 and Q2_0; 128 for Q1_0) into the block at
//       16-bit word 'base'.

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

#elif defined(SRC_Q5_0) || defined(SRC_Q5_1) || defined(SRC_Q2_K) || defined(SRC_Q3_K) || defined(SRC_Q4_K) || defined(SRC_Q5_K) || defined(SRC_Q6_K) || defined(SRC_Q8_K) || defined(SRC_IQ4_NL) || defined(SRC_IQ4_XS) || defined(SRC_MXFP4) || defined(SRC_NVFP4) || defined(SRC_Q1_0) || defined(SRC_TQ1_0) || defined(SRC_TQ2_0) || defined(SRC_Q2_0) || defined(SRC_IQ3_XXS) || defined(SRC_IQ3_S) || defined(SRC_IQ2_XXS) || defined(SRC_IQ2_XS) || defined(SRC_IQ2_S) || defined(SRC_IQ1_S) || defined(SRC_IQ1_M)

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
#elif defined(SRC_MXFP4)
#define KQ_MXFP4
#elif defined(SRC_NVFP4)
#define KQ_NVFP4
#elif defined(SRC_Q1_0)
#define KQ_Q1_0
#elif defined(SRC_TQ1_0)
#define KQ_TQ1_0
#elif defined(SRC_TQ2_0)
#define KQ_TQ2_0
#elif defined(SRC_Q2_0)
#define KQ_Q2_0
#elif defined(SRC_IQ3_XXS)
#define KQ_IQ3_XXS
#elif defined(SRC_IQ3_S)
#define KQ_IQ3_S
#elif defined(SRC_IQ2_XXS)
#define KQ_IQ2_XXS
#elif defined(SRC_IQ2_XS)
#define KQ_IQ2_XS
#elif defined(SRC_IQ2_S)
#define KQ_IQ2_S
#elif defined(SRC_IQ1_S)
#define KQ_IQ1_S
#elif defined(SRC_IQ1_M)
#define KQ_IQ1_M
#endif
layout(std430, binding = SRC_BINDING) readonly buffer BufS { uint16_t data_s[]; };
#define KQ_DATA data_s
#include "kquants.glsl"
float src_load(uint row, uint i0, uint nb0) {
    return kq_load(row + (i0 / KQ_QK) * nb0, i0 % KQ_QK);
}

#endif

// ---- storers ----

#if defined(DST_IQ4_NL) || defined(DST_IQ4_XS)
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

#elif defined(DST_Q4_K) || defined(DST_Q5_K) || defined(DST_Q6_K) || defined(DST_IQ4_XS) || defined(DST_Q2_K) || defined(DST_Q3_K)

layout(std430, binding = DST_BINDING) buffer BufD { uint16_t data_d[]; };

#define DST_BLOCK
#define DST_QK 256u

// nearest_int is ggml's nearest_int (core/quant's nearestInt): round half to even through the
// mantissa of f + 1.5*2^23.
int nearest_int(float f) {
    precise float v = f + 12582912.0;
    return int(floatBitsToUint(v) & 0x007fffffu) - 0x00400000;
}

#if defined(DST_Q4_K) || defined(DST_Q5_K)
#if defined(DST_Q4_K)
#define KQ_NMAX 15
#else
#define KQ_NMAX 31
#endif

// sqrt_rn returns the correctly rounded square root of v >= 0 (Vulkan's sqrt may be a few ulp
// off): the device's root is replaced by the neighbour whose square is nearest to v.
float sqrt_rn(float v) {
    float s = sqrt(v);
    if (!(v > 1e-30 && v < 1e30)) {
        return s;
    }
    uint sb = floatBitsToUint(s);
    float best = s;
    float bestr = 3.4e38;
    for (int k = -2; k <= 2; k++) {
        float c = uintBitsToFloat(uint(int(sb) + k));
        precise float p = c * c;
        float e = two_prod_err(c, c, p);
        precise float r = (p - v) + e;
        if (abs(r) < bestr) {
            bestr = abs(r);
            best = c;
        }
    }
    return best;
}

// kq_qkx2 is core/quant's makeQKX2Quants (ggml's make_qkx2_quants) for the 32 values of x from
// off with weights w, codes 0..KQ_NMAX into L from off, squared errors: it returns the scale and
// sets mn to the (non-negative) minimum to subtract.
float kq_qkx2(float x[256], uint off, float w[32], float rmin, int nstep, inout uint L[256], out float mn) {
    const int nmax = KQ_NMAX;
    float vmin = x[off], vmax = x[off];
    float sumW = w[0];
    precise float sumX = sumW * x[off];
    for (uint i = 1u; i < 32u; i++) {
        float v = x[off + i];
        if (v < vmin) {
            vmin = v;
        }
        if (v > vmax) {
            vmax = v;
        }
        precise float nw = sumW + w[i];
        sumW = nw;
        precise float wx = w[i] * v;
        precise float nx = sumX + wx;
        sumX = nx;
    }
    if (vmin > 0.0) {
        vmin = 0.0;
    }
    if (vmax == vmin) {
        for (uint i = 0u; i < 32u; i++) {
            L[off + i] = 0u;
        }
        mn = -vmin;
        return 0.0;
    }
    precise float range = vmax - vmin;
    float iscale = div_rn(float(nmax), range);
    float scale = div_rn(1.0, iscale);
    float bestErr = 0.0;
    for (uint i = 0u; i < 32u; i++) {
        precise float dx = x[off + i] - vmin;
        precise float t = iscale * dx;
        int l = clamp(nearest_int(t), 0, nmax);
        L[off + i] = uint(l);
        precise float sl = scale * float(l);
        precise float sv = sl + vmin;
        precise float diff = sv - x[off + i];
        precise float d2 = diff * diff;
        precise float we = w[i] * d2;
        precise float ne = bestErr + we;
        bestErr = ne;
    }
    uint laux[32];
    for (int is = 0; is <= nstep; is++) {
        precise float rd = 0.1 * float(is);
        precise float a = rmin + rd;
        precise float b = a + float(nmax);
        // vmax - vmin with the minimum of the best candidate so far, as core/quant (and ggml)
        precise float rg = vmax - vmin;
        iscale = div_rn(b, rg);
        float sumL = 0.0, sumL2 = 0.0, sumXL = 0.0;
        for (uint i = 0u; i < 32u; i++) {
            precise float dx = x[off + i] - vmin;
            precise float t = iscale * dx;
            int l = clamp(nearest_int(t), 0, nmax);
            laux[i] = uint(l);
            float fl = float(l);
            precise float wl = w[i] * fl;
            precise float wll = wl * fl;
            precise float wlx = wl * x[off + i];
            precise float n1 = sumL + wl;
            precise float n2 = sumL2 + wll;
            precise float n3 = sumXL + wlx;
            sumL = n1;
            sumL2 = n2;
            sumXL = n3;
        }
        precise float p1 = sumW * sumL2;
        precise float p2 = sumL * sumL;
        precise float D = p1 - p2;
        if (D > 0.0) {
            precise float q1 = sumW * sumXL;
            precise float q2 = sumX * sumL;
            precise float num_s = q1 - q2;
            precise float q3 = sumL2 * sumX;
            precise float q4 = sumL * sumXL;
            precise float num_m = q3 - q4;
            float thisScale = div_rn(num_s, D);
            float thisMin = div_rn(num_m, D);
            if (thisMin > 0.0) {
                thisMin = 0.0;
                thisScale = div_rn(sumXL, sumL2);
            }
            float curErr = 0.0;
            for (uint i = 0u; i < 32u; i++) {
                precise float sl = thisScale * float(laux[i]);
                precise float sv = sl + thisMin;
                precise float diff = sv - x[off + i];
                precise float d2 = diff * diff;
                precise float we = w[i] * d2;
                precise float ne = curErr + we;
                curErr = ne;
            }
            if (curErr < bestErr) {
                for (uint i = 0u; i < 32u; i++) {
                    L[off + i] = laux[i];
                }
                bestErr = curErr;
                scale = thisScale;
                vmin = thisMin;
            }
        }
    }
    mn = -vmin;
    return scale;
}

// dst_store_block quantizes a super-block as core/quant's quantizeK45 (ggml's
// quantize_row_q4_K_ref / quantize_row_q5_K_ref): per 32 values a (scale, min) search with
// weights av + |x| (av the values' root mean square), both quantized to 6 bits against the
// super-block's largest, then the codes recomputed with the stored scales. Blocks are meant for
// finite values.
void dst_store_block(uint base, float x[256]) {
#if defined(DST_Q4_K)
    const float rmin = -1.0;
    const int nstep = 20;
#else
    const float rmin = -0.5;
    const int nstep = 15;
#endif
    uint L[256];
    float scales[8], mins[8];
    float maxScale = 0.0, maxMin = 0.0;
    for (uint j = 0u; j < 8u; j++) {
        float sumX2 = 0.0;
        for (uint l = 0u; l < 32u; l++) {
            precise float v2 = x[32u * j + l] * x[32u * j + l];
            precise float ns = sumX2 + v2;
            sumX2 = ns;
        }
        float av = sqrt_rn(sumX2 * 0.03125);
        float w[32];
        for (uint l = 0u; l < 32u; l++) {
            precise float wl = av + abs(x[32u * j + l]);
            w[l] = wl;
        }
        float mn;
        scales[j] = kq_qkx2(x, 32u * j, w, rmin, nstep, L, mn);
        mins[j] = mn;
        if (scales[j] > maxScale) {
            maxScale = scales[j];
        }
        if (mins[j] > maxMin) {
            maxMin = mins[j];
        }
    }
    float invScale = maxScale > 0.0 ? div_rn(63.0, maxScale) : 0.0;
    float invMin = maxMin > 0.0 ? div_rn(63.0, maxMin) : 0.0;
    uint sb[12];
    for (uint j = 0u; j < 12u; j++) {
        sb[j] = 0u;
    }
    uint lsj[8], lmj[8];
    for (uint j = 0u; j < 8u; j++) {
        precise float ts = invScale * scales[j];
        precise float tm = invMin * mins[j];
        uint ls = min(63u, uint(nearest_int(ts)) & 0xffu);
        uint lm = min(63u, uint(nearest_int(tm)) & 0xffu);
        lsj[j] = ls;
        lmj[j] = lm;
        if (j < 4u) {
            sb[j] = ls;
            sb[j + 4u] = lm;
        } else {
            sb[j + 4u] = (ls & 0xfu) | ((lm & 0xfu) << 4);
            sb[j - 4u] |= (ls >> 4) << 6;
            sb[j] |= (lm >> 4) << 6;
        }
    }
    uint dh = f32_bits_to_f16(floatBitsToUint(div_rn(maxScale, 63.0)));
    uint mh = f32_bits_to_f16(floatBitsToUint(div_rn(maxMin, 63.0)));
    data_d[base] = uint16_t(dh);
    data_d[base + 1u] = uint16_t(mh);
    for (uint j = 0u; j < 6u; j++) {
        data_d[base + 2u + j] = uint16_t(sb[2u * j] | (sb[2u * j + 1u] << 8));
    }
    float d = half_to_float(dh), dmin = half_to_float(mh);
    for (uint j = 0u; j < 8u; j++) {
        precise float dj = d * float(lsj[j]);
        if (dj == 0.0) {
            continue;
        }
        precise float dm = dmin * float(lmj[j]);
        for (uint ii = 0u; ii < 32u; ii++) {
            precise float xs = x[32u * j + ii] + dm;
            L[32u * j + ii] = uint(clamp(nearest_int(div_rn(xs, dj)), 0, KQ_NMAX));
        }
    }
#if defined(DST_Q4_K)
    const uint qs = 8u; // words
#else
    const uint qs = 24u;
    uint qh[32];
    for (uint l = 0u; l < 32u; l++) {
        qh[l] = 0u;
    }
    for (uint e = 0u; e < 256u; e++) {
        if (L[e] > 15u) {
            L[e] -= 16u;
            qh[e % 32u] |= 1u << (e / 32u);
        }
    }
    for (uint l = 0u; l < 32u; l += 2u) {
        data_d[base + 8u + l / 2u] = uint16_t(qh[l] | (qh[l + 1u] << 8));
    }
#endif
    for (uint c = 0u; c < 4u; c++) {
        for (uint l = 0u; l < 32u; l += 2u) {
            uint b0 = L[64u * c + l] | (L[64u * c + 32u + l] << 4);
            uint b1 = L[64u * c + l + 1u] | (L[64u * c + 33u + l] << 4);
            data_d[base + qs + 16u * c + l / 2u] = uint16_t(b0 | (b1 << 8));
        }
    }
}

#elif defined(DST_Q6_K)

// q6_qx is core/quant's makeQxQuants(32, x[off..off+15], L, 1) (ggml's make_qx_quants with
// weights x²): codes 0..63 into L from off; it returns the sub-block's scale.
float q6_qx(float x[256], uint off, inout uint L[256]) {
    float vmax = 0.0, amax = 0.0;
    for (uint i = 0u; i < 16u; i++) {
        float av = abs(x[off + i]);
        if (av > amax) {
            amax = av;
            vmax = x[off + i];
        }
    }
    if (amax < 1e-15) {
        for (uint i = 0u; i < 16u; i++) {
            L[off + i] = 0u;
        }
        return 0.0;
    }
    float iscale = div_rn(-32.0, vmax);
    float sumlx = 0.0, suml2 = 0.0;
    for (uint i = 0u; i < 16u; i++) {
        float v = x[off + i];
        precise float t = iscale * v;
        int l = clamp(nearest_int(t), -32, 31);
        L[off + i] = uint(l + 32);
        float fl = float(l);
        precise float w = v * v;
        precise float wv = w * v;
        precise float a1 = wv * fl;
        precise float n1 = sumlx + a1;
        precise float wl = w * fl;
        precise float a2 = wl * fl;
        precise float n2 = suml2 + a2;
        sumlx = n1;
        suml2 = n2;
    }
    float scale = suml2 != 0.0 ? div_rn(sumlx, suml2) : 0.0;
    precise float best = scale * sumlx;
    for (int is = -9; is <= 9; is++) {
        if (is == 0) {
            continue;
        }
        precise float r = 0.1 * float(is);
        precise float nm = 32.0 + r;
        float isc = div_rn(-nm, vmax);
        float slx = 0.0, sl2 = 0.0;
        for (uint i = 0u; i < 16u; i++) {
            float v = x[off + i];
            precise float t = isc * v;
            float fl = float(clamp(nearest_int(t), -32, 31));
            precise float w = v * v;
            precise float wv = w * v;
            precise float a1 = wv * fl;
            precise float n1 = slx + a1;
            precise float wl = w * fl;
            precise float a2 = wl * fl;
            precise float n2 = sl2 + a2;
            slx = n1;
            sl2 = n2;
        }
        precise float lhs = slx * slx;
        precise float rhs = best * sl2;
        if (sl2 > 0.0 && lhs > rhs) {
            for (uint i = 0u; i < 16u; i++) {
                precise float t = isc * x[off + i];
                L[off + i] = uint(32 + clamp(nearest_int(t), -32, 31));
            }
            scale = div_rn(slx, sl2);
            best = scale * slx;
        }
    }
    return scale;
}

// dst_store_block quantizes a super-block as core/quant's QuantizeRowQ6_K (ggml's
// quantize_row_q6_K_ref): a scale per 16 values, the 8-bit scales against the largest
// magnitude, codes recomputed with the stored scales; a block whose scales are all (near) zero
// is zero bytes. Blocks are meant for finite values.
void dst_store_block(uint base, float x[256]) {
    uint L[256];
    float scales[16];
    float maxScale = 0.0, maxAbs = 0.0;
    for (uint j = 0u; j < 16u; j++) {
        scales[j] = q6_qx(x, 16u * j, L);
        float a = abs(scales[j]);
        if (a > maxAbs) {
            maxAbs = a;
            maxScale = scales[j];
        }
    }
    if (maxAbs < 1e-15) {
        for (uint w = 0u; w < 105u; w++) {
            data_d[base + w] = uint16_t(0u);
        }
        return;
    }
    float iscale = div_rn(-128.0, maxScale);
    uint dh = f32_bits_to_f16(floatBitsToUint(div_rn(1.0, iscale)));
    int sc[16];
    for (uint j = 0u; j < 16u; j++) {
        precise float t = iscale * scales[j];
        int v = min(127, nearest_int(t));
        sc[j] = (v << 24) >> 24; // C's (int8_t)
    }
    float d = half_to_float(dh);
    for (uint j = 0u; j < 16u; j++) {
        precise float dj = d * float(sc[j]);
        if (dj == 0.0) {
            continue;
        }
        for (uint ii = 0u; ii < 16u; ii++) {
            L[16u * j + ii] = uint(clamp(nearest_int(div_rn(x[16u * j + ii], dj)), -32, 31) + 32);
        }
    }
    // ql: bytes 0..127 (words 0..63), qh: bytes 128..191 (words 64..95), scales: words
    // 96..103, d: word 104.
    for (uint h = 0u; h < 2u; h++) {
        for (uint l = 0u; l < 32u; l += 2u) {
            uint e = 128u * h + l;
            uint lo0 = (L[e] & 0xfu) | ((L[e + 64u] & 0xfu) << 4);
            uint lo1 = (L[e + 1u] & 0xfu) | ((L[e + 65u] & 0xfu) << 4);
            uint hi0 = (L[e + 32u] & 0xfu) | ((L[e + 96u] & 0xfu) << 4);
            uint hi1 = (L[e + 33u] & 0xfu) | ((L[e + 97u] & 0xfu) << 4);
            uint qh0 = (L[e] >> 4) | ((L[e + 32u] >> 4) << 2) | ((L[e + 64u] >> 4) << 4) | ((L[e + 96u] >> 4) << 6);
            uint qh1 = (L[e + 1u] >> 4) | ((L[e + 33u] >> 4) << 2) | ((L[e + 65u] >> 4) << 4) | ((L[e + 97u] >> 4) << 6);
            data_d[base + 32u * h + l / 2u] = uint16_t(lo0 | (lo1 << 8));
            data_d[base + 32u * h + 16u + l / 2u] = uint16_t(hi0 | (hi1 << 8));
            data_d[base + 64u + 16u * h + l / 2u] = uint16_t(qh0 | (qh1 << 8));
        }
    }
    for (uint j = 0u; j < 16u; j += 2u) {
        data_d[base + 96u + j / 2u] = uint16_t((uint(sc[j]) & 0xffu) | ((uint(sc[j + 1u]) & 0xffu) << 8));
    }
    data_d[base + 104u] = uint16_t(dh);
}

#elif defined(DST_Q2_K)

// q2k_qkx2 is core/quant's makeQKX2Quants(3, x[off..off+15], |x|, L, laux, -0.5, 0.1, 15, true)
// (ggml's make_qkx2_quants with absolute errors, as quantize_row_q2_K_ref calls it): codes 0..3
// into L from off; it returns the scale and sets mn to the (non-negative) minimum to subtract.
float q2k_qkx2(float x[256], uint off, inout uint L[256], out float mn) {
    const int nmax = 3;
    float w[16];
    for (uint i = 0u; i < 16u; i++) {
        w[i] = abs(x[off + i]);
    }
    float vmin = x[off], vmax = x[off];
    float sumW = w[0];
    precise float sumX = sumW * x[off];
    for (uint i = 1u; i < 16u; i++) {
        float v = x[off + i];
        if (v < vmin) {
            vmin = v;
        }
        if (v > vmax) {
            vmax = v;
        }
        precise float nw = sumW + w[i];
        sumW = nw;
        precise float wx = w[i] * v;
        precise float nx = sumX + wx;
        sumX = nx;
    }
    if (vmin > 0.0) {
        vmin = 0.0;
    }
    if (vmax == vmin) {
        for (uint i = 0u; i < 16u; i++) {
            L[off + i] = 0u;
        }
        mn = -vmin;
        return 0.0;
    }
    precise float range = vmax - vmin;
    float iscale = div_rn(float(nmax), range);
    float scale = div_rn(1.0, iscale);
    float bestErr = 0.0;
    for (uint i = 0u; i < 16u; i++) {
        precise float dx = x[off + i] - vmin;
        precise float t = iscale * dx;
        int l = clamp(nearest_int(t), 0, nmax);
        L[off + i] = uint(l);
        precise float sl = scale * float(l);
        precise float sv = sl + vmin;
        precise float diff = sv - x[off + i];
        precise float we = w[i] * abs(diff);
        precise float ne = bestErr + we;
        bestErr = ne;
    }
    uint laux[16];
    for (int is = 0; is <= 15; is++) {
        precise float rd = 0.1 * float(is);
        precise float a = -0.5 + rd;
        precise float b = a + float(nmax);
        // vmax - vmin with the minimum of the best candidate so far, as core/quant (and ggml)
        precise float rg = vmax - vmin;
        iscale = div_rn(b, rg);
        float sumL = 0.0, sumL2 = 0.0, sumXL = 0.0;
        for (uint i = 0u; i < 16u; i++) {
            precise float dx = x[off + i] - vmin;
            precise float t = iscale * dx;
            int l = clamp(nearest_int(t), 0, nmax);
            laux[i] = uint(l);
            float fl = float(l);
            precise float wl = w[i] * fl;
            precise float wll = wl * fl;
            precise float wlx = wl * x[off + i];
            precise float n1 = sumL + wl;
            precise float n2 = sumL2 + wll;
            precise float n3 = sumXL + wlx;
            sumL = n1;
            sumL2 = n2;
            sumXL = n3;
        }
        precise float p1 = sumW * sumL2;
        precise float p2 = sumL * sumL;
        precise float D = p1 - p2;
        if (D > 0.0) {
            precise float q1 = sumW * sumXL;
            precise float q2 = sumX * sumL;
            precise float num_s = q1 - q2;
            precise float q3 = sumL2 * sumX;
            precise float q4 = sumL * sumXL;
            precise float num_m = q3 - q4;
            float thisScale = div_rn(num_s, D);
            float thisMin = div_rn(num_m, D);
            if (thisMin > 0.0) {
                thisMin = 0.0;
                thisScale = div_rn(sumXL, sumL2);
            }
            float curErr = 0.0;
            for (uint i = 0u; i < 16u; i++) {
                precise float sl = thisScale * float(laux[i]);
                precise float sv = sl + thisMin;
                precise float diff = sv - x[off + i];
                precise float we = w[i] * abs(diff);
                precise float ne = curErr + we;
                curErr = ne;
            }
            if (curErr < bestErr) {
                for (uint i = 0u; i < 16u; i++) {
                    L[off + i] = laux[i];
                }
                bestErr = curErr;
                scale = thisScale;
                vmin = thisMin;
            }
        }
    }
    mn = -vmin;
    return scale;
}

// dst_store_block quantizes a super-block as core/quant's QuantizeRowQ2_K (ggml's
// quantize_row_q2_K_ref): per 16 values a (scale, min) search with weights |x|, both quantized
// to 4 bits against the super-block's largest (d = maxScale/15, dmin = maxMin/15 as f16), then
// the codes of every sub-block whose stored scale is not zero recomputed with the stored
// scales (the others keep the search's). Blocks are meant for finite values.
void dst_store_block(uint base, float x[256]) {
    uint L[256];
    float scales[16], mins[16];
    float maxScale = 0.0, maxMin = 0.0;
    for (uint j = 0u; j < 16u; j++) {
        float mn;
        scales[j] = q2k_qkx2(x, 16u * j, L, mn);
        mins[j] = mn;
        if (scales[j] > maxScale) {
            maxScale = scales[j];
        }
        if (mins[j] > maxMin) {
            maxMin = mins[j];
        }
    }
    uint sc[16];
    uint dh = 0u, mh = 0u;
    if (maxScale > 0.0) {
        float iscale = div_rn(15.0, maxScale);
        for (uint j = 0u; j < 16u; j++) {
            precise float t = iscale * scales[j];
            sc[j] = uint(nearest_int(t)) & 0xffu; // C's (uint8_t)
        }
        dh = f32_bits_to_f16(floatBitsToUint(div_rn(maxScale, 15.0)));
    } else {
        for (uint j = 0u; j < 16u; j++) {
            sc[j] = 0u;
        }
    }
    if (maxMin > 0.0) {
        float iscale = div_rn(15.0, maxMin);
        for (uint j = 0u; j < 16u; j++) {
            precise float t = iscale * mins[j];
            sc[j] |= (uint(nearest_int(t)) << 4) & 0xffu;
        }
        mh = f32_bits_to_f16(floatBitsToUint(div_rn(maxMin, 15.0)));
    }
    float d = half_to_float(dh), dmin = half_to_float(mh);
    for (uint j = 0u; j < 16u; j++) {
        precise float dj = d * float(sc[j] & 0xfu);
        if (dj == 0.0) {
            continue;
        }
        precise float dm = dmin * float(sc[j] >> 4);
        for (uint ii = 0u; ii < 16u; ii++) {
            precise float xs = x[16u * j + ii] + dm;
            L[16u * j + ii] = uint(clamp(nearest_int(div_rn(xs, dj)), 0, 3));
        }
    }
    // scales: bytes 0..15 (words 0..7), qs: bytes 16..79 (words 8..39), d: word 40, dmin: 41.
    for (uint j = 0u; j < 16u; j += 2u) {
        data_d[base + j / 2u] = uint16_t(sc[j] | (sc[j + 1u] << 8));
    }
    for (uint h = 0u; h < 2u; h++) {
        for (uint l = 0u; l < 32u; l += 2u) {
            uint e = 128u * h + l;
            uint b0 = L[e] | (L[e + 32u] << 2) | (L[e + 64u] << 4) | (L[e + 96u] << 6);
            uint b1 = L[e + 1u] | (L[e + 33u] << 2) | (L[e + 65u] << 4) | (L[e + 97u] << 6);
            data_d[base + 8u + 16u * h + l / 2u] = uint16_t(b0 | (b1 << 8));
        }
    }
    data_d[base + 40u] = uint16_t(dh);
    data_d[base + 41u] = uint16_t(mh);
}

#elif defined(DST_Q3_K)

// q3k_q3 is core/quant's makeQ3Quants(4, x[off..off+15], L) (ggml's make_q3_quants with
// weights x², as quantize_row_q3_K_ref calls it): up to 5 rounds of per-value code changes that
// raise sumlx²/suml2; codes 0..7 into L from off (all 0 for a sub-block of magnitudes under
// 1e-15); it returns the sub-block's scale.
float q3k_q3(float x[256], uint off, inout uint L[256]) {
    float vmax = 0.0, amax = 0.0;
    for (uint i = 0u; i < 16u; i++) {
        float av = abs(x[off + i]);
        if (av > amax) {
            amax = av;
            vmax = x[off + i];
        }
    }
    if (amax < 1e-15) {
        for (uint i = 0u; i < 16u; i++) {
            L[off + i] = 0u;
        }
        return 0.0;
    }
    float iscale = div_rn(-4.0, vmax);
    int li[16];
    float sumlx = 0.0, suml2 = 0.0;
    for (uint i = 0u; i < 16u; i++) {
        float v = x[off + i];
        precise float t = iscale * v;
        int l = clamp(nearest_int(t), -4, 3);
        li[i] = l;
        float fl = float(l);
        precise float w = v * v;
        precise float wv = w * v;
        precise float a1 = wv * fl;
        precise float n1 = sumlx + a1;
        precise float wl = w * fl;
        precise float a2 = wl * fl;
        precise float n2 = suml2 + a2;
        sumlx = n1;
        suml2 = n2;
    }
    for (int it = 0; it < 5; it++) {
        int changed = 0;
        for (uint i = 0u; i < 16u; i++) {
            float v = x[off + i];
            precise float w = v * v;
            float fli = float(li[i]);
            precise float wv = w * v;
            precise float t1 = wv * fli;
            precise float slx = sumlx - t1;
            if (slx > 0.0) {
                precise float wl = w * fli;
                precise float t2 = wl * fli;
                precise float sl2 = suml2 - t2;
                precise float vs = v * sl2;
                int nl = clamp(nearest_int(div_rn(vs, slx)), -4, 3);
                if (nl != li[i]) {
                    float fn = float(nl);
                    precise float a1 = wv * fn;
                    precise float slx2 = slx + a1;
                    precise float wn = w * fn;
                    precise float a2 = wn * fn;
                    precise float sl22 = sl2 + a2;
                    precise float s1 = slx2 * slx2;
                    precise float lhs = s1 * suml2;
                    precise float s2 = sumlx * sumlx;
                    precise float rhs = s2 * sl22;
                    if (sl22 > 0.0 && lhs > rhs) {
                        li[i] = nl;
                        sumlx = slx2;
                        suml2 = sl22;
                        changed++;
                    }
                }
            }
        }
        if (changed == 0) {
            break;
        }
    }
    for (uint i = 0u; i < 16u; i++) {
        L[off + i] = uint(li[i] + 4);
    }
    return suml2 > 0.0 ? div_rn(sumlx, suml2) : 0.0;
}

// q3k_scale is the stored 6-bit scale u (0..63) of sub-block j in the 12 scale bytes sc.
uint q3k_scale(uint sc[12], uint j) {
    uint lo = j < 8u ? sc[j] & 0xfu : sc[j - 8u] >> 4;
    return lo | (((sc[8u + (j & 3u)] >> (2u * (j >> 2))) & 3u) << 4);
}

// dst_store_block quantizes a super-block as core/quant's QuantizeRowQ3_K (ggml's
// quantize_row_q3_K_ref): a scale per 16 values, 6-bit scales against the one of largest
// magnitude (iscale = -32/max, d = 1/iscale as f16), then the codes of every sub-block whose
// stored scale is not zero recomputed with it (the others keep the search's), the third bit in
// hmask. Blocks are meant for finite values.
void dst_store_block(uint base, float x[256]) {
    uint L[256];
    float scales[16];
    float maxScale = 0.0, amax = 0.0;
    for (uint j = 0u; j < 16u; j++) {
        scales[j] = q3k_q3(x, 16u * j, L);
        float s = abs(scales[j]);
        if (s > amax) {
            amax = s;
            maxScale = scales[j];
        }
    }
    uint sc[12];
    for (uint j = 0u; j < 12u; j++) {
        sc[j] = 0u;
    }
    uint dh = 0u;
    if (maxScale != 0.0) {
        float iscale = div_rn(-32.0, maxScale);
        for (uint j = 0u; j < 16u; j++) {
            precise float t = iscale * scales[j];
            int l = (nearest_int(t) << 24) >> 24; // C's (int8_t)
            uint u = uint(clamp(l, -32, 31) + 32);
            if (j < 8u) {
                sc[j] = u & 0xfu;
            } else {
                sc[j - 8u] |= (u & 0xfu) << 4;
            }
            sc[8u + (j & 3u)] |= (u >> 4) << (2u * (j >> 2));
        }
        dh = f32_bits_to_f16(floatBitsToUint(div_rn(1.0, iscale)));
    }
    float d = half_to_float(dh);
    for (uint j = 0u; j < 16u; j++) {
        precise float dj = d * float(int(q3k_scale(sc, j)) - 32);
        if (dj == 0.0) {
            continue;
        }
        for (uint ii = 0u; ii < 16u; ii++) {
            L[16u * j + ii] = uint(clamp(nearest_int(div_rn(x[16u * j + ii], dj)), -4, 3) + 4);
        }
    }
    uint hm[32];
    for (uint l = 0u; l < 32u; l++) {
        hm[l] = 0u;
    }
    for (uint e = 0u; e < 256u; e++) {
        if (L[e] > 3u) {
            hm[e % 32u] |= 1u << (e / 32u);
            L[e] -= 4u;
        }
    }
    // hmask: bytes 0..31 (words 0..15), qs: bytes 32..95 (words 16..47), scales: bytes 96..107
    // (words 48..53), d: word 54.
    for (uint l = 0u; l < 32u; l += 2u) {
        data_d[base + l / 2u] = uint16_t(hm[l] | (hm[l + 1u] << 8));
    }
    for (uint h = 0u; h < 2u; h++) {
        for (uint l = 0u; l < 32u; l += 2u) {
            uint e = 128u * h + l;
            uint b0 = L[e] | (L[e + 32u] << 2) | (L[e + 64u] << 4) | (L[e + 96u] << 6);
            uint b1 = L[e + 1u] | (L[e + 33u] << 2) | (L[e + 65u] << 4) | (L[e + 97u] << 6);
            data_d[base + 16u + 16u * h + l / 2u] = uint16_t(b0 | (b1 << 8));
        }
    }
    for (uint j = 0u; j < 12u; j += 2u) {
        data_d[base + 48u + j / 2u] = uint16_t(sc[j] | (sc[j + 1u] << 8));
    }
    data_d[base + 54u] = uint16_t(dh);
}

#else // DST_IQ4_XS

// iq4_search is core/quant's iq4Search with ntry 7 for the 32 values of x from off (weights x²,
// no importance matrix): it returns the sub-block's scale. vmax is the first value of largest
// magnitude, which is at least 1e-15.
float iq4_search(float x[256], uint off, float vmax) {
    float d = div_rn(-vmax, -127.0);
    float id = div_rn(1.0, d);
    float sumqx = 0.0, sumq2 = 0.0;
    for (uint j = 0u; j < 32u; j++) {
        float v = x[off + j];
        precise float t = id * v;
        float q = IQ4_VALUES[iq4_best(t)];
        precise float w = v * v;
        precise float wq = w * q;
        precise float tx = wq * v;
        precise float tq = wq * q;
        precise float nx = sumqx + tx;
        precise float nq = sumq2 + tq;
        sumqx = nx;
        sumq2 = nq;
    }
    d = sumq2 > 0.0 ? div_rn(sumqx, sumq2) : 0.0;
    precise float best = d * sumqx;
    for (int itry = -7; itry <= 7; itry++) {
        id = div_rn(float(itry - 127), vmax);
        float sx = 0.0, s2 = 0.0;
        for (uint j = 0u; j < 32u; j++) {
            float v = x[off + j];
            precise float t = id * v;
            float q = IQ4_VALUES[iq4_best(t)];
            precise float w = v * v;
            precise float wq = w * q;
            precise float tx = wq * v;
            precise float tq = wq * q;
            precise float nx = sx + tx;
            precise float nq = s2 + tq;
            sx = nx;
            s2 = nq;
        }
        precise float lhs = sx * sx;
        precise float rhs = best * s2;
        if (s2 > 0.0 && lhs > rhs) {
            d = div_rn(sx, s2);
            best = d * sx;
        }
    }
    return d;
}

// dst_store_block quantizes a super-block as core/quant's QuantizeRowIQ4_XS (ggml's
// quantize_row_iq4_xs_ref without an importance matrix): a searched scale per 32 values, 6-bit
// scales against D = -max/32, codes the nearest table values of x / (D·scale). Blocks are meant
// for finite values.
void dst_store_block(uint base, float x[256]) {
    float scales[8];
    float maxScale = 0.0, amaxScale = 0.0;
    for (uint ib = 0u; ib < 8u; ib++) {
        float vmax = 0.0, amax = 0.0;
        for (uint j = 0u; j < 32u; j++) {
            float av = abs(x[32u * ib + j]);
            if (av > amax) {
                amax = av;
                vmax = x[32u * ib + j];
            }
        }
        scales[ib] = 0.0;
        if (amax < 1e-15) {
            continue;
        }
        scales[ib] = iq4_search(x, 32u * ib, vmax);
        float a = abs(scales[ib]);
        if (a > amaxScale) {
            amaxScale = a;
            maxScale = scales[ib];
        }
    }
    precise float D = maxScale * -0.03125; // -max/32, exact
    data_d[base] = uint16_t(f32_bits_to_f16(floatBitsToUint(D)));
    float iD = D != 0.0 ? div_rn(1.0, D) : 0.0;
    uint sh = 0u;
    uint sl[4] = uint[4](0u, 0u, 0u, 0u);
    for (uint ib = 0u; ib < 8u; ib++) {
        precise float t = iD * scales[ib];
        int l = clamp(nearest_int(t), -32, 31);
        precise float dl = D * float(l);
        float idl = dl != 0.0 ? div_rn(1.0, dl) : 0.0;
        for (uint j = 0u; j < 16u; j += 2u) {
            precise float t0 = idl * x[32u * ib + j];
            precise float t1 = idl * x[32u * ib + j + 16u];
            precise float t2 = idl * x[32u * ib + j + 1u];
            precise float t3 = idl * x[32u * ib + j + 17u];
            uint b0 = iq4_best(t0) | (iq4_best(t1) << 4);
            uint b1 = iq4_best(t2) | (iq4_best(t3) << 4);
            data_d[base + 4u + 8u * ib + j / 2u] = uint16_t(b0 | (b1 << 8));
        }
        uint lu = uint(l + 32);
        sl[ib / 2u] |= (lu & 0xfu) << (4u * (ib % 2u));
        sh |= (lu >> 4) << (2u * ib);
    }
    data_d[base + 1u] = uint16_t(sh);
    data_d[base + 2u] = uint16_t(sl[0] | (sl[1] << 8));
    data_d[base + 3u] = uint16_t(sl[2] | (sl[3] << 8));
}

#endif // K-quant storers

#elif defined(DST_Q4_0) || defined(DST_Q4_1) || defined(DST_Q8_0) || defined(DST_Q5_0) || defined(DST_Q5_1) || defined(DST_IQ4_NL)

layout(std430, binding = DST_BINDING) buffer BufD { uint16_t data_d[]; };

#define DST_BLOCK
#define DST_QK 32u

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

#elif defined(DST_NVFP4) || defined(DST_MXFP4) || defined(DST_Q1_0) || defined(DST_TQ1_0) || defined(DST_TQ2_0) || defined(DST_Q2_0)

#include "lowbit_store.glsl"

#endif

#endif // TANDEM_ROWS_GLSL
