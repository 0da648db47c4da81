#version 450
// get_rel_pos.comp: GET_REL_POS (SAM's relative position table), one thread per dst element: dst
// (i0, k, q) = src (i0, kh - 1 - k + q), kh = dst's ne1; f16 values copied (through their exact
// f32 values).
//
// Defines: SRC_F16, DST_F16 (rows.glsl).
// Bindings: 0 = src, 1 = dst.
// Specialization: constant 0 = workgroup size (default 256).
// Dispatch: any x grid (grid-stride loop).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#include "rows.glsl"

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;       // dst shape
    uint nb0, nb1, nb2, nb3;       // dst strides (halves)
    uint nb00, nb01;               // src strides (halves)
    uint offs_s, offs_d;
    uint n;                        // dst elements
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint i0 = i % p.ne0;
        uint t = i / p.ne0;
        uint i1 = t % p.ne1;
        t /= p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint pos = p.ne1 - 1u - i1 + i2;
        dst_store(p.offs_d + i0 * p.nb0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3, src_load(p.offs_s + pos * p.nb01, i0, p.nb00));
    }
}
