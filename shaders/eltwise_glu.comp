#version 450
// eltwise_glu.comp: gated linear units, dst = act(x) * g elementwise, where x
// and g are two 4-D operands of dst's shape given by a base offset and strides
// each: the two halves of each row of one tensor (bound twice), or two tensors.
// The host resolves the "swapped" flag by exchanging the operands.
//
// Defines: TYPE_F32, TYPE_F16 or TYPE_BF16 (all operands; math in f32).
// Bindings: 0 = x's tensor, 1 = g's tensor, 2 = dst.
// Specialization: constant 0 = workgroup size (default 256), constant 1 = the
// activation: 0 REGLU, 1 GEGLU, 2 SWIGLU, 3 SWIGLU_OAI, 4 GEGLU_ERF,
// 5 GEGLU_QUICK (core.GLUOp).
// Dispatch: any grid; threads walk the elements with a grid-stride loop.

#include "eltwise.glsl"

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(constant_id = 1) const uint GLU_OP = 0u;

layout(std430, binding = 0) readonly buffer SrcX { ELT_T data_x[]; };
layout(std430, binding = 1) readonly buffer SrcG { ELT_T data_g[]; };
layout(std430, binding = 2) writeonly buffer Dst { ELT_T data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;     // dst shape
    uint nbx0, nbx1, nbx2, nbx3; // x strides (elements)
    uint nbg0, nbg1, nbg2, nbg3; // g strides (elements)
    uint nb0, nb1, nb2, nb3;     // dst strides (elements)
    uint offs_x, offs_g, offs_d; // element offsets of element 0 into the bound ranges
    uint n;                      // ne0*ne1*ne2*ne3
    float alpha, limit;          // SWIGLU_OAI's parameters
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
        float x = elt_load(data_x[p.offs_x + i0 * p.nbx0 + i1 * p.nbx1 + i2 * p.nbx2 + i3 * p.nbx3]);
        float g = elt_load(data_g[p.offs_g + i0 * p.nbg0 + i1 * p.nbg1 + i2 * p.nbg2 + i3 * p.nbg3]);
        precise float y;
        if (GLU_OP == 0u) {
            // x > 0 ? x*g : 0 (an infinite gate with x <= 0 gives 0).
            y = x > 0.0 ? x * g : 0.0;
        } else if (GLU_OP == 1u) {
            y = elt_gelu(x) * g;
        } else if (GLU_OP == 2u) {
            y = elt_silu(x) * g;
        } else if (GLU_OP == 3u) {
            // min(x, limit) sigma(alpha min(x, limit)) (clamp(g, -limit, limit) + 1),
            // NaN staying NaN as with std::min and std::clamp.
            float xc = x > p.limit ? p.limit : x;
            float gc = g < -p.limit ? -p.limit : (g > p.limit ? p.limit : g);
            y = elt_x_sigmoid(xc, p.alpha * xc) * (gc + 1.0);
        } else if (GLU_OP == 4u) {
            y = elt_gelu_erf(x) * g;
        } else {
            y = elt_gelu_quick(x) * g;
        }
        data_d[p.offs_d + i0 * p.nb0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3] = elt_store(y);
    }
}
