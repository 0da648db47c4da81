#version 450
// pool.comp: POOL_1D and POOL_2D with the CPU reference's rule (ggml_pool_2d):
// output (ox, oy) of a plane covers input columns ox*s0 - p0 + [0, k0) and rows
// oy*s1 - p1 + [0, k1) (paddings may reach the kernel size and beyond); padding
// positions are skipped for max (which starts at -FLT_MAX, as ggml's, so a window
// wholly in the padding gives -FLT_MAX) and count as zero for avg, which divides by k0*k1 for POOL_2D and by the
// number of in-bounds positions for POOL_1D (count_in = 1), as ggml's CPU does
// (ggml_compute_forward_pool_1d_ksp). 1-D is otherwise the 2-D rule with
// k1 = s1 = 1, p1 = 0 and every input row its own plane (ih = 1).
// One invocation per dst element (grid-stride loop); dst is contiguous f32.
//
// Defines: OP_MAX or OP_AVG; SRC_F16 for an f16 source (else f32).
// Bindings: 0 = src (any strides), 1 = dst.
// Specialization: constant 0 = workgroup size (default 256).
// Units: src offsets/strides in src elements, the dst offset in floats.

#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#if defined(SRC_F16)
layout(std430, binding = 0) readonly buffer BufS { float16_t data_s[]; };
#else
layout(std430, binding = 0) readonly buffer BufS { float data_s[]; };
#endif
layout(std430, binding = 1) writeonly buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint ow, oh, np;                // dst width, height (1 for 1-D), planes per dim-3 index
    uint n;                         // dst elements
    uint iw, ih;                    // input width, height (1 for 1-D)
    int k0, k1, s0, s1, p0, p1;
    uint nb0, nb1;                  // src strides (elements) along x and y
    uint nbp, nbq;                  // src strides of the plane index: inner (dst dim ne2 or ne1), outer
    uint offs_s, offs_d;
    uint count_in;                  // avg: 1 = divide by the in-bounds count (1-D), 0 = by k0*k1
} p;

void main() {
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        const int ox = int(i % p.ow);
        uint t = i / p.ow;
        const int oy = int(t % p.oh);
        t /= p.oh;
        const uint plane = p.offs_s + (t % p.np) * p.nbp + (t / p.np) * p.nbq;
        const int x0 = ox * p.s0 - p.p0;
        const int y0 = oy * p.s1 - p.p1;
        const int xa = max(x0, 0), xb = min(x0 + p.k0, int(p.iw));
        const int ya = max(y0, 0), yb = min(y0 + p.k1, int(p.ih));
#if defined(OP_MAX)
        float r = uintBitsToFloat(0xff7fffffu); // -FLT_MAX
#else
        float r = 0.0;
#endif
        for (int y = ya; y < yb; y++) {
            const uint row = plane + uint(y) * p.nb1;
            for (int x = xa; x < xb; x++) {
                const float v = float(data_s[row + uint(x) * p.nb0]);
#if defined(OP_MAX)
                r = v > r ? v : r;
#else
                r += v;
#endif
            }
        }
#if defined(OP_AVG)
        r = p.count_in != 0u ? (xb > xa ? r / float(xb - xa) : 0.0) : r / float(p.k0 * p.k1);
#endif
        data_d[p.offs_d + i] = r;
    }
}
