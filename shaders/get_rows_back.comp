#version 450
// get_rows_back.comp: GET_ROWS_BACK, the scatter-add of GET_ROWS' gradient (f32, or f16
// with G_F16, summed in f32 as the CPU does) into f32:
// dst[c, r, i2, i3] = sum over k with idx[k, i2, i3] == r of g[c, k, i2, i3]. One
// thread per dst element adds the matching rows of g in index order, starting from
// 0, which is the CPU kernel's order of additions (zero dst, then add row by row),
// so the results agree bit for bit. Indices outside [0, dst rows) match nothing.
//
// Bindings: 0 = g [nc, nr, ne2, ne3] (strides in its elements), 1 = indices
// (i32 [nr, ne2, ne3]), 2 = dst [nc, ne1, ne2, ne3].
// Specialization: constant 0 = workgroup size (default 256).
// Dispatch: any x grid (grid-stride loop).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#if defined(G_F16)
#include "types.glsl"
layout(std430, binding = 0) readonly buffer BufG { uint16_t data_g[]; };
float g_at(uint i) { return half_bits_to_float(uint(data_g[i])); }
#else
layout(std430, binding = 0) readonly buffer BufG { float data_g[]; };
float g_at(uint i) { return data_g[i]; }
#endif
layout(std430, binding = 1) readonly buffer BufI { int data_i[]; };
layout(std430, binding = 2) writeonly buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;       // dst shape
    uint nb0, nb1, nb2, nb3;       // dst strides (floats)
    uint nbg0, nbg1, nbg2, nbg3;   // g strides (floats)
    uint nbi0, nbi1, nbi2;         // index strides (words)
    uint nr;                       // rows of g (indices per batch)
    uint offs_g, offs_i, offs_d;
    uint n;                        // dst elements
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint c = i % p.ne0;
        uint t = i / p.ne0;
        uint r = t % p.ne1;
        t /= p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint ib = p.offs_i + i2 * p.nbi1 + i3 * p.nbi2;
        uint gb = p.offs_g + c * p.nbg0 + i2 * p.nbg2 + i3 * p.nbg3;
        float s = 0.0;
        for (uint k = 0u; k < p.nr; k++) {
            if (data_i[ib + k * p.nbi0] == int(r)) {
                s += g_at(gb + k * p.nbg1);
            }
        }
        data_d[p.offs_d + c * p.nb0 + r * p.nb1 + i2 * p.nb2 + i3 * p.nb3] = s;
    }
}
