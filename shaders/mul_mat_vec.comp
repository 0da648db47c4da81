#version 450
// mul_mat_vec.comp: dst = A x B in ggml's mul_mat convention, one workgroup per
// output element: dst[b][c][r] = dot(A row r of batch (b / broadcast), B row c of
// batch b). A is f32, f16 or a block-quantized type (see dequant.glsl); B and dst
// are f32. Suited to matrix-vector products (few B columns); larger products get
// a tiled kernel.
//
// Defines: A_F32, A_F16, A_BF16, A_Q4_0, ... (dequant.glsl); B_F16 for an f16
// B (f32 otherwise); REDUCE_SUBGROUP to reduce
// with subgroupAdd (needs subgroup arithmetic in compute shaders) instead of a
// shared-memory tree.
// Bindings: 0 = A, 1 = B, 2 = dst.
// Specialization: constant 0 = workgroup size (power of two, default 32).
// Dispatch: x = rows (M), y = B columns (N), z = batches (ne12*ne13); each
// dimension may be smaller than the problem (grid-stride loops cover the rest).
//
// Units: A offsets/strides count array units of data_a (floats, halves or 16-bit
// words); the row stride of a block type is counted in words too. B and dst
// offsets/strides count floats. Rows of A and B are contiguous (nb00/nb10 = one
// element). For block types K is a multiple of the block size; for f32/f16 any K.

#define A_BINDING 0
#include "dequant.glsl"

#if defined(REDUCE_SUBGROUP)
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x = 32, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;
#define BLOCK_SIZE gl_WorkGroupSize.x

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

shared float partial[gl_WorkGroupSize.x];

// reduce returns the sum of v over the workgroup in thread 0 (other threads:
// unspecified). With REDUCE_SUBGROUP: subgroupAdd, then one shared-memory pass
// over the subgroup sums; otherwise a shared-memory tree.
float reduce(float v, uint tid) {
#if defined(REDUCE_SUBGROUP)
    v = subgroupAdd(v);
    if (gl_SubgroupInvocationID == 0u) {
        partial[gl_SubgroupID] = v;
    }
    barrier();
    if (tid == 0u) {
        for (uint i = 1u; i < gl_NumSubgroups; i++) {
            v += partial[i];
        }
    }
    barrier();
    return v;
#else
    partial[tid] = v;
    barrier();
    for (uint s = BLOCK_SIZE / 2u; s > 0u; s >>= 1) {
        if (tid < s) {
            partial[tid] += partial[tid + s];
        }
        barrier();
    }
    v = partial[0];
    barrier();
    return v;
#endif
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    for (uint batch = gl_WorkGroupID.z; batch < p.nbatch; batch += gl_NumWorkGroups.z) {
        const uint i12 = batch % p.ne12;
        const uint i13 = batch / p.ne12;
        const uint a_batch = p.offs_a + (i12 / p.r2) * p.nb02 + (i13 / p.r3) * p.nb03;
        const uint b_batch = p.offs_b + i12 * p.nb12 + i13 * p.nb13;
        const uint d_batch = p.offs_d + i12 * p.nb2 + i13 * p.nb3;

        for (uint col = gl_WorkGroupID.y; col < p.ncols_b; col += gl_NumWorkGroups.y) {
            const uint b_row = b_batch + col * p.nb11;
            for (uint row = gl_WorkGroupID.x; row < p.nrows; row += gl_NumWorkGroups.x) {
                const uint a_row = a_batch + row * p.nb01;
                float sum = 0.0;
                const uint k4 = p.ncols & ~3u;
                for (uint k = tid * 4u; k < k4; k += BLOCK_SIZE * 4u) {
                    vec4 a = a_load4(a_row, k);
                    vec4 b = vec4(float(data_b[b_row + k]), float(data_b[b_row + k + 1u]),
                                  float(data_b[b_row + k + 2u]), float(data_b[b_row + k + 3u]));
                    sum += dot(a, b);
                }
#if defined(A_FLOAT)
                for (uint k = k4 + tid; k < p.ncols; k += BLOCK_SIZE) {
                    sum += a_load1(a_row, k) * float(data_b[b_row + k]);
                }
#endif
                sum = reduce(sum, tid);
                if (tid == 0u) {
                    data_d[d_batch + col * p.nb1 + row] = sum;
                }
            }
        }
    }
}
