// lowbit_store.glsl: rows.glsl's block storers for NVFP4, MXFP4, Q1_0, TQ1_0, TQ2_0 and Q2_0
// (DST_NVFP4, DST_MXFP4, DST_Q1_0, DST_TQ1_0, DST_TQ2_0, DST_Q2_0), the reference quantizers of
// core/quant (fp4.go, tq.go, q2_0.go) bit for bit: every product and sum is marked precise (no
// fma), divisions go through rows.glsl's div_rn, f16 scales through f32_bits_to_f16. Block
// layouts as kquants.glsl.
//
// Included by rows.glsl for one of those DST_ types; provides DST_BLOCK, DST_QK and
// dst_store_block(uint base, float x[DST_QK]) writing the block at 16-bit word base (at byte base
// for MXFP4, whose 17-byte blocks share 32-bit words with their neighbours: data_d is words, and
// a block writes the bytes of a shared word with atomics).

#ifndef TANDEM_LOWBIT_STORE_GLSL
#define TANDEM_LOWBIT_STORE_GLSL

#if defined(DST_MXFP4)
layout(std430, binding = DST_BINDING) buffer BufD { uint data_d[]; };
#else
layout(std430, binding = DST_BINDING) buffer BufD { uint16_t data_d[]; };
#endif

#define DST_BLOCK
#if defined(DST_NVFP4) || defined(DST_Q2_0)
#define DST_QK 64u
#elif defined(DST_MXFP4)
#define DST_QK 32u
#elif defined(DST_Q1_0)
#define DST_QK 128u
#else
#define DST_QK 256u
#endif

#if defined(DST_NVFP4) || defined(DST_MXFP4)
// ggml's kvalues_mxfp4 (twice the E2M1 values).
const float LB_FP4[16] = float[16](0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0,
                                   0.0, -1.0, -2.0, -3.0, -4.0, -6.0, -8.0, -12.0);

// lb_best_fp4 is core/quant's bestIndexFP4: the code whose value LB_FP4[i]*d is nearest to x,
// the first of equals.
uint lb_best_fp4(float x, float d) {
    uint best = 0u;
    float bestErr = abs(x);
    for (uint i = 1u; i < 16u; i++) {
        precise float v = LB_FP4[i] * d;
        precise float diff = v - x;
        float err = abs(diff);
        if (err < bestErr) {
            best = i;
            bestErr = err;
        }
    }
    return best;
}
#endif

#if defined(DST_NVFP4)

// lb_ue4m3_half is core/quant.UE4M3ToFP32Half.
float lb_ue4m3_half(uint x) {
    uint e = (x >> 3) & 0xfu, m = x & 7u;
    if (x == 0u || x == 0x7fu) {
        return 0.0;
    }
    if (e == 0u) {
        return float(m) * (1.0 / 1024.0);
    }
    return uintBitsToFloat(((e + 119u) << 23) | (m << 20));
}

// lb_fp32_to_ue4m3 is core/quant.FP32ToUE4M3 (ggml_fp32_to_ue4m3).
uint lb_fp32_to_ue4m3(float x) {
    if (!(x > 0.0)) {
        return 0u;
    }
    if (x > 448.0) {
        x = 448.0;
    }
    uint bits = floatBitsToUint(x);
    int e = int((bits >> 23) & 0xffu) - 120;
    uint man = (bits >> 20) & 7u;
    if (e <= 0) {
        precise float s = x * 512.0;
        precise float r = s + 0.5;
        int m = min(int(r), 7);
        return m < 1 ? 0u : uint(m);
    }
    if (e >= 15) {
        return 0x7eu;
    }
    man += (bits >> 19) & 1u;
    if (man > 7u) {
        man = 0u;
        e++;
        if (e >= 15) {
            return 0x7eu;
        }
    }
    return (uint(e) << 3) | man;
}

// dst_store_block quantizes x as core/quant.QuantizeRowNVFP4: per 16 values the UE4M3 scale of
// amax/6, each value the nearest code at that (halved) scale.
void dst_store_block(uint base, float x[64]) {
    uint scales = 0u;
    for (uint s = 0u; s < 4u; s++) {
        float amax = 0.0;
        for (uint j = 0u; j < 16u; j++) {
            float a = abs(x[16u * s + j]);
            if (amax < a) {
                amax = a;
            }
        }
        uint ue = lb_fp32_to_ue4m3(div_rn(amax, 6.0));
        scales |= ue << (8u * s);
        float d = lb_ue4m3_half(ue);
        for (uint j = 0u; j < 8u; j += 2u) {
            uint b0 = lb_best_fp4(x[16u * s + j], d) | (lb_best_fp4(x[16u * s + j + 8u], d) << 4);
            uint b1 = lb_best_fp4(x[16u * s + j + 1u], d) | (lb_best_fp4(x[16u * s + j + 9u], d) << 4);
            data_d[base + 2u + 4u * s + (j >> 1)] = uint16_t(b0 | (b1 << 8));
        }
    }
    data_d[base] = uint16_t(scales & 0xffffu);
    data_d[base + 1u] = uint16_t(scales >> 16);
}

