#version 450
// flash_attn_ext.comp: FLASH_ATTN_EXT (core.FlashAttnExt), after the CPU kernel
// (backends/cpu/ops_attn.go). One workgroup per query row (iq1, head h, batch
// iq3), grid-stride over rows. The query row sits in shared memory (rounded to
// f16 for f16 keys and to bf16 for bf16 keys, as the CPU converts it to K's vec-dot
// type; f32 for the block types: fa_kv.glsl); the keys are
// walked in tiles of WG rows: thread t scores key c0+t (scale, soft cap, plus
// slope*mask; a -inf mask entry skips the key), the tile max updates the running
// max M, every running quantity is rescaled by exp(M_old - M), and each thread
// adds p_j * v_j for the output elements it owns (d = t, t + WG, ...). The sum of
// the weights is kept per thread and reduced once at the end; the sink logit
// (optional) joins the denominator only. A row with no key left gives zeros.
// Nothing like the full KQ matrix is stored: one tile of weights in shared memory.
//
// Defines: a K_ and a V_ type of fa_kv.glsl (f32, f16, bf16, q8_0, q4_0, q4_1, q5_0,
// q5_1, iq4_nl, q1_0, q2_0 and the types of kquants.glsl), MASK_F16 (else an f32 mask or none).
// Bindings: 0 = q (f32), 1 = k, 2 = v, 3 = mask, 4 = sinks (any buffer when
// unused), 5 = dst (f32, contiguous [dv, n_head, n_q, ne3]).
// Units: f32 tensors in floats, MXFP4 in bytes, the other K/V types in 16-bit words.
// Dispatch: any x grid.

#define WG 64u
#define MAX_D 512u  // value head size (the accumulators)
#define MAX_DK 1024u // key head size (the query in shared memory): DeepSeek's MLA has 576
#define ACC_N (MAX_D / WG)

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#include "types.glsl"

layout(std430, binding = 0) readonly buffer BufQ { float data_q[]; };

#if defined(K_F32)
layout(std430, binding = 1) readonly buffer BufK { float data_k[]; };
#else
layout(std430, binding = 1) readonly buffer BufK { uint16_t data_k[]; };
#endif
#if defined(V_F32)
layout(std430, binding = 2) readonly buffer BufV { float data_v[]; };
#else
layout(std430, binding = 2) readonly buffer BufV { uint16_t data_v[]; };
#endif
#if defined(MASK_F16)
layout(std430, binding = 3) readonly buffer BufM { uint16_t data_m[]; };
float mask_at(uint i) { return half_bits_to_float(uint(data_m[i])); }
#else
layout(std430, binding = 3) readonly buffer BufM { float data_m[]; };
float mask_at(uint i) { return data_m[i]; }
#endif
layout(std430, binding = 4) readonly buffer BufS { float data_s[]; };
layout(std430, binding = 5) writeonly buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint dk, dv, nq, nkv, nh;
    uint q_nb1, q_nb2, q_nb3;      // floats
    uint k_nb1, k_nb2, k_nb3;      // k units
    uint v_nb1, v_nb2, v_nb3;      // v units
    uint m_nb1, m_nb2, m_nb3;      // mask units (rows dense)
    uint m_ne2, m_ne3;             // mask broadcast planes
    uint rk2, rv2;                 // query heads per k head, per v head
    uint offs_q, offs_k, offs_v, offs_m, offs_s, offs_d;
    float scale;                   // divided by the soft cap when there is one
    float softcap;                 // 0: none
    float max_bias;                // > 0: ALiBi
    uint flags;                    // 1: mask, 2: sinks
    uint nrows;
} p;

shared float qs[MAX_DK];
shared float sc[WG];
shared float red[WG];

#include "fa_kv.glsl"

// k_dot is the dot product of key row 'row' (first unit) with the query in qs. The block types
// take each block's scale once: d * sum(c_j q_j) (+ m * sum(q_j) for q4_1 and q5_1).
float k_dot(uint row) {
    float s = 0.0;
#if defined(K_F32)
    for (uint i = 0u; i < p.dk; i++) {
        s += data_k[row + i] * qs[i];
    }
#elif defined(K_F16) || defined(K_BF16)
    for (uint i = 0u; i < p.dk; i++) {
        s += k_at(row, i) * qs[i];
    }
#elif defined(FA_K_KQ)
    // kquants.glsl's types: four elements at a time (one sub-block's parameters, one grid entry).
    for (uint i = 0u; i < p.dk; i += 4u) {
        vec4 kv = kq_load4(row + (i / KQ_QK) * KQ_WORDS, i % KQ_QK);
        s += dot(kv, vec4(qs[i], qs[i + 1u], qs[i + 2u], qs[i + 3u]));
    }
#else
    for (uint b = 0u; b < p.dk / K_QK; b++) {
        uint w0 = row + b * K_WORDS;
        vec2 dm = fa_dm(FA_K, K_T, w0);
        float bs = 0.0;
        float qsum = 0.0;
        for (uint j = 0u; j < K_QK; j++) {
            float q = qs[b * K_QK + j];
            bs += fa_code(FA_K, K_T, w0, j) * q;
            qsum += q;
        }
        s += dm.x * bs;
        if (K_T == FA_TQ4_1 || K_T == FA_TQ5_1) {
            s += dm.y * qsum;
        }
    }
#endif
    return s;
}

