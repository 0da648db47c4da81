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
// With LONG defined, rows too long for shared memory are sorted in dst itself,
// which holds the row's indices between dispatches; a key is (src value at the
// index, index). The sort is the bitonic network in its one-direction form
// (each merge of a block of size k starts by comparing position i with its
// mirror i ^ (k - 1), then i with i ^ j for j = k/4 .. 1, the smaller key
// always going to the lower position), over the nout positions of dst padded
// to a power of two with keys that sort last: padding never moves in this
// form, so it is virtual (pairs reaching past nout are skipped). The host
// records, per row length:
//   mode 3  (TOP_K only, first) one workgroup per row selects the nout largest
//           keys without sorting them: a radix select on order-preserving uint
//           keys (4 passes of 8 bits, a 256-bin histogram in shared memory)
//           finds the nout-th key T and how many keys equal to T to take, then
//           each invocation walks its contiguous slice of the row and writes
//           the indices of keys above T, and of keys equal to T the ones with
//           the smallest indices (a prefix count over the slices), into dst in
//           any order (a shared atomic slot counter);
//   mode 0  each workgroup sorts one chunk of SORT_N positions in shared memory
//           (ARGSORT: dst[i] = i first; TOP_K: the indices mode 3 wrote);
//   mode 1  one compare-exchange step (block k, distance j >= SORT_N, mirror
//           when j = k/2) over global memory, one invocation per pair;
//   mode 2  each workgroup finishes block k's merge for distances SORT_N/2 .. 1
//           within one chunk in shared memory;
// with a barrier between dispatches. TOP_K's last pass (topk = 2) swaps the
// first two positions as it writes them.
//
// Bindings: 0 = src (f32), 1 = dst (i32).
// Specialization: constant 0 = workgroup size (default 256), constant 1 =
// SORT_N (the shared arrays hold SORT_N values and indices; LONG: the chunk,
// at least 256 + the workgroup size + 3 for TOP_K).
// Dispatch: x = any number of workgroups; workgroup w sorts rows w,
// w + groups, ... LONG: x walks the chunks (modes 0, 2) or the pairs of a row in
// workgroup-size groups (mode 1), or is 1 (mode 3); y walks the rows.

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(constant_id = 1) const uint SORT_N = 1024u;

layout(std430, binding = 0) readonly buffer Src { float data_a[]; };
#if defined(LONG)
layout(std430, binding = 1) buffer Dst { int data_d[]; };
#else
layout(std430, binding = 1) writeonly buffer Dst { int data_d[]; };
#endif

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;     // shape (src == dst)
    uint nb00, nb01, nb02, nb03; // src strides (elements)
    uint nb0, nb1, nb2, nb3;     // dst strides (elements)
    uint offs_a, offs_d;
    uint nrows;                  // ne1*ne2*ne3
    uint desc;                   // 1: descending
    uint nout;                   // indices written per row (ne0 for ARGSORT)
    uint topk;                   // 1: TOP_K (swap the first two); LONG: 2 on TOP_K's last pass
#if defined(LONG)
    uint mode;                   // 0 chunk sort, 1 global step, 2 chunk merge, 3 TOP_K select
    uint k, j;                   // block size and distance (modes 1 and 2)
    uint npad;                   // padded nout (a power of two >= SORT_N)
#endif
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

#if defined(LONG)
// cmpx orders the keys at shared positions i < l (the smaller first).
void cmpx(uint i, uint l) {
    float vi = sh_v[i];
    float vl = sh_v[l];
    uint ii = sh_i[i];
    uint il = sh_i[l];
    if (before(vl, il, vi, ii)) {
        sh_v[i] = vl;
        sh_v[l] = vi;
        sh_i[i] = il;
        sh_i[l] = ii;
    }
}

// PAD_INDEX marks a padding position in shared memory (before sorts it last).
const uint PAD_INDEX = 0xFFFFFFFFu;

// sort_key maps a value to a uint whose decreasing order is the descending
// order of before: NaNs lowest (all equal), -0 equal to +0.
uint sort_key(float v) {
    if (isnan(v)) {
        return 0u;
    }
    if (v == 0.0) {
        return 0x80000000u;
    }
    uint u = floatBitsToUint(v);
    return (u & 0x80000000u) != 0u ? ~u : u | 0x80000000u;
}

