// fp4_golden.c writes ggml_golden_fp4.bin and ggml_fp4_edges.bin (see README.md) from ggml's own
// MXFP4, NVFP4 and Q1_0 reference functions. It is tandem's driver, not part of ggml; build it
// against the objects of a ggml d99724f2 build (the _ref quantizers and dequantizers of
// ggml-quants.c, the _generic dot products of ggml-cpu/quants.c), here /tmp/rpcbuild-eng/ggml
// built by its build.sh (gcc -O1 -march=native, -std=c11 so no FMA contraction):
//
//	G=/tmp/rpcbuild-eng/ggml
//	gcc -std=c11 -O2 -c fp4_golden.c -o /tmp/drv.o
//	g++ -o /tmp/fp4_golden /tmp/drv.o $(for o in $(cat $G/obj/list); do echo $G/$o; done) $G/obj/dl.o -lm -lpthread -ldl
//	/tmp/fp4_golden ggml_golden_fp4.bin ggml_fp4_edges.bin
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden_common.h"

// ggml's entry points (declared here so the driver needs no ggml headers).
void quantize_row_mxfp4_ref(const float *x, void *y, int64_t k);
void quantize_row_nvfp4_ref(const float *x, void *y, int64_t k);
void quantize_row_q1_0_ref(const float *x, void *y, int64_t k);
void dequantize_row_mxfp4(const void *x, float *y, int64_t k);
void dequantize_row_nvfp4(const void *x, float *y, int64_t k);
void dequantize_row_q1_0(const void *x, float *y, int64_t k);
void ggml_vec_dot_mxfp4_q8_0_generic(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);
void ggml_vec_dot_nvfp4_q8_0_generic(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);
void ggml_vec_dot_q1_0_q8_0_generic(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);

struct type {
    uint32_t id, blck, size;
    quant_fn q;
    dequant_fn dq;
    dot_fn dot;
};

static const struct type types[] = {
    {39, 32, 17, quantize_row_mxfp4_ref, dequantize_row_mxfp4, ggml_vec_dot_mxfp4_q8_0_generic},
    {40, 64, 36, quantize_row_nvfp4_ref, dequantize_row_nvfp4, ggml_vec_dot_nvfp4_q8_0_generic},
    {41, 128, 18, quantize_row_q1_0_ref, dequantize_row_q1_0, ggml_vec_dot_q1_0_q8_0_generic},
};
enum { NTYPES = 3, N = 512, NROWS = 32 };


