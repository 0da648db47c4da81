#version 450
// group_norm.comp: GROUP_NORM of f32 (ggml_group_norm), one workgroup per task (group g, index
// i3 of dim 3): the ne0·ne1·cpg elements of channels [g·cpg, min(g·cpg + cpg, ne2)) become
// (x - mean) / sqrt(var + eps), var the population variance. The mean (relative to the group's
// first element, exact for a group of equal values) and the sum of squared deviations are f32
// shared-memory tree reductions (the CPU sums in float64), the scale 1/sqrt(var + eps) applied
// last. Each thread reads and writes only its own elements in the last pass, so dst may alias src
// (in place). Groups past the channels are empty and write nothing.
//
// Bindings: 0 = src, 1 = dst.
// Specialization: constant 0 = workgroup size (power of two, default 256).
// Dispatch: any x grid (grid-stride loop over tasks).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer BufS { float data_s[]; };
layout(std430, binding = 1) buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;
    uint nb00, nb01, nb02, nb03;   // src strides (floats)
    uint nb0, nb1, nb2, nb3;       // dst strides (floats)
    uint offs_s, offs_d;
    float eps;
    uint ngroups;
    uint cpg;                      // channels per group
} p;

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

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint wg = gl_WorkGroupSize.x;
    const uint plane = p.ne0 * p.ne1;
    const uint ntasks = p.ngroups * p.ne3;
    for (uint task = gl_WorkGroupID.x; task < ntasks; task += gl_NumWorkGroups.x) {
        const uint g = task % p.ngroups;
        const uint i3 = task / p.ngroups;
        const uint start = g * p.cpg;
        if (start >= p.ne2) {
            continue; // uniform across the workgroup
        }
        const uint end = min(start + p.cpg, p.ne2);
        const uint n = plane * (end - start);
        const uint bs = p.offs_s + i3 * p.nb03;
        const uint bd = p.offs_d + i3 * p.nb3;
        // The mean is x0 + Σ(x - x0)/n, x0 the group's first element: a group of equal
        // values sums to exactly 0 and its mean is the value itself (a rounded f32 sum
        // of the values, divided by n, can be an ulp off, or overflow). A non-finite x0
        // is replaced by 0 (the plain sum, which is non-finite then anyway).
        float x0 = data_s[bs + start * p.nb02];
        x0 = (isinf(x0) || isnan(x0)) ? 0.0 : x0;
        float s = 0.0;
        for (uint e = tid; e < n; e += wg) {
            const uint i0 = e % p.ne0;
            const uint r = e / p.ne0;
            const uint i1 = r % p.ne1;
            const uint i2 = start + r / p.ne1;
            s += data_s[bs + i0 * p.nb00 + i1 * p.nb01 + i2 * p.nb02] - x0;
        }
        const float mean = x0 + reduce_sum(s, tid) / float(n);
        float s2 = 0.0;
        for (uint e = tid; e < n; e += wg) {
            const uint i0 = e % p.ne0;
            const uint r = e / p.ne0;
            const uint i1 = r % p.ne1;
            const uint i2 = start + r / p.ne1;
            const float d = data_s[bs + i0 * p.nb00 + i1 * p.nb01 + i2 * p.nb02] - mean;
            s2 += d * d;
        }
        const float scale = 1.0 / sqrt(reduce_sum(s2, tid) / float(n) + p.eps);
        for (uint e = tid; e < n; e += wg) {
            const uint i0 = e % p.ne0;
            const uint r = e / p.ne0;
            const uint i1 = r % p.ne1;
            const uint i2 = start + r / p.ne1;
            const float x = data_s[bs + i0 * p.nb00 + i1 * p.nb01 + i2 * p.nb02];
            data_d[bd + i0 * p.nb0 + i1 * p.nb1 + i2 * p.nb2] = (x - mean) * scale;
        }
    }
}
