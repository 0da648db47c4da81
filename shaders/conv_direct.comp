#version 450
// conv_direct.comp: ggml's convolution nodes with the CPU reference's rules, one invocation per
// dst element (grid-stride loop), sums in f32 in a fixed order.
//
// Modes (one define):
//   MODE_CONV      CONV_2D, CONV_3D and CONV_2D_DW as a 3-D convolution:
//                  dst[x, y, z, o, n] = Σ_{c, kz, ky, kx} k[kx, ky, kz, c, o] ·
//                  src[x·s0 + kx·d0 - p0, y·s1 + ky·d1 - p1, z·s2 + kz·d2 - p2, c, n], zero padding.
//                  Flag bit 0 (depthwise): one input channel per output channel (src channel o,
//                  kernel channel 0). Flag bit 1: dst laid out CWHN (channels densest), as
//                  CONV_2D_DW's result for a CWHN input; else dst is contiguous.
//   MODE_CONVT     CONV_TRANSPOSE_1D / _2D: dst[ox, oy, co, n] = Σ k[kx, ky, co, ci]·src[x, y, ci, n]
//                  over x·s + kx = ox, y·s + ky = oy (1-D: H = KH = 1).
//   MODE_IM2COL3D  IM2COL_3D: dst[((c·KD + kz)·KH + ky)·KW + kx, x, y, z + n·OD] =
//                  src[x·s0 + kx·d0 - p0, y·s1 + ky·d1 - p1, z·s2 + kz·d2 - p2, n·IC + c], zero outside.
//   MODE_COL2IM    COL2IM_1D: dst[t, c] = Σ src[c·K + k, ti] over ti·s + k = t + p.
// MODE_CONV and MODE_CONVT take K_F16 for an f16 kernel: the input is then rounded to f16 first,
// as ggml's CPU converts it to the kernel's type.
//
// Bindings: CONV/CONVT: 0 = src (f32), 1 = kernel, 2 = dst (f32). IM2COL3D: 0 = src (f32),
// 1 = dst (DST_F32 or DST_F16). COL2IM: 0 = src, 1 = dst (SRC_/DST_ F32, F16 or BF16).
// Specialization: constant 0 = workgroup size (default 256).
// Units: offsets and strides in elements of each binding.

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#if defined(MODE_CONV) || defined(MODE_CONVT)
#define SRC_F32
#define DST_F32
#define DST_BINDING 2
#if defined(K_F16)
#extension GL_EXT_shader_16bit_storage : require
layout(std430, binding = 1) readonly buffer BufK { uint16_t data_k[]; };
#else
layout(std430, binding = 1) readonly buffer BufK { float data_k[]; };
#endif
#elif defined(MODE_IM2COL3D)
#define SRC_F32
#endif

#include "rows.glsl"

#if defined(MODE_CONV) || defined(MODE_CONVT)
float kernel_at(uint idx) {
#if defined(K_F16)
    return half_to_float(uint(data_k[idx]));
#else
    return data_k[idx];
#endif
}

float input_at(uint idx) {
    float v = uintBitsToFloat(data_s[idx]);
#if defined(K_F16)
    v = half_to_float(f32_bits_to_f16(floatBitsToUint(v)));
#endif
    return v;
}
#endif

#if defined(MODE_CONV)

layout(push_constant) uniform Params {
    uint ow, oh, od, oc, nb;        // dst: width, height, depth, channels, batch
    uint iw, ih, id, ic;            // input width, height, depth, channels
    uint kw, kh, kd;                // kernel size
    uint sd0, sd1, sd2;             // s0 | s1 << 16, s2 | d0 << 16, d1 | d2 << 16
    int p0, p1, p2;
    uint bx, by, bz, bc, bn;        // input strides
    uint ax, ay, az, ac, ao;        // kernel strides: x, y, z, input channel, output channel
    uint offs_s, offs_k, offs_d;
    uint flags;                     // bit 0: depthwise, bit 1: CWHN dst
} p;

void main() {
    const int s0 = int(p.sd0 & 0xffffu), s1 = int(p.sd0 >> 16), s2 = int(p.sd1 & 0xffffu);
    const int d0 = int(p.sd1 >> 16), d1 = int(p.sd2 & 0xffffu), d2 = int(p.sd2 >> 16);
    const bool dw = (p.flags & 1u) != 0u;
    const uint total = p.ow * p.oh * p.od * p.oc * p.nb;
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
        const uint x = i % p.ow;
        uint t = i / p.ow;
        const uint y = t % p.oh;
        t /= p.oh;
        const uint z = t % p.od;
        t /= p.od;
        const uint o = t % p.oc;
        const uint n = t / p.oc;
        const uint nc = dw ? 1u : p.ic;
        float sum = 0.0;
        for (uint c = 0u; c < nc; c++) {
            const uint sbase = p.offs_s + n * p.bn + (dw ? o : c) * p.bc;
            const uint kbase = p.offs_k + o * p.ao + (dw ? 0u : c) * p.ac;
            for (uint kz = 0u; kz < p.kd; kz++) {
                const int iz = int(z) * s2 + int(kz) * d2 - p.p2;
                if (iz < 0 || iz >= int(p.id)) {
                    continue;
                }
                for (uint ky = 0u; ky < p.kh; ky++) {
                    const int iy = int(y) * s1 + int(ky) * d1 - p.p1;
                    if (iy < 0 || iy >= int(p.ih)) {
                        continue;
                    }
                    const uint rs = sbase + uint(iz) * p.bz + uint(iy) * p.by;
                    const uint rk = kbase + kz * p.az + ky * p.ay;
                    for (uint kx = 0u; kx < p.kw; kx++) {
                        const int ix = int(x) * s0 + int(kx) * d0 - p.p0;
                        if (ix < 0 || ix >= int(p.iw)) {
                            continue;
                        }
                        sum += kernel_at(rk + kx * p.ax) * input_at(rs + uint(ix) * p.bx);
                    }
                }
            }
        }
        uint di = p.offs_d + i;
        if ((p.flags & 2u) != 0u) {
            di = p.offs_d + ((n * p.oh + y) * p.ow + x) * p.oc + o;
        }
        dst_store(di, sum);
    }
}

