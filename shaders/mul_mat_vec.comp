#version 450
// mul_mat_vec.comp: dst = A x B in ggml's mul_mat convention for few columns of B (the GPUs'
// mat-vec kernel): dst[b][c][r] = dot(A row r of batch (b / broadcast), B row c of batch b).
// A is f32, f16, bf16 or a block-quantized type (see dequant.glsl); B is f32 (f16 with B_F16),
// dst f32. Larger products get the tiled kernel, software devices mul_mat_vec_rows.comp.
//
// Each workgroup computes NUM_ROWS consecutive rows of one B column: every invocation takes
// chunks of 32 elements of K (a whole block, or a 32-element piece of a larger one, for the block
// types; 8 vec4 spread over the workgroup, so that neighbouring invocations read neighbouring
// words, for f32/f16/bf16), reads the chunk of B once for all NUM_ROWS rows and decodes the
// chunk of each row with its block's scale read once (q4_0 and q8_0 decode whole chunks here;
// the other types call a_load4 on one block, whose repeated scale loads the compiler merges).
// The loads of a chunk are independent of each other, so 8 B and NUM_ROWS x 8 A loads are in
// flight per invocation. The per-row sums are reduced over the workgroup at the end.
//
// Defines: A_F32, A_F16, A_BF16, A_Q4_0, ... (dequant.glsl); B_F16 for an f16 B (f32
// otherwise); REDUCE_SUBGROUP to reduce with subgroupAdd (needs subgroup arithmetic in compute
// shaders) instead of a shared-memory tree.
// Bindings: 0 = A, 1 = B, 2 = dst.
// Specialization: constant 0 = workgroup size (power of two, default 32); 1 = NUM_ROWS, rows
// per workgroup (default 1); 2 = ALIGNED: 1 when K, the offset and the row/batch strides of B
// (and of f32/f16 A) are multiples of 4 elements, so rows are read as vec4.
// Dispatch: x = ceil(M / NUM_ROWS), y = B columns (N), z = batches (ne12*ne13); each
// dimension may be smaller than the problem (grid-stride loops cover the rest).
//
// Units: A offsets/strides count array units of data_a (floats, halves or 16-bit words); the
// row stride of a block type is counted in words too. B offsets/strides count its elements, dst
// ones floats. Rows of A and B are contiguous (nb00/nb10 = one element). For block types K is a
// multiple of the block size (at least 32); for f32/f16/bf16 any K.

#extension GL_EXT_control_flow_attributes : enable

#define A_BINDING 0
#include "dequant.glsl"

#if defined(REDUCE_SUBGROUP)
#extension GL_KHR_shader_subgroup_arithmetic : require
#endif

