#version 450
// cpy_quant.comp: CPY / DUP / CONT into a block-quantized destination, one thread
// per destination block: the block's DST_QK values (32, or 256 for K-quants) are
// the elements k0..k0+DST_QK-1 (k0 = DST_QK * block index, row-major over dst's
// shape) of src in row-major order over src's shape (ggml's dup semantics; any src strides), quantized bit for bit as
// core/quant's reference quantizer.
//
// Defines: SRC_F32, SRC_F16 or SRC_BF16, and a block DST_ type of rows.glsl.
// Bindings: 0 = src, 1 = dst.
// Specialization: constant 0 = workgroup size (default 64).
// Dispatch: any x grid (grid-stride loop over blocks).

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#include "rows.glsl"

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;       // dst shape (elements; ne0 a multiple of 32)
    uint nb0, nb1, nb2, nb3;       // dst strides (16-bit words; nb0 = block stride)
    uint ne00, ne01, ne02, ne03;   // src shape (elements)
    uint nb00, nb01, nb02, nb03;   // src strides (array units)
    uint offs_s, offs_d;
    uint nblocks;
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint bpr = p.ne0 / DST_QK; // blocks per dst row
    for (uint b = gl_GlobalInvocationID.x; b < p.nblocks; b += stride) {
        uint ib = b % bpr;
        uint t = b / bpr;
        uint i1 = t % p.ne1;
        t /= p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint id = p.offs_d + ib * p.nb0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;

        float x[DST_QK];
        uint k = b * DST_QK;
        uint j0 = k % p.ne00;
        t = k / p.ne00;
        uint j1 = t % p.ne01;
        t /= p.ne01;
        uint j2 = t % p.ne02;
        uint j3 = t / p.ne02;
        for (uint j = 0u; j < DST_QK; j++) {
            x[j] = src_load(p.offs_s + j1 * p.nb01 + j2 * p.nb02 + j3 * p.nb03, j0, p.nb00);
            if (++j0 == p.ne00) {
                j0 = 0u;
                if (++j1 == p.ne01) {
                    j1 = 0u;
                    if (++j2 == p.ne02) {
                        j2 = 0u;
                        j3++;
                    }
                }
            }
        }
        dst_store_block(id, x);
    }
}