#elif defined(MODE_CONVT)

layout(push_constant) uniform Params {
    uint ow, oh, cout, nb;          // dst
    uint w, h, cin;                 // input
    uint kw, kh, s;
    uint bx, by, bc, bn;            // input strides
    uint ax, ay, aco, aci;          // kernel strides
    uint offs_s, offs_k, offs_d;
} p;

void main() {
    const uint total = p.ow * p.oh * p.cout * p.nb;
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int s = int(p.s);
    for (uint i = gl_GlobalInvocationID.x; i < total; i += stride) {
        const int ox = int(i % p.ow);
        uint t = i / p.ow;
        const int oy = int(t % p.oh);
        t /= p.oh;
        const uint co = t % p.cout;
        const uint n = t / p.cout;
        // inputs x with 0 <= ox - x·s < kw: x in [ceil((ox-kw+1)/s), floor(ox/s)]
        const int nx = ox - int(p.kw) + s, ny = oy - int(p.kh) + s; // divided only when positive
        const int x0 = nx > 0 ? nx / s : 0, x1 = min(int(p.w) - 1, ox / s);
        const int y0 = ny > 0 ? ny / s : 0, y1 = min(int(p.h) - 1, oy / s);
        float sum = 0.0;
        for (int y = y0; y <= y1; y++) {
            const int ky = oy - y * s;
            if (ky < 0 || ky >= int(p.kh)) {
                continue;
            }
            for (int x = x0; x <= x1; x++) {
                const int kx = ox - x * s;
                if (kx < 0 || kx >= int(p.kw)) {
                    continue;
                }
                const uint rs = p.offs_s + n * p.bn + uint(y) * p.by + uint(x) * p.bx;
                const uint rk = p.offs_k + co * p.aco + uint(ky) * p.ay + uint(kx) * p.ax;
                for (uint ci = 0u; ci < p.cin; ci++) {
                    sum += kernel_at(rk + ci * p.aci) * input_at(rs + ci * p.bc);
                }
            }
        }
        dst_store(p.offs_d + i, sum);
    }
}

#elif defined(MODE_IM2COL3D)

layout(push_constant) uniform Params {
    uint ne0, ow, oh, od;           // dst: patch length, output width, height, depth
    uint iw, ih, id;                // input size
    uint kw, kh, kd, ic;            // kernel size, channels
    uint sd0, sd1, sd2;             // as MODE_CONV
    int p0, p1, p2;
    uint bx, by, bz, bc, bn;        // input strides (bn = IC·bc)
    uint offs_s, offs_d;
    uint total;
} p;

void main() {
    const int s0 = int(p.sd0 & 0xffffu), s1 = int(p.sd0 >> 16), s2 = int(p.sd1 & 0xffffu);
    const int d0 = int(p.sd1 >> 16), d1 = int(p.sd2 & 0xffffu), d2 = int(p.sd2 >> 16);
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.total; i += stride) {
        const uint i0 = i % p.ne0;
        uint t = i / p.ne0;
        const int x = int(t % p.ow);
        t /= p.ow;
        const int y = int(t % p.oh);
        t /= p.oh;
        const int z = int(t % p.od);
        const uint n = t / p.od;
        const int kx = int(i0 % p.kw);
        uint r = i0 / p.kw;
        const int ky = int(r % p.kh);
        r /= p.kh;
        const int kz = int(r % p.kd);
        const uint c = r / p.kd;
        const int ix = x * s0 + kx * d0 - p.p0;
        const int iy = y * s1 + ky * d1 - p.p1;
        const int iz = z * s2 + kz * d2 - p.p2;
        float v = 0.0;
        if (ix >= 0 && ix < int(p.iw) && iy >= 0 && iy < int(p.ih) && iz >= 0 && iz < int(p.id)) {
            v = uintBitsToFloat(data_s[p.offs_s + n * p.bn + c * p.bc + uint(iz) * p.bz + uint(iy) * p.by + uint(ix) * p.bx]);
        }
        dst_store(p.offs_d + i, v);
    }
}

#elif defined(MODE_COL2IM)

layout(push_constant) uniform Params {
    uint tout, oc, tin, k, s, pad;
    uint total;
    uint offs_s, offs_d;
} p;

void main() {
    const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const int s = int(p.s), k = int(p.k);
    for (uint i = gl_GlobalInvocationID.x; i < p.total; i += stride) {
        const int t = int(i % p.tout);
        const uint c = i / p.tout;
        const int at = t + int(p.pad);
        const int nl = at - k + s;
        const int lo = nl > 0 ? nl / s : 0;
        const int hi = min(int(p.tin) - 1, at / s);
        float sum = 0.0;
        for (int ti = lo; ti <= hi; ti++) {
            const int kk = at - ti * s;
            if (kk >= 0 && kk < k) {
                sum += src_load(p.offs_s, c * p.k + uint(kk) + uint(ti) * p.k * p.oc, 1u);
            }
        }
        dst_store(p.offs_d + i, sum);
    }
}

#endif
