#version 450
// opt_step.comp: the optimizer steps, elementwise over a contiguous f32 parameter
// updated in place, as the CPU kernels (decoupled weight decay, as ggml):
//
//   OPT_STEP_ADAMW (default): hyper-parameters [alpha, beta1, beta2, eps, wd,
//     beta1h, beta2h] (beta1h = 1/(1 - beta1^t), beta2h = 1/(1 - beta2^t));
//     m = m*beta1 + g*(1-beta1); v = v*beta2 + g*g*(1-beta2);
//     w = w*(1 - alpha*wd) - alpha*(m*beta1h) / (sqrt(v*beta2h) + eps).
//   OPT_STEP_SGD (define SGD): hyper-parameters [alpha, wd];
//     w = w*(1 - alpha*wd) - alpha*g.
//
// Every operation is rounded separately (precise), like the CPU's Go kernels.
//
// Bindings: 0 = w (read and written), 1 = g, 2 = hyper-parameters, 3 = m, 4 = v
// (ADAMW; any buffer with SGD).
// Specialization: constant 0 = workgroup size (default 256).
// Dispatch: any x grid (grid-stride loop).

layout(local_size_x = 256, local_size_y = 1, local_size_z = 1, local_size_x_id = 0) in;

layout(std430, binding = 0) buffer BufW { float data_w[]; };
layout(std430, binding = 1) readonly buffer BufG { float data_g[]; };
layout(std430, binding = 2) readonly buffer BufP { float data_p[]; };
layout(std430, binding = 3) buffer BufM { float data_m[]; };
layout(std430, binding = 4) buffer BufV { float data_v[]; };

layout(push_constant) uniform Params {
    uint offs_w, offs_g, offs_p, offs_m, offs_v;
    uint n;
} p;

void main() {
    float alpha = data_p[p.offs_p];
#if defined(SGD)
    float wd = data_p[p.offs_p + 1u];
#else
    float beta1 = data_p[p.offs_p + 1u];
    float beta2 = data_p[p.offs_p + 2u];
    float eps = data_p[p.offs_p + 3u];
    float wd = data_p[p.offs_p + 4u];
    float beta1h = data_p[p.offs_p + 5u];
    float beta2h = data_p[p.offs_p + 6u];
#endif
    precise float aw = alpha * wd;
    precise float keep = 1.0 - aw;
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        float g = data_g[p.offs_g + i];
        float w = data_w[p.offs_w + i];
#if defined(SGD)
        precise float ag = alpha * g;
        precise float wk = w * keep;
        precise float nw = wk - ag;
        data_w[p.offs_w + i] = nw;
#else
        precise float m1 = data_m[p.offs_m + i] * beta1;
        precise float m2 = g * (1.0 - beta1);
        precise float m = m1 + m2;
        precise float gg = g * g;
        precise float v1 = data_v[p.offs_v + i] * beta2;
        precise float v2 = gg * (1.0 - beta2);
        precise float v = v1 + v2;
        data_m[p.offs_m + i] = m;
        data_v[p.offs_v + i] = v;
        precise float mh = m * beta1h;
        precise float vb = v * beta2h;
        precise float vh = sqrt(vb) + eps;
        precise float am = alpha * mh;
        precise float upd = am / vh;
        precise float wk = w * keep;
        precise float nw = wk - upd;
        data_w[p.offs_w + i] = nw;
#endif
    }
}
