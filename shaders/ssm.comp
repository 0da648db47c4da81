#version 450
// ssm.comp: the state-space and linear-attention ops, one op per MODE, each
// invocation running one independent recurrence serially over the tokens (or
// one output element), in the CPU reference kernels' order of operations:
//   0 SSM_CONV           one output element: the dot of the filter taps
//   1 SSM_SCAN           one state row (sequence, head, head_dim row) through
//                        every token, a workgroup per row (its threads split
//                        the state); Mamba-2 (prm7 = 1) or Mamba-1 decay
//   2 RWKV_WKV6          one state column j (sequence, head) through its tokens
//   3 GATED_LINEAR_ATTN  one state column j, scale prm4 (f32 bits)
//   4 RWKV_WKV7          one state row i (the value index)
//   5 SOLVE_TRI          one right-hand-side column of one matrix
//   6 GATED_DELTA_NET    one row j of the transposed state (column j of S)
// The running states live in dst's state rows (slot 0); snapshot slots are
// copies. Every tensor is f32 (ids i32), addressed in elements from offs_*.
//
// Bindings: 0..6 the node's sources in order (6 as raw words: SSM_SCAN's ids,
// RWKV_WKV7's state), 7 = dst; unused ones may alias others.
// Specialization: constant 0 = workgroup size, constant 1 = MODE.
// Dispatch: any x grid (grid-stride loop over the n work items; SSM_SCAN's
// items are workgroups).

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(constant_id = 1) const uint MODE = 0u;

layout(std430, binding = 0) readonly buffer Src0 { float d0[]; };
layout(std430, binding = 1) readonly buffer Src1 { float d1[]; };
layout(std430, binding = 2) readonly buffer Src2 { float d2[]; };
layout(std430, binding = 3) readonly buffer Src3 { float d3[]; };
layout(std430, binding = 4) readonly buffer Src4 { float d4[]; };
layout(std430, binding = 5) readonly buffer Src5 { float d5[]; };
layout(std430, binding = 6) readonly buffer Src6 { uint d6[]; };
layout(std430, binding = 7) buffer Dst { float dd[]; };

layout(push_constant) uniform Params {
    uint n; // work items
    uint o0, o1, o2, o3, o4, o5, o6, od;
    uint prm0, prm1, prm2, prm3, prm4, prm5, prm6, prm7, prm8, prm9, prm10, prm11;
    uint prm12, prm13, prm14, prm15, prm16, prm17, prm18, prm19, prm20, prm21, prm22;
} p;

// softplus as ggml_compute_softplus_f32: x above 20, else log(1 + exp(x)).
float softplus(float x) {
    return x > 20.0 ? x : log(1.0 + exp(x));
}

// SSM_CONV: prm0 d_conv, prm1 d_inner, prm2 n_t; sx strides prm4..6 (dims
// 0..2), filter strides prm7, prm8 (dims 0, 1).
void ssm_conv(uint i) {
    uint i1 = i % p.prm1;
    uint t = (i / p.prm1) % p.prm2;
    uint s = i / (p.prm1 * p.prm2);
    float sum = 0.0;
    for (uint j = 0u; j < p.prm0; j++) {
        sum += d0[p.o0 + (t + j) * p.prm4 + i1 * p.prm5 + s * p.prm6] * d1[p.o1 + j * p.prm7 + i1 * p.prm8];
    }
    dd[p.od + i] = sum;
}

// SSM_SCAN: prm0 d_state, prm1 head_dim, prm2 n_head, prm3 n_group, prm4
// tokens, prm5 sequences, prm6 K, prm7 Mamba-2, x strides prm8, prm9 (dims 2,
// 3), B prm10, prm11, C prm12, prm13, ids stride prm14, prm15 states in s,
// prm16 the outputs' element count (where the states start).
shared float scan_red[gl_WorkGroupSize.x];