#elif defined(DST_MXFP4)

// LB_MX_T[q+1] is floor(2^q*ln2), q = -1 .. 7: see lb_mxfp4_exponent.
const uint LB_MX_T[9] = uint[9](0u, 0u, 1u, 2u, 5u, 11u, 22u, 44u, 88u);

// lb_mxfp4_exponent is core/quant's mxfp4Exponent: the E8M0 scale floor(log2(amax)) - 2 + 127
// (its low byte; 0 for a zero or infinite amax) with log2 as the CPU takes it, in float64 rounded
// to float32, computed exactly from amax's bits: amax = m * 2^E (m in [1, 2)) has float32(log2)
// E, or E+1 where log2 rounds up to it: where 2 - m is at most floor(2^q*ln2) units of 2^-23, 2^q
// being half the float32 spacing at E+1 on the side of E in units of 2^-24 (E+1 > 0: q = p-1 for
// E+1 = 2^p, q = p for 2^p < E+1 < 2^(p+1); E+1 < 0: q = p for 2^p <= |E+1| < 2^(p+1); never
// for E+1 = 0). Checked against mxfp4Exponent for every exponent near both ends of the mantissa,
// every subnormal pattern near them and 5 million random floats.
uint lb_mxfp4_exponent(float amax) {
    if (!(amax > 0.0) || isinf(amax)) {
        return 0u;
    }
    uint bits = floatBitsToUint(amax);
    int e;
    uint m;
    if ((bits >> 23) == 0u) { // subnormal: bits * 2^-149
        int top = findMSB(bits);
        e = top - 149;
        m = (bits << uint(23 - top)) & 0x7fffffu;
    } else {
        e = int(bits >> 23) - 127;
        m = bits & 0x7fffffu;
    }
    int n = e + 1, f = e;
    if (n != 0) {
        uint an = uint(abs(n));
        int p = findMSB(an);
        int q = (n > 0 && (an & (an - 1u)) == 0u) ? p - 1 : p;
        if (0x800000u - m <= LB_MX_T[q + 1]) {
            f = n;
        }
    }
    return uint(f + 125) & 0xffu;
}

// lb_store17 writes the 17 bytes q at byte base: words of the block alone whole, words shared
// with a neighbour (a block or another tensor) byte by byte with atomics, so that concurrent
// writers of one word keep each other's bytes.
void lb_store17(uint base, uint q[17]) {
    uint end = base + 17u;
    for (uint w = base >> 2; w <= (end - 1u) >> 2; w++) {
        uint val = 0u, mask = 0u;
        for (uint o = max(base, 4u * w); o < min(end, 4u * w + 4u); o++) {
            val |= q[o - base] << (8u * (o & 3u));
            mask |= 0xffu << (8u * (o & 3u));
        }
        if (mask == 0xffffffffu) {
            data_d[w] = val;
        } else {
            atomicAnd(data_d[w], ~mask);
            atomicOr(data_d[w], val);
        }
    }
}

// dst_store_block quantizes x as core/quant.QuantizeRowMXFP4: the E8M0 scale of the largest
// magnitude (NaNs skipped), each value the nearest code at half that scale; base is a byte offset.
void dst_store_block(uint base, float x[32]) {
    float amax = 0.0;
    for (uint j = 0u; j < 32u; j++) {
        float a = abs(x[j]);
        if (amax < a) {
            amax = a;
        }
    }
    uint e = lb_mxfp4_exponent(amax);
    float d = e < 2u ? uintBitsToFloat(0x00200000u << e) : uintBitsToFloat((e - 1u) << 23);
    uint q[17];
    q[0] = e;
    for (uint j = 0u; j < 16u; j++) {
        q[1u + j] = lb_best_fp4(x[j], d) | (lb_best_fp4(x[j + 16u], d) << 4);
    }
    lb_store17(base, q);
}

#elif defined(DST_Q1_0)

