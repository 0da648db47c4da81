#version 450
// cross_entropy.comp: CROSS_ENTROPY_LOSS and its gradient over f32 rows of
// logits and labels (same shape, rows contiguous in dim 0), as the CPU kernels.
//
//   CROSS_ENTROPY_LOSS (default): loss = -(1/nr) sum_rows sum_i labels_i *
//     log_softmax(logits)_i, a scalar. One workgroup: each thread takes whole rows
//     (max, sum of exp, log-sum-exp), then a shared-memory tree sums the threads.
//   CROSS_ENTROPY_LOSS_BACK (define BACK): d logits = (softmax(logits) - labels)
//     * g / nr with g the scalar gradient of the loss; one thread per row.
//
// exp and log are eltwise.glsl's (within about 2 ulp), not GLSL's built-ins.
//
// Bindings: 0 = logits, 1 = labels, 2 = dst, 3 = g (BACK; any buffer otherwise).
// Specialization: constant 0 = workgroup size (power of two, default 256).
// Dispatch: the loss one workgroup; BACK any x grid (grid-stride loop over rows).

#define TYPE_F32
#include "eltwise.glsl"

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer BufL { float data_l[]; };
layout(std430, binding = 1) readonly buffer BufY { float data_y[]; };
layout(std430, binding = 2) writeonly buffer BufD { float data_d[]; };
layout(std430, binding = 3) readonly buffer BufG { float data_g[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2;            // rows are (i1, i2, i3)
    uint nbl1, nbl2, nbl3;         // logits row strides (floats)
    uint nby1, nby2, nby3;         // labels row strides (floats)
    uint nb1, nb2, nb3;            // dst row strides (floats; BACK)
    uint offs_l, offs_y, offs_d, offs_g;
    uint nrows;
} p;

#if !defined(BACK)
shared float red[gl_WorkGroupSize.x];
#endif

void main() {
    const uint tid = gl_LocalInvocationID.x;
#if defined(BACK)
    float k = data_g[p.offs_g] / float(p.nrows);
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint row = gl_GlobalInvocationID.x; row < p.nrows; row += stride) {
#else
    float acc = 0.0;
    for (uint row = tid; row < p.nrows; row += gl_WorkGroupSize.x) {
#endif
        uint i1 = row % p.ne1;
        uint t = row / p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint il = p.offs_l + i1 * p.nbl1 + i2 * p.nbl2 + i3 * p.nbl3;
        uint iy = p.offs_y + i1 * p.nby1 + i2 * p.nby2 + i3 * p.nby3;
        float m = -ELT_INF;
        for (uint i0 = 0u; i0 < p.ne0; i0++) {
            m = max(m, data_l[il + i0]);
        }
        float s = 0.0;
        for (uint i0 = 0u; i0 < p.ne0; i0++) {
            s += elt_exp(data_l[il + i0] - m);
        }
#if defined(BACK)
        uint id = p.offs_d + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
        float inv = 1.0 / s;
        for (uint i0 = 0u; i0 < p.ne0; i0++) {
            precise float v = (elt_exp(data_l[il + i0] - m) * inv - data_y[iy + i0]) * k;
            data_d[id + i0] = v;
        }
    }
#else
        float lse = elt_log(s);
        float rs = 0.0;
        for (uint i0 = 0u; i0 < p.ne0; i0++) {
            float y = data_y[iy + i0];
            if (y != 0.0) {
                rs += (data_l[il + i0] - m - lse) * y;
            }
        }
        acc += rs;
    }
    red[tid] = acc;
    barrier();
    for (uint h = gl_WorkGroupSize.x / 2u; h > 0u; h >>= 1) {
        if (tid < h) {
            red[tid] += red[tid + h];
        }
        barrier();
    }
    if (tid == 0u) {
        data_d[p.offs_d] = -red[0] / float(p.nrows);
    }
#endif
}