layout(local_size_x = 32, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;
layout(constant_id = 1) const uint NUM_ROWS = 1;
layout(constant_id = 2) const uint ALIGNED = 0;
#define WG gl_WorkGroupSize.x
#define CHUNK 32u

#if defined(B_F16)
layout(std430, binding = 1) readonly buffer BufB { float16_t data_b[]; };
layout(std430, binding = 1) readonly buffer BufB4 { f16vec4 data_b4[]; };
#else
layout(std430, binding = 1) readonly buffer BufB { float data_b[]; };
layout(std430, binding = 1) readonly buffer BufB4 { vec4 data_b4[]; };
#endif
#if defined(A_F32)
layout(std430, binding = 0) readonly buffer BufA4 { vec4 data_a4[]; };
#elif defined(A_F16)
layout(std430, binding = 0) readonly buffer BufA4 { f16vec4 data_a4[]; };
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

shared float partial[NUM_ROWS * WG];

// load_b returns elements k..k+3 of the B row at element base (k + 4 <= K).
vec4 load_b(uint base, uint k) {
    if ((ALIGNED & 1u) != 0u) {
        return vec4(data_b4[(base + k) / 4u]);
    }
    return vec4(float(data_b[base + k]), float(data_b[base + k + 1u]), float(data_b[base + k + 2u]),
                float(data_b[base + k + 3u]));
}

// load_a returns elements k..k+3 of the A row at unit base (k + 4 <= K).
vec4 load_a(uint base, uint k) {
#if defined(A_F32) || defined(A_F16)
    if ((ALIGNED & 1u) != 0u) {
        return vec4(data_a4[(base + k) / 4u]);
    }
#endif
    return a_load4(base, k);
}

#if defined(A_FLOAT)
// Float types: the 8 vec4 of a chunk are spread over the workgroup (vec4 i of the chunk
// starting at k0 is at k0 + 4 * (i * WG + tid)), so each load of the workgroup is contiguous.
#define KSTEP (CHUNK * WG)
uint chunk_k(uint k0, uint tid, uint i) { return k0 + 4u * (i * WG + tid); }
#else
// Block types: an invocation's chunk is 32 consecutive elements (within one block).
#define KSTEP (CHUNK * WG)
uint chunk_k(uint k0, uint tid, uint i) { return k0 + tid * CHUNK + 4u * i; }
#endif

// The weights are dequantized before they are multiplied (as the CPU does: an infinite scale
// times a zero quant is NaN, not an infinite sum).
// chunk_dot returns the dot product of the 32 elements of the A row at unit a_row from element
// k0 (for block types: one block-aligned chunk) with b (the chunk's B elements, as chunk_k
// spreads them).
float chunk_dot(uint a_row, uint k0, uint tid, vec4 b[8]) {
#if defined(A_Q4_0)
    // 18-byte blocks: the f16 scale, then 16 bytes holding elements i (low nibble) and i + 16
    // (high nibble) of byte i.
    const uint k = k0 + tid * CHUNK;
    const uint ib = a_row + (k / QK4_0) * Q4_0_WORDS; // chunks are whole blocks
    const float d = half_bits_to_float(uint(data_a[ib]));
    float s = 0.0;
    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint w = uint(data_a[ib + 1u + 2u * i]) | (uint(data_a[ib + 2u + 2u * i]) << 16);
        vec4 lo = (vec4(uvec4(w, w >> 8, w >> 16, w >> 24) & 0xFu) - 8.0) * d;
        vec4 hi = (vec4(uvec4(w >> 4, w >> 12, w >> 20, w >> 28) & 0xFu) - 8.0) * d;
        s += dot(lo, b[i]) + dot(hi, b[4u + i]);
    }
    return s;
#elif defined(A_Q8_0)
    // 34-byte blocks: the f16 scale, then 32 signed bytes.
    const uint k = k0 + tid * CHUNK;
    const uint ib = a_row + (k / QK8_0) * Q8_0_WORDS;
    const float d = half_bits_to_float(uint(data_a[ib]));
    float s = 0.0;
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        int w = int(uint(data_a[ib + 1u + 2u * i]) | (uint(data_a[ib + 2u + 2u * i]) << 16));
        vec4 q = vec4(bitfieldExtract(w, 0, 8), bitfieldExtract(w, 8, 8), bitfieldExtract(w, 16, 8),
                      bitfieldExtract(w, 24, 8));
        s += dot(q * d, b[i]);
    }
    return s;
#else
    float s = 0.0;
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        s += dot(load_a(a_row, chunk_k(k0, tid, i)), b[i]);
    }
    return s;
#endif
}

