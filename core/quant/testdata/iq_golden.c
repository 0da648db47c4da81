// iq_golden.c writes ggml_golden_iq.bin (see README.md) from ggml's own IQ2_XXS, IQ2_XS, IQ2_S,
// IQ1_S and IQ1_M dequantizers and generic dots against Q8_K. ggml has no CPU quantizer for
// these types, so the rows are random blocks (every field pattern decodes) with a chosen f16
// scale. It is tandem's driver, not part of ggml; build it as fp4_golden.c (same objects of the
// ggml d99724f2 build at /tmp/rpcbuild-eng/ggml):
//
//	G=/tmp/rpcbuild-eng/ggml
//	gcc -std=c11 -O2 -c iq_golden.c -o /tmp/iqdrv.o
//	g++ -o /tmp/iq_golden /tmp/iqdrv.o $(for o in $(cat $G/obj/list); do echo $G/$o; done) $G/obj/dl.o -lm -lpthread -ldl
//	/tmp/iq_golden ggml_golden_iq.bin
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "golden_common.h"

// ggml's entry points (declared here so the driver needs no ggml headers).
void dequantize_row_iq2_xxs(const void *x, float *y, int64_t k);
void dequantize_row_iq2_xs(const void *x, float *y, int64_t k);
void dequantize_row_iq2_s(const void *x, float *y, int64_t k);
void dequantize_row_iq1_s(const void *x, float *y, int64_t k);
void dequantize_row_iq1_m(const void *x, float *y, int64_t k);
void ggml_vec_dot_iq2_xxs_q8_K_generic(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);
void ggml_vec_dot_iq2_xs_q8_K_generic(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);
void ggml_vec_dot_iq2_s_q8_K_generic(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);
void ggml_vec_dot_iq1_s_q8_K_generic(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);
void ggml_vec_dot_iq1_m_q8_K_generic(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);

struct type {
    uint32_t id, size;
    int dpos; // byte offset of the f16 scale; -1: IQ1_M's scale spread over the top nibbles of its scales
    dequant_fn dq;
    dot_fn dot;
};

static const struct type types[] = {
    {16, 66, 0, dequantize_row_iq2_xxs, ggml_vec_dot_iq2_xxs_q8_K_generic},
    {17, 74, 0, dequantize_row_iq2_xs, ggml_vec_dot_iq2_xs_q8_K_generic},
    {22, 82, 0, dequantize_row_iq2_s, ggml_vec_dot_iq2_s_q8_K_generic},
    {19, 50, 0, dequantize_row_iq1_s, ggml_vec_dot_iq1_s_q8_K_generic},
    {29, 56, -1, dequantize_row_iq1_m, ggml_vec_dot_iq1_m_q8_K_generic},
};
enum { NTYPES = 5, N = 1024, NB = N / 256, NROWS = 16, Q8K = 292 };

// block_scale is the f16 scale of block b of row r: row 0 all zero bytes (d = 0), row 1 all 0xff
// bytes with d = 1, row 2 subnormal, row 3 ±65504, others random finite with exponents 2^-14 … 2^3.
static uint16_t block_scale(int r, int b, uint64_t *st) {
    uint64_t v = rng_next(st);
    switch (r) {
    case 0: return 0;
    case 1: return 0x3c00;
    case 2: return (uint16_t)((v >> 20 & 0x8000) | (1 + (v >> 8) % 1023));
    case 3: return b % 2 ? 0xfbff : 0x7bff;
    }
    return (uint16_t)((v >> 20 & 0x8000) | (1 + (v >> 32) % 18) << 10 | (v & 0x3ff));
}

static void fill_row(const struct type *ty, int r, uint8_t *q) {
    uint64_t st = (uint64_t)(r * 131 + ty->id) * 0x9E3779B97F4A7C15ULL + 7;
    for (int k = 0; k < 4; k++) rng_next(&st);
    for (int b = 0; b < NB; b++) {
        uint8_t *blk = q + b * ty->size;
        for (uint32_t i = 0; i < ty->size; i++) blk[i] = r == 0 ? 0 : r == 1 ? 0xff : (uint8_t)(rng_next(&st) >> 56);
        uint16_t d = block_scale(r, b, &st);
        if (ty->dpos >= 0) {
            memcpy(blk + ty->dpos, &d, 2);
        } else {
            uint16_t sc[4];
            memcpy(sc, blk + 48, 8);
            for (int k = 0; k < 4; k++) sc[k] = (uint16_t)((sc[k] & 0x0fff) | ((d >> (4 * k)) & 0xf) << 12);
            memcpy(blk + 48, sc, 8);
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: iq_golden golden.bin\n");
        return 2;
    }
    ggml_cpu_init();
    FILE *f = fopen(argv[1], "wb");
    if (!f) return 1;
    put32(f, 0x31474951); // "QIG1"
    put32(f, NROWS);
    put32(f, N);
    put32(f, NTYPES);
    static uint8_t q[NB * 82], q8[NB * Q8K];
    static float act[N], y[N];
    for (int t = 0; t < NTYPES; t++) {
        const struct type *ty = &types[t];
        put32(f, ty->id);
        put32(f, 256);
        put32(f, ty->size);
        for (int r = 0; r < NROWS; r++) {
            fill_row(ty, r, q);
            fwrite(q, 1, NB * ty->size, f);
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
    return 0;
}
