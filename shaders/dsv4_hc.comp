#version 450
// dsv4_hc.comp: DeepSeek V4's hyper-connection ops (core.Dsv4HcComb, Dsv4HcPre, Dsv4HcPost),
// one op per MODE, each invocation computing one work item serially in the CPU kernels' float32
// order (every product and sum rounded on its own: precise, no fma):
//   0 DSV4_HC_COMB  one token: the 4x4 logits mixes*scale[2] + base, a softmax over dst plus
//                   eps per src column, then the Sinkhorn rounds (normalize over src per dst,
//                   then n_iter-1 times over dst per src and over src per dst), every sum
//                   started at eps and scaled by its correctly rounded reciprocal (div_rn);
//                   exp correctly rounded for normal results as the CPU's (hc_exp)
//   1 DSV4_HC_PRE   one result element [i, t]: sum over h of x[i, h, t]*w[h, t], in order of h
//   2 DSV4_HC_POST  one result element [i, d, t]: x[i, t]*post[d, t], then plus
//                   residual[i, s, t]*comb[d, s, t] in order of s
// Every tensor is f32, addressed in elements from offs_* at its strides.
//
// Bindings: 0..3 the node's sources in order (unused ones may alias others), 4 = dst.
// Specialization: constant 0 = workgroup size, constant 1 = MODE.
// Dispatch: any x grid (grid-stride loop over the n work items).

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(constant_id = 1) const uint MODE = 0u;

#define SRC_NONE
#define DST_NONE
#include "rows.glsl"

layout(std430, binding = 0) readonly buffer Src0 { float d0[]; };
layout(std430, binding = 1) readonly buffer Src1 { float d1[]; };
layout(std430, binding = 2) readonly buffer Src2 { float d2[]; };
layout(std430, binding = 3) readonly buffer Src3 { float d3[]; };
layout(std430, binding = 4) writeonly buffer Dst { float dd[]; };

layout(push_constant) uniform Params {
    uint n; // work items
    uint o0, o1, o2, o3, od;
    uint prm0, prm1, prm2, prm3, prm4, prm5, prm6, prm7;
    uint prm8, prm9, prm10, prm11, prm12, prm13, prm14, prm15;
} p;

#define HC 4u

// Float-float arithmetic (a value as an unevaluated sum hi + lo of two floats), every operation
// rounded on its own (precise) as the error-free transformations need.
void ff_two_sum(float a, float b, out float s, out float e) {
    precise float ss = a + b;
    precise float bb = ss - a;
    precise float ee = (a - (ss - bb)) + (b - bb);
    s = ss;
    e = ee;
}

void ff_fast_two_sum(float a, float b, out float s, out float e) { // |a| >= |b|
    precise float ss = a + b;
    precise float ee = b - (ss - a);
    s = ss;
    e = ee;
}

void ff_mul(float ah, float al, float bh, float bl, out float h, out float l) {
    precise float pr = ah * bh;
    precise float cross = ah * bl + al * bh;
    precise float e = two_prod_err(ah, bh, pr) + cross;
    ff_fast_two_sum(pr, e, h, l);
}

void ff_add(float ah, float al, float bh, float bl, out float h, out float l) {
    float s, e;
    ff_two_sum(ah, bh, s, e);
    precise float e2 = e + (al + bl);
    ff_fast_two_sum(s, e2, h, l);
}

// 1/n! for n = 0..11 as float-float pairs (bits), the Taylor coefficients of hc_exp.
const uint HC_EXP_HI[12] = uint[12](0x3f800000u, 0x3f800000u, 0x3f000000u, 0x3e2aaaabu, 0x3d2aaaabu, 0x3c088889u,
                                    0x3ab60b61u, 0x39500d01u, 0x37d00d01u, 0x3638ef1du, 0x3493f27eu, 0x32d7322bu);
const uint HC_EXP_LO[12] = uint[12](0u, 0u, 0u, 0xb1aaaaabu, 0xb0aaaaabu, 0xafeeeeefu,
                                    0xae13e93fu, 0xac3fcbfdu, 0xaabfcbfdu, 0x292ad8e6u, 0xa808760au, 0x25fea89cu);

// hc_exp is e^x rounded to the nearest float, as the CPU's float32(math.Exp(float64(x))), for
// every x whose result is a normal float (a subnormal result may differ in its last bit): x =
// k ln2 + r with ln2 split in three floats (k*L1 exact), r and the Taylor series of e^r to degree
// 11 in float-float (error below 2^-44), rounded once to a float and scaled by 2^k. Checked
// against the CPU's exp at 23.5 million points (every 97th float in (-88, 0], random ones in
// (-87, 88)) without a difference.
float hc_exp(float x) {
    if (isnan(x)) {
        return x;
    }
    if (x > 88.72283935546875) {
        return uintBitsToFloat(0x7f800000u);
    }
    if (x < -103.972084045410) {
        return 0.0;
    }
    const float L1 = uintBitsToFloat(0x3f317000u); // 12 significant bits: k*L1 is exact
    const float L2 = uintBitsToFloat(0x3805fdf4u);
    const float L3 = uintBitsToFloat(0x2be7bcd6u);
    precise float kx = x * 1.44269504088896341 + 0.5;
    float k = floor(kx);
    precise float a = x - k * L1; // exact
    precise float p2 = k * L2;
    precise float e2 = two_prod_err(k, L2, p2) + k * L3;
    float rh, rl;
    ff_two_sum(a, -p2, rh, rl);
    precise float rl2 = rl - e2;
    ff_fast_two_sum(rh, rl2, rh, rl);
    float ph = uintBitsToFloat(HC_EXP_HI[11]), pl = uintBitsToFloat(HC_EXP_LO[11]);
    for (int n = 10; n >= 0; n--) {
        ff_mul(ph, pl, rh, rl, ph, pl);
        ff_add(ph, pl, uintBitsToFloat(HC_EXP_HI[n]), uintBitsToFloat(HC_EXP_LO[n]), ph, pl);
    }
    precise float y = ph + pl;
    int ki = int(k);
    if (ki < -126) { // a subnormal result, scaled in two exact steps but for the last
        precise float y1 = y * uintBitsToFloat(uint(ki + 64 + 127) << 23);
        precise float y2 = y1 * uintBitsToFloat(uint(-64 + 127) << 23);
        return y2;
    }
    if (ki > 127) {
        precise float y1 = y * 2.0;
        precise float y2 = y1 * uintBitsToFloat(uint(ki - 1 + 127) << 23);
        return y2;
    }
    precise float ys = y * uintBitsToFloat(uint(ki + 127) << 23);
    return ys;
}

