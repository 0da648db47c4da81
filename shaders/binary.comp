#version 450
// binary.comp: dst = src0 OP src1 for f32 tensors of up to 4 dimensions, with
// ggml semantics: dst has src0's shape, src1 is broadcast (repeated) along every
// dimension where its size divides src0's. Strides are in elements, so any
// layout (views, permutations) works as long as element sizes are 4 bytes.
//
// Defines: OP_ADD, OP_SUB, OP_MUL or OP_DIV.
// Bindings: 0 = src0, 1 = src1, 2 = dst.
// Specialization: constant 0 = workgroup size (default 256).
// Dispatch: any grid; threads walk the elements with a grid-stride loop.

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src0 { float data_a[]; };
layout(std430, binding = 1) readonly buffer Src1 { float data_b[]; };
layout(std430, binding = 2) writeonly buffer Dst { float data_d[]; };

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
        data_d[id] = op(data_a[ia], data_b[ib]);
    }
}
