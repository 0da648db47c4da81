#version 450
// mul_mat_vec_rows.comp: dst = A x B in ggml's mul_mat convention with one
// invocation per output row: each invocation walks a whole row of A against a
// column of B, with no shared memory and no barrier. For CPU-type devices
// (llvmpipe), which run the invocations of a subgroup as SIMD lanes and pay
// heavily for workgroup reductions. Same defines, bindings, push constants and
// units as mul_mat_vec.comp.
// Specialization: constant 0 = workgroup size (default 8).
// Dispatch: x = ceil(M / workgroup size), y = B columns (N), z = batches; each
// dimension may be smaller than the problem (grid-stride loops cover the rest).

#define A_BINDING 0
#include "dequant.glsl"

layout(local_size_x = 8, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#if defined(B_F16)
layout(std430, binding = 1) readonly buffer BufB { float16_t data_b[]; };
#else
layout(std430, binding = 1) readonly buffer BufB { float data_b[]; };
#endif
layout(std430, binding = 2) writeonly buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint ncols;                  // K = ne00 = ne10
    uint nrows;                  // M = ne01
    uint ncols_b;                // N = ne11
    uint nbatch;                 // ne12 * ne13
    uint offs_a, offs_b, offs_d;
    uint nb01, nb02, nb03;       // A strides (units)
    uint nb11, nb12, nb13;       // B strides (elements)
    uint nb1, nb2, nb3;          // dst strides (floats)
    uint ne12;                   // B batch dim 2 (to split the batch index)
    uint r2, r3;                 // broadcast ratios ne12/ne02, ne13/ne03
} p;

void main() {
#if defined(KQ_GRID_SHARED)
    kq_grid_init(); // the IQ3/IQ2/IQ1 grid into shared memory (iq_grids.glsl, iq3_grids.glsl)
#endif
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint batch = gl_WorkGroupID.z; batch < p.nbatch; batch += gl_NumWorkGroups.z) {
        const uint i12 = batch % p.ne12;
        const uint i13 = batch / p.ne12;
        const uint a_batch = p.offs_a + (i12 / p.r2) * p.nb02 + (i13 / p.r3) * p.nb03;
        const uint b_batch = p.offs_b + i12 * p.nb12 + i13 * p.nb13;
        const uint d_batch = p.offs_d + i12 * p.nb2 + i13 * p.nb3;
        for (uint col = gl_WorkGroupID.y; col < p.ncols_b; col += gl_NumWorkGroups.y) {
            const uint b_row = b_batch + col * p.nb11;
            for (uint row = gl_GlobalInvocationID.x; row < p.nrows; row += stride) {
                const uint a_row = a_batch + row * p.nb01;
                vec4 acc = vec4(0.0);
                const uint k4 = p.ncols & ~3u;
                for (uint k = 0u; k < k4; k += 4u) {
                    vec4 b = vec4(float(data_b[b_row + k]), float(data_b[b_row + k + 1u]),
                                  float(data_b[b_row + k + 2u]), float(data_b[b_row + k + 3u]));
                    acc += a_load4(a_row, k) * b;
                }
                float sum = (acc.x + acc.y) + (acc.z + acc.w);
#if defined(A_FLOAT)
                for (uint k = k4; k < p.ncols; k++) {
                    sum += a_load1(a_row, k) * float(data_b[b_row + k]);
                }
#endif
                data_d[d_batch + col * p.nb1 + row] = sum;
            }
        }
    }
}
