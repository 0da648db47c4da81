#version 450
// upscale.comp: UPSCALE (ggml_interpolate) of f32, one thread per dst element, as the CPU kernel
// (backends/cpu/ops_vision.go): dims 2 and 3 by nearest index i·in/out truncated, dims 0 and 1 by
// the mode:
//   0 nearest   x = i / sf truncated
//   1 bilinear  x = (i + po)/sf - po, taps floor(x) and floor(x)+1 clamped to the input, weight
//               of the second x - tap0 clamped to [0, 1]
//   2 bicubic   taps floor(x)-1 .. floor(x)+2 clamped, weights of PyTorch's a = -0.75 cubic
//   3 bilinear with antialias: every input pixel within max(1, 1/sf) of (i + po)/sf weighted by
//               a triangle filter, the sum divided by the total weight
// sf (out/in, or (out-1)/(in-1) with align corners) and the pixel offset po come from the host as
// the CPU computes them. Divisions are correctly rounded (div_rn) and products not contracted
// into fma (precise), so the taps (truncations and floors) are the CPU's and the values agree to
// rounding.
//
// Bindings: 0 = src, 1 = dst.
// Specialization: constant 0 = workgroup size (default 256).
// Dispatch: any x grid (grid-stride loop).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#define SRC_NONE
#define DST_NONE
#include "rows.glsl"

layout(std430, binding = 0) readonly buffer BufS { float data_s[]; };
layout(std430, binding = 1) writeonly buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;       // dst shape
    uint ne00, ne01, ne02, ne03;   // src shape
    uint nb00, nb01, nb02, nb03;   // src strides (floats)
    uint nb0, nb1, nb2, nb3;       // dst strides (floats)
    uint offs_s, offs_d;
    float sf0, sf1, sf2, sf3;
    float po;                      // pixel offset
    uint mode;
    uint n;                        // dst elements
} p;

// nearest returns i / sf truncated, inside [0, n).
uint nearest(uint i, float sf, uint n) {
    float q = div_rn(float(i), sf);
    return min(uint(max(q, 0.0)), n - 1u);
}

uint clampi(int v, uint n) {
    return uint(clamp(v, 0, int(n) - 1));
}

float src_at(uint base, uint x, uint y) {
    return data_s[base + x * p.nb00 + y * p.nb01];
}

float w1(float x) {
    const float a = -0.75;
    precise float r = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    return r;
}

float w2(float x) {
    const float a = -0.75;
    precise float r = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
    return r;
}

float cubic(float p0, float p1, float p2, float p3, float d) {
    precise float r = p0 * w2(d + 1.0) + p1 * w1(d) + p2 * w1(1.0 - d) + p3 * w2(2.0 - d);
    return r;
}

float tri(float x) {
    return max(1.0 - abs(x), 0.0);
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
        uint base = p.offs_s + nearest(i2, p.sf2, p.ne02) * p.nb02 + nearest(i3, p.sf3, p.ne03) * p.nb03;
        float v;
        if (p.mode == 0u) {
            v = src_at(base, nearest(i0, p.sf0, p.ne00), nearest(i1, p.sf1, p.ne01));
        } else if (p.mode == 1u) {
            precise float x = div_rn(float(i0) + p.po, p.sf0) - p.po;
            precise float y = div_rn(float(i1) + p.po, p.sf1) - p.po;
            int fx = int(floor(x));
            int fy = int(floor(y));
            uint x0 = clampi(fx, p.ne00), x1 = clampi(fx + 1, p.ne00);
            uint y0 = clampi(fy, p.ne01), y1 = clampi(fy + 1, p.ne01);
            precise float dx = clamp(x - float(x0), 0.0, 1.0);
            precise float dy = clamp(y - float(y0), 0.0, 1.0);
            precise float ex = 1.0 - dx;
            precise float ey = 1.0 - dy;
            precise float r = src_at(base, x0, y0) * ex * ey + src_at(base, x1, y0) * dx * ey +
                src_at(base, x0, y1) * ex * dy + src_at(base, x1, y1) * dx * dy;
            v = r;
        } else if (p.mode == 2u) {
            precise float x = div_rn(float(i0) + p.po, p.sf0) - p.po;
            precise float y = div_rn(float(i1) + p.po, p.sf1) - p.po;
            int fx = int(floor(x));
            int fy = int(floor(y));
            precise float dx = x - float(fx);
            precise float dy = y - float(fy);
            uint xs[4] = uint[4](clampi(fx - 1, p.ne00), clampi(fx, p.ne00), clampi(fx + 1, p.ne00), clampi(fx + 2, p.ne00));
            float h[4];
            for (int k = 0; k < 4; k++) {
                uint yy = clampi(fy + k - 1, p.ne01);
                h[k] = cubic(src_at(base, xs[0], yy), src_at(base, xs[1], yy), src_at(base, xs[2], yy), src_at(base, xs[3], yy), dx);
            }
            v = cubic(h[0], h[1], h[2], h[3], dy);
        } else {
            const float s0 = max(1.0, div_rn(1.0, p.sf0));
            const float s1 = max(1.0, div_rn(1.0, p.sf1));
            const float inv0 = div_rn(1.0, s0);
            const float inv1 = div_rn(1.0, s1);
            precise float x = div_rn(float(i0) + p.po, p.sf0);
            precise float y = div_rn(float(i1) + p.po, p.sf1);
            precise float xlo = x - s0 + p.po;
            precise float xhi = x + s0 + p.po;
            precise float ylo = y - s1 + p.po;
            precise float yhi = y + s1 + p.po;
            // C's conversion truncates toward zero, then clamps to the input
            uint x_min = uint(max(int(xlo), 0)), x_max = uint(min(int(xhi), int(p.ne00)));
            uint y_min = uint(max(int(ylo), 0)), y_max = uint(min(int(yhi), int(p.ne01)));
            precise float val = 0.0;
            precise float total = 0.0;
            for (uint sy = y_min; sy < y_max; sy++) {
                precise float ay = (float(sy) - y + p.po) * inv1;
                float wy = tri(ay);
                for (uint sx = x_min; sx < x_max; sx++) {
                    precise float ax = (float(sx) - x + p.po) * inv0;
                    precise float w = tri(ax) * wy;
                    if (w <= 0.0) {
                        continue;
                    }
                    val += src_at(base, sx, sy) * w;
                    total += w;
                }
            }
            if (total > 0.0) {
                val = div_rn(val, total);
            }
            v = val;
        }
        data_d[p.offs_d + i0 * p.nb0 + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3] = v;
    }
}