void main() {
#if defined(KQ_GRID_SHARED)
    kq_grid_init(); // the IQ3/IQ2/IQ1 grid into shared memory (iq_grids.glsl, iq3_grids.glsl)
#endif
    const uint tid = gl_LocalInvocationID.x;
    const float ninf = uintBitsToFloat(0xff800000u);
    const bool has_mask = (p.flags & 1u) != 0u;
    const bool has_sinks = (p.flags & 2u) != 0u;
    for (uint row = gl_WorkGroupID.x; row < p.nrows; row += gl_NumWorkGroups.x) {
        uint iq1 = row % p.nq;
        uint t = row / p.nq;
        uint h = t % p.nh;
        uint iq3 = t / p.nh;

        uint qb = p.offs_q + iq1 * p.q_nb1 + h * p.q_nb2 + iq3 * p.q_nb3;
        for (uint i = tid; i < p.dk; i += WG) {
            qs[i] = fa_q_conv(data_q[qb + i]);
        }
        barrier();

        uint kb = p.offs_k + (h / p.rk2) * p.k_nb2 + iq3 * p.k_nb3;
        uint vb = p.offs_v + (h / p.rv2) * p.v_nb2 + iq3 * p.v_nb3;
        uint mb = p.offs_m + iq1 * p.m_nb1 + (h % p.m_ne2) * p.m_nb2 + (iq3 % p.m_ne3) * p.m_nb3;
        float slope = 1.0;
        if (p.max_bias > 0.0) {
            uint n_log2 = 1u << uint(findMSB(p.nh));
            float e0 = -p.max_bias / float(n_log2);
            slope = h < n_log2 ? exp2(e0 * float(h + 1u)) : exp2(0.5 * e0 * float(2u * (h - n_log2) + 1u));
        }

        float M = ninf;
        float S = 0.0; // this thread's share of the weights' sum
        float acc[ACC_N];
        for (uint r = 0u; r < ACC_N; r++) {
            acc[r] = 0.0;
        }
        for (uint c0 = 0u; c0 < p.nkv; c0 += WG) {
            uint j = c0 + tid;
            float s = ninf;
            if (j < p.nkv) {
                float mv = has_mask ? slope * mask_at(mb + j) : 0.0;
                if (mv != ninf) {
                    s = k_dot(kb + j * p.k_nb1) * p.scale;
                    if (p.softcap != 0.0) {
                        s = p.softcap * tanh(clamp(s, -15.0, 15.0));
                    }
                    s += mv;
                }
            }
            red[tid] = s;
            barrier();
            for (uint w = WG / 2u; w > 0u; w >>= 1) {
                if (tid < w) {
                    red[tid] = max(red[tid], red[tid + w]);
                }
                barrier();
            }
            float tmax = red[0];
            barrier();
            if (tmax == ninf) {
                continue; // every key of the tile is masked (uniform: read from shared memory)
            }
            float mn = max(M, tmax);
            float f = M == ninf ? 0.0 : exp(M - mn);
            float pj = s == ninf ? 0.0 : exp(s - mn);
            M = mn;
            S = S * f + pj;
            sc[tid] = pj;
            for (uint r = 0u; r < ACC_N; r++) {
                acc[r] *= f;
            }
            barrier();
            uint nb = min(WG, p.nkv - c0);
            for (uint jj = 0u; jj < nb; jj++) {
                float w = sc[jj];
                if (w == 0.0) {
                    continue;
                }
                uint vr = vb + (c0 + jj) * p.v_nb1;
                for (uint r = 0u; r < ACC_N; r++) {
                    uint d = tid + r * WG;
                    if (d < p.dv) {
                        acc[r] += w * v_at(vr, d);
                    }
                }
            }
            barrier();
        }

        red[tid] = S;
        barrier();
        for (uint w = WG / 2u; w > 0u; w >>= 1) {
            if (tid < w) {
                red[tid] += red[tid + w];
            }
            barrier();
        }
        S = red[0];
        barrier();

        float g = 1.0;
        if (has_sinks) {
            float sk = data_s[p.offs_s + h];
            if (sk > M) {
                g = M == ninf ? 0.0 : exp(M - sk);
                S = S * g + 1.0;
            } else {
                S += exp(sk - M);
            }
        }
        float inv = S == 0.0 ? 0.0 : g / S;
        uint db = p.offs_d + ((iq3 * p.nq + iq1) * p.nh + h) * p.dv;
        for (uint r = 0u; r < ACC_N; r++) {
            uint d = tid + r * WG;
            if (d < p.dv) {
                data_d[db + d] = acc[r] * inv;
            }
        }
    }
}
