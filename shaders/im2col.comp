#version 450
// im2col.comp: IM2COL (ggml_im2col), 1-D and 2-D, with the CPU reference's rule:
// dst[ic*KH*KW + ky*KW + kx, ow, oh, n] = src[ow*s0 + kx*d0 - p0, oh*s1 + ky*d1 - p1, ic, n],
// zero outside the input. 1-D is the same with KH = IH = OH = 1 (dst [IC*K, OL, N]).
// One invocation per dst element (grid-stride loop); dst is contiguous.
//
// Defines: D_F16 for an f16 dst (converted with round-to-nearest-even in
// integer arithmetic, bit-exact with the CPU's FP32ToFP16), else f32.
// Bindings: 0 = src (f32, any strides), 1 = dst.
// Specialization: constant 0 = workgroup size (default 256).
// Units: src offsets/strides in floats, the dst offset in dst elements.

#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer BufS { float data_s[]; };
#if defined(D_F16)
layout(std430, binding = 1) writeonly buffer BufD { uint16_t data_d[]; };
#else
layout(std430, binding = 1) writeonly buffer BufD { float data_d[]; };
#endif

layout(push_constant) uniform Params {
    uint ne0, ow, oh;               // dst dims 0..2 (ne0 = IC*KH*KW; oh = 1 for 1-D)
    uint n;                         // dst elements
    uint iw, ih, kw, kh;            // input width/height (ih = 1 for 1-D), kernel size
    int s0, s1, p0, p1, d0, d1;
    uint nb0, nbh, nbc, nbn;        // src strides (floats): x, y, channel, batch
    uint offs_s, offs_d;
} p;

#if defined(D_F16)
// f32_to_f16 rounds to nearest even, like core/quant.FP32ToFP16.
uint f32_to_f16(float f) {
    const uint b = floatBitsToUint(f);
    const uint sign = (b >> 16) & 0x8000u;
    const uint a = b & 0x7fffffffu;
    if (a - 0x38800000u < 0x47800000u - 0x38800000u) {
        return sign | ((((a + 0x0fffu + ((a >> 13) & 1u)) >> 13) - (112u << 10)) & 0xffffu);
    }
    if (a > 0x7f800000u) {
        return sign | 0x7e00u | ((a >> 13) & 0x3ffu);
    }
    if (a >= 0x47800000u) {
        return sign | 0x7c00u;
    }
    if (a >= 0x33000000u) {
        const uint e = a >> 23;
        const uint m = (a & 0x7fffffu) | 0x800000u;
        const uint shift = 126u - e;
        return sign | ((m + ((1u << (shift - 1u)) - 1u) + ((m >> shift) & 1u)) >> shift);
    }
    return sign;
}
#endif

void main() {
    const uint kk = p.kh * p.kw;
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        const uint i0 = i % p.ne0;
        uint t = i / p.ne0;
        const int ox = int(t % p.ow);
        t /= p.ow;
        const int oy = int(t % p.oh);
        const uint bn = t / p.oh;
        const uint c = i0 / kk;
        const uint r = i0 % kk;
        const int iy = oy * p.s1 + int(r / p.kw) * p.d1 - p.p1;
        const int ix = ox * p.s0 + int(r % p.kw) * p.d0 - p.p0;
        float v = 0.0;
        if (iy >= 0 && iy < int(p.ih) && ix >= 0 && ix < int(p.iw)) {
            v = data_s[p.offs_s + bn * p.nbn + c * p.nbc + uint(iy) * p.nbh + uint(ix) * p.nb0];
        }
#if defined(D_F16)
        data_d[p.offs_d + i] = uint16_t(f32_to_f16(v));
#else
        data_d[p.offs_d + i] = v;
#endif
    }
}