// dst_store_block quantizes x as core/quant.QuantizeRowQ1_0: d the mean magnitude (summed in
// order), a set bit where the value is >= 0 (-0 included, NaN not).
void dst_store_block(uint base, float x[128]) {
    float sum = 0.0;
    for (uint j = 0u; j < 128u; j++) {
        precise float s = sum + abs(x[j]);
        sum = s;
    }
    precise float d = sum * 0.0078125; // sum / 128, exact
    data_d[base] = uint16_t(f32_bits_to_f16(floatBitsToUint(d)));
    for (uint w = 0u; w < 8u; w++) {
        uint bits = 0u;
        for (uint k = 0u; k < 16u; k++) {
            if (x[16u * w + k] >= 0.0) {
                bits |= 1u << k;
            }
        }
        data_d[base + 1u + w] = uint16_t(bits);
    }
}

#elif defined(DST_Q2_0)

// dst_store_block quantizes x as core/quant.QuantizeRowQ2_0: d the largest magnitude (NaNs
// skipped), codes round(x/d) + 1 (C's roundf) clamped to 0..3, a NaN quotient coding 0.
void dst_store_block(uint base, float x[64]) {
    float amax = 0.0;
    for (uint j = 0u; j < 64u; j++) {
        float a = abs(x[j]);
        if (a > amax) {
            amax = a;
        }
    }
    float id = amax > 0.0 ? div_rn(1.0, amax) : 0.0;
    data_d[base] = uint16_t(f32_bits_to_f16(floatBitsToUint(amax)));
    for (uint w = 0u; w < 8u; w++) {
        uint word = 0u;
        for (uint k = 0u; k < 8u; k++) {
            precise float v = x[8u * w + k] * id;
            uint q = 0u;
            if (!isnan(v)) {
                q = uint(clamp(round_half_away(v) + 1.0, 0.0, 3.0));
            }
            word |= q << (2u * k);
        }
        data_d[base + 1u + w] = uint16_t(word);
    }
}

#else // DST_TQ1_0, DST_TQ2_0

// lb_ternary is core/quant's ternary: round(v*id) + 1 (C's roundf), a code 0, 1 or 2.
uint lb_ternary(float v, float id) {
    precise float t = v * id;
    return uint(int(round_half_away(t)) + 1) & 0xffu;
}

// dst_store_block quantizes x as core/quant.QuantizeRowTQ1_0 / QuantizeRowTQ2_0: d the largest
// magnitude (a NaN taken as the CPU's !(d > a) takes it), codes round(x/d) + 1.
void dst_store_block(uint base, float x[256]) {
    float d = 0.0;
    for (uint j = 0u; j < 256u; j++) {
        float a = abs(x[j]);
        if (!(d > a)) {
            d = a;
        }
    }
    float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
#if defined(DST_TQ1_0)
    // Byte i: five trits (four for the qh bytes 48 .. 51, then times 3) in base 3, the first
    // the most significant, scaled to a byte by (q*256 + 242)/243. One loop over the bytes (no
    // helper taking x by value): llvmpipe compiles it in a fraction of the time.
    uint prev = 0u;
    for (uint i = 0u; i < 52u; i++) {
        uint first = i, step = 32u, cnt = 5u;
        if (i >= 48u) {
            first = 192u + i; // 240 + (i - 48)
            step = 4u;
            cnt = 4u;
        } else if (i >= 32u) {
            first = 128u + i; // 160 + (i - 32)
            step = 16u;
        }
        uint q = 0u;
        for (uint n = 0u; n < cnt; n++) {
            q = q * 3u + lb_ternary(x[first + step * n], id);
        }
        if (i >= 48u) {
            q *= 3u;
        }
        uint b = ((q & 0xffu) * 256u + 242u) / 243u;
        if ((i & 1u) == 0u) {
            prev = b;
        } else {
            data_d[base + (i >> 1)] = uint16_t(prev | (b << 8));
        }
    }
    data_d[base + 26u] = uint16_t(f32_bits_to_f16(floatBitsToUint(d)));
#else
    // Byte 32h + m holds the codes of elements 128h + 32n + m at bits 2n.
    uint prev = 0u;
    for (uint i = 0u; i < 64u; i++) {
        uint first = 96u * (i >> 5) + i; // 128h + m
        uint q = 0u;
        for (uint n = 0u; n < 4u; n++) {
            q |= (lb_ternary(x[first + 32u * n], id) & 3u) << (2u * n);
        }
        if ((i & 1u) == 0u) {
            prev = q;
        } else {
            data_d[base + (i >> 1)] = uint16_t(prev | (q << 8));
        }
    }
    data_d[base + 32u] = uint16_t(f32_bits_to_f16(floatBitsToUint(d)));
#endif
}

#endif

#endif // TANDEM_LOWBIT_STORE_GLSL
