#version 450
// norm.comp: NORM ((x - mean) / sqrt(var + eps)) or RMS_NORM (x / sqrt(mean(x²) +
// eps)) of f32 rows, one workgroup per row with a shared-memory tree reduction, so
// rows of any length (thousands of elements) work. Each thread reads and writes
// only its own elements after the reductions, so dst may alias src (in place).
//
// Defines: RMS for RMS_NORM (else NORM).
// Bindings: 0 = src, 1 = dst.
// Specialization: constant 0 = workgroup size (power of two, default 256).
// Dispatch: any x grid (grid-stride loop over rows).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer BufS { float data_s[]; };
layout(std430, binding = 1) buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;
    uint nb00, nb01, nb02, nb03;   // src strides (floats)
    uint nb0, nb1, nb2, nb3;       // dst strides (floats)
    uint offs_s, offs_d;
    float eps;
    uint nrows;
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
    const float n = float(p.ne0);
    for (uint row = gl_WorkGroupID.x; row < p.nrows; row += gl_NumWorkGroups.x) {
        uint i1 = row % p.ne1;
        uint t = row / p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint is = p.offs_s + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
        uint id = p.offs_d + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
#if defined(RMS)
        float s2 = 0.0;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            float x = data_s[is + i0 * p.nb00];
            s2 += x * x;
        }
        s2 = reduce_sum(s2, tid);
        float scale = 1.0 / sqrt(s2 / n + p.eps);
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            data_d[id + i0 * p.nb0] = data_s[is + i0 * p.nb00] * scale;
        }
#else
        float s = 0.0;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            s += data_s[is + i0 * p.nb00];
        }
        float mean = reduce_sum(s, tid) / n;
        float s2 = 0.0;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            float d = data_s[is + i0 * p.nb00] - mean;
            s2 += d * d;
        }
        s2 = reduce_sum(s2, tid);
        float scale = 1.0 / sqrt(s2 / n + p.eps);
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            data_d[id + i0 * p.nb0] = (data_s[is + i0 * p.nb00] - mean) * scale;
        }
#endif
    }
}
