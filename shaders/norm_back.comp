#version 450
// norm_back.comp: the row-wise backward ops of f32 tensors, one workgroup per row
// with shared-memory tree reductions, as the CPU kernels:
//
//   RMS_NORM_BACK (default): a = g (gradient of the output), b = x (forward input);
//     Sxx = sum x*x, Sxg = sum x*g, rrms = 1/sqrt(Sxx/n + eps),
//     dx = (g + x * (-Sxg / (Sxx + eps*n))) * rrms.
//   SOFT_MAX_BACK (define SOFT_MAX): a = g, b = y (forward output);
//     dot = sum y*g, dx = (g - dot) * y * scale.
//
// Every thread reads its elements after the reductions and writes them itself, so
// dst may share g's memory.
//
// Bindings: 0 = a, 1 = b, 2 = dst.
// Specialization: constant 0 = workgroup size (power of two, default 256).
// Dispatch: any x grid (grid-stride loop over rows).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer BufA { float data_a[]; };
layout(std430, binding = 1) readonly buffer BufB { float data_b[]; };
layout(std430, binding = 2) writeonly buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;
    uint nba0, nba1, nba2, nba3;   // a strides (floats)
    uint nbb0, nbb1, nbb2, nbb3;   // b strides (floats)
    uint nb0, nb1, nb2, nb3;       // dst strides (floats)
    uint offs_a, offs_b, offs_d;
    float param;                   // RMS_NORM_BACK: eps; SOFT_MAX_BACK: scale
    uint nrows;
} p;

shared float red0[gl_WorkGroupSize.x];
shared float red1[gl_WorkGroupSize.x];

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint wg = gl_WorkGroupSize.x;
    for (uint row = gl_WorkGroupID.x; row < p.nrows; row += gl_NumWorkGroups.x) {
        uint i1 = row % p.ne1;
        uint t = row / p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint ia = p.offs_a + i1 * p.nba1 + i2 * p.nba2 + i3 * p.nba3;
        uint ib = p.offs_b + i1 * p.nbb1 + i2 * p.nbb2 + i3 * p.nbb3;
        uint id = p.offs_d + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
        float s0 = 0.0;
        float s1 = 0.0;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            float a = data_a[ia + i0 * p.nba0];
            float b = data_b[ib + i0 * p.nbb0];
            s0 += a * b;
            s1 += b * b;
        }
        red0[tid] = s0;
        red1[tid] = s1;
        barrier();
        for (uint s = wg / 2u; s > 0u; s >>= 1) {
            if (tid < s) {
                red0[tid] += red0[tid + s];
                red1[tid] += red1[tid + s];
            }
            barrier();
        }
        float dot = red0[0];
        float sbb = red1[0];
        barrier();
#if defined(SOFT_MAX)
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            precise float v = (data_a[ia + i0 * p.nba0] - dot) * data_b[ib + i0 * p.nbb0] * p.param;
            data_d[id + i0 * p.nb0] = v;
        }
#else
        float n = float(p.ne0);
        float rrms = 1.0 / sqrt(sbb / n + p.param);
        float c = -dot / (sbb + p.param * n);
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            precise float v = (data_a[ia + i0 * p.nba0] + data_b[ib + i0 * p.nbb0] * c) * rrms;
            data_d[id + i0 * p.nb0] = v;
        }
#endif
    }
}