// select_top is mode 3 for one row: dst's nout positions get the indices of the
// row's nout first keys in before's descending order, in no particular order.
// sh_i holds the histogram (0..255), each invocation's count of keys equal to
// the threshold (256 + tid) and the prefix, keys left to take and write slot.
void select_top(uint base_a, uint base_d) {
    const uint tid = gl_LocalInvocationID.x;
    const uint wg = gl_WorkGroupSize.x;
    const uint CNT = 256u;
    const uint PREFIX = CNT + wg;
    const uint LEFT = PREFIX + 1u;
    const uint SLOT = PREFIX + 2u;
    if (tid == 0u) {
        sh_i[PREFIX] = 0u;
        sh_i[LEFT] = p.nout;
    }
    for (uint shift = 32u; shift > 0u;) {
        shift -= 8u;
        for (uint b = tid; b < 256u; b += wg) {
            sh_i[b] = 0u;
        }
        barrier();
        uint prefix = sh_i[PREFIX];
        uint mask = shift == 24u ? 0u : 0xFFFFFFFFu << (shift + 8u);
        for (uint i = tid; i < p.ne0; i += wg) {
            uint key = sort_key(data_a[base_a + i * p.nb00]);
            if ((key & mask) == prefix) {
                atomicAdd(sh_i[(key >> shift) & 255u], 1u);
            }
        }
        barrier();
        if (tid == 0u) {
            // The digit holding the left-th largest key of those under prefix.
            uint left = sh_i[LEFT];
            uint b = 255u;
            for (; b > 0u; b--) {
                uint c = sh_i[b];
                if (c >= left) {
                    break;
                }
                left -= c;
            }
            sh_i[PREFIX] = prefix | (b << shift);
            sh_i[LEFT] = left;
        }
        barrier();
    }
    // The threshold key and how many keys equal to it are taken (the first ones by index).
    uint thr = sh_i[PREFIX];
    uint left = sh_i[LEFT];
    uint seg = (p.ne0 + wg - 1u) / wg;
    uint s0 = min(tid * seg, p.ne0);
    uint s1 = min(s0 + seg, p.ne0);
    uint eq = 0u;
    for (uint i = s0; i < s1; i++) {
        if (sort_key(data_a[base_a + i * p.nb00]) == thr) {
            eq++;
        }
    }
    sh_i[CNT + tid] = eq;
    if (tid == 0u) {
        sh_i[SLOT] = 0u;
    }
    barrier();
    uint seen = 0u; // keys equal to thr before this slice
    for (uint t = 0u; t < tid; t++) {
        seen += sh_i[CNT + t];
    }
    for (uint i = s0; i < s1; i++) {
        uint key = sort_key(data_a[base_a + i * p.nb00]);
        bool take = key > thr;
        if (key == thr) {
            take = seen < left;
            seen++;
        }
        if (take) {
            data_d[base_d + atomicAdd(sh_i[SLOT], 1u) * p.nb0] = int(i);
        }
    }
    barrier();
}

void main() {
    const uint tid = gl_LocalInvocationID.x;
    const uint wg = gl_WorkGroupSize.x;
    for (uint r = gl_WorkGroupID.y; r < p.nrows; r += gl_NumWorkGroups.y) {
        uint i1 = r % p.ne1;
        uint t = r / p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint base_a = p.offs_a + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
        uint base_d = p.offs_d + i1 * p.nb1 + i2 * p.nb2 + i3 * p.nb3;
        if (p.mode == 3u) {
            select_top(base_a, base_d);
            continue;
        }
        if (p.mode == 1u) {
            // Pair q of the row: i in the lower half of its block of 2j, l its partner.
            for (uint q = gl_GlobalInvocationID.x; q < p.npad / 2u; q += gl_NumWorkGroups.x * wg) {
                uint i = (q / p.j) * 2u * p.j + q % p.j;
                uint l = p.j == p.k / 2u ? i ^ (p.k - 1u) : i + p.j;
                if (l >= p.nout) {
                    continue; // padding: never moves
                }
                uint ii = uint(data_d[base_d + i * p.nb0]);
                uint il = uint(data_d[base_d + l * p.nb0]);
                float vi = data_a[base_a + ii * p.nb00];
                float vl = data_a[base_a + il * p.nb00];
                if (before(vl, il, vi, ii)) {
                    data_d[base_d + i * p.nb0] = int(il);
                    data_d[base_d + l * p.nb0] = int(ii);
                }
            }
            continue;
        }
        for (uint c = gl_WorkGroupID.x; c < p.npad / SORT_N; c += gl_NumWorkGroups.x) {
            uint c0 = c * SORT_N;
            for (uint i = tid; i < SORT_N; i += wg) {
                uint pos = c0 + i;
                uint idx = PAD_INDEX;
                if (pos < p.nout) {
                    idx = p.mode == 2u || p.topk != 0u ? uint(data_d[base_d + pos * p.nb0]) : pos;
                }
                sh_i[i] = idx;
                sh_v[i] = pos < p.nout ? data_a[base_a + idx * p.nb00] : 0.0;
            }
            barrier();
            if (p.mode == 0u) {
                for (uint k = 2u; k <= SORT_N; k <<= 1u) {
                    for (uint j = k >> 1u; j > 0u; j >>= 1u) {
                        for (uint q = tid; q < SORT_N / 2u; q += wg) {
                            uint i = (q / j) * 2u * j + q % j;
                            cmpx(i, j == k >> 1u ? i ^ (k - 1u) : i + j);
                        }
                        barrier();
                    }
                }
            } else {
                for (uint j = SORT_N >> 1u; j > 0u; j >>= 1u) {
                    for (uint q = tid; q < SORT_N / 2u; q += wg) {
                        uint i = (q / j) * 2u * j + q % j;
                        cmpx(i, i + j);
                    }
                    barrier();
                }
            }
            for (uint i = tid; i < SORT_N; i += wg) {
                uint pos = c0 + i;
                uint from = i;
                if (p.topk == 2u && pos < 2u && p.nout > 1u) {
                    from = 1u - i;
                }
                if (pos < p.nout) {
                    data_d[base_d + pos * p.nb0] = int(sh_i[from]);
                }
            }
            barrier();
        }
    }
}
#else
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
#endif