// ssm_scan is one state row i run by the whole workgroup: thread tid owns the
// state elements tid, tid + wg, ...; per token their products with C meet in a
// shared-memory tree (control flow is uniform in the workgroup).
void ssm_scan(uint i) {
    uint tid = gl_LocalInvocationID.x;
    uint wg = gl_WorkGroupSize.x;
    uint nc = p.prm0, nr = p.prm1, nh = p.prm2, nt = p.prm4, ns = p.prm5;
    uint i1 = i % nr;
    uint h = (i / nr) % nh;
    uint s = i / (nr * nh);
    uint g = h / (nh / p.prm3);
    uint ii = h * nr + i1;
    uint stateSize = nc * nr * nh;
    int id = int(d6[p.o6 + s * p.prm14]);
    uint st = p.od + p.prm16 + s * stateSize + ii * nc;
    if (id < 0 || uint(id) >= p.prm15) { // an id outside s: NaN (the CPU fails the node)
        for (uint t = tid; t < nt; t += wg) {
            dd[p.od + (s * nt + t) * nh * nr + ii] = uintBitsToFloat(0x7fc00000u);
        }
        for (uint i0 = tid; i0 < nc; i0 += wg) {
            dd[st + i0] = uintBitsToFloat(0x7fc00000u);
        }
        return;
    }
    uint s0 = p.o0 + uint(id) * stateSize + ii * nc;
    for (uint t = 0u; t < nt; t++) {
        float dtsp = softplus(d2[p.o2 + (s * nt + t) * nh + h]);
        float xdt = d1[p.o1 + t * p.prm8 + s * p.prm9 + ii] * dtsp;
        uint bb = p.o4 + t * p.prm10 + s * p.prm11 + g * nc;
        uint cb = p.o5 + t * p.prm12 + s * p.prm13 + g * nc;
        float sum = 0.0;
        if (p.prm7 != 0u) {
            float dA = exp(dtsp * d3[p.o3 + h]);
            for (uint i0 = tid; i0 < nc; i0 += wg) {
                float v = (t == 0u ? d0[s0 + i0] : dd[st + i0]) * dA;
                v = v + d4[bb + i0] * xdt;
                sum += v * d5[cb + i0];
                dd[st + i0] = v;
            }
        } else {
            for (uint i0 = tid; i0 < nc; i0 += wg) {
                float prev = t == 0u ? d0[s0 + i0] : dd[st + i0];
                float v = prev * exp(dtsp * d3[p.o3 + h * nc + i0]) + d4[bb + i0] * xdt;
                sum += v * d5[cb + i0];
                dd[st + i0] = v;
            }
        }
        scan_red[tid] = sum;
        barrier();
        for (uint w = wg / 2u; w > 0u; w >>= 1) {
            if (tid < w) {
                scan_red[tid] += scan_red[tid + w];
            }
            barrier();
        }
        if (tid == 0u) {
            dd[p.od + (s * nt + t) * nh * nr + ii] = scan_red[0];
        }
        barrier();
        uint slot = nt - 1u - t;
        if (p.prm6 > 1u && slot > 0u && slot < p.prm6) {
            uint snap = p.od + p.prm16 + (slot * ns + s) * stateSize + ii * nc;
            for (uint i0 = tid; i0 < nc; i0 += wg) {
                dd[snap + i0] = dd[st + i0];
            }
        }
    }
}

float state0(uint i) {
    return MODE == 4u ? uintBitsToFloat(d6[p.o6 + i]) : (MODE == 2u ? d5[p.o5 + i] : d4[p.o4 + i]);
}

// RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7: prm0 S, prm1 H, prm2 tokens, prm3
// sequences, prm4 GLA's scale. Work item (sequence, head, c): c is the state
// column (WKV6, GLA) or row (WKV7) the invocation owns.
void lin_attn(uint i) {
    uint S = p.prm0, H = p.prm1, T = p.prm2;
    uint c = i % S;
    uint h = (i / S) % H;
    uint seq = i / (S * H);
    uint C = S * H;
    uint perSeq = T / p.prm3;
    uint sb = seq * S * C + h * S * S; // the head's state, in the source and in dst's state rows
    uint st = p.od + T * C + sb;
    // element (a, b) of the state at a * S + b; the invocation's elements are (x, c) for WKV6
    // and GLA, (c, x) for WKV7
    uint es = MODE == 4u ? 1u : S;
    uint e0 = MODE == 4u ? c * S : c;
    for (uint x = 0u; x < S; x++) {
        dd[st + e0 + x * es] = state0(sb + e0 + x * es);
    }
    float scale = uintBitsToFloat(p.prm4);
    for (uint t = seq * perSeq; t < (seq + 1u) * perSeq; t++) {
        uint off = t * C + h * S;
        if (MODE == 2u) { // k, v, r, tf, td
            float vj = d1[p.o1 + off + c];
            float out_ = 0.0;
            for (uint x = 0u; x < S; x++) {
                float kx = d0[p.o0 + off + x], rx = d2[p.o2 + off + x];
                float sv = dd[st + x * S + c];
                out_ = out_ + rx * sv;
                out_ = out_ + (kx * d3[p.o3 + h * S + x] * rx) * vj;
                sv = sv * d4[p.o4 + off + x];
                dd[st + x * S + c] = sv + kx * vj;
            }
            dd[p.od + off + c] = out_;
        } else if (MODE == 3u) { // k, v, q, g
            float vj = d1[p.o1 + off + c];
            float out_ = 0.0;
            for (uint x = 0u; x < S; x++) {
                float sv = dd[st + x * S + c] * d3[p.o3 + off + x];
                sv = sv + d0[p.o0 + off + x] * vj;
                dd[st + x * S + c] = sv;
                out_ = out_ + (d2[p.o2 + off + x] * scale) * sv;
            }
            dd[p.od + off + c] = out_;
        } else { // r, w, k, v, a, b
            float sa = 0.0;
            for (uint x = 0u; x < S; x++) {
                sa += d4[p.o4 + off + x] * dd[st + c * S + x];
            }
            float vi = d3[p.o3 + off + c];
            float out_ = 0.0;
            for (uint x = 0u; x < S; x++) {
                float sv = dd[st + c * S + x] * d1[p.o1 + off + x];
                sv = sv + vi * d2[p.o2 + off + x];
                sv = sv + sa * d5[p.o5 + off + x];
                dd[st + c * S + x] = sv;
                out_ += sv * d0[p.o0 + off + x];
            }
            dd[p.od + off + c] = out_;
        }
    }
}

