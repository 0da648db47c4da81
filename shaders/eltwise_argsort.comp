#version 450
// eltwise_argsort.comp: for each row of an f32 tensor, the i32 indices that
// sort it ascending or descending, stably, as the CPU reference: equal values
// keep their index order, -0 equals +0, NaNs are equal to each other and come
// before every number ascending, after every number descending. With topk set
// (TOP_K) only the first nout indices are written, the first two swapped as the
// CPU kernel does.
//
// One workgroup sorts one row in shared memory: a bitonic sort of (value,
// index) keys compared lexicographically (which makes it stable), the row
// padded to SORT_N (a power of two >= ne0) with keys that sort last.
//
// Bindings: 0 = src (f32), 1 = dst (i32).
// Specialization: constant 0 = workgroup size (default 256), constant 1 =
// SORT_N (the shared arrays hold SORT_N values and indices).
// Dispatch: x = any number of workgroups; workgroup w sorts rows w,
// w + groups, ...

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(constant_id = 1) const uint SORT_N = 1024u;

layout(std430, binding = 0) readonly buffer Src { float data_a[]; };
layout(std430, binding = 1) writeonly buffer Dst { int data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;     // shape (src == dst)
    uint nb00, nb01, nb02, nb03; // src strides (elements)
    uint nb0, nb1, nb2, nb3;     // dst strides (elements)
    uint offs_a, offs_d;
    uint nrows;                  // ne1*ne2*ne3
    uint desc;                   // 1: descending
    uint nout;                   // indices written per row (ne0 for ARGSORT)
    uint topk;                   // 1: TOP_K (swap the first two)
} p;

shared float sh_v[SORT_N];
shared uint sh_i[SORT_N];

// before reports whether key (va, ia) sorts before key (vb, ib).
bool before(float va, uint ia, float vb, uint ib) {
    bool pa = ia >= p.ne0;
    bool pb = ib >= p.ne0;
    if (pa || pb) {
        return pa == pb ? ia < ib : pb; // padding last
    }
    bool na = isnan(va);
    bool nb = isnan(vb);
    if (na != nb) {
        return p.desc != 0u ? nb : na;
    }
    if (!na && va != vb) {
        return p.desc != 0u ? va > vb : va < vb;
    }
    return ia < ib;
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    for (uint r = gl_WorkGroupID.x; r < p.nrows; r += gl_NumWorkGroups.x) {
        uint i1 = r % p.ne1;
        uint t = r / p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint base_a = p.offs_a + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
        uint base_d = p.offs_d + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
        for (uint i = tid; i < SORT_N; i += gl_WorkGroupSize.x) {
            sh_v[i] = i < p.ne0 ? data_a[base_a + i * p.nb00] : 0.0;
            sh_i[i] = i;
        }
        barrier();
        for (uint k = 2u; k <= SORT_N; k <<= 1u) {
            for (uint j = k >> 1u; j > 0u; j >>= 1u) {
                for (uint i = tid; i < SORT_N; i += gl_WorkGroupSize.x) {
                    uint l = i ^ j;
                    if (l > i) {
                        float vi = sh_v[i];
                        float vl = sh_v[l];
                        uint ii = sh_i[i];
                        uint il = sh_i[l];
                        bool up = (i & k) == 0u;
                        if (up ? before(vl, il, vi, ii) : before(vi, ii, vl, il)) {
                            sh_v[i] = vl;
                            sh_v[l] = vi;
                            sh_i[i] = il;
                            sh_i[l] = ii;
                        }
                    }
                }
                barrier();
            }
        }
        for (uint i = tid; i < p.nout; i += gl_WorkGroupSize.x) {
            uint from = i;
            if (p.topk != 0u && p.nout > 1u && i < 2u) {
                from = 1u - i;
            }
            data_d[base_d + i * p.nb0] = int(sh_i[from]);
        }
        barrier();
    }
}
