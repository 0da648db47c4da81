#version 450
// eltwise_copy.comp: bit-exact element copies over 4-D tensors of any layout
// (strides in elements):
//   REPEAT (mode 0): dst[i0,i1,i2,i3] = a[i0 % nea0, i1 % nea1, i2 % nea2, i3 % nea3]
//   CONCAT (mode 1): dst[i] = a[i] where i[dim] < nea[dim], else
//                    b[i with i[dim] - nea[dim]]
//
// Defines: ELEM_B32 (4-byte elements), ELEM_B16 (2-byte elements) or ELEM_B8
// (1-byte elements: the arrays are words, strides and offsets in bytes, dst
// dense; an invocation assembles one dst word from its four bytes' sources and
// writes it whole, or, for a word dst shares with its neighbours, only its own
// bytes with atomics; n and the loop then count dst words).
// Bindings: 0 = a, 1 = b (REPEAT binds anything there), 2 = dst.
// Specialization: constant 0 = workgroup size (default 256), constant 1 = mode.
// Dispatch: any grid; threads walk dst's elements with a grid-stride loop.

#if defined(ELEM_B32) || defined(ELEM_B8)
#define ELEM uint
#elif defined(ELEM_B16)
#extension GL_EXT_shader_16bit_storage : require
#define ELEM uint16_t
#else
#error "define ELEM_B32, ELEM_B16 or ELEM_B8"
#endif

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(constant_id = 1) const uint MODE = 0u;

layout(std430, binding = 0) readonly buffer SrcA { ELEM data_a[]; };
layout(std430, binding = 1) readonly buffer SrcB { ELEM data_b[]; };
#if defined(ELEM_B8)
layout(std430, binding = 2) buffer Dst { ELEM data_d[]; };
#else
layout(std430, binding = 2) writeonly buffer Dst { ELEM data_d[]; };
#endif

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;     // dst shape
    uint nea0, nea1, nea2, nea3; // a's shape
    uint nba0, nba1, nba2, nba3; // a's strides (elements)
    uint nbb0, nbb1, nbb2, nbb3; // b's strides (elements)
    uint nb0, nb1, nb2, nb3;     // dst strides (elements)
    uint offs_a, offs_b, offs_d;
    uint n;                      // dst elements (ELEM_B8: dst words)
    uint dim;                    // CONCAT's dimension
#if defined(ELEM_B8)
    uint nbytes;                 // dst bytes
#endif
} p;

#if defined(ELEM_B8)
// byte_of returns byte o (a byte offset into the binding) of a word array.
#define BYTE_OF(arr, o) ((arr[(o) >> 2] >> (8u * ((o) & 3u))) & 0xffu)

// src_byte is dst element e's byte: CONCAT's a or b, REPEAT's a.
uint src_byte(uint e) {
    uvec4 idx;
    idx.x = e % p.ne0;
    uint t = e / p.ne0;
    idx.y = t % p.ne1;
    t /= p.ne1;
    idx.z = t % p.ne2;
    idx.w = t / p.ne2;
    uvec4 nea = uvec4(p.nea0, p.nea1, p.nea2, p.nea3);
    if (MODE == 0u) {
        uvec4 s = idx % nea;
        return BYTE_OF(data_a, p.offs_a + s.x * p.nba0 + s.y * p.nba1 + s.z * p.nba2 + s.w * p.nba3);
    }
    if (idx[p.dim] < nea[p.dim]) {
        return BYTE_OF(data_a, p.offs_a + idx.x * p.nba0 + idx.y * p.nba1 + idx.z * p.nba2 + idx.w * p.nba3);
    }
    idx[p.dim] -= nea[p.dim];
    return BYTE_OF(data_b, p.offs_b + idx.x * p.nbb0 + idx.y * p.nbb1 + idx.z * p.nbb2 + idx.w * p.nbb3);
}

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint w0 = p.offs_d >> 2;
    for (uint w = w0 + gl_GlobalInvocationID.x; w < w0 + p.n; w += stride) {
        uint word = 0u, mask = 0u;
        for (uint q = 0u; q < 4u; q++) {
            uint o = 4u * w + q; // byte offset in the binding
            if (o >= p.offs_d && o < p.offs_d + p.nbytes) {
                word |= src_byte(o - p.offs_d) << (8u * q);
                mask |= 0xffu << (8u * q);
            }
        }
        if (mask == 0xffffffffu) {
            data_d[w] = word;
        } else {
            atomicAnd(data_d[w], ~mask);
            atomicOr(data_d[w], word);
        }
    }
}
#else

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
#endif
