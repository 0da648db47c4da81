#version 450
// get_rows.comp: GET_ROWS, one thread per dst element: dst[i0, i10, i11, i12] =
// src[i0, idx[i10, i11, i12], i11, i12], converted to f32 (dequantized), or copied
// bit for bit when src and dst are both f32 or both i32. Indices are i32 or i64
// (p.idx64). An index outside [0, src rows) (negative ones too) is never read
// through: the element gets NaN bits (0x7fc00000) and the row's position
// i10 + ne1*(i11 + ne2*i12) is recorded in the status word (atomicMax of its
// complement, so the host finds the first bad row in row-major order, as the CPU
// reports it, and turns it into the same error). A dst too large for one binding is
// computed by several dispatches, each over whole rows of it (p.pos0: the first row's position).
//
// Defines: SRC_F32, SRC_F16, SRC_BF16, SRC_I32, SRC_Q4_0, SRC_Q4_1 or SRC_Q8_0, and
// DST_F32 (DST_I32 with SRC_I32).
// Bindings: 0 = src, 1 = indices, 2 = dst, 3 = status (one uint, zero before the
// dispatch; left zero when every index is in range).
// Specialization: constant 0 = workgroup size (default 256).
// Dispatch: any x grid (grid-stride loop).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#define SRC_BINDING 0
#define DST_BINDING 2
#include "rows.glsl"

layout(std430, binding = 1) readonly buffer BufI { uint data_i[]; };
layout(std430, binding = 3) buffer BufStatus { uint status; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;       // dst shape
    uint nb0, nb1, nb2, nb3;       // dst strides (units)
    uint nb00, nb01, nb02, nb03;   // src strides (array units; nb00 = block stride for blocks)
    uint nrows;                    // src ne1
    uint nb10, nb11, nb12;         // index strides (32-bit words)
    uint offs_s, offs_i, offs_d;
    uint n;                        // dst elements
    uint idx64;                    // indices are i64
    uint pos0;                     // the row position of this dispatch's first dst row (a part of
                                   // a dst split over bindings: ops_rows.go), 0 otherwise
} p;

void main() {
#if defined(KQ_GRID_SHARED)
    kq_grid_init(); // the IQ3/IQ2/IQ1 grid into shared memory (iq_grids.glsl, iq3_grids.glsl)
#endif
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint i0 = i % p.ne0;
        uint t = i / p.ne0;
        uint i10 = t % p.ne1;
        t /= p.ne1;
        uint i11 = t % p.ne2;
        uint i12 = t / p.ne2;
        uint ii = p.offs_i + i10 * p.nb10 + i11 * p.nb11 + i12 * p.nb12;
        uint r = data_i[ii];
        bool ok = p.idx64 != 0u ? (data_i[ii + 1u] == 0u && r < p.nrows) : (r < p.nrows);
        uint id = p.offs_d + i0 * p.nb0 + i10 * p.nb1 + i11 * p.nb2 + i12 * p.nb3;
        if (!ok) {
            dst_store_bits(id, 0x7fc00000u);
            if (i0 == 0u) {
                atomicMax(status, ~(p.pos0 + i / p.ne0));
            }
            continue;
        }
        uint is = p.offs_s + r * p.nb01 + i11 * p.nb02 + i12 * p.nb03;
#if (defined(SRC_F32) && defined(DST_F32)) || (defined(SRC_I32) && defined(DST_I32))
        dst_store_bits(id, src_bits(is, i0, p.nb00));
#else
        dst_store(id, src_load(is, i0, p.nb00));
#endif
    }
}
