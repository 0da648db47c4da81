#version 450
// binary.comp: dst = src0 OP src1 for tensors of up to 4 dimensions, with
// ggml semantics: dst has src0's shape, src1 is broadcast (repeated) along every
// dimension where its size divides src0's. Strides are in elements, so any
// layout (views, permutations) works.
//
// Defines: OP_ADD, OP_SUB, OP_MUL or OP_DIV; TYPED for f16/bf16 operands.
// Without TYPED all three tensors are f32. With TYPED each tensor's type is a
// specialization constant (0 f32, 1 f16, 2 bf16): the operands are widened to
// f32 exactly, the operation runs in f32 (division correctly rounded, as on the
// CPU) and the result is rounded to dst's type to nearest even (core/quant's
// rules), so results match the CPU backend bit for bit.
// Bindings: 0 = src0, 1 = src1, 2 = dst.
// Specialization: constant 0 = workgroup size (default 256); TYPED: 1, 2, 3 =
// types of src0, src1, dst.
// Dispatch: any grid; threads walk the elements with a grid-stride loop.

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src0 { float data_a[]; };
layout(std430, binding = 1) readonly buffer Src1 { float data_b[]; };
layout(std430, binding = 2) writeonly buffer Dst { float data_d[]; };

#if defined(TYPED)
#extension GL_EXT_shader_16bit_storage : require
#define SRC_NONE
#define DST_NONE
#include "rows.glsl"
layout(constant_id = 1) const uint TA = 0;
layout(constant_id = 2) const uint TB = 0;
layout(constant_id = 3) const uint TD = 0;
// The same bindings as 16-bit elements.
layout(std430, binding = 0) readonly buffer Src0h { uint16_t data_a16[]; };
layout(std430, binding = 1) readonly buffer Src1h { uint16_t data_b16[]; };
layout(std430, binding = 2) writeonly buffer Dsth { uint16_t data_d16[]; };
#endif

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;       // dst == src0 shape
    uint nb00, nb01, nb02, nb03;   // src0 strides (elements)
    uint ne10, ne11, ne12, ne13;   // src1 shape
    uint nb10, nb11, nb12, nb13;   // src1 strides (elements)
    uint nb0, nb1, nb2, nb3;       // dst strides (elements)
    uint offs_a, offs_b, offs_d;   // element offsets into the bound ranges
    uint n;                        // ne0*ne1*ne2*ne3
} p;

float op(float a, float b) {
#if defined(OP_ADD)
    return a + b;
#elif defined(OP_SUB)
    return a - b;
#elif defined(OP_MUL)
    return a * b;
#elif defined(OP_DIV) && defined(TYPED)
    return div_rn(a, b);
#elif defined(OP_DIV)
    return a / b;
#else
#error "define OP_ADD, OP_SUB, OP_MUL or OP_DIV"
#endif
}

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint i0 = i % p.ne0;
        uint t = i / p.ne0;
        uint i1 = t % p.ne1;
        t /= p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;

        uint ia = p.offs_a + i0 * p.nb00 + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
        uint ib = p.offs_b + (i0 % p.ne10) * p.nb10 + (i1 % p.ne11) * p.nb11 +
                  (i2 % p.ne12) * p.nb12 + (i3 % p.ne13) * p.nb13;
        uint id = p.offs_d + i0 * p.nb0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
#if defined(TYPED)
        // (16-bit values cannot be function arguments with 16-bit storage alone.)
        float a = TA == 0u ? data_a[ia] : TA == 1u ? half_to_float(uint(data_a16[ia])) : uintBitsToFloat(uint(data_a16[ia]) << 16);
        float b = TB == 0u ? data_b[ib] : TB == 1u ? half_to_float(uint(data_b16[ib])) : uintBitsToFloat(uint(data_b16[ib]) << 16);
        float r = op(a, b);
        if (TD == 0u) {
            data_d[id] = r;
        } else if (TD == 1u) {
            data_d16[id] = uint16_t(f32_bits_to_f16(floatBitsToUint(r)));
        } else {
            data_d16[id] = uint16_t(f32_bits_to_bf16(floatBitsToUint(r)));
        }
#else
        data_d[id] = op(data_a[ia], data_b[ib]);
#endif
    }
}
