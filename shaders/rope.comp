#version 450
// rope.comp: ROPE (modes NORMAL, NEOX, MROPE, VISION and IMROPE, with YaRN,
// optional frequency factors and ggml_rope_set_offset's offset) of f32 or f16
// tensors [ne0, ne1, ne2 = tokens, ne3], after the CPU kernel
// (backends/cpu/ops_rope.go). One thread per rotated pair k of a row (NORMAL:
// elements o+2k, o+2k+1; the others: o+k, o+k+half, o = n_offs, half = n_dims/2,
// n_dims for VISION) or per copied element (those outside o..o+2*pairs-1). Each
// thread reads and writes only its own elements, so dst may alias src (in place).
//
// The multi modes (mode & 8) read four positions per token (component c of token
// i2 at pos[c*ne2 + i2]); pair k lies in sector k % sum(sections) and takes its
// component as the CPU's ropeCache: MROPE (8) and VISION (24) by section ranges,
// IMROPE (40) interleaved. theta = pos[c] * theta_scale^e with e = k, except that
// VISION restarts each component's exponent at its section's first sector.
//
// Precision: the CPU builds theta in float64. Here theta is a double-float
// (hi + lo, about 44 bits): theta_scale^e by binary exponentiation from the host's
// float64 theta_scale split in two floats, times the position, divided by the
// frequency factor and mixed for YaRN, all in double-float; it is reduced modulo
// pi/2 against a three-float pi/2, and sin/cos of the remainder come from our own
// minimax polynomials (about 1 ulp). The rotation itself is float. So the result
// matches the CPU to float precision at any position below 2^24, and does not
// depend on the device's sin/cos (Vulkan allows them 2^-11 absolute error).
// Double-float steps need exact float rounding: they are marked precise.
//
// ROPE_BACK (define BACK) is the same map with the rotation by -theta (sin
// negated): the transpose of the forward rotation, YaRN's magnitude included.
//
// SET_ROWS (with CACHE_F32, CACHE_F16 or CACHE_BF16): ROPE of one token (f32, modes NORMAL and
// NEOX) fused with the SET_ROWS that stores its result as one row of a KV cache: every element
// is written to dst (contiguous) and, converted as set_rows.comp converts it, to element
// i1 * ne0 + i0 of cache row idx[0]; an index outside [0, cache rows) writes no cache element
// and records the source row (0) in the status word as set_rows.comp does. The push block
// trades the dst strides (dst is contiguous) and the multi modes' sections for the cache's
// parameters.
//
// Defines: ROPE_F16 for f16 tensors (else f32); BACK for ROPE_BACK; SET_ROWS and a CACHE_ type.
// Bindings: 0 = src, 1 = positions (i32), 2 = freq factors (f32; any buffer when
// p.has_ff is 0), 3 = dst; with SET_ROWS 4 = the index (i32 or i64), 5 = the cache row view,
// 6 = status.
// Specialization: constant 0 = workgroup size (default 256).
// Dispatch: any x grid (grid-stride loop over p.n items).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

#define SRC_NONE
#define DST_NONE
#if defined(ROPE_F16) || defined(CACHE_F16) || defined(CACHE_BF16)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "rows.glsl"

#if defined(ROPE_F16)
layout(std430, binding = 0) readonly buffer BufS { uint16_t data_s[]; };
layout(std430, binding = 3) buffer BufD { uint16_t data_d[]; };
float load_s(uint i) { return half_to_float(uint(data_s[i])); }
void store_d(uint i, float v) { data_d[i] = uint16_t(f32_bits_to_f16(floatBitsToUint(v))); }
#else
layout(std430, binding = 0) readonly buffer BufS { float data_s[]; };
layout(std430, binding = 3) buffer BufD { float data_d[]; };
float load_s(uint i) { return data_s[i]; }
void store_d(uint i, float v) { data_d[i] = v; }
#endif
layout(std430, binding = 1) readonly buffer BufP { int data_p[]; };
layout(std430, binding = 2) readonly buffer BufF { float data_f[]; };

#if defined(SET_ROWS)
layout(std430, binding = 4) readonly buffer BufI { uint data_i[]; };
#if defined(CACHE_F32)
layout(std430, binding = 5) writeonly buffer BufC { float data_c[]; };
void store_c(uint i, float v) { data_c[i] = v; }
#else
layout(std430, binding = 5) writeonly buffer BufC { uint16_t data_c[]; };
#if defined(CACHE_F16)
void store_c(uint i, float v) { data_c[i] = uint16_t(f32_bits_to_f16(floatBitsToUint(v))); }
#else
void store_c(uint i, float v) { data_c[i] = uint16_t(f32_bits_to_bf16(floatBitsToUint(v))); }
#endif
#endif
layout(std430, binding = 6) buffer BufStatus { uint status; };
#endif

