#version 450
// soft_max.comp: SOFT_MAX of f32 rows, one workgroup per row (shared-memory
// reductions): w = x*scale + slope*mask[i0, i1, i2 % ne12, i3 % ne13], then
// y = exp(w - max) / sum(exp(w - max)). slope is the ALiBi slope of head i2
// (core.AlibiSlope): exp2(e0*(h+1)) for h < n_log2, else exp2(e1*(2(h-n_log2)+1));
// 1 without max_bias. As on the CPU a row whose every w is -inf gives zeros (NaN
// when it holds a NaN). Each thread writes only elements it read, after the
// reductions, so dst may alias src (in place). With sinks (p.has_sinks) head i2's
// sink logit s joins the maximum and the denominator only:
// y = exp(w - m) / (sum(exp(w - m)) + exp(s - m)), m = max(max w, s).
//
// Defines: MASK_F16 for an f16 mask (else f32 or none).
// Bindings: 0 = src, 1 = mask (any buffer when p.has_mask is 0), 2 = dst,
// 3 = sinks (f32; any buffer when p.has_sinks is 0).
// Specialization: constant 0 = workgroup size (power of two, default 256).
// Dispatch: any x grid (grid-stride loop over rows).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#define SRC_NONE
#define DST_NONE
#if defined(MASK_F16)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "rows.glsl"

layout(std430, binding = 0) readonly buffer BufS { float data_s[]; };
#if defined(MASK_F16)
layout(std430, binding = 1) readonly buffer BufM { uint16_t data_m[]; };
float mask_at(uint i) { return half_to_float(uint(data_m[i])); }
#else
layout(std430, binding = 1) readonly buffer BufM { float data_m[]; };
float mask_at(uint i) { return data_m[i]; }
#endif
layout(std430, binding = 2) buffer BufD { float data_d[]; };
layout(std430, binding = 3) readonly buffer BufK { float data_k[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;
    uint nb00, nb01, nb02, nb03;   // src strides (floats)
    uint nb0, nb1, nb2, nb3;       // dst strides (floats)
    uint nb11, nb12, nb13;         // mask row strides (units; rows are dense)
    uint ne12, ne13;               // mask dims 2 and 3 (broadcast)
    uint offs_s, offs_m, offs_d;
    float scale;
    uint has_mask;
    uint alibi;                    // max_bias > 0
    float e0, e1;                  // ALiBi exponents per head
    uint n_log2;
    uint nrows;
    uint has_sinks, offs_k, nbk;   // sinks: offset and stride (floats)
} p;

shared float red[gl_WorkGroupSize.x];
shared float red2[gl_WorkGroupSize.x];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint wg = gl_WorkGroupSize.x;
    const float ninf = uintBitsToFloat(0xff800000u);
    for (uint row = gl_WorkGroupID.x; row < p.nrows; row += gl_NumWorkGroups.x) {
        uint i1 = row % p.ne1;
        uint t = row / p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint is = p.offs_s + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
        uint id = p.offs_d + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
        uint im = p.offs_m + i1 * p.nb11 + (i2 % p.ne12) * p.nb12 + (i3 % p.ne13) * p.nb13;
        float slope = 1.0;
        if (p.alibi != 0u) {
            slope = i2 < p.n_log2 ? exp2(p.e0 * float(i2 + 1u)) : exp2(p.e1 * float(2u * (i2 - p.n_log2) + 1u));
        }

        // max (NaNs skipped) and whether a NaN occurs
        float mx = ninf;
        float nan = 0.0;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            float w = data_s[is + i0 * p.nb00] * p.scale;
            if (p.has_mask != 0u) {
                w += slope * mask_at(im + i0);
            }
            if (isnan(w)) {
                nan = 1.0;
            } else if (w > mx) {
                mx = w;
            }
        }
        red[tid] = mx;
        red2[tid] = nan;
        barrier();
        for (uint s = wg / 2u; s > 0u; s >>= 1) {
            if (tid < s) {
                red[tid] = max(red[tid], red[tid + s]);
                red2[tid] = max(red2[tid], red2[tid + s]);
            }
            barrier();
        }
        mx = red[0];
        nan = red2[0];
        barrier();
        float sink = ninf;
        if (p.has_sinks != 0u) {
            sink = data_k[p.offs_k + i2 * p.nbk];
            if (isnan(sink)) {
                nan = 1.0;
            }
            mx = max(mx, sink);
        }

        if (nan != 0.0 || isinf(mx)) {
            // a NaN or +inf poisons the row (exp(NaN), inf - inf) as on the CPU; a row whose
            // every w is -inf gives zeros
            float fill = (nan != 0.0 || mx > 0.0) ? uintBitsToFloat(0x7fc00000u) : 0.0;
            for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
                data_d[id + i0 * p.nb0] = fill;
            }
            continue;
        }

        float sum = 0.0;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            float w = data_s[is + i0 * p.nb00] * p.scale;
            if (p.has_mask != 0u) {
                w += slope * mask_at(im + i0);
            }
            sum += w == ninf ? 0.0 : exp(w - mx);
        }
        red[tid] = sum;
        barrier();
        for (uint s = wg / 2u; s > 0u; s >>= 1) {
            if (tid < s) {
                red[tid] += red[tid + s];
            }
            barrier();
        }
        float inv = 1.0 / (red[0] + (sink == ninf ? 0.0 : exp(sink - mx)));
        barrier();

        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            float w = data_s[is + i0 * p.nb00] * p.scale;
            if (p.has_mask != 0u) {
                w += slope * mask_at(im + i0);
            }
            data_d[id + i0 * p.nb0] = (w == ninf ? 0.0 : exp(w - mx)) * inv;
        }
    }
}
