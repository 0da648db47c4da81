#version 450
// mul_mm.comp: tiled matrix-matrix product in ggml's mul_mat convention:
// dst[b][c][r] = dot(A row r of batch (b / broadcast), B row c of batch b), for
// products with many B columns (mul_mat_vec.comp handles the few-column case).
//
// Each workgroup computes a BM x BN tile of dst (BM rows of A by BN rows of B),
// walking K in steps of BK = 32: the A tile is loaded (and dequantized for
// f16/q4_0/q4_1/q8_0) into shared memory as f32, the B tile too, both stored
// k-major so that a thread reads the TM rows / TN columns it needs at one k as
// vec4s. Each invocation accumulates a TM x TN register block in f32.
//
// Defines: A_F32, A_F16, A_BF16, A_Q4_0, ... (see dequant.glsl); B_F16 for f16 B
// (f32 otherwise).
// Bindings: 0 = A, 1 = B (f32 or f16), 2 = dst (f32).
// Specialization constants:
//   0 = workgroup size, must equal (BM/TM)*(BN/TN)
//   1 = BM, 2 = BN (multiples of 4 and of TM / TN)
//   3 = TM, 4 = TN (multiples of 4)
//   5 = ALIGNED, bit flags: 1 when K, the offsets and the row/batch strides of B
//       (and of A for f32/f16) are multiples of 4 elements: rows are then read as
//       vec4; 2 when the dst offset and strides are multiples of 4: rows are
//       written as vec4.
// Dispatch: x = ceil(M/BM), y = ceil(N/BN), z = batches (ne12*ne13); each
// dimension may be smaller than needed (the workgroups loop over the rest).
//
// Push constants and units are those of mul_mat_vec.comp: A offsets/strides in
// array units of data_a (floats, halves or 16-bit words), B in its elements, dst
// in floats.
// Rows of A and B are contiguous; for block types K is a multiple of 32 (one
// block per tile row), for f32/f16 any K (the last tile is zero-padded).

#extension GL_EXT_control_flow_attributes : enable

#define A_BINDING 0
#include "dequant.glsl"

layout(local_size_x = 128, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint TM = 4;
layout(constant_id = 4) const uint TN = 8;
layout(constant_id = 5) const uint ALIGNED = 0;
#define BK 32u
#define WG gl_WorkGroupSize.x

#if defined(B_F16)
layout(std430, binding = 1) readonly buffer BufB { float16_t data_b[]; };
#else
layout(std430, binding = 1) readonly buffer BufB { float data_b[]; };
#endif
layout(std430, binding = 2) writeonly buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint K;                      // ne00 = ne10
    uint M;                      // ne01
    uint N;                      // ne11
    uint nbatch;                 // ne12 * ne13
    uint offs_a, offs_b, offs_d;
    uint nb01, nb02, nb03;       // A strides (units)
    uint nb11, nb12, nb13;       // B strides (elements)
    uint nb1, nb2, nb3;          // dst strides (floats)
    uint ne12;
    uint r2, r3;                 // broadcast ratios ne12/ne02, ne13/ne03
} p;

// Tiles, k-major: element (k, m) of the A tile is component m%4 of sa[k*BM/4 + m/4].
shared vec4 sa[BK * BM / 4u];
shared vec4 sb[BK * BN / 4u];

// With ALIGNED, B (and f32/f16 A) rows start on 4-element boundaries and K is a
// multiple of 4: rows are read as vec4 through these aliases of the bindings.
#if defined(B_F16)
layout(std430, binding = 1) readonly buffer BufB4 { f16vec4 data_b4[]; };
#else
layout(std430, binding = 1) readonly buffer BufB4 { vec4 data_b4[]; };
#endif
layout(std430, binding = 2) writeonly buffer BufD4 { vec4 data_d4[]; };
#if defined(A_F32)
layout(std430, binding = 0) readonly buffer BufA4 { vec4 data_a4[]; };
#elif defined(A_F16)
layout(std430, binding = 0) readonly buffer BufA4 { f16vec4 data_a4[]; };
#endif

