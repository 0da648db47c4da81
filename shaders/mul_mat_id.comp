#version 450
// mul_mat_id.comp: MUL_MAT_ID (mixture of experts). For every (slot, token) the
// expert id e = ids[slot, token] picks the weight matrix A[:, :, e], and
// dst[:, slot, token] = A[:, :, e] x B[:, slot % ne11, token], each output the dot
// product of a weight row and the activation row. One invocation per output row
// walks the whole weight row (as mul_mat_vec_rows.comp does), so there is no shared
// memory and no barrier. An id outside [0, n_expert) is never followed: its dst
// row gets zeros and the position slot + n_used*token is recorded in the status
// word (atomicMax of its complement: the host reports the first one, as the CPU
// backend does). Weights larger than one storage binding are bound a range of experts
// [e0, e1) at a time, one dispatch each (ops_moe.go); a dispatch computes the rows of its
// experts only (the bad ids' zeros and report in every one).
// Defines: one A_<type> of dequant.glsl.
// Bindings: 0 = A, 1 = B (f32), 2 = ids (i32), 3 = dst (f32), 4 = status (one
// uint, zero before the dispatch).
// Specialization: constant 0 = workgroup size (default 32).
// Dispatch: x = ceil(M / workgroup size), y = n_used, z = tokens; each dimension
// may be smaller than the problem (grid-stride loops cover the rest).

#define A_BINDING 0
#include "dequant.glsl"

layout(local_size_x = 32, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 1) readonly buffer BufB { float data_b[]; };
layout(std430, binding = 2) readonly buffer BufI { int data_i[]; };
layout(std430, binding = 3) writeonly buffer BufD { float data_d[]; };
layout(std430, binding = 4) buffer BufStatus { uint status; };

layout(push_constant) uniform Params {
    uint ncols;                  // K
    uint nrows;                  // M
    uint n_used;                 // slots per token (dst ne1)
    uint n_tokens;               // dst ne2
    uint n_expert;               // A ne2
    uint ne11;                   // activation rows per token (divides n_used)
    uint offs_a, offs_b, offs_i, offs_d;
    uint nb01, nb02;             // A strides (units)
    uint nb11, nb12;             // B strides (floats)
    uint nbi0, nbi1;             // id strides (ints)
    uint nb1, nb2;               // dst strides (floats)
    uint e0, e1;                 // the experts whose weights are bound (A starts at expert e0):
                                 // rows of other experts are left to other dispatches
} p;

void main() {
#if defined(KQ_GRID_SHARED)
    kq_grid_init(); // the IQ3/IQ2/IQ1 grid into shared memory (iq_grids.glsl, iq3_grids.glsl)
#endif
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint tok = gl_WorkGroupID.z; tok < p.n_tokens; tok += gl_NumWorkGroups.z) {
        for (uint slot = gl_WorkGroupID.y; slot < p.n_used; slot += gl_NumWorkGroups.y) {
            const int id = data_i[p.offs_i + slot * p.nbi0 + tok * p.nbi1];
            const uint d_row = p.offs_d + slot * p.nb1 + tok * p.nb2;
            if (id < 0 || uint(id) >= p.n_expert) {
                for (uint row = gl_GlobalInvocationID.x; row < p.nrows; row += stride) {
                    data_d[d_row + row] = 0.0;
                }
                if (gl_GlobalInvocationID.x == 0u) {
                    atomicMax(status, ~(slot + tok * p.n_used));
                }
                continue;
            }
            if (uint(id) < p.e0 || uint(id) >= p.e1) {
                continue; // another part's expert
            }
            const uint a_mat = p.offs_a + (uint(id) - p.e0) * p.nb02;
            const uint b_row = p.offs_b + (slot % p.ne11) * p.nb11 + tok * p.nb12;
            for (uint row = gl_GlobalInvocationID.x; row < p.nrows; row += stride) {
                const uint a_row = a_mat + row * p.nb01;
                vec4 acc = vec4(0.0);
                const uint k4 = p.ncols & ~3u;
                for (uint k = 0u; k < k4; k += 4u) {
                    vec4 b = vec4(data_b[b_row + k], data_b[b_row + k + 1u],
                                  data_b[b_row + k + 2u], data_b[b_row + k + 3u]);
                    acc += a_load4(a_row, k) * b;
                }
                float sum = (acc.x + acc.y) + (acc.z + acc.w);
#if defined(A_FLOAT)
                for (uint k = k4; k < p.ncols; k++) {
                    sum += a_load1(a_row, k) * data_b[b_row + k];
                }
#endif
                data_d[d_row + row] = sum;
            }
        }
    }
}
