#version 450
// win.comp: SAM's window and relative-position ops on f32, one thread per dst element, as the CPU
// kernels (backends/cpu/ops_vision.go). MODE:
//   0 WIN_PART    dst (i0, i1, i2, py·npx + px) = src (i0, px·w + i1, py·w + i2), 0 past src
//   1 WIN_UNPART  dst (i0, i1, i2) = src (i0, i1 mod w, i2 mod w, (i2/w)·npx + i1/w)
//   2 ADD_REL_POS dst (kh·k + kw, r) = src + ph[r, kh] + pw[r, kw] for the first nr rows r (the
//                 term of the smaller index added first, ph's on a tie), src elsewhere; each
//                 thread reads the element it writes, so dst may alias src (in place)
// prm0 is npx (modes 0, 1) or k (mode 2); prm1 is w (modes 0, 1) or nr (mode 2).
//
// Bindings: 0 = src, 1 = pw, 2 = ph (mode 2; any buffer otherwise), 3 = dst.
// Specialization: constant 0 = workgroup size (default 256), constant 1 = MODE.
// Dispatch: any x grid (grid-stride loop).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0;

layout(std430, binding = 0) readonly buffer BufS { float data_s[]; };
layout(std430, binding = 1) readonly buffer BufW { float data_w[]; };
layout(std430, binding = 2) readonly buffer BufH { float data_h[]; };
layout(std430, binding = 3) buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;       // dst shape
    uint ne00, ne01, ne02, ne03;   // src shape
    uint nb00, nb01, nb02, nb03;   // src strides (floats)
    uint nb0, nb1, nb2, nb3;       // dst strides (floats)
    uint offs_s, offs_w, offs_h, offs_d;
    uint prm0, prm1;
    uint n;                        // dst elements
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
        if (MODE == 0u) {
            uint s1 = (i3 % p.prm0) * p.prm1 + i1;
            uint s2 = (i3 / p.prm0) * p.prm1 + i2;
            data_d[id] = (s1 < p.ne01 && s2 < p.ne02) ? data_s[p.offs_s + i0 * p.nb00 + s1 * p.nb01 + s2 * p.nb02] : 0.0;
        } else if (MODE == 1u) {
            uint w = p.prm1;
            uint s3 = (i2 / w) * p.prm0 + i1 / w;
            data_d[id] = data_s[p.offs_s + i0 * p.nb00 + (i1 % w) * p.nb01 + (i2 % w) * p.nb02 + s3 * p.nb03];
        } else {
            uint k = p.prm0;
            uint r = i / p.ne0;
            precise float v = data_s[p.offs_s + i0 * p.nb00 + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03];
            if (r < p.prm1) {
                uint kh = i0 / k, kw = i0 % k;
                float h = data_h[p.offs_h + r * k + kh];
                float w = data_w[p.offs_w + r * k + kw];
                if (kh <= kw) {
                    v = (v + h) + w;
                } else {
                    v = (v + w) + h;
                }
            }
            data_d[id] = v;
        }
    }
}
