#version 450
// set_rows.comp: SET_ROWS, one workgroup per source row (i1, i2, i3) of src (f32,
// or f16 with SRC_F16: each element widened exactly to f32, then stored as for f32):
// dst row (idx[i1, i2 % ni1, i3 % ni2], i2, i3) = src row (i1, i2, i3), converted
// to dst's type (quantized bit for bit as core/quant). As in the CPU's sequential
// loop, when several source rows name the same dst row the last one (largest i1)
// wins: a row is skipped if a later row of the same (i2, i3) has the same index.
// Rows whose index is outside [0, dst rows) (negative ones too) are skipped and the
// first such source row (row-major, as the CPU's loop meets it) is recorded in the
// status word as the complement of its number (atomicMax): the host reads it back
// and reports the same error as the CPU.
// dst is a view of the destination tensor; nothing else of it is touched.
//
// Defines: DST_F32, DST_F16, DST_BF16, DST_Q4_0, DST_Q4_1 or DST_Q8_0 (and the
// other block types of rows.glsl); SRC_F16 for f16 source rows (else f32).
// Bindings: 0 = src (f32 or f16), 1 = indices (i32 or i64: p.idx64), 2 = dst, 3 = status
// (one uint, zero before the dispatch; left zero when every index is in range).
// Specialization: constant 0 = workgroup size (power of two, default 64).
// Dispatch: any x grid (grid-stride loop over source rows).

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#if !defined(SRC_F16)
#define SRC_F32
#endif
#define SRC_BINDING 0
#define DST_BINDING 2
#include "rows.glsl"

layout(std430, binding = 1) readonly buffer BufI { uint data_i[]; };
layout(std430, binding = 3) buffer BufStatus { uint status; };

layout(push_constant) uniform Params {
    uint ne0;                      // row length (elements)
    uint ne01, ne02, ne03;         // src rows per dim
    uint nb00, nb01, nb02, nb03;   // src strides (elements)
    uint ine1, ine2;               // index dims 1 and 2 (broadcast over src dims 2, 3)
    uint nb10, nb11, nb12;         // index strides (32-bit words)
    uint nb0, nb1, nb2, nb3;       // dst strides (units; nb0 = block stride for blocks)
    uint nrows;                    // dst ne1
    uint offs_s, offs_i, offs_d;
    uint nsrc;                     // ne01*ne02*ne03
    uint idx64;
} p;

shared uint superseded;

// index returns row i1's index in (j2, j3) of the index tensor, or 0xffffffff when
// it is out of range.
uint index(uint i1, uint j2, uint j3) {
    uint ii = p.offs_i + i1 * p.nb10 + j2 * p.nb11 + j3 * p.nb12;
    uint r = data_i[ii];
    bool ok = p.idx64 != 0u ? (data_i[ii + 1u] == 0u && r < p.nrows) : (r < p.nrows);
    return ok ? r : 0xffffffffu;
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint wg = gl_WorkGroupSize.x;
    for (uint row = gl_WorkGroupID.x; row < p.nsrc; row += gl_NumWorkGroups.x) {
        uint i1 = row % p.ne01;
        uint t = row / p.ne01;
        uint i2 = t % p.ne02;
        uint i3 = t / p.ne02;
        uint j2 = i2 % p.ine1, j3 = i3 % p.ine2;
        uint r = index(i1, j2, j3);
        if (tid == 0u) {
            superseded = 0u;
            if (r == 0xffffffffu) {
                atomicMax(status, ~row);
            }
        }
        barrier();
        if (r != 0xffffffffu) {
            for (uint k = i1 + 1u + tid; k < p.ne01; k += wg) {
                if (index(k, j2, j3) == r) {
                    superseded = 1u;
                }
            }
        }
        barrier();
        bool write = r != 0xffffffffu && superseded == 0u;
        barrier();
        if (!write) {
            continue;
        }
        uint is = p.offs_s + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
        uint id = p.offs_d + r * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
#if defined(DST_BLOCK)
        for (uint b = tid; b < p.ne0 / DST_QK; b += wg) {
            float x[DST_QK];
            for (uint j = 0u; j < DST_QK; j++) {
                x[j] = src_load(is, b * DST_QK + j, p.nb00);
            }
            dst_store_block(id + b * p.nb0, x);
        }
#elif defined(DST_F32) && defined(SRC_F32)
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            dst_store_bits(id + i0 * p.nb0, src_bits(is, i0, p.nb00));
        }
#else
        for (uint i0 = tid; i0 < p.ne0; i0 += wg) {
            dst_store(id + i0 * p.nb0, src_load(is, i0, p.nb00));
        }
#endif
    }
}
