// Runs a few ops on an RPC backend and on the local CPU and prints the largest difference per graph.
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-rpc.h"
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>
#include <functional>

typedef std::function<ggml_tensor*(ggml_context*, std::vector<ggml_tensor*>&)> builder;

static std::vector<float> run(ggml_backend_t be, const builder & b, int nin, const int64_t (*shapes)[2]) {
    ggml_init_params ip = { 64 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true };
    ggml_context * ctx = ggml_init(ip);
    std::vector<ggml_tensor*> in;
    for (int i = 0; i < nin; i++) in.push_back(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, shapes[i][0], shapes[i][1]));
    ggml_tensor * out = b(ctx, in);
    ggml_set_output(out);
    ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, out);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    for (int i = 0; i < nin; i++) {
        std::vector<float> v(ggml_nelements(in[i]));
        for (size_t k = 0; k < v.size(); k++) v[k] = sinf(0.37f * k + i) ;
        ggml_backend_tensor_set(in[i], v.data(), 0, ggml_nbytes(in[i]));
    }
    ggml_backend_graph_compute(be, g);
    ggml_tensor * o = out;
    std::vector<float> r(ggml_nelements(o));
    if (o->type == GGML_TYPE_F32) ggml_backend_tensor_get(o, r.data(), 0, ggml_nbytes(o));
    else if (o->type == GGML_TYPE_F16) {
        std::vector<ggml_fp16_t> h(r.size());
        ggml_backend_tensor_get(o, h.data(), 0, ggml_nbytes(o));
        for (size_t k = 0; k < r.size(); k++) r[k] = ggml_fp16_to_fp32(h[k]);
    } else { // i32
        std::vector<int32_t> h(r.size());
        ggml_backend_tensor_get(o, h.data(), 0, ggml_nbytes(o));
        for (size_t k = 0; k < r.size(); k++) r[k] = h[k];
    }
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return r;
}

// A graph run twice through ggml's scheduler keeps its id, so ggml's client sends GRAPH_COMPUTE
// the first time and GRAPH_RECOMPUTE after (with new inputs uploaded in between). Returns the
// number of wrong values.
static int recompute(ggml_backend_t rpc, ggml_backend_t cpu) {
    ggml_backend_t bes[2] = { rpc, cpu };
    ggml_backend_sched_t s = ggml_backend_sched_new(bes, nullptr, 2, 64, false, true);
    ggml_init_params ip = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true };
    ggml_context * ctx = ggml_init(ip);
    ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    ggml_set_input(a);
    ggml_tensor * sq = ggml_sqr(ctx, a);
    ggml_tensor * out = ggml_add(ctx, sq, a);
    ggml_set_output(out);
    ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, out);
    ggml_backend_sched_set_tensor_backend(s, sq, rpc);
    ggml_backend_sched_set_tensor_backend(s, out, rpc);
    int bad = 0;
    if (!ggml_backend_sched_alloc_graph(s, g)) {
        fprintf(stderr, "recompute: sched alloc failed\n");
        return 1;
    }
    for (int run = 0; run < 3; run++) {
        float v[16], r[16];
        for (int k = 0; k < 16; k++) v[k] = k + 10 * run;
        ggml_backend_tensor_set(a, v, 0, sizeof v);
        ggml_backend_sched_graph_compute(s, g);
        ggml_backend_tensor_get(out, r, 0, sizeof r);
        for (int k = 0; k < 16; k++) if (r[k] != v[k] * v[k] + v[k]) bad++;
    }
    printf("%-34s 3 runs, %d wrong values\n", "scheduled graph (GRAPH_RECOMPUTE)", bad);
    ggml_backend_sched_free(s);
    ggml_free(ctx);
    return bad;
}

int main(int argc, char ** argv) {
    if (argc < 2) { fprintf(stderr, "usage: client host:port\n"); return 1; }
    ggml_backend_t rpc = ggml_backend_rpc_init(argv[1], 0);
    if (!rpc) { fprintf(stderr, "no rpc backend\n"); return 1; }
    ggml_backend_t cpu = ggml_backend_cpu_init();
    struct T { const char * name; int nin; int64_t shapes[3][2]; builder b; };
    std::vector<T> tests = {
        {"mul_mat+add", 3, {{8,3},{8,2},{3,2}}, [](ggml_context*c, std::vector<ggml_tensor*>&x){ return ggml_add(c, ggml_mul_mat(c, x[0], x[1]), x[2]); }},
        {"rms_norm*mul (fusion, use_count)", 2, {{16,4},{16,1}}, [](ggml_context*c, std::vector<ggml_tensor*>&x){ return ggml_mul(c, ggml_rms_norm(c, x[0], 1e-5f), x[1]); }},
        {"soft_max_ext", 2, {{8,4},{8,4}}, [](ggml_context*c, std::vector<ggml_tensor*>&x){ return ggml_soft_max_ext(c, x[0], nullptr, 0.5f, 0.0f); }},
        {"silu(transpose cont)", 1, {{6,4}}, [](ggml_context*c, std::vector<ggml_tensor*>&x){ return ggml_silu(c, ggml_cont(c, ggml_transpose(c, x[0]))); }},
        {"cast f16 (self src1)", 1, {{8,2}}, [](ggml_context*c, std::vector<ggml_tensor*>&x){ return ggml_cast(c, x[0], GGML_TYPE_F16); }},
        {"swiglu", 1, {{8,3}}, [](ggml_context*c, std::vector<ggml_tensor*>&x){ return ggml_swiglu(c, x[0]); }},
        {"view+scale", 1, {{8,4}}, [](ggml_context*c, std::vector<ggml_tensor*>&x){ return ggml_scale(c, ggml_cont(c, ggml_view_2d(c, x[0], 4, 2, x[0]->nb[1], 16)), 3.0f); }},
        {"argsort", 1, {{8,2}}, [](ggml_context*c, std::vector<ggml_tensor*>&x){ return ggml_argsort(c, x[0], GGML_SORT_ORDER_DESC); }},
        {"concat+sum_rows", 2, {{4,3},{4,3}}, [](ggml_context*c, std::vector<ggml_tensor*>&x){ return ggml_sum_rows(c, ggml_concat(c, x[0], x[1], 1)); }},
        {"add_inplace", 2, {{5,2},{5,2}}, [](ggml_context*c, std::vector<ggml_tensor*>&x){ return ggml_scale(c, ggml_add_inplace(c, x[0], x[1]), 1.0f); }},
    };
    int bad = 0;
    for (auto & t : tests) {
        auto a = run(rpc, t.b, t.nin, t.shapes);
        auto b = run(cpu, t.b, t.nin, t.shapes);
        double d = 0;
        for (size_t k = 0; k < a.size(); k++) d = fmax(d, fabs(a[k] - b[k]));
        printf("%-34s %zu values, max |rpc - cpu| = %g\n", t.name, a.size(), d);
        if (!(d < 1e-4)) bad++;
    }
    if (recompute(rpc, cpu) != 0) bad++;
    printf("%d of %zu differ\n", bad, tests.size() + 1);
    return bad != 0;
}
