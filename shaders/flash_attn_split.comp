#version 450
#extension GL_EXT_control_flow_attributes : enable
// flash_attn_split.comp: FLASH_ATTN_EXT split over the keys ("flash decoding"), for steps with few
// query rows (a decode step) where one workgroup per row (flash_attn_ext.comp) leaves the device
// idle while each workgroup walks every key. Two passes, picked by a define:
//
// Pass 1 (no COMBINE): workgroup w takes split s = w % nsplit of the keys, [s*chunk, s*chunk +
// chunk) cut at nkv, for G query heads (h0 .. h0+G-1, which share their k head and their v head)
// of one query row (iq1, iq3). The G query rows sit in shared memory (rounded to f16 for f16 keys
// and to bf16 for bf16 keys, as the CPU converts them to K's vec-dot type; f32 for the block
// types: fa_kv.glsl). The chunk is walked in tiles of WG keys: thread t
// scores key c0+t against the G queries (the tile's keys staged in shared memory DS dimensions at
// a time by reads along the rows, each key element read once for the G heads; scale, soft cap,
// plus slope*mask; a key whose mask is -inf for a head is skipped for it), threads g < G take
// the tile max of head g (from the maxima of 8 threads over 8 keys each) and update its running
// max M_g and rescale factor exp(M_old - M_new); every thread turns its scores into weights p and
// adds them to its share of the sums; then thread t adds p_j * v_j[d] over the tile's keys for
// output elements d = t, t + WG, ... of all G heads (each value element read once for them). A
// tile that no head sees (all masked) costs its mask reads only. The workgroup writes its partial
// (the unnormalised accumulator acc[dv], M and the sum S, per head) to the scratch buffer.
//
// Pass 2 (COMBINE): one workgroup per (head, query row): M = max of the splits' M_s, then
// S = sum S_s exp(M_s - M) and out[d] = sum acc_s[d] exp(M_s - M) over the splits that saw a
// key (M_s > -inf); the sink logit (optional) joins the denominator only, as in
// flash_attn_ext.comp; a row with no key anywhere gives zeros.
//
// Partial layout (floats): partial (row, s) at (row * nsplit + s) * (dv + 2), row = (iq3 * nq +
// iq1) * nh + h (dst's row order): acc[0..dv), M, S.
//
// Defines: COMBINE for pass 2; else a K_ and a V_ type of fa_kv.glsl (f32, f16, bf16, q8_0,
// q4_0, q4_1, q5_0, q5_1, iq4_nl, q1_0, q2_0 and the types of kquants.glsl), MASK_F16 (else an
// f32 mask or none).
// Pass 1 bindings: 0 = q (f32), 1 = k, 2 = v, 3 = mask (any buffer when unused), 4 = partials
// (bound from their first word). Pass 1 specialization: constant 1 = VU (default 8), 2 = DS
// (default 16).
// Pass 2 bindings: 0 = partials, 1 = sinks (any buffer when unused), 2 = dst (f32, contiguous
// [dv, n_head, n_q, ne3]). Pass 2 specialization: constant 1 = CU, the splits whose partials are
// loaded together (default 8; 1 on software devices, which only compile them longer).
// Units: f32 tensors in floats, MXFP4 in bytes, the other K/V types in 16-bit words.
// Dispatch: any x grid (both passes loop over their work items).

#define WG 64u
#define MAX_D 512u
#define ACC_N (MAX_D / WG)
#define MAX_G 8u // query heads per workgroup; G * ceil(dv / WG) <= ACC_N
#define QS_N 2048u
// Each round of dependent loads is a memory latency that nothing hides in a decode step (few
// workgroups), so loads are issued in batches: QU query elements a thread, DS key dimensions
// staged at a time and the value elements of VU keys in pass 1, the partials of CU splits in
// pass 2 (DS, VU and CU are specialization constants: wide batches on GPUs, narrow ones on
// software devices, which gain nothing from them and compile unrolled batches slowly).
#define QU 8u

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

