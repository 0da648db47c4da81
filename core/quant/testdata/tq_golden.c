// tq_golden.c writes ggml_golden_tq.bin and ggml_tq_edges.bin (see README.md) from ggml's own
// TQ1_0 and TQ2_0 reference functions. It is tandem's driver, not part of ggml; build it as
// fp4_golden.c (same objects of the ggml d99724f2 build at /tmp/rpcbuild-eng/ggml):
//
//	G=/tmp/rpcbuild-eng/ggml
//	gcc -std=c11 -O2 -c tq_golden.c -o /tmp/tqdrv.o
//	g++ -o /tmp/tq_golden /tmp/tqdrv.o $(for o in $(cat $G/obj/list); do echo $G/$o; done) $G/obj/dl.o -lm -lpthread -ldl
//	/tmp/tq_golden ggml_golden_tq.bin ggml_tq_edges.bin
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden_common.h"

enum { NE = NE256 };

// ggml's entry points (declared here so the driver needs no ggml headers).
void quantize_row_tq1_0_ref(const float *x, void *y, int64_t k);
void quantize_row_tq2_0_ref(const float *x, void *y, int64_t k);
void dequantize_row_tq1_0(const void *x, float *y, int64_t k);
void dequantize_row_tq2_0(const void *x, float *y, int64_t k);
void ggml_vec_dot_tq1_0_q8_K_generic(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);
void ggml_vec_dot_tq2_0_q8_K_generic(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);

struct type {
    uint32_t id, blck, size;
    quant_fn q;
    dequant_fn dq;
    dot_fn dot;
};

static const struct type types[] = {
    {34, 256, 54, quantize_row_tq1_0_ref, dequantize_row_tq1_0, ggml_vec_dot_tq1_0_q8_K_generic},
    {35, 256, 66, quantize_row_tq2_0_ref, dequantize_row_tq2_0, ggml_vec_dot_tq2_0_q8_K_generic},
};
enum { NTYPES = 2, N = 512, NROWS = 32 };



int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: tq_golden golden.bin edges.bin\n");
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
    static uint8_t q[N], q8[N / 256 * 292];
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
            quantize_row_q8_K_ref(act, q8, N);
            float d;
            ty->dot(N, &d, 0, q, 0, q8, 0, 1);
            fwrite(&d, 4, 1, f);
        }
    }
    fclose(f);

    static float rows[8][NE];
    int nr = edge_rows_256(rows);
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
