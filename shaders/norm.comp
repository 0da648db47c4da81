#version 450
#extension GL_EXT_control_flow_attributes : enable
// norm.comp: NORM ((x - mean) / sqrt(var + eps)) or RMS_NORM (x / sqrt(mean(x²) +
// eps)) of f32 rows, one workgroup per row with a shared-memory tree reduction, so
// rows of any length (thousands of elements) work. Each thread reads and writes
// only its own elements after the reductions, so dst may alias src (in place).
//
// The sums are f32, so a row is first scaled by k = max|x| when that is above 1
// (and finite): Σ(x/k)² cannot overflow, and x / sqrt(mean(x²) + eps) =
// (x/k) / sqrt(mean((x/k)²) + eps/k²), the same for NORM's centred values. Rows
// near 1e19 then give the CPU's (float64) values instead of 0 or NaN. A row
// holding ±Inf keeps k = 1 (the sum is Inf: finite elements give 0, as on the
// CPU) and a NaN anywhere makes the whole row NaN.
//
// eps/k² can underflow to 0 in f32 (eps = 1e-5, k ≥ ~1e20). Where the scaled
// variance is 0 too (a row of equal values, all 1e30), the denominator would be 0
// and the centred values 0: 0·Inf = NaN, where the CPU (float64) gives 0. Then the
// variance is below eps, so the row is the centred values times k over sqrt(eps)
// (0 for a row of one value; for eps = 0, 0·Inf = NaN as on the CPU). The
// factors are applied one after the other (values·k first, they are tiny), since
// k / sqrt(eps) itself can overflow. NaN and Inf sums keep the plain formula.
// norm_factors applies this rule to both ops.
//
// NORM's mean is taken relative to the row's first element (see main), so rows
// of equal values have a mean of exactly that value and normalise to 0.
//
// Defines: RMS for RMS_NORM (else NORM); with RMS, MUL fuses the MUL that follows
// (MUL(RMS_NORM(x), w), w broadcast over the rows by repetition): each thread
// stores its normalized element y in dst and y·w in the MUL's result, the
// unfused shaders' float operations on the same values (bit for bit).
// With RMS and MUL, ADD fuses the ADD before the RMS_NORM too (MUL(RMS_NORM(a + b), w), the
// residual sum and the next layer's weighted norm): the source is a + b, stored in the ADD's
// result (a, b and it of one shape and src's strides) as the pass that writes dst goes.
// Bindings: 0 = src (a), 1 = dst; with MUL 2 = w, 3 = the MUL's result; with ADD 4 = b, 5 = the
// ADD's result.
// Specialization: constant 0 = workgroup size (power of two, default 256).
// Dispatch: any x grid (grid-stride loop over rows).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

// RMS rows of up to NR elements a thread are read into registers once (a row of 2048 on 256
// threads: 8 loads issued together, for the three passes; on an H200 the fused norm's ~10 µs
// did not move with it, so its cost lies elsewhere).
#define NR 16u

layout(std430, binding = 0) readonly buffer BufS { float data_s[]; };
layout(std430, binding = 1) buffer BufD { float data_d[]; };
#if defined(MUL)
layout(std430, binding = 2) readonly buffer BufW { float data_w[]; };
layout(std430, binding = 3) buffer BufM { float data_m[]; };
#endif
#if defined(ADD)
layout(std430, binding = 4) readonly buffer BufB { float data_b[]; };
layout(std430, binding = 5) buffer BufX { float data_x[]; };
#endif

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;
    uint nb00, nb01, nb02, nb03;   // src strides (floats)
    uint nb0, nb1, nb2, nb3;       // dst strides (floats)
    uint offs_s, offs_d;
    float eps;
    uint nrows;
#if defined(MUL)
    uint wne0, wne1, wne2, wne3;   // w's shape (each dividing the row shape)
    uint wnb0, wnb1, wnb2, wnb3;   // w's strides (floats)
    uint mnb0, mnb1, mnb2, mnb3;   // the MUL result's strides (floats)
    uint offs_w, offs_m;
#endif
#if defined(ADD)
    uint offs_b, offs_x;           // b and the ADD's result: src's shape and strides
#endif
} p;

// src_at returns element i0 of the source row at is: with ADD, the sum a + b (the ADD's one
// float operation, as binary.comp), written to the ADD's result by the last pass.
float src_at(uint is, uint i0) {
#if defined(ADD)
    precise float v = data_s[is + i0 * p.nb00] + data_b[is - p.offs_s + p.offs_b + i0 * p.nb00];
    return v;
#else
    return data_s[is + i0 * p.nb00];
#endif
}

shared float red[gl_WorkGroupSize.x];

float reduce_sum(float v, uint tid) {
    red[tid] = v;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
        if (tid < s) {
            red[tid] += red[tid + s];
        }
        barrier();
    }
    v = red[0];
    barrier();
    return v;
}

float reduce_max(float v, uint tid) {
    red[tid] = v;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
        if (tid < s) {
            red[tid] = max(red[tid], red[tid + s]);
        }
        barrier();
    }
    v = red[0];
    barrier();
    return v;
}