// SOLVE_TRI: prm0 n, prm1 k (right-hand sides).
void solve_tri(uint i) {
    uint n = p.prm0, k = p.prm1;
    uint c = i % k;
    uint batch = i / k;
    uint A = p.o0 + batch * n * n, B = p.o1 + batch * n * k, X = p.od + batch * n * k;
    for (uint r = 0u; r < n; r++) {
        float sum = 0.0;
        for (uint t = 0u; t < r; t++) {
            sum += d0[A + r * n + t] * dd[X + t * k + c];
        }
        dd[X + r * k + c] = (d1[B + r * k + c] - sum) / d0[A + r * n + r];
    }
}

// GATED_DELTA_NET: prm0 S, prm1 H, prm2 tokens, prm3 sequences, prm4 K, prm5
// the gate's ne0, q: prm6 heads, strides prm7..9 (dims 1..3), prm10 sequences
// per q sequence; k: prm11..15 likewise; v strides prm16..18; prm19 the
// scale (f32 bits).
void gated_delta_net(uint i) {
    uint S = p.prm0, H = p.prm1, T = p.prm2, ns = p.prm3, K = p.prm4;
    uint j = i % S;
    uint h = (i / S) % H;
    uint seq = i / (S * H);
    uint attn = S * H * T * ns;
    uint snapSize = S * S * H * ns;
    uint m = p.od + attn + (seq * H + h) * S * S + j * S;
    uint m0 = p.o5 + (seq * H + h) * S * S + j * S;
    for (uint x = 0u; x < S; x++) {
        dd[m + x] = d5[m0 + x];
    }
    bool kda = p.prm5 == S && S > 1u;
    float scale = uintBitsToFloat(p.prm19);
    for (uint t = 0u; t < T; t++) {
        uint tok = (seq * T + t) * H + h;
        uint qb = p.o0 + (seq / p.prm10) * p.prm9 + t * p.prm8 + (h % p.prm6) * p.prm7;
        uint kb = p.o1 + (seq / p.prm15) * p.prm14 + t * p.prm13 + (h % p.prm11) * p.prm12;
        float vj = d2[p.o2 + seq * p.prm18 + t * p.prm17 + h * p.prm16 + j];
        float beta = d4[p.o4 + tok];
        float dot = 0.0;
        if (kda) {
            for (uint x = 0u; x < S; x++) {
                float sv = dd[m + x] * exp(d3[p.o3 + tok * S + x]);
                dd[m + x] = sv;
                dot += sv * d1[kb + x];
            }
        } else {
            float eg = exp(d3[p.o3 + tok * p.prm5]);
            for (uint x = 0u; x < S; x++) {
                float sv = dd[m + x] * eg;
                dd[m + x] = sv;
                dot += sv * d1[kb + x];
            }
        }
        float delta = (vj - dot) * beta;
        float out_ = 0.0;
        for (uint x = 0u; x < S; x++) {
            float sv = dd[m + x] + delta * d1[kb + x];
            dd[m + x] = sv;
            out_ += sv * d0[qb + x];
        }
        dd[p.od + (seq * T * H + h) * S + t * S * H + j] = out_ * scale;
        uint slot = T - 1u - t;
        if (K > 1u && slot > 0u && slot < K) {
            uint snap = p.od + attn + slot * snapSize + (seq * H + h) * S * S + j * S;
            for (uint x = 0u; x < S; x++) {
                dd[snap + x] = dd[m + x];
            }
        }
    }
}

void main() {
    if (MODE == 1u) { // a workgroup per state row
        for (uint r = gl_WorkGroupID.x; r < p.n; r += gl_NumWorkGroups.x) {
            ssm_scan(r);
        }
        return;
    }
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        if (MODE == 0u) {
            ssm_conv(i);
        } else if (MODE == 5u) {
            solve_tri(i);
        } else if (MODE == 6u) {
            gated_delta_net(i);
        } else {
            lin_attn(i);
        }
    }
}
