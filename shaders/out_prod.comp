#version 450
// out_prod.comp: OUT_PROD, dst[i0, i1, i2, i3] = sum_l a[i0, l, i2/dps2, i3/dps3] * b[i1, l, i2, i3]
// (ggml_out_prod: a is broadcast over the batch dims by division). Each
// invocation computes 4 consecutive i0 by 4 consecutive i1, accumulating over l
// in f32 in increasing order, as the CPU reference does.
//
// Defines: A_F32, A_F16, A_Q4_0, A_Q4_1 or A_Q8_0 (dequant.glsl): the type of a,
// whose dim 0 is contiguous (for block types a multiple of the block size).
// Bindings: 0 = a, 1 = b (f32, any strides), 2 = dst (f32).
// Specialization: constant 0 = workgroup size (default 64).
// Dispatch: x = ceil(ne0 / (4 * workgroup size)), y = ceil(ne1 / 4),
// z = ne2 * ne3; grid-stride loops cover anything smaller.
// Units: a offsets/strides in array units of data_a, b and dst in floats.

#define A_BINDING 0
#include "dequant.glsl"

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 1) readonly buffer BufB { float data_b[]; };
layout(std430, binding = 2) writeonly buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, nk, nbatch, ne2;
    uint offs_a, offs_b, offs_d;
    uint nb01, nb02, nb03;          // a strides (units)
    uint nb10, nb11, nb12, nb13;    // b strides (floats)
    uint nb1, nb2, nb3;             // dst strides (floats)
    uint dps2, dps3;                // ne2 / ne02, ne3 / ne03
} p;

void main() {
#if defined(KQ_GRID_SHARED)
    kq_grid_init(); // the IQ3/IQ2/IQ1 grid into shared memory (iq_grids.glsl, iq3_grids.glsl)
#endif
    for (uint batch = gl_WorkGroupID.z; batch < p.nbatch; batch += gl_NumWorkGroups.z) {
        const uint i2 = batch % p.ne2;
        const uint i3 = batch / p.ne2;
        const uint a_batch = p.offs_a + (i2 / p.dps2) * p.nb02 + (i3 / p.dps3) * p.nb03;
        const uint b_batch = p.offs_b + i2 * p.nb12 + i3 * p.nb13;
        const uint d_batch = p.offs_d + i2 * p.nb2 + i3 * p.nb3;
        for (uint j0 = gl_WorkGroupID.y * 4u; j0 < p.ne1; j0 += gl_NumWorkGroups.y * 4u) {
            // Columns j0..j0+3 of b (clamped: extra ones are computed, not stored).
            uint bc[4];
            for (uint j = 0u; j < 4u; j++) {
                bc[j] = b_batch + min(j0 + j, p.ne1 - 1u) * p.nb10;
            }
            for (uint i0 = gl_GlobalInvocationID.x * 4u; i0 < p.ne0; i0 += gl_NumWorkGroups.x * gl_WorkGroupSize.x * 4u) {
                vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);
                const bool full = i0 + 4u <= p.ne0;
                for (uint l = 0u; l < p.nk; l++) {
                    const uint base = a_batch + l * p.nb01;
                    vec4 a;
#if defined(A_FLOAT)
                    if (full) {
                        a = a_load4(base, i0);
                    } else {
                        a = vec4(a_load1(base, i0),
                                 i0 + 1u < p.ne0 ? a_load1(base, i0 + 1u) : 0.0,
                                 i0 + 2u < p.ne0 ? a_load1(base, i0 + 2u) : 0.0, 0.0);
                    }
#else
                    a = a_load4(base, i0);
#endif
                    const uint bl = l * p.nb11;
                    acc0 += a * data_b[bc[0] + bl];
                    acc1 += a * data_b[bc[1] + bl];
                    acc2 += a * data_b[bc[2] + bl];
                    acc3 += a * data_b[bc[3] + bl];
                }
                const uint n = min(p.ne0 - i0, 4u);
                for (uint j = 0u; j < 4u && j0 + j < p.ne1; j++) {
                    const vec4 v = j == 0u ? acc0 : j == 1u ? acc1 : j == 2u ? acc2 : acc3;
                    const uint d = d_batch + (j0 + j) * p.nb1 + i0;
                    for (uint i = 0u; i < n; i++) {
                        data_d[d + i] = v[i];
                    }
                }
            }
        }
    }
}