void main() {
#if defined(KQ_GRID_SHARED)
    kq_grid_init(); // the IQ3/IQ2/IQ1 grid into shared memory (iq_grids.glsl, iq3_grids.glsl)
#endif
    const uint tid = gl_LocalInvocationID.x;
    const uint K = p.ncols;
#if defined(A_FLOAT)
    // Whole steps of CHUNK * WG elements, then a guarded remainder (vec4 by vec4), then the last
    // K % 4 elements.
    const uint kmain = K - K % KSTEP;
    const uint k4 = K & ~3u;
#else
    // K is a multiple of 32: an invocation's chunk lies wholly within K or past it (then the
    // invocation is done: the last step only).
    const uint kmain = K;
#endif
    for (uint batch = gl_WorkGroupID.z; batch < p.nbatch; batch += gl_NumWorkGroups.z) {
        const uint i12 = batch % p.ne12;
        const uint i13 = batch / p.ne12;
        const uint a_batch = p.offs_a + (i12 / p.r2) * p.nb02 + (i13 / p.r3) * p.nb03;
        const uint b_batch = p.offs_b + i12 * p.nb12 + i13 * p.nb13;
        const uint d_batch = p.offs_d + i12 * p.nb2 + i13 * p.nb3;

        for (uint col = gl_WorkGroupID.y; col < p.ncols_b; col += gl_NumWorkGroups.y) {
            const uint b_row = b_batch + col * p.nb11;
            for (uint row0 = gl_WorkGroupID.x * NUM_ROWS; row0 < p.nrows; row0 += gl_NumWorkGroups.x * NUM_ROWS) {
                // Rows past M read the last row (results not written): no branch in the loop.
                uint a_row[NUM_ROWS];
                float sum[NUM_ROWS];
                [[unroll]] for (uint r = 0u; r < NUM_ROWS; r++) {
                    a_row[r] = a_batch + min(row0 + r, p.nrows - 1u) * p.nb01;
                    sum[r] = 0.0;
                }
                for (uint k0 = 0u; k0 < kmain; k0 += KSTEP) {
#if !defined(A_FLOAT)
                    if (k0 + tid * CHUNK >= K) {
                        break;
                    }
#endif
                    vec4 b[8];
                    [[unroll]] for (uint i = 0u; i < 8u; i++) {
                        b[i] = load_b(b_row, chunk_k(k0, tid, i));
                    }
                    [[unroll]] for (uint r = 0u; r < NUM_ROWS; r++) {
                        sum[r] += chunk_dot(a_row[r], k0, tid, b);
                    }
                }
#if defined(A_FLOAT)
                // Remainder: the vec4 of the last partial step that lie within K.
                for (uint i = 0u; i < 8u; i++) {
                    const uint k = chunk_k(kmain, tid, i);
                    if (k + 4u <= K) {
                        const vec4 bv = load_b(b_row, k);
                        [[unroll]] for (uint r = 0u; r < NUM_ROWS; r++) {
                            sum[r] += dot(load_a(a_row[r], k), bv);
                        }
                    }
                }
                for (uint k = k4 + tid; k < K; k += WG) {
                    const float bv = float(data_b[b_row + k]);
                    [[unroll]] for (uint r = 0u; r < NUM_ROWS; r++) {
                        sum[r] += a_load1(a_row[r], k) * bv;
                    }
                }
#endif

                // Reduce each row's sums over the workgroup; invocation r writes row row0 + r.
#if defined(REDUCE_SUBGROUP)
                [[unroll]] for (uint r = 0u; r < NUM_ROWS; r++) {
                    sum[r] = subgroupAdd(sum[r]);
                }
                if (gl_NumSubgroups > 1u) {
                    if (gl_SubgroupInvocationID == 0u) {
                        [[unroll]] for (uint r = 0u; r < NUM_ROWS; r++) {
                            partial[r * WG + gl_SubgroupID] = sum[r];
                        }
                    }
                    barrier();
                    [[unroll]] for (uint r = 0u; r < NUM_ROWS; r++) {
                        float v = 0.0;
                        for (uint s = 0u; s < gl_NumSubgroups; s++) {
                            v += partial[r * WG + s];
                        }
                        sum[r] = v;
                    }
                    barrier();
                }
                [[unroll]] for (uint r = 0u; r < NUM_ROWS; r++) {
                    if (tid == r && row0 + r < p.nrows) {
                        data_d[d_batch + col * p.nb1 + row0 + r] = sum[r];
                    }
                }
#else
                [[unroll]] for (uint r = 0u; r < NUM_ROWS; r++) {
                    partial[r * WG + tid] = sum[r];
                }
                barrier();
                for (uint s = WG / 2u; s > 0u; s >>= 1) {
                    if (tid < s) {
                        [[unroll]] for (uint r = 0u; r < NUM_ROWS; r++) {
                            partial[r * WG + tid] += partial[r * WG + tid + s];
                        }
                    }
                    barrier();
                }
                if (tid < NUM_ROWS && row0 + tid < p.nrows) {
                    data_d[d_batch + col * p.nb1 + row0 + tid] = partial[tid * WG];
                }
                barrier();
#endif
            }
        }
    }
}