#include "types.glsl"

#if defined(COMBINE)

layout(constant_id = 1) const uint CU = 8u;

layout(std430, binding = 0) readonly buffer BufP { float data_p[]; };
layout(std430, binding = 1) readonly buffer BufS { float data_s[]; };
layout(std430, binding = 2) writeonly buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint dv, nh, nrows, nsplit;
    uint offs_p, offs_s, offs_d;
    uint flags; // 2: sinks
} p;

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const float ninf = uintBitsToFloat(0xff800000u);
    const uint stride = p.dv + 2u;
    for (uint row = gl_WorkGroupID.x; row < p.nrows; row += gl_NumWorkGroups.x) {
        uint pb = p.offs_p + row * p.nsplit * stride;
        // CU splits at a time, their loads issued together (one memory latency per CU splits);
        // the sums run over the splits in order.
        float M = ninf;
        for (uint s0 = 0u; s0 < p.nsplit; s0 += CU) {
            float ms[CU];
            [[unroll]] for (uint u = 0u; u < CU; u++) {
                ms[u] = ninf;
                if (s0 + u < p.nsplit) {
                    ms[u] = data_p[pb + (s0 + u) * stride + p.dv];
                }
            }
            [[unroll]] for (uint u = 0u; u < CU; u++) {
                M = max(M, ms[u]);
            }
        }
        float S = 0.0;
        float o[ACC_N];
        for (uint r = 0u; r < ACC_N; r++) {
            o[r] = 0.0;
        }
        if (M != ninf) {
            for (uint s0 = 0u; s0 < p.nsplit; s0 += CU) {
                float w[CU];
                float ss[CU];
                bool seen[CU]; // a split past nsplit, or one that saw no key, adds nothing
                [[unroll]] for (uint u = 0u; u < CU; u++) {
                    w[u] = 0.0;
                    ss[u] = 0.0;
                    seen[u] = false;
                    if (s0 + u < p.nsplit) {
                        uint b = pb + (s0 + u) * stride;
                        float ms = data_p[b + p.dv];
                        if (ms != ninf) {
                            seen[u] = true;
                            w[u] = exp(ms - M);
                            ss[u] = data_p[b + p.dv + 1u];
                        }
                    }
                }
                [[unroll]] for (uint u = 0u; u < CU; u++) {
                    if (seen[u]) {
                        S += w[u] * ss[u];
                    }
                }
                for (uint r = 0u; r < ACC_N; r++) {
                    uint d = tid + r * WG;
                    if (d < p.dv) {
                        float ov[CU];
                        [[unroll]] for (uint u = 0u; u < CU; u++) {
                            ov[u] = 0.0;
                            if (seen[u]) {
                                ov[u] = data_p[pb + (s0 + u) * stride + d];
                            }
                        }
                        [[unroll]] for (uint u = 0u; u < CU; u++) {
                            if (seen[u]) {
                                o[r] += w[u] * ov[u];
                            }
                        }
                    }
                }
            }
        }
        float g = 1.0;
        if ((p.flags & 2u) != 0u) {
            float sk = data_s[p.offs_s + row % p.nh];
            if (sk > M) {
                g = M == ninf ? 0.0 : exp(M - sk);
                S = S * g + 1.0;
            } else {
                S += exp(sk - M);
            }
        }
        float inv = S == 0.0 ? 0.0 : g / S;
        uint db = p.offs_d + row * p.dv;
        for (uint r = 0u; r < ACC_N; r++) {
            uint d = tid + r * WG;
            if (d < p.dv) {
                data_d[db + d] = o[r] * inv;
            }
        }
    }
}

#else // pass 1

layout(constant_id = 1) const uint VU = 8u;
layout(constant_id = 2) const uint DS = 16u;

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
layout(std430, binding = 4) writeonly buffer BufP { float data_p[]; };