// Edge rows of 128 values: scales at and just below powers of two, ties between codes, signed
// zeros, subnormal and huge magnitudes, the NVFP4 scale's clamp, infinities and NaNs.
enum { NE = 128 };
static int edge_rows(float rows[][NE]) {
    int r = 0;
    float *x;
    // 0: amax exactly 1, 4, 6, 0.5 per 32 values; ties at half the code spacing.
    x = rows[r++];
    for (int i = 0; i < NE; i++) {
        float s = (float[]){1, 4, 6, 0.5f}[i / 32];
        x[i] = s * (float)((i % 16) - 8) / 8.0f;
        if (i % 32 == 31) x[i] = s;
    }
    // 1: amax one ulp below powers of two (the floor(log2) boundary), values between codes.
    x = rows[r++];
    for (int i = 0; i < NE; i++) {
        float p = ldexpf(1, (i / 32) * 5 - 7);
        x[i] = nextafterf(p, 0) * (float)((i * 7) % 13 - 6) / 6.0f;
        if (i % 32 == 0) x[i] = nextafterf(p, 0);
    }
    // 2: signed zeros and sign-only rows; -0 is 'non-negative' for Q1_0.
    x = rows[r++];
    for (int i = 0; i < NE; i++) x[i] = (i % 3 == 0) ? -0.0f : (i % 3 == 1 ? 0.0f : (i % 2 ? -1e-3f : 1e-3f));
    // 3: tiny magnitudes: subnormal, 2^-126 (the MXFP4 exponent wraps), 2^-120, 1e-30.
    x = rows[r++];
    for (int i = 0; i < NE; i++) {
        float s = (float[]){1e-40f, 0x1p-126f, 0x1p-120f, 1e-30f}[i / 32];
        x[i] = s * (float)((i * 5) % 11 - 5) / 5.0f;
    }
    // 4: huge magnitudes: NVFP4 scales clamp at 448 (amax 2688), MXFP4 up to 2^127.
    x = rows[r++];
    for (int i = 0; i < NE; i++) {
        float s = (float[]){3000.0f, 1e6f, 0x1p126f, 3e38f}[i / 32];
        x[i] = s * (float)((i * 3) % 9 - 4) / 4.0f;
    }
    // 5: NVFP4 subnormal scales (amax/6 below 2^-6) and sub-block maxima in 0.01 … 0.1.
    x = rows[r++];
    for (int i = 0; i < NE; i++) {
        float s = 0.003f * (float)(1 + i / 16);
        x[i] = s * (float)((i * 11) % 17 - 8) / 8.0f;
    }
    // 6: an infinity and a NaN in some blocks.
    x = rows[r++];
    for (int i = 0; i < NE; i++) x[i] = (float)((i * 13) % 7 - 3) * 0.25f;
    x[5] = INFINITY;
    x[40] = NAN;
    x[70] = -INFINITY;
    x[100] = NAN;
    x[101] = 100.0f;
    // 7: values exactly at E2M1 midpoints of scale 1 (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5) and
    // their negatives, amax 6 per sub-block.
    x = rows[r++];
    for (int i = 0; i < NE; i++) {
        float mids[8] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f};
        x[i] = mids[i % 8] * ((i / 8) % 2 ? -1.0f : 1.0f);
    }
    return r;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: fp4_golden golden.bin edges.bin\n");
        return 2;
    }
    ggml_cpu_init();
    FILE *f = fopen(argv[1], "wb");
    if (!f) return 1;
    put32(f, 0x31475154); // "TQG1"
    put32(f, NROWS);
    put32(f, N);
    put32(f, NTYPES);
    static float x[N], y[N], act[N];
    static uint8_t q[N * 2], q8[N / 32 * 34];
    for (int t = 0; t < NTYPES; t++) {
        const struct type *ty = &types[t];
        put32(f, ty->id);
        put32(f, ty->blck);
        put32(f, ty->size);
        size_t rs = N / ty->blck * ty->size;
        for (int r = 0; r < NROWS; r++) {
            gen_input(r, 0, N, x);
            memset(q, 0, sizeof q);
            ty->q(x, q, N);
            fwrite(q, 1, rs, f);
            ty->dq(q, y, N);
            uint64_t h = fnv(y, N);
            fwrite(&h, 8, 1, f);
            gen_input(r, 1, N, act);
            quantize_row_q8_0_ref(act, q8, N);
            float d;
            ty->dot(N, &d, 0, q, 0, q8, 0, 1);
            fwrite(&d, 4, 1, f);
        }
    }
    fclose(f);

    static float rows[16][NE];
    int nr = edge_rows(rows);
    f = fopen(argv[2], "wb");
    if (!f) return 1;
    put32(f, 0x31455154); // "TQE1"
    put32(f, nr);
    put32(f, NE);
    put32(f, NTYPES);
    fwrite(rows, 4, (size_t)nr * NE, f);
    for (int t = 0; t < NTYPES; t++) {
        const struct type *ty = &types[t];
        put32(f, ty->id);
        size_t rs = NE / ty->blck * ty->size;
        for (int r = 0; r < nr; r++) {
            memset(q, 0, sizeof q);
            ty->q(rows[r], q, NE);
            fwrite(q, 1, rs, f);
            ty->dq(q, y, NE);
            fwrite(y, 4, NE, f);
        }
    }
    fclose(f);
    return 0;
}
