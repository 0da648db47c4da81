#version 450
// diag_mask_inf.comp: DIAG_MASK_INF of f32 (DIAG_MASK_ZERO with define ZERO: 0
// instead of -inf): element (i0, i1, i2, i3) becomes -inf
// when i0 > n_past + i1, else it is copied. Each thread reads and writes one
// element at the same position, so dst may alias src (in place).
//
// Bindings: 0 = src, 1 = dst.
// Specialization: constant 0 = workgroup size (default 256).
// Dispatch: any x grid (grid-stride loop over elements).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer BufS { uint data_s[]; };
layout(std430, binding = 1) buffer BufD { uint data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;
    uint nb00, nb01, nb02, nb03;   // src strides (floats)
    uint nb0, nb1, nb2, nb3;       // dst strides (floats)
    uint offs_s, offs_d;
    int n_past;
    uint n;
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
        uint id = p.offs_d + i0 * p.nb0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
        // i0 > n_past + i1, without overflow for any n_past
        bool masked = p.n_past >= 0 ? (i0 > i1 && i0 - i1 > uint(p.n_past)) : (i0 + (0u - uint(p.n_past)) > i1);
        if (masked) {
#if defined(ZERO)
            data_d[id] = 0u; // DIAG_MASK_ZERO: +0
#else
            data_d[id] = 0xff800000u; // -inf
#endif
        } else {
            data_d[id] = data_s[p.offs_s + i0 * p.nb00 + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03];
        }
    }
}