layout(push_constant) uniform Params {
    uint dk, dv, nq, nkv, nh;
    uint q_nb1, q_nb2, q_nb3;      // floats
    uint k_nb1, k_nb2, k_nb3;      // k units
    uint v_nb1, v_nb2, v_nb3;      // v units
    uint m_nb1, m_nb2, m_nb3;      // mask units (rows dense)
    uint m_ne2, m_ne3;             // mask broadcast planes
    uint rk2, rv2;                 // query heads per k head, per v head
    uint offs_q, offs_k, offs_v, offs_m; // the partials start at word 0
    float scale;                   // divided by the soft cap when there is one
    float softcap;                 // 0: none
    float max_bias;                // > 0: ALiBi
    uint flags;                    // bit 0: mask; bits 8..15: G, the query heads per workgroup
                                   // (<= MAX_G, G*ceil(dv/WG) <= ACC_N, G*dk <= QS_N)
    uint nsplit, chunk;            // splits of the keys, keys per split (a multiple of WG)
    uint nwork;                    // workgroups' work items: nq * ne3 * (nh / G) * nsplit
} p;

shared float qs[QS_N];
shared float sc[MAX_G * WG];    // scores, then weights, of the tile's keys per head
shared float sl[MAX_G];         // ALiBi slope per head
shared uint smb[MAX_G];         // mask row start per head
shared float sM[MAX_G];         // running max per head
shared float sf[MAX_G];         // this tile's rescale factor per head
shared uint live[MAX_G];        // head sees a key of this tile
shared float red[WG];           // the first step of the per-head reductions
shared float ks[WG * (DS + 1u)]; // a slice of the tile's keys (rows padded against bank conflicts)

#include "fa_kv.glsl"

