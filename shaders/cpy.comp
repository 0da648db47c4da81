#version 450
// cpy.comp: DUP / CONT / CPY element by element with ggml's dup semantics: the
// k-th element of src in row-major order (over src's shape) goes to the k-th
// element of dst (over dst's shape); both may have any strides (permuted sources,
// strided destination views), and the shapes may differ with equal element count.
//
// Defines, one of:
//   RAW32            32-bit units copied bit for bit (f32 -> f32, i32 -> i32)
//   RAW16            units of p.words 16-bit words copied bit for bit (f16, bf16,
//                    and whole quantized blocks: shapes and strides count blocks)
//   RAW_MXFP4        MXFP4 blocks (17 bytes) copied bit for bit: shapes count blocks,
//                    strides and offsets bytes; a block shares dst words with its
//                    neighbours, written with rows.glsl's MXFP4 storer (lb_store17)
//   SRC_x and DST_y  convert (see rows.glsl): x in F32 F16 BF16 I32 Q4_0 Q4_1 Q8_0,
//                    y in F32 F16 BF16 I32; for a block source, ne0 counts elements
//                    and nb00 is the block stride.
// Bindings: 0 = src, 1 = dst.
// Specialization: constant 0 = workgroup size (default 256).
// Dispatch: any x grid; threads walk the units with a grid-stride loop.

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#if defined(RAW32)
#define SRC_NONE
#define DST_NONE
layout(std430, binding = 0) readonly buffer BufS { uint data_s[]; };
layout(std430, binding = 1) writeonly buffer BufD { uint data_d[]; };
#elif defined(RAW16)
#extension GL_EXT_shader_16bit_storage : require
#define SRC_NONE
#define DST_NONE
layout(std430, binding = 0) readonly buffer BufS { uint16_t data_s[]; };
layout(std430, binding = 1) writeonly buffer BufD { uint16_t data_d[]; };
#elif defined(RAW_MXFP4)
#define SRC_NONE
#define DST_MXFP4 // lowbit_store.glsl: data_d as words and lb_store17
layout(std430, binding = 0) readonly buffer BufS { uint data_s[]; };
#endif

#include "rows.glsl"

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;       // dst shape (units)
    uint nb0, nb1, nb2, nb3;       // dst strides (array units)
    uint ne00, ne01, ne02, ne03;   // src shape (units)
    uint nb00, nb01, nb02, nb03;   // src strides (array units)
    uint offs_s, offs_d;           // first unit of each tensor in its binding
    uint n;                        // units to copy
    uint words;                    // RAW16: 16-bit words per unit
} p;

void main() {
#if defined(KQ_GRID_SHARED)
    kq_grid_init(); // the IQ3/IQ2/IQ1 grid into shared memory (iq_grids.glsl, iq3_grids.glsl)
#endif
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint i0 = i % p.ne0;
        uint t = i / p.ne0;
        uint i1 = t % p.ne1;
        t /= p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint id = p.offs_d + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;

        uint j0 = i % p.ne00;
        t = i / p.ne00;
        uint j1 = t % p.ne01;
        t /= p.ne01;
        uint j2 = t % p.ne02;
        uint j3 = t / p.ne02;
        uint is = p.offs_s + j1 * p.nb01 + j2 * p.nb02 + j3 * p.nb03;

#if defined(RAW32)
        data_d[id + i0 * p.nb0] = data_s[is + j0 * p.nb00];
#elif defined(RAW16)
        id += i0 * p.nb0;
        is += j0 * p.nb00;
        for (uint w = 0u; w < p.words; w++) {
            data_d[id + w] = data_s[is + w];
        }
#elif defined(RAW_MXFP4)
        id += i0 * p.nb0;
        is += j0 * p.nb00;
        uint q[17];
        for (uint k = 0u; k < 17u; k++) {
            q[k] = (data_s[(is + k) >> 2] >> (8u * ((is + k) & 3u))) & 0xffu;
        }
        lb_store17(id, q);
#elif defined(SRC_F32) && defined(DST_F32)
        dst_store_bits(id + i0 * p.nb0, src_bits(is, j0, p.nb00));
#else
        dst_store(id + i0 * p.nb0, src_load(is, j0, p.nb00));
#endif
    }
}
