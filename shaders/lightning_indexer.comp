#version 450
// lightning_indexer.comp: LIGHTNING_INDEXER (core.LightningIndexer, DeepSeek's sparse-attention
// indexer): out[j, t, s] = sum over h of max(q[:, h, t, s] . k[:, 0, j, s], 0) * w[h, t, s],
// plus the f16 mask[j, t, s mod nm]. A workgroup takes a tile of p.kt keys of one stream and a
// chunk of p.tc tokens at a time: its threads convert the tile's key rows to f32 into shared
// memory once (rows.glsl's loader: core/quant's arithmetic, bit for bit), transposed so that
// thread jl reads element i of its key at ks[i*kt + jl]; then thread jl scores its key against
// every token of the chunk, reading q (the same element in every thread) from the buffer. In
// the CPU reference kernel's order: each dot summed serially over the embedding from 0, the heads
// summed in order of h, the mask added last; every product and sum rounded on its own (precise:
// no fma). Rows too long for a tile in shared memory (p.kt = 0) are read from the key buffer,
// a key per thread.
//
// Defines: SRC_<type> for k (f32, f16, bf16, i32, q4_0, q4_1, q8_0 or a kquants.glsl type).
// Bindings: 0 = q (f32), 1 = k, 2 = weights (f32), 3 = mask (f16), 4 = dst (f32).
// Specialization: constant 0 = workgroup size (default 32; at least p.kt).
// Dispatch: any x grid (each workgroup loops over the items: key tiles x streams x token chunks).

#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = 32, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

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
    uint kt;                       // keys of a tile held in ks (kt*n <= LI_SHARED), 0: none
    uint tc;                       // tokens of a chunk
} p;

#define LI_SHARED 4096u
shared float ks[LI_SHARED];

void main() {
#if defined(KQ_GRID_SHARED)
    kq_grid_init();
#endif
    uint jl = gl_LocalInvocationID.x;
    uint wg = gl_WorkGroupSize.x;
    uint kt = p.kt != 0u ? p.kt : wg;
    uint tiles = (p.nkv + kt - 1u) / kt;
    uint chunks = (p.nt + p.tc - 1u) / p.tc;
    uint items = tiles * p.ns * chunks;
    for (uint it = gl_WorkGroupID.x; it < items; it += gl_NumWorkGroups.x) {
        uint tile = it % tiles;
        uint s = (it / tiles) % p.ns;
        uint chunk = it / (tiles * p.ns);
        uint j0 = tile * kt;
        uint kbase = p.offs_k + s * p.nbk3;
        if (p.kt != 0u) {
            barrier(); // the previous item's readers are done
            uint nk = min(kt, p.nkv - j0);
            for (uint e = jl; e < nk * p.n; e += wg) {
                uint i = e % p.n;
                uint jj = e / p.n;
                ks[i * kt + jj] = src_load(kbase + (j0 + jj) * p.nbk2, i, p.nbk0);
            }
            barrier();
        }
        uint j = j0 + jl;
        if (jl >= kt || j >= p.nkv) {
            continue; // after the item's barriers: the next item's are reached by every thread
        }
        uint krow = kbase + j * p.nbk2;
        uint ms = s % p.nm;
        uint t1 = min(p.nt, (chunk + 1u) * p.tc);
        for (uint t = chunk * p.tc; t < t1; t++) {
            precise float score = 0.0;
            for (uint h = 0u; h < p.nh; h++) {
                uint qb = p.offs_q + h * p.nbq1 + t * p.nbq2 + s * p.nbq3;
                precise float dot = 0.0;
                if (p.kt != 0u) {
                    for (uint i = 0u; i < p.n; i++) {
                        precise float prod = data_q[qb + i * p.nbq0] * ks[i * kt + jl];
                        dot += prod;
                    }
                } else {
                    for (uint i = 0u; i < p.n; i++) {
                        precise float prod = data_q[qb + i * p.nbq0] * src_load(krow, i, p.nbk0);
                        dot += prod;
                    }
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