void main() {
#if defined(KQ_GRID_SHARED)
    kq_grid_init(); // the IQ3/IQ2/IQ1 grid into shared memory (iq_grids.glsl, iq3_grids.glsl)
#endif
    const uint tid = gl_LocalInvocationID.x;
    const float ninf = uintBitsToFloat(0xff800000u);
    const bool has_mask = (p.flags & 1u) != 0u;
    const uint G = (p.flags >> 8) & 0xffu;
    const uint ngh = p.nh / G;
    for (uint w = gl_WorkGroupID.x; w < p.nwork; w += gl_NumWorkGroups.x) {
        uint split = w % p.nsplit;
        uint t = w / p.nsplit;
        uint h0 = (t % ngh) * G;
        t /= ngh;
        uint iq1 = t % p.nq;
        uint iq3 = t / p.nq;

        uint qb = p.offs_q + iq1 * p.q_nb1 + h0 * p.q_nb2 + iq3 * p.q_nb3;
        // The G query rows, QU elements a thread with their loads issued together.
        const uint nqs = G * p.dk;
        for (uint e0 = 0u; e0 < nqs; e0 += QU * WG) {
            float qv[QU];
            [[unroll]] for (uint r = 0u; r < QU; r++) {
                uint e = e0 + tid + r * WG;
                qv[r] = 0.0;
                if (e < nqs) {
                    uint g = e / p.dk;
                    qv[r] = data_q[qb + g * p.q_nb2 + (e - g * p.dk)];
                }
            }
            [[unroll]] for (uint r = 0u; r < QU; r++) {
                uint e = e0 + tid + r * WG;
                if (e < nqs) {
                    qs[e] = fa_q_conv(qv[r]);
                }
            }
        }
        if (tid < G) {
            uint h = h0 + tid;
            float slope = 1.0;
            if (p.max_bias > 0.0) {
                uint n_log2 = 1u << uint(findMSB(p.nh));
                float e0 = -p.max_bias / float(n_log2);
                slope = h < n_log2 ? exp2(e0 * float(h + 1u)) : exp2(0.5 * e0 * float(2u * (h - n_log2) + 1u));
            }
            sl[tid] = slope;
            smb[tid] = p.offs_m + iq1 * p.m_nb1 + (h % p.m_ne2) * p.m_nb2 + (iq3 % p.m_ne3) * p.m_nb3;
            sM[tid] = ninf;
        }
        barrier();

        uint kb = p.offs_k + (h0 / p.rk2) * p.k_nb2 + iq3 * p.k_nb3;
        uint vb = p.offs_v + (h0 / p.rv2) * p.v_nb2 + iq3 * p.v_nb3;
        uint j0 = split * p.chunk;
        uint j1 = min(p.nkv, j0 + p.chunk);

        // Accumulator slot k of this thread is head k % G, output element tid + (k / G) * WG: the
        // G heads' slots of one element follow each other and share its value load.
        const uint nr = (p.dv + WG - 1u) / WG;
        float Sp[MAX_G]; // this thread's share of each head's sum of weights
        float acc[ACC_N];
        for (uint g = 0u; g < MAX_G; g++) {
            Sp[g] = 0.0;
        }
        for (uint k = 0u; k < ACC_N; k++) {
            acc[k] = 0.0;
        }
        for (uint c0 = j0; c0 < j1; c0 += WG) {
            uint j = c0 + tid;
            float s[MAX_G];
            bool any = false;
            for (uint g = 0u; g < MAX_G; g++) {
                s[g] = ninf;
                if (g < G && j < j1) {
                    float mv = has_mask ? sl[g] * mask_at(smb[g] + j) : 0.0;
                    if (mv != ninf) {
                        s[g] = mv; // the mask term, the score added below
                        any = true;
                    }
                }
            }
            // The dot products, DS dimensions at a time: the workgroup stages the tile's keys
            // (consecutive threads read consecutive elements of a key row), then thread t
            // multiplies key t's slice with the G query rows.
            float dot[MAX_G];
            for (uint g = 0u; g < MAX_G; g++) {
                dot[g] = 0.0;
            }
            uint nb = min(WG, j1 - c0);
            for (uint i0 = 0u; i0 < p.dk; i0 += DS) {
                uint ni = min(DS, p.dk - i0);
                [[unroll]] for (uint r = 0u; r < DS; r++) { // WG * DS elements, DS a thread
                    uint e = tid + r * WG;
                    uint key = e / DS;
                    uint i = e % DS;
                    if (key < nb && i < ni) {
                        ks[key * (DS + 1u) + i] = k_at(kb + (c0 + key) * p.k_nb1, i0 + i);
                    }
                }
                barrier();
                if (any) {
                    for (uint i = 0u; i < ni; i++) {
                        float kv = ks[tid * (DS + 1u) + i];
                        for (uint g = 0u; g < MAX_G; g++) {
                            if (g < G) {
                                dot[g] += kv * qs[g * p.dk + i0 + i];
                            }
                        }
                    }
                }
                barrier();
            }
            if (any) {
                for (uint g = 0u; g < MAX_G; g++) {
                    if (s[g] != ninf) {
                        float x = dot[g] * p.scale;
                        if (p.softcap != 0.0) {
                            x = p.softcap * tanh(clamp(x, -15.0, 15.0));
                        }
                        s[g] += x;
                    }
                }
            }
            for (uint g = 0u; g < MAX_G; g++) {
                if (g < G) {
                    sc[g * WG + tid] = s[g];
                }
            }
            barrier();
            // Tile max per head in two steps: thread t takes 8 keys of head t / 8, thread g < G
            // the 8 results of head g.
            {
                uint g = tid >> 3u;
                float m = ninf;
                if (g < G) {
                    for (uint i = 0u; i < 8u; i++) {
                        m = max(m, sc[g * WG + (tid & 7u) * 8u + i]);
                    }
                }
                red[tid] = m;
            }
            barrier();
            if (tid < G) {
                float m = ninf;
                for (uint i = 0u; i < 8u; i++) {
                    m = max(m, red[tid * 8u + i]);
                }
                float mo = sM[tid];
                float mn = max(mo, m);
                sf[tid] = mo == mn ? 1.0 : exp(mo - mn);
                sM[tid] = mn;
                live[tid] = m != ninf ? 1u : 0u;
            }
            barrier();
            bool tile_live = false;
            for (uint g = 0u; g < MAX_G; g++) {
                if (g < G && live[g] != 0u) {
                    tile_live = true;
                }
            }
            if (!tile_live) {
                continue; // no head sees a key of this tile (uniform: read from shared memory)
            }
            for (uint g = 0u; g < MAX_G; g++) {
                if (g < G) {
                    float x = sc[g * WG + tid];
                    float pj = x == ninf ? 0.0 : exp(x - sM[g]);
                    Sp[g] = Sp[g] * sf[g] + pj;
                    sc[g * WG + tid] = pj;
                }
            }
            for (uint k = 0u; k < ACC_N; k++) {
                if (k < G * nr) {
                    acc[k] *= sf[k % G];
                }
            }
            barrier();
            // VU keys at a time: the value loads of one output element for VU keys are issued
            // together, so that a workgroup waits for one load latency per VU keys instead of one
            // per key (a decode step runs few workgroups: nothing else hides it).
            uint jj = 0u;
            for (; jj + VU <= nb; jj += VU) {
                float vv[VU];
                for (uint k = 0u; k < ACC_N; k++) {
                    if (k < G * nr) {
                        uint g = k % G;
                        if (g == 0u) {
                            uint d = tid + (k / G) * WG;
                            [[unroll]] for (uint u = 0u; u < VU; u++) {
                                vv[u] = d < p.dv ? v_at(vb + (c0 + jj + u) * p.v_nb1, d) : 0.0;
                            }
                        }
                        [[unroll]] for (uint u = 0u; u < VU; u++) {
                            acc[k] += sc[g * WG + jj + u] * vv[u];
                        }
                    }
                }
            }
            for (; jj < nb; jj++) {
                uint vr = vb + (c0 + jj) * p.v_nb1;
                float vv = 0.0;
                for (uint k = 0u; k < ACC_N; k++) {
                    if (k < G * nr) {
                        uint g = k % G;
                        if (g == 0u) {
                            uint d = tid + (k / G) * WG;
                            vv = d < p.dv ? v_at(vr, d) : 0.0;
                        }
                        acc[k] += sc[g * WG + jj] * vv;
                    }
                }
            }
            barrier();
        }

        // The heads' sums of weights: the threads' shares through sc, added in two steps.
        for (uint g = 0u; g < MAX_G; g++) {
            if (g < G) {
                sc[g * WG + tid] = Sp[g];
            }
        }
        barrier();
        {
            uint g = tid >> 3u;
            float S = 0.0;
            if (g < G) {
                for (uint i = 0u; i < 8u; i++) {
                    S += sc[g * WG + (tid & 7u) * 8u + i];
                }
            }
            red[tid] = S;
        }
        barrier();
        uint rowb = ((iq3 * p.nq + iq1) * p.nh + h0) * p.nsplit + split; // partial of head h0
        uint stride = p.dv + 2u;
        if (tid < G) {
            float S = 0.0;
            for (uint i = 0u; i < 8u; i++) {
                S += red[tid * 8u + i];
            }
            uint b = (rowb + tid * p.nsplit) * stride;
            data_p[b + p.dv] = sM[tid];
            data_p[b + p.dv + 1u] = S;
        }
        for (uint k = 0u; k < ACC_N; k++) {
            uint g = k % G;
            uint d = tid + (k / G) * WG;
            if (k < G * nr && d < p.dv) {
                data_p[(rowb + g * p.nsplit) * stride + d] = acc[k];
            }
        }
        barrier(); // sc, sM and qs are reused by the next work item
    }
}

#endif
