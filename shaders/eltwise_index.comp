#version 450
// eltwise_index.comp: generators, fills and index-shuffling ops on 4-byte
// elements (f32, or any 4-byte type where the op only moves bits), one op per
// MODE, matching the CPU kernels:
//   0 ADD_ID     dst[i] = a[i] + b[i0, ids[i1, i2]] (an id outside b gives NaN)
//   1 FILL       dst[i] = prm0 (bits)
//   2 TRI        dst[i] = a[i] where the triangle prm0 keeps (i0, i1), else 0
//   3 DIAG       dst[i] = a[i0, 0, i2, i3] where i0 == i1, else 0
//   4 ROLL       dst[i] = a[(i - shift) mod ne], shifts prm0..3
//   5 PAD        dst[i] = a[i - left] inside a, else 0 (prm4: wrap around)
//   6 PAD_REFLECT_1D  dst[i] = a[reflect(i0 - prm0), i1, i2, i3]
//   7 ARANGE     dst[i] = start + step*i (prm0, prm2), not contracted to an fma
//   8 TIMESTEP_EMBEDDING  dst[j, r] = cos/sin(t_r * exp(-ln(max_period)*j/half))
//                with dim prm0, ln(max_period) prm1 (f32 bits), t from a
//   9 COPY       dst[i] = a[i] (SET's first pass)
//  10 SET        dst at byte offset prm3 + i0*4 + i1*prm0 + i2*prm1 + i3*prm2 =
//                b[i] (work items: b's elements)
//  11 CUMSUM     one workgroup per row: the running f32 sum, scanned in tiles
//                of the workgroup size (a tree scan per tile plus the carry)
//  12 L2_NORM    one workgroup per row: x / max(sqrt(sum x*x), eps = prm0)
//  13 COUNT_EQUAL  one workgroup: the number of equal elements of a and b,
//                written as an i64 (two words)
// dst is contiguous: element i of the work shape ne is dst word offs_d + i.
//
// Bindings: 0 = a, 1 = b, 2 = ids (i32), 3 = dst; unused ones may alias others.
// Specialization: constant 0 = workgroup size (power of two, default 256),
// constant 1 = MODE.
// Dispatch: any x grid (grid-stride loop over the n work items); CUMSUM and
// L2_NORM any x grid of workgroups (grid-stride loop over the n rows);
// COUNT_EQUAL one workgroup. (A row per workgroup keeps every invocation's
// loops short: llvmpipe ends an invocation after 65535 loop iterations.)

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(constant_id = 1) const uint MODE = 0u;

layout(std430, binding = 0) readonly buffer SrcA { uint data_a[]; };
layout(std430, binding = 1) readonly buffer SrcB { uint data_b[]; };
layout(std430, binding = 2) readonly buffer Ids { int data_i[]; };
layout(std430, binding = 3) buffer Dst { uint data_d[]; };

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;     // work shape (dst's, or b's for SET)
    uint nea0, nea1, nea2, nea3; // a's shape
    uint nba0, nba1, nba2, nba3; // a's strides (elements)
    uint neb0, neb1, neb2, neb3; // b's shape
    uint nbb0, nbb1, nbb2, nbb3; // b's strides (elements)
    uint offs_a, offs_b, offs_i, offs_d;
    uint n;                      // work items
    uint prm0, prm1, prm2, prm3, prm4, prm5, prm6;
} p;

shared uint red[gl_WorkGroupSize.x];

float fa(uint i0, uint i1, uint i2, uint i3) {
    return uintBitsToFloat(data_a[p.offs_a + i0 * p.nba0 + i1 * p.nba1 + i2 * p.nba2 + i3 * p.nba3]);
}

// wrap returns i modulo m for i in [-m, 2m).
uint wrap(int i, uint m) {
    int mi = int(m);
    return uint(i < 0 ? i + mi : (i >= mi ? i - mi : i));
}

uvec4 unravel(uint i, uvec4 ne) {
    uvec4 idx;
    idx.x = i % ne.x;
    uint t = i / ne.x;
    idx.y = t % ne.y;
    t /= ne.y;
    idx.z = t % ne.z;
    idx.w = t / ne.z;
    return idx;
}

bool tri_keeps(uint tt, uint i0, uint i1) {
    if (tt == 0u) {
        return i0 >= i1;
    } else if (tt == 1u) {
        return i0 > i1;
    } else if (tt == 2u) {
        return i0 <= i1;
    }
    return i0 < i1;
}

void count_equal() {
    uint tid = gl_LocalInvocationID.x;
    uvec4 ne = uvec4(p.nea0, p.nea1, p.nea2, p.nea3);
    uint c = 0u;
    for (uint i = tid; i < p.n; i += gl_WorkGroupSize.x) {
        uvec4 x = unravel(i, ne);
        uint va = data_a[p.offs_a + x.x * p.nba0 + x.y * p.nba1 + x.z * p.nba2 + x.w * p.nba3];
        uint vb = data_b[p.offs_b + x.x * p.nbb0 + x.y * p.nbb1 + x.z * p.nbb2 + x.w * p.nbb3];
        c += va == vb ? 1u : 0u;
    }
    red[tid] = c;
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1) {
        if (tid < s) {
            red[tid] += red[tid + s];
        }
        barrier();
    }
    if (tid == 0u) {
        data_d[p.offs_d] = red[0];
        data_d[p.offs_d + 1u] = 0u;
    }
}

shared float scan[gl_WorkGroupSize.x];