layout(push_constant) uniform Params {
    uint ne0, ne1, ne2, ne3;
    uint nb00, nb01, nb02, nb03;   // src strides (elements)
#if defined(SET_ROWS)
    uint offs_i, offs_c;           // the index (32-bit words), the cache view (its units)
    uint c_nb1, c_rows;            // cache row stride (units), cache rows
#else
    uint nb0, nb1, nb2, nb3;       // dst strides (elements)
#endif
    uint nbp, nbf;                 // position and freq-factor strides (elements)
    uint offs_s, offs_p, offs_f, offs_d;
    uint n_dims, mode, has_ff;     // mode: ggml's (0, 2, 8, 24, 40)
    float theta_scale, theta_scale_lo; // freq_base^(-2/n_dims) as a double-float
    float freq_scale, ext_factor;
    float mscale;                  // attn_factor, times 1 + 0.1 ln(1/freq_scale) with YaRN
    float corr_lo, corr_hi;        // YaRN correction dims
    uint n;                        // rows * (pairs + ne0 - 2 * pairs)
    uint n_offs;                   // first rotated element (ggml_rope_set_offset)
#if defined(SET_ROWS)
    uint idx64, c_nb0;             // the index is i64; cache element stride (units)
} p;
// dst is contiguous; the fused modes have no sections.
#define P_NB0 1u
#define P_NB1 p.ne0
#define P_NB2 (p.ne0 * p.ne1)
#define P_NB3 (p.ne0 * p.ne1 * p.ne2)
#define P_SEC01 0u
#define P_SEC23 0u
#else
    uint sec01, sec23;             // sections t | h << 16, w | e << 16 (multi modes)
} p;
#define P_NB0 p.nb0
#define P_NB1 p.nb1
#define P_NB2 p.nb2
#define P_NB3 p.nb3
#define P_SEC01 p.sec01
#define P_SEC23 p.sec23
#endif

// ---- double-float arithmetic (x = hi, y = lo) ----

vec2 df_two_sum(float a, float b) {
    precise float s = a + b;
    precise float bb = s - a;
    precise float e = (a - (s - bb)) + (b - bb);
    return vec2(s, e);
}

vec2 df_add(vec2 a, vec2 b) {
    vec2 s = df_two_sum(a.x, b.x);
    precise float e = s.y + (a.y + b.y);
    return df_two_sum(s.x, e);
}

vec2 df_prod(float a, float b) {
    precise float p = a * b;
    return vec2(p, two_prod_err(a, b, p));
}

vec2 df_mul(vec2 a, vec2 b) {
    vec2 p = df_prod(a.x, b.x);
    precise float e = p.y + (a.x * b.y + a.y * b.x);
    return df_two_sum(p.x, e);
}

vec2 df_mul_f(vec2 a, float b) {
    vec2 p = df_prod(a.x, b);
    precise float e = p.y + a.y * b;
    return df_two_sum(p.x, e);
}

vec2 df_div_f(vec2 a, float b) {
    float q1 = a.x / b;
    vec2 p = df_prod(q1, b);
    precise float r = ((a.x - p.x) - p.y) + a.y; // a.x - p.x is exact
    float q2 = r / b;
    return df_two_sum(q1, q2);
}

// rope_sincos returns sin and cos of theta (a double-float): theta - n*pi/2 with
// pi/2 = C1 + C2 + C3 (float bits 0x3fc90fdb, 0xb33bbd2e, 0xa6f72ced), then
// cephes' sinf/cosf polynomials on |r| <= pi/4 and the quadrant n mod 4.
void rope_sincos(vec2 theta, out float s, out float c) {
    const float C1 = uintBitsToFloat(0x3fc90fdbu);
    const float C2 = uintBitsToFloat(0xb33bbd2eu);
    const float C3 = uintBitsToFloat(0xa6f72cedu);
    float n = floor(theta.x * 0.636619772 + 0.5);
    vec2 t = df_add(theta, -df_prod(n, C1));
    t = df_add(t, -df_prod(n, C2));
    precise float r = t.x + (t.y - n * C3);
    float z = r * r;
    float sp = r + r * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
    float cp = 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
    switch (uint(int(n)) & 3u) {
    case 0u: s = sp; c = cp; break;
    case 1u: s = cp; c = -sp; break;
    case 2u: s = -sp; c = -cp; break;
    default: s = -cp; c = sp; break;
    }
}

// rope_component picks pair k's position component c and theta's exponent e (the
// CPU's ropeCache).
void rope_component(uint k, out uint c, out uint e) {
    c = 0u;
    e = k;
    if ((p.mode & 8u) == 0u) {
        return;
    }
    uint s0 = P_SEC01 & 0xffffu, s1 = P_SEC01 >> 16, s2 = P_SEC23 & 0xffffu, s3 = P_SEC23 >> 16;
    uint sw = s0 + s1, se = sw + s2, sect = se + s3;
    uint sector = k % sect;
    if (p.mode == 40u) {
        uint m = sector % 3u;
        if (m == 1u && sector < 3u * s1) {
            c = 1u;
        } else if (m == 2u && sector < 3u * s2) {
            c = 2u;
        } else if (m == 0u && sector < 3u * s0) {
            c = 0u;
        } else {
            c = 3u;
        }
    } else if (sector >= se) {
        c = 3u;
    } else if (sector >= sw) {
        c = 2u;
    } else if (sector >= s0) {
        c = 1u;
    }
    if (p.mode == 24u) {
        // VISION: component c's exponent restarts where sector == its section's start,
        // unless an earlier component starts at the same sector (ggml's chain).
        uint starts[4] = uint[4](0u, s0, sw, se);
        uint r = starts[c];
        bool resets = r < sect;
        for (uint j = 0u; j < c; j++) {
            resets = resets && starts[j] != r;
        }
        if (resets && k >= r) {
            e = (k - r) % sect;
        }
    }
}