// load_a returns elements k..k+3 (k a multiple of 4) of the A row at unit base,
// zero past K.
vec4 load_a(uint base, uint k) {
#if defined(A_FLOAT)
#if defined(A_F32) || defined(A_F16)
    if ((ALIGNED & 1u) != 0u) {
        return k < p.K ? vec4(data_a4[(base + k) / 4u]) : vec4(0.0);
    }
#endif
    if (k + 4u <= p.K) {
        return a_load4(base, k);
    }
    return vec4(k < p.K ? a_load1(base, k) : 0.0,
                k + 1u < p.K ? a_load1(base, k + 1u) : 0.0,
                k + 2u < p.K ? a_load1(base, k + 2u) : 0.0, 0.0);
#else
    return a_load4(base, k); // block types: K is a multiple of the block
#endif
}

// load_b returns elements k..k+3 of the B row at element base, zero past K.
vec4 load_b(uint base, uint k) {
    if ((ALIGNED & 1u) != 0u) {
        return k < p.K ? vec4(data_b4[(base + k) / 4u]) : vec4(0.0);
    }
    if (k + 4u <= p.K) {
        return vec4(float(data_b[base + k]), float(data_b[base + k + 1u]), float(data_b[base + k + 2u]),
                    float(data_b[base + k + 3u]));
    }
    return vec4(k < p.K ? float(data_b[base + k]) : 0.0,
                k + 1u < p.K ? float(data_b[base + k + 1u]) : 0.0,
                k + 2u < p.K ? float(data_b[base + k + 2u]) : 0.0, 0.0);
}

