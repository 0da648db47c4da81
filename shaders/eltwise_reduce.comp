#version 450
// eltwise_reduce.comp: sums of a 4-D tensor of any layout: SUM (every
// element into one), SUM_ROWS and MEAN (each row into one element). Output r
// sums the m elements whose logical (row-major, ne0 fastest) indices are
// r*m .. r*m+m-1: m = ne0 for rows, m = n for SUM.
//
// The CPU reference adds in float64; here every invocation keeps a
// compensated (Neumaier) f32 sum of its elements and the workgroup combines
// the (sum, error) pairs with exact two-sums, so cancellation does not lose
// the result. Infinities and NaN follow the plain sum.
//
// Defines: TYPE_F32, TYPE_F16 or TYPE_BF16 (src and dst type).
// Bindings: 0 = src, 1 = dst.
// Specialization: constant 0 = workgroup size (a power of two, default 256),
// constant 1 = 1 for MEAN (divide by m), 0 for sums.
// Dispatch: x = any number of workgroups; workgroup w reduces outputs
// w, w + groups, ...

#include "eltwise.glsl"

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(constant_id = 1) const uint MEAN = 0u;

layout(std430, binding = 0) readonly buffer Src { ELT_T data_a[]; };
layout(std430, binding = 1) writeonly buffer Dst { ELT_T data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;     // src shape
    uint nb00, nb01, nb02, nb03; // src strides (elements)
    uint dn1, dn2;               // output r is dst element (i1, i2, i3), r = i1 + dn1*(i2 + dn2*i3)
    uint nb1, nb2, nb3;          // dst strides (elements)
    uint m;                      // elements per output
    uint nout;                   // outputs
    uint offs_a, offs_d;
} p;

shared float sh_s[gl_WorkGroupSize.x];
shared float sh_c[gl_WorkGroupSize.x];

// two_sum returns a + b rounded and sets err to the exact rounding error.
float two_sum(float a, float b, out float err) {
    precise float s = a + b;
    precise float bb = s - a;
    precise float e = (a - (s - bb)) + (b - bb);
    err = e;
    return s;
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    for (uint r = gl_WorkGroupID.x; r < p.nout; r += gl_NumWorkGroups.x) {
        float s = 0.0;
        float c = 0.0;
        for (uint j = tid; j < p.m; j += gl_WorkGroupSize.x) {
            uint i = r * p.m + j;
            uint i0 = i % p.ne0;
            uint t = i / p.ne0;
            uint i1 = t % p.ne1;
            t /= p.ne1;
            uint i2 = t % p.ne2;
            uint i3 = t / p.ne2;
            float x = elt_load(data_a[p.offs_a + i0 * p.nb00 + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03]);
            float e;
            s = two_sum(s, x, e);
            precise float cc = c + e;
            c = cc;
        }
        sh_s[tid] = s;
        sh_c[tid] = c;
        barrier();
        for (uint h = gl_WorkGroupSize.x / 2u; h > 0u; h >>= 1u) {
            if (tid < h) {
                float e;
                float s2 = two_sum(sh_s[tid], sh_s[tid + h], e);
                precise float c2 = (sh_c[tid] + sh_c[tid + h]) + e;
                sh_s[tid] = s2;
                sh_c[tid] = c2;
            }
            barrier();
        }
        if (tid == 0u) {
            float total = sh_s[0];
            if (!isinf(total) && !isnan(total)) {
                precise float tt = total + sh_c[0];
                total = tt;
            }
            if (MEAN != 0u) {
                total = total / float(p.m);
            }
            uint i1 = r % p.dn1;
            uint t = r / p.dn1;
            uint i2 = t % p.dn2;
            uint i3 = t / p.dn2;
            data_d[p.offs_d + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3] = elt_store(total);
        }
        barrier();
    }
}
