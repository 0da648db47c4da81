#version 450
// cross_entropy.comp: CROSS_ENTROPY_LOSS and its gradient over f32 rows of
// logits and labels (same shape, rows contiguous in dim 0), as the CPU kernels.
//
//   CROSS_ENTROPY_LOSS (default): loss = -(1/nr) sum_rows sum_i labels_i *
//     log_softmax(logits)_i, a scalar. One workgroup, the rows in turn: the
//     threads stride over a row and meet in shared-memory trees (the row's max,
//     its sum of exp, its labelled log-softmax sum).
//   CROSS_ENTROPY_LOSS_BACK (define BACK): d logits = (softmax(logits) - labels)
//     * g / nr with g the scalar gradient of the loss; a workgroup per row.
// Rows are spread over the workgroup so that no invocation loops over a whole
// row (llvmpipe ends an invocation after 65535 loop iterations).
//
// exp and log are eltwise.glsl's (within about 2 ulp), not GLSL's built-ins.
//
// Bindings: 0 = logits, 1 = labels, 2 = dst, 3 = g (BACK; any buffer otherwise).
// Specialization: constant 0 = workgroup size (power of two, default 256).
// Dispatch: the loss one workgroup; BACK any x grid of workgroups (grid-stride
// loop over rows).

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

shared float red[gl_WorkGroupSize.x];

// reduce combines every thread's v (max when is_max, else sum) and returns the
// result to all threads; it must be reached by the whole workgroup.
float reduce(float v, bool is_max) {
    const uint tid = gl_LocalInvocationID.x;
    red[tid] = v;
    barrier();
    for (uint h = gl_WorkGroupSize.x / 2u; h > 0u; h >>= 1) {
        if (tid < h) {
            red[tid] = is_max ? max(red[tid], red[tid + h]) : red[tid] + red[tid + h];
        }
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint wg = gl_WorkGroupSize.x;
#if defined(BACK)
    float k = data_g[p.offs_g] / float(p.nrows);
    for (uint row = gl_WorkGroupID.x; row < p.nrows; row += gl_NumWorkGroups.x) {
#else
    float acc = 0.0;
    for (uint row = 0u; row < p.nrows; row++) {
#endif
        uint i1 = row % p.ne1;
        uint t = row / p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint il = p.offs_l + i1 * p.nbl1 + i2 * p.nbl2 + i3 * p.nbl3;
        uint iy = p.offs_y + i1 * p.nby1 + i2 * p.nby2 + i3 * p.nby3;
        float m = -ELT_INF;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            m = max(m, data_l[il + i0]);
        }
        m = reduce(m, true);
        float s = 0.0;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            s += elt_exp(data_l[il + i0] - m);
        }
        s = reduce(s, false);
#if defined(BACK)
        uint id = p.offs_d + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
        float inv = 1.0 / s;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            precise float v = (elt_exp(data_l[il + i0] - m) * inv - data_y[iy + i0]) * k;
            data_d[id + i0] = v;
        }
    }
#else
        float lse = elt_log(s);
        float rs = 0.0;
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            float y = data_y[iy + i0];
            if (y != 0.0) {
                rs += (data_l[il + i0] - m - lse) * y;
            }
        }
        acc += reduce(rs, false);
    }
    if (tid == 0u) {
        data_d[p.offs_d] = -acc / float(p.nrows);
    }
#endif
}