// row_op is CUMSUM or L2_NORM of row r by the whole workgroup (control flow
// uniform in the workgroup: every barrier is reached by all invocations).
void row_op(uint r) {
    uint tid = gl_LocalInvocationID.x;
    uint wg = gl_WorkGroupSize.x;
    uvec4 x = unravel(r * p.nea0, uvec4(p.nea0, p.nea1, p.nea2, p.nea3));
    uint od = p.offs_d + r * p.nea0;
    if (MODE == 11u) {
        float carry = 0.0;
        for (uint base = 0u; base < p.nea0; base += wg) {
            uint i0 = base + tid;
            float v = i0 < p.nea0 ? fa(i0, x.y, x.z, x.w) : 0.0;
            scan[tid] = v;
            barrier();
            // Hillis-Steele inclusive scan of the tile.
            for (uint s = 1u; s < wg; s <<= 1) {
                float add = tid >= s ? scan[tid - s] : 0.0;
                barrier();
                scan[tid] += add;
                barrier();
            }
            if (i0 < p.nea0) {
                data_d[od + i0] = floatBitsToUint(carry + scan[tid]);
            }
            carry += scan[wg - 1u];
            barrier();
        }
        return;
    }
    float part = 0.0;
    for (uint i0 = tid; i0 < p.nea0; i0 += wg) {
        float v = fa(i0, x.y, x.z, x.w);
        part += v * v;
    }
    scan[tid] = part;
    barrier();
    for (uint s = wg / 2u; s > 0u; s >>= 1) {
        if (tid < s) {
            scan[tid] += scan[tid + s];
        }
        barrier();
    }
    float scale = 1.0 / max(sqrt(scan[0]), uintBitsToFloat(p.prm0));
    barrier();
    for (uint i0 = tid; i0 < p.nea0; i0 += wg) {
        data_d[od + i0] = floatBitsToUint(fa(i0, x.y, x.z, x.w) * scale);
    }
}

float element(uvec4 x, uint i) {
    if (MODE == 0u) {
        int id = data_i[p.offs_i + x.y * p.prm0 + x.z * p.prm1];
        if (id < 0 || uint(id) >= p.neb1) {
            return uintBitsToFloat(0x7fc00000u);
        }
        float bv = uintBitsToFloat(data_b[p.offs_b + x.x * p.nbb0 + uint(id) * p.nbb1]);
        return fa(x.x, x.y, x.z, x.w) + bv;
    } else if (MODE == 2u) {
        return tri_keeps(p.prm0, x.x, x.y) ? fa(x.x, x.y, x.z, x.w) : 0.0;
    } else if (MODE == 3u) {
        return x.x == x.y ? fa(x.x, 0u, x.z, x.w) : 0.0;
    } else if (MODE == 4u) {
        return fa(wrap(int(x.x) - int(p.prm0), p.nea0), wrap(int(x.y) - int(p.prm1), p.nea1),
                  wrap(int(x.z) - int(p.prm2), p.nea2), wrap(int(x.w) - int(p.prm3), p.nea3));
    } else if (MODE == 5u) {
        ivec4 j = ivec4(x) - ivec4(int(p.prm0), int(p.prm1), int(p.prm2), int(p.prm3));
        uvec4 nea = uvec4(p.nea0, p.nea1, p.nea2, p.nea3);
        if (p.prm4 != 0u) {
            return fa(wrap(j.x, nea.x), wrap(j.y, nea.y), wrap(j.z, nea.z), wrap(j.w, nea.w));
        }
        if (any(lessThan(j, ivec4(0))) || any(greaterThanEqual(j, ivec4(nea)))) {
            return 0.0;
        }
        return fa(uint(j.x), uint(j.y), uint(j.z), uint(j.w));
    } else if (MODE == 6u) {
        int j = int(x.x) - int(p.prm0);
        int m = int(p.nea0);
        j = j < 0 ? -j : (j >= m ? 2 * (m - 1) - j : j);
        return fa(uint(j), x.y, x.z, x.w);
    } else if (MODE == 7u) {
        precise float prod = uintBitsToFloat(p.prm2) * float(i);
        precise float v = uintBitsToFloat(p.prm0) + prod;
        return v;
    } else if (MODE == 8u) {
        uint half_dim = p.prm0 / 2u;
        if (x.x >= 2u * half_dim) {
            return 0.0;
        }
        uint j = x.x < half_dim ? x.x : x.x - half_dim;
        precise float e = -uintBitsToFloat(p.prm1) * float(j);
        precise float q = e / float(half_dim);
        float arg = fa(x.y, 0u, 0u, 0u) * exp(q);
        return x.x < half_dim ? cos(arg) : sin(arg);
    }
    return fa(x.x, x.y, x.z, x.w); // COPY
}

void main() {
    if (MODE == 13u) {
        count_equal();
        return;
    }
    if (MODE == 11u || MODE == 12u) {
        for (uint r = gl_WorkGroupID.x; r < p.n; r += gl_NumWorkGroups.x) {
            row_op(r);
        }
        return;
    }
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        if (MODE == 1u) {
            data_d[p.offs_d + i] = p.prm0;
            continue;
        }
        uvec4 x = unravel(i, uvec4(p.ne0, p.ne1, p.ne2, p.ne3));
        if (MODE == 10u) {
            uint o = p.prm3 / 4u + x.x + x.y * (p.prm0 / 4u) + x.z * (p.prm1 / 4u) + x.w * (p.prm2 / 4u);
            data_d[p.offs_d + o] = data_b[p.offs_b + x.x * p.nbb0 + x.y * p.nbb1 + x.z * p.nbb2 + x.w * p.nbb3];
            continue;
        }
        if (MODE == 9u) {
            data_d[p.offs_d + i] = data_a[p.offs_a + x.x * p.nba0 + x.y * p.nba1 + x.z * p.nba2 + x.w * p.nba3];
            continue;
        }
        data_d[p.offs_d + i] = floatBitsToUint(element(x, i));
    }
}