// COMB: mixes strides prm0, prm1 (dims 0, 1), scale stride prm2, base stride prm3, dst strides
// prm4..prm6, eps prm7 (f32 bits), n_iter prm8.
void hc_comb(uint it) {
    float eps = uintBitsToFloat(p.prm7);
    float sc = d1[p.o1 + 2u * p.prm2];
    float m[16]; // m[dst + HC*src]
    for (uint k = 0u; k < HC; k++) {
        float mx = uintBitsToFloat(0xff800000u);
        for (uint d = 0u; d < HC; d++) {
            uint i = 2u * HC + d + HC * k;
            precise float ms = d0[p.o0 + i * p.prm0 + it * p.prm1] * sc;
            precise float v = ms + d2[p.o2 + i * p.prm3];
            m[d + HC * k] = v;
            mx = max(mx, v);
        }
        precise float sum = 0.0;
        for (uint d = 0u; d < HC; d++) {
            precise float x = m[d + HC * k] - mx;
            float v = hc_exp(x);
            m[d + HC * k] = v;
            sum += v;
        }
        float inv = div_rn(1.0, sum);
        for (uint d = 0u; d < HC; d++) {
            precise float v = m[d + HC * k] * inv;
            precise float ve = v + eps;
            m[d + HC * k] = ve;
        }
    }
    for (uint r = 0u; r < p.prm8; r++) {
        if (r > 0u) { // over dst, per src column
            for (uint k = 0u; k < HC; k++) {
                precise float s = eps;
                for (uint d = 0u; d < HC; d++) {
                    s += m[d + HC * k];
                }
                float inv = div_rn(1.0, s);
                for (uint d = 0u; d < HC; d++) {
                    precise float v = m[d + HC * k] * inv;
                    m[d + HC * k] = v;
                }
            }
        }
        // over src, per dst row
        for (uint d = 0u; d < HC; d++) {
            precise float s = eps;
            for (uint k = 0u; k < HC; k++) {
                s += m[d + HC * k];
            }
            float inv = div_rn(1.0, s);
            for (uint k = 0u; k < HC; k++) {
                precise float v = m[d + HC * k] * inv;
                m[d + HC * k] = v;
            }
        }
    }
    for (uint k = 0u; k < HC; k++) {
        for (uint d = 0u; d < HC; d++) {
            dd[p.od + d * p.prm4 + k * p.prm5 + it * p.prm6] = m[d + HC * k];
        }
    }
}

// PRE: prm0 n_embd, prm1 hc, x strides prm2..prm4, weights strides prm5, prm6, dst strides
// prm7, prm8.
void hc_pre(uint e) {
    uint i = e % p.prm0;
    uint t = e / p.prm0;
    precise float s = 0.0;
    for (uint h = 0u; h < p.prm1; h++) {
        precise float xw = d0[p.o0 + i * p.prm2 + h * p.prm3 + t * p.prm4] * d1[p.o1 + h * p.prm5 + t * p.prm6];
        s += xw;
    }
    dd[p.od + i * p.prm7 + t * p.prm8] = s;
}

// POST: prm0 n_embd, prm1 hc, x strides prm2, prm3, residual strides prm4..prm6, post strides
// prm7, prm8, comb strides prm9..prm11, dst strides prm12..prm14.
void hc_post(uint e) {
    uint i = e % p.prm0;
    uint d = (e / p.prm0) % p.prm1;
    uint t = e / (p.prm0 * p.prm1);
    precise float s = d0[p.o0 + i * p.prm2 + t * p.prm3] * d2[p.o2 + d * p.prm7 + t * p.prm8];
    for (uint k = 0u; k < p.prm1; k++) {
        precise float rc = d1[p.o1 + i * p.prm4 + k * p.prm5 + t * p.prm6] * d3[p.o3 + d * p.prm9 + k * p.prm10 + t * p.prm11];
        s += rc;
    }
    dd[p.od + i * p.prm12 + d * p.prm13 + t * p.prm14] = s;
}

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint e = gl_GlobalInvocationID.x; e < p.n; e += stride) {
        if (MODE == 0u) {
            hc_comb(e);
        } else if (MODE == 1u) {
            hc_pre(e);
        } else {
            hc_post(e);
        }
    }
}
