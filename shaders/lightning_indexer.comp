#version 450
// lightning_indexer.comp: LIGHTNING_INDEXER (core.LightningIndexer, DeepSeek's sparse-attention
// indexer): out[j, t, s] = sum over h of max(q[:, h, t, s] . k[:, 0, j, s], 0) * w[h, t, s],
// plus the f16 mask[j, t, s mod nm]. A workgroup takes one key row (j, s) at a time: its threads
// convert the row to f32 into shared memory once (rows.glsl's loader: core/quant's arithmetic,
// bit for bit), then each thread scores tokens t = tid, tid + wg, ... In the CPU reference
// kernel's order: each dot summed serially over the embedding from 0, the heads summed in
// order of h, the mask added last; every product and sum rounded on its own (precise: no fma).
// A row longer than LI_KMAX is read from the key buffer directly (p.kshared = 0).
//
// Defines: SRC_<type> for k (f32, f16, bf16, i32, q4_0, q4_1, q8_0 or a kquants.glsl type).
// Bindings: 0 = q (f32), 1 = k, 2 = weights (f32), 3 = mask (f16), 4 = dst (f32).
// Specialization: constant 0 = workgroup size (default 64).
// Dispatch: any x grid (each workgroup loops over the key rows j + nkv*s).

#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#define SRC_BINDING 1
#define DST_NONE
#include "rows.glsl"

layout(std430, binding = 0) readonly buffer BufQ { float data_q[]; };
layout(std430, binding = 2) readonly buffer BufW { float data_w[]; };
layout(std430, binding = 3) readonly buffer BufM { uint16_t data_m[]; };
layout(std430, binding = 4) writeonly buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint n, nh, nt, ns, nkv, nm;   // embedding, heads, tokens, streams, keys, mask streams
    uint nbq0, nbq1, nbq2, nbq3;   // q strides (floats)
    uint nbk0, nbk2, nbk3;         // k strides (array units; nbk0 = block stride for blocks)
    uint nbw0, nbw1, nbw3;         // weights strides (floats)
    uint nbm0, nbm1, nbm3;         // mask strides (halves)
    uint nbd0, nbd1, nbd3;         // dst strides (floats)
    uint offs_q, offs_k, offs_w, offs_m, offs_d;
    uint kshared;                  // the key row fits ks (n <= LI_KMAX)
} p;

#define LI_KMAX 1024u
shared float ks[LI_KMAX];

float key(uint krow, uint i) {
    return p.kshared != 0u ? ks[i] : src_load(krow, i, p.nbk0);
}

void main() {
#if defined(KQ_GRID_SHARED)
    kq_grid_init();
#endif
    uint tid = gl_LocalInvocationID.x;
    uint wg = gl_WorkGroupSize.x;
    uint items = p.nkv * p.ns;
    for (uint it = gl_WorkGroupID.x; it < items; it += gl_NumWorkGroups.x) {
        uint j = it % p.nkv;
        uint s = it / p.nkv;
        uint krow = p.offs_k + j * p.nbk2 + s * p.nbk3;
        if (p.kshared != 0u) {
            barrier(); // the previous row's readers are done
            for (uint i = tid; i < p.n; i += wg) {
                ks[i] = src_load(krow, i, p.nbk0);
            }
            barrier();
        }
        uint ms = s % p.nm;
        for (uint t = tid; t < p.nt; t += wg) {
            precise float score = 0.0;
            for (uint h = 0u; h < p.nh; h++) {
                uint qb = p.offs_q + h * p.nbq1 + t * p.nbq2 + s * p.nbq3;
                precise float dot = 0.0;
                for (uint i = 0u; i < p.n; i++) {
                    precise float prod = data_q[qb + i * p.nbq0] * key(krow, i);
                    dot += prod;
                }
                // max(dot, 0) with a NaN kept, as the CPU's
                float r = dot < 0.0 ? 0.0 : dot;
                precise float wr = r * data_w[p.offs_w + h * p.nbw0 + t * p.nbw1 + s * p.nbw3];
                score += wr;
            }
            float mv = half_to_float(uint(data_m[p.offs_m + j * p.nbm0 + t * p.nbm1 + ms * p.nbm3]));
            precise float o = score + mv;
            data_d[p.offs_d + j * p.nbd0 + t * p.nbd1 + s * p.nbd3] = o;
        }
    }
}