void main() {
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    bool vision = p.mode == 24u;
    uint pairs = vision ? p.n_dims : p.n_dims / 2u;
    uint half_dims = pairs; // the second element of a NEOX pair: k + half_dims
    uint span = 2u * pairs;
    uint per_row = pairs + (p.ne0 - span);
#if defined(SET_ROWS)
    // The cache row: the index validated once (set_rows.comp's index()), the cache untouched
    // when it is out of range.
    uint cr = data_i[p.offs_i];
    bool cache_ok = p.idx64 != 0u ? (data_i[p.offs_i + 1u] == 0u && cr < p.c_rows) : (cr < p.c_rows);
    if (!cache_ok && gl_GlobalInvocationID.x == 0u) {
        atomicMax(status, ~0u); // source row 0
    }
    uint cb = p.offs_c + cr * p.c_nb1;
#endif
    for (uint it = gl_GlobalInvocationID.x; it < p.n; it += stride) {
        uint j = it % per_row;
        uint t = it / per_row;
        uint i1 = t % p.ne1;
        t /= p.ne1;
        uint i2 = t % p.ne2;
        uint i3 = t / p.ne2;
        uint is = p.offs_s + i1 * p.nb01 + i2 * p.nb02 + i3 * p.nb03;
        uint id = p.offs_d + i1 * P_NB1 + i2 * P_NB2 + i3 * P_NB3;
        if (j >= pairs) {
            uint i0 = j - pairs;
            if (i0 >= p.n_offs) {
                i0 += span;
            }
            float v = load_s(is + i0 * p.nb00);
            store_d(id + i0 * P_NB0, v);
#if defined(SET_ROWS)
            if (cache_ok) {
                store_c(cb + (i1 * p.ne0 + i0) * p.c_nb0, v);
            }
#endif
            continue;
        }
        uint k = j;
        uint comp, ex;
        rope_component(k, comp, ex);
        // theta_scale^ex by binary exponentiation (double-float)
        vec2 pw = vec2(1.0, 0.0), b = vec2(p.theta_scale, p.theta_scale_lo);
        for (uint e = ex; e != 0u; e >>= 1) {
            if ((e & 1u) != 0u) {
                pw = df_mul(pw, b);
            }
            b = df_mul(b, b);
        }
        vec2 extrap = df_mul_f(pw, float(data_p[p.offs_p + (comp * p.ne2 + i2) * p.nbp]));
        if (p.has_ff != 0u) {
            extrap = df_div_f(extrap, data_f[p.offs_f + k * p.nbf]);
        }
        vec2 theta = df_mul_f(extrap, p.freq_scale);
        if (p.ext_factor != 0.0) {
            // ramp = 1 - clamp((k - lo) / max(0.001, hi - lo), 0, 1); theta += (extrap - theta) * ramp * ext
            float num = float(k) - p.corr_lo; // integers: exact
            float den = max(0.001, p.corr_hi - p.corr_lo);
            vec2 mix;
            if (num <= 0.0) {
                mix = vec2(p.ext_factor, 0.0);
            } else if (num >= den) {
                mix = vec2(0.0);
            } else {
                mix = df_mul_f(df_add(vec2(1.0, 0.0), -df_div_f(vec2(num, 0.0), den)), p.ext_factor);
            }
            theta = df_add(theta, df_mul(df_add(extrap, -theta), mix));
        }
        float sn, cs;
        rope_sincos(theta, sn, cs);
        cs *= p.mscale;
        sn *= p.mscale;
#if defined(BACK)
        sn = -sn;
#endif
        bool neox = p.mode != 0u;
        uint j0 = p.n_offs + (neox ? k : 2u * k);
        uint j1 = p.n_offs + (neox ? k + half_dims : 2u * k + 1u);
        float x0 = load_s(is + j0 * p.nb00);
        float x1 = load_s(is + j1 * p.nb00);
        float y0 = x0 * cs - x1 * sn;
        float y1 = x0 * sn + x1 * cs;
        store_d(id + j0 * P_NB0, y0);
        store_d(id + j1 * P_NB0, y1);
#if defined(SET_ROWS)
        if (cache_ok) {
            store_c(cb + (i1 * p.ne0 + j0) * p.c_nb0, y0);
            store_c(cb + (i1 * p.ne0 + j1) * p.c_nb0, y1);
        }
#endif
    }
}
