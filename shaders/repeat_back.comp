#version 450
// repeat_back.comp: REPEAT_BACK, the sum of a tiled f32 tensor over its tiles:
// dst[k] = sum over tiles j of src[j * ne_dst + k], any strides. One thread per dst
// element adds its tiles in the CPU kernel's order (j3 outermost, j0 innermost,
// starting from 0), so the results agree bit for bit.
//
// Bindings: 0 = src, 1 = dst.
// Specialization: constant 0 = workgroup size (default 256).
// Dispatch: any x grid (grid-stride loop).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer BufS { float data_s[]; };
layout(std430, binding = 1) writeonly buffer BufD { float data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;       // dst shape
    uint nb0, nb1, nb2, nb3;       // dst strides (floats)
    uint nbs0, nbs1, nbs2, nbs3;   // src strides (floats)
    uint nr0, nr1, nr2, nr3;       // tiles per dim (src ne / dst ne)
    uint offs_s, offs_d;
    uint n;                        // dst elements
} p;

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        uint k0 = i % p.ne0;
        uint t = i / p.ne0;
        uint k1 = t % p.ne1;
        t /= p.ne1;
        uint k2 = t % p.ne2;
        uint k3 = t / p.ne2;
        float s = 0.0;
        for (uint j3 = 0u; j3 < p.nr3; j3++) {
            for (uint j2 = 0u; j2 < p.nr2; j2++) {
                for (uint j1 = 0u; j1 < p.nr1; j1++) {
                    uint base = p.offs_s + (j3 * p.ne3 + k3) * p.nbs3 + (j2 * p.ne2 + k2) * p.nbs2 +
                                (j1 * p.ne1 + k1) * p.nbs1;
                    for (uint j0 = 0u; j0 < p.nr0; j0++) {
                        s += data_s[base + (j0 * p.ne0 + k0) * p.nbs0];
                    }
                }
            }
        }
        data_d[p.offs_d + k0 * p.nb0 + k1 * p.nb1 + k2 * p.nb2 + k3 * p.nb3] = s;
    }
}