// norm_factors returns the factors applied, in turn, to the scaled (and for NORM
// centred) values: (1, 1 / sqrt(v2 + eps/k²)), or (k, 1 / sqrt(eps)) when that
// sum underflows to 0.
vec2 norm_factors(float v2, float ik, float k) {
    const float v = v2 + p.eps * ik * ik;
    return v == 0.0 ? vec2(k, 1.0 / sqrt(p.eps)) : vec2(1.0, 1.0 / sqrt(v));
}

// row_scale returns the prescale k of the row at is: max|x| when it is finite and
// above 1, else 1.
float row_scale(uint is, uint tid) {
    float m = 0.0;
    for (uint i0 = tid; i0 < p.ne0; i0 += gl_WorkGroupSize.x) {
        m = max(m, abs(src_at(is, i0)));
    }
    m = reduce_max(m, tid);
    return (m > 1.0 && !isinf(m)) ? m : 1.0;
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint wg = gl_WorkGroupSize.x;
    const float n = float(p.ne0);
    for (uint row = gl_WorkGroupID.x; row < p.nrows; row += gl_NumWorkGroups.x) {
        uint i1 = row % p.ne1;
        uint t = row / p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint is = p.offs_s + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
        uint id = p.offs_d + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
#if defined(RMS)
#if defined(MUL)
        uint iw = p.offs_w + (i1 % p.wne1) * p.wnb1 + (i2 % p.wne2) * p.wnb2 + (i3 % p.wne3) * p.wnb3;
        uint im = p.offs_m + i1 * p.mnb1 + i2 * p.mnb2 + i3 * p.mnb3;
#endif
        if (p.ne0 <= NR * wg) {
            // The row in registers: its loads issued together, once for the three passes (the
            // same operations, in the same order, as the loops below).
            float xs[NR];
            float m = 0.0;
            [[unroll]] for (uint r = 0u; r < NR; r++) {
                uint i0 = tid + r * wg;
                xs[r] = i0 < p.ne0 ? src_at(is, i0) : 0.0;
            }
            [[unroll]] for (uint r = 0u; r < NR; r++) {
                m = max(m, abs(xs[r]));
            }
            m = reduce_max(m, tid);
            const float k = (m > 1.0 && !isinf(m)) ? m : 1.0;
            const float ik = 1.0 / k;
            float s2 = 0.0;
            [[unroll]] for (uint r = 0u; r < NR; r++) {
                if (tid + r * wg < p.ne0) {
                    float x = xs[r] * ik;
                    s2 += x * x;
                }
            }
            s2 = reduce_sum(s2, tid);
            const vec2 f = norm_factors(s2 / n, ik, k);
            [[unroll]] for (uint r = 0u; r < NR; r++) {
                uint i0 = tid + r * wg;
                if (i0 < p.ne0) {
#if defined(ADD)
                    data_x[is - p.offs_s + p.offs_x + i0 * p.nb00] = xs[r];
#endif
                    const float y = xs[r] * ik * f.x * f.y;
                    data_d[id + i0 * p.nb0] = y;
#if defined(MUL)
                    data_m[im + i0 * p.mnb0] = y * data_w[iw + (i0 % p.wne0) * p.wnb0];
#endif
                }
            }
            continue;
        }
        const float k = row_scale(is, tid);
        const float ik = 1.0 / k;
        float s2 = 0.0;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            float x = src_at(is, i0) * ik;
            s2 += x * x;
        }
        s2 = reduce_sum(s2, tid);
        const vec2 f = norm_factors(s2 / n, ik, k);
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            const float xv = src_at(is, i0);
#if defined(ADD)
            data_x[is - p.offs_s + p.offs_x + i0 * p.nb00] = xv;
#endif
            const float y = xv * ik * f.x * f.y;
            data_d[id + i0 * p.nb0] = y;
#if defined(MUL)
            data_m[im + i0 * p.mnb0] = y * data_w[iw + (i0 % p.wne0) * p.wnb0];
#endif
        }
#else
        const float k = row_scale(is, tid);
        const float ik = 1.0 / k;
        // The mean is x0 + Σ(x - x0)/n, x0 the row's first (scaled) element: a row of
        // equal values sums to exactly 0 and its mean is the value itself, where a
        // rounded f32 sum of the values, divided by n, can be an ulp off (x - mean
        // = ±ulp, normalised to ±1 instead of 0). A non-finite x0 is replaced by 0
        // (the plain sum, which is non-finite then anyway). The scaled values are
        // precise: a compiler that fused x·ik - x0 (or x·ik - mean) into one fma
        // would leave the product's rounding error, not 0, for x = x0.
        precise float x0 = data_s[is] * ik;
        x0 = (isinf(x0) || isnan(x0)) ? 0.0 : x0;
        float s = 0.0;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            precise float y = data_s[is + i0 * p.nb00] * ik - x0;
            s += y;
        }
        const float mean = x0 + reduce_sum(s, tid) / n;
        float s2 = 0.0;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            precise float d = data_s[is + i0 * p.nb00] * ik - mean;
            s2 += d * d;
        }
        s2 = reduce_sum(s2, tid);
        const vec2 f = norm_factors(s2 / n, ik, k);
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            precise float d = data_s[is + i0 * p.nb00] * ik - mean;
            data_d[id + i0 * p.nb0] = d * f.x * f.y;
        }
#endif
    }
}
