#version 450
// silu_back.comp: SILU_BACK, the gradient of SiLU: dx = g * s * (1 + x * (1 - s))
// with s = 1 / (1 + e^-x), elementwise over f32 tensors of any layout (strides in
// elements), as the CPU kernel. Each element is read before it is written by the
// same invocation, so dst may share g's memory.
//
// Bindings: 0 = g (incoming gradient), 1 = x (forward input), 2 = dst.
// Specialization: constant 0 = workgroup size (default 256).
// Dispatch: any x grid (grid-stride loop).

#define TYPE_F32
#include "eltwise.glsl"

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer BufG { float data_g[]; };
layout(std430, binding = 1) readonly buffer BufX { float data_x[]; };
layout(std430, binding = 2) writeonly buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;
    uint nbg0, nbg1, nbg2, nbg3;
    uint nbx0, nbx1, nbx2, nbx3;
    uint nb0, nb1, nb2, nb3;
    uint offs_g, offs_x, offs_d;
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
        float g = data_g[p.offs_g + i0 * p.nbg0 + i1 * p.nbg1 + i2 * p.nbg2 + i3 * p.nbg3];
        float x = data_x[p.offs_x + i0 * p.nbx0 + i1 * p.nbx1 + i2 * p.nbx2 + i3 * p.nbx3];
        float s = 1.0 / (1.0 + elt_exp(-x));
        precise float y = g * s * (1.0 + x * (1.0 - s));
        data_d[p.offs_d + i0 * p.nb0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3] = y;
    }
}
