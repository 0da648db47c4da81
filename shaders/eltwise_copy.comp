#version 450
// eltwise_copy.comp: bit-exact element copies over 4-D tensors of any layout
// (strides in elements):
//   REPEAT (mode 0): dst[i0,i1,i2,i3] = a[i0 % nea0, i1 % nea1, i2 % nea2, i3 % nea3]
//   CONCAT (mode 1): dst[i] = a[i] where i[dim] < nea[dim], else
//                    b[i with i[dim] - nea[dim]]
//
// Defines: ELEM_B32 (4-byte elements) or ELEM_B16 (2-byte elements).
// Bindings: 0 = a, 1 = b (REPEAT binds anything there), 2 = dst.
// Specialization: constant 0 = workgroup size (default 256), constant 1 = mode.
// Dispatch: any grid; threads walk dst's elements with a grid-stride loop.

#if defined(ELEM_B32)
#define ELEM uint
#elif defined(ELEM_B16)
#extension GL_EXT_shader_16bit_storage : require
#define ELEM uint16_t
#else
#error "define ELEM_B32 or ELEM_B16"
#endif

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(constant_id = 1) const uint MODE = 0u;

layout(std430, binding = 0) readonly buffer SrcA { ELEM data_a[]; };
layout(std430, binding = 1) readonly buffer SrcB { ELEM data_b[]; };
layout(std430, binding = 2) writeonly buffer Dst { ELEM data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;     // dst shape
    uint nea0, nea1, nea2, nea3; // a's shape
    uint nba0, nba1, nba2, nba3; // a's strides (elements)
    uint nbb0, nbb1, nbb2, nbb3; // b's strides (elements)
    uint nb0, nb1, nb2, nb3;     // dst strides (elements)
    uint offs_a, offs_b, offs_d;
    uint n;                      // dst elements
    uint dim;                    // CONCAT's dimension
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uvec4 idx;
        idx.x = i % p.ne0;
        uint t = i / p.ne0;
        idx.y = t % p.ne1;
        t /= p.ne1;
        idx.z = t % p.ne2;
        idx.w = t / p.ne2;
        uint id = p.offs_d + idx.x * p.nb0 + idx.y * p.nb1 + idx.z * p.nb2 + idx.w * p.nb3;
        uvec4 nea = uvec4(p.nea0, p.nea1, p.nea2, p.nea3);
        if (MODE == 0u) {
            uvec4 s = idx % nea;
            data_d[id] = data_a[p.offs_a + s.x * p.nba0 + s.y * p.nba1 + s.z * p.nba2 + s.w * p.nba3];
        } else if (idx[p.dim] < nea[p.dim]) {
            data_d[id] = data_a[p.offs_a + idx.x * p.nba0 + idx.y * p.nba1 + idx.z * p.nba2 + idx.w * p.nba3];
        } else {
            idx[p.dim] -= nea[p.dim];
            data_d[id] = data_b[p.offs_b + idx.x * p.nbb0 + idx.y * p.nbb1 + idx.z * p.nbb2 + idx.w * p.nbb3];
        }
    }
}