void main() {
#if defined(KQ_GRID_SHARED)
    kq_grid_init(); // the IQ3/IQ2/IQ1 grid into shared memory (iq_grids.glsl, iq3_grids.glsl)
#endif
    const uint tid = gl_LocalInvocationID.x;
    const uint NTM = BM / TM;
    const uint tm = tid % NTM;
    const uint tn = tid / NTM;
    const uint nmt = (p.M + BM - 1u) / BM;
    const uint nnt = (p.N + BN - 1u) / BN;

    for (uint batch = gl_WorkGroupID.z; batch < p.nbatch; batch += gl_NumWorkGroups.z) {
        const uint i12 = batch % p.ne12;
        const uint i13 = batch / p.ne12;
        const uint a_batch = p.offs_a + (i12 / p.r2) * p.nb02 + (i13 / p.r3) * p.nb03;
        const uint b_batch = p.offs_b + i12 * p.nb12 + i13 * p.nb13;
        const uint d_batch = p.offs_d + i12 * p.nb2 + i13 * p.nb3;

        for (uint nt = gl_WorkGroupID.y; nt < nnt; nt += gl_NumWorkGroups.y) {
            const uint n0 = nt * BN;
            for (uint mt = gl_WorkGroupID.x; mt < nmt; mt += gl_NumWorkGroups.x) {
                const uint m0 = mt * BM;
                vec4 acc[TN * TM / 4u];
                [[unroll]] for (uint i = 0u; i < TN * TM / 4u; i++) {
                    acc[i] = vec4(0.0);
                }

                for (uint k0 = 0u; k0 < p.K; k0 += BK) {
                    barrier();
                    // A tile: BM rows x BK in units of 4 rows x 4 k: four loads along
                    // k, transposed in registers into four vec4 stores along m.
                    [[dont_unroll]] for (uint r = 0u; r < (BM * BK / 16u + WG - 1u) / WG; r++) {
                        const uint u = tid + r * WG;
                        if (BM * BK / 16u % WG != 0u && u >= BM * BK / 16u) {
                            break;
                        }
                        const uint row = (u / (BK / 4u)) * 4u;
                        const uint kq = (u % (BK / 4u)) * 4u;
                        vec4 v[4];
                        [[unroll]] for (uint i = 0u; i < 4u; i++) {
                            v[i] = load_a(a_batch + min(m0 + row + i, p.M - 1u) * p.nb01, k0 + kq);
                        }
                        const uint s = kq * (BM / 4u) + row / 4u;
                        sa[s] = vec4(v[0].x, v[1].x, v[2].x, v[3].x);
                        sa[s + BM / 4u] = vec4(v[0].y, v[1].y, v[2].y, v[3].y);
                        sa[s + 2u * (BM / 4u)] = vec4(v[0].z, v[1].z, v[2].z, v[3].z);
                        sa[s + 3u * (BM / 4u)] = vec4(v[0].w, v[1].w, v[2].w, v[3].w);
                    }
                    // B tile: BN columns x BK, the same way.
                    [[dont_unroll]] for (uint r = 0u; r < (BN * BK / 16u + WG - 1u) / WG; r++) {
                        const uint u = tid + r * WG;
                        if (BN * BK / 16u % WG != 0u && u >= BN * BK / 16u) {
                            break;
                        }
                        const uint col = (u / (BK / 4u)) * 4u;
                        const uint kq = (u % (BK / 4u)) * 4u;
                        vec4 v[4];
                        [[unroll]] for (uint i = 0u; i < 4u; i++) {
                            v[i] = load_b(b_batch + min(n0 + col + i, p.N - 1u) * p.nb11, k0 + kq);
                        }
                        const uint s = kq * (BN / 4u) + col / 4u;
                        sb[s] = vec4(v[0].x, v[1].x, v[2].x, v[3].x);
                        sb[s + BN / 4u] = vec4(v[0].y, v[1].y, v[2].y, v[3].y);
                        sb[s + 2u * (BN / 4u)] = vec4(v[0].z, v[1].z, v[2].z, v[3].z);
                        sb[s + 3u * (BN / 4u)] = vec4(v[0].w, v[1].w, v[2].w, v[3].w);
                    }
                    barrier();

                    [[dont_unroll]] for (uint k = 0u; k < BK; k++) {
                        vec4 a[TM / 4u];
                        [[unroll]] for (uint i = 0u; i < TM / 4u; i++) {
                            a[i] = sa[k * (BM / 4u) + tm * (TM / 4u) + i];
                        }
                        [[unroll]] for (uint j4 = 0u; j4 < TN / 4u; j4++) {
                            const vec4 b = sb[k * (BN / 4u) + tn * (TN / 4u) + j4];
                            [[unroll]] for (uint i = 0u; i < TM / 4u; i++) {
                                const uint o = (j4 * 4u) * (TM / 4u) + i;
                                acc[o] += a[i] * b.x;
                                acc[o + TM / 4u] += a[i] * b.y;
                                acc[o + 2u * (TM / 4u)] += a[i] * b.z;
                                acc[o + 3u * (TM / 4u)] += a[i] * b.w;
                            }
                        }
                    }
                }

                const uint r0 = m0 + tm * TM;
                [[unroll]] for (uint j = 0u; j < TN; j++) {
                    const uint col = n0 + tn * TN + j;
                    if (col < p.N) {
                        const uint d = d_batch + col * p.nb1 + r0;
                        [[unroll]] for (uint i4 = 0u; i4 < TM / 4u; i4++) {
                            const vec4 v = acc[j * (TM / 4u) + i4];
                            const uint row = r0 + i4 * 4u;
                            if ((ALIGNED & 2u) != 0u && row + 4u <= p.M) {
                                data_d4[(d + i4 * 4u) / 4u] = v;
                            } else {
                                [[unroll]] for (uint i = 0u; i < 4u; i++) {
                                    if (row + i < p.M) {
                                        data_d[d + i4 * 4u + i] = v[i];
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
