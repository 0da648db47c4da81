// iq3_golden.c writes ggml_golden_q2_0.bin, ggml_q2_0_edges.bin, ggml_iq3_raw.bin,
// ggml_golden_iq3.bin and ggml_iq3_edges.bin (see README.md) from ggml's own IQ3_XXS, IQ3_S and
// Q2_0 functions. It is tandem's driver, not part of
// ggml; build it as fp4_golden.c (same objects of the ggml d99724f2 build at /tmp/rpcbuild-eng/ggml):
//
//	G=/tmp/rpcbuild-eng/ggml
//	gcc -std=c11 -O2 -c iq3_golden.c -o /tmp/iq3drv.o
//	g++ -o /tmp/iq3_golden /tmp/iq3drv.o $(for o in $(cat $G/obj/list); do echo $G/$o; done) $G/obj/dl.o -lm -lpthread -ldl
//	/tmp/iq3_golden ggml_golden_q2_0.bin ggml_q2_0_edges.bin ggml_iq3_raw.bin ggml_golden_iq3.bin ggml_iq3_edges.bin
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "golden_common.h"

enum { NE = NE256 };

// ggml's entry points (declared here so the driver needs no ggml headers).
void quantize_row_q2_0_ref(const float *x, void *y, int64_t k);
void quantize_row_iq3_xxs_ref(const float *x, void *y, int64_t k);
void quantize_row_iq3_s_ref(const float *x, void *y, int64_t k);
void ggml_quantize_init(int type); // builds the IQ3 grid maps the quantizers need
void dequantize_row_q2_0(const void *x, float *y, int64_t k);
void dequantize_row_iq3_xxs(const void *x, float *y, int64_t k);
void dequantize_row_iq3_s(const void *x, float *y, int64_t k);
// x86 has no SIMD kernel for q2_0: ggml_vec_dot_q2_0_q8_0 is the generic one under its plain name.
void ggml_vec_dot_q2_0_q8_0(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);
void ggml_vec_dot_iq3_xxs_q8_K_generic(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);
void ggml_vec_dot_iq3_s_q8_K_generic(int n, float *s, size_t bs, const void *vx, size_t bx, const void *vy, size_t by, int nrc);

struct type {
    uint32_t id, blck, size;
    quant_fn q;
    dequant_fn dq;
    dot_fn dot;
    quant_fn act; // the vec_dot_type's reference quantizer
    uint32_t actsize; // its bytes per N values
};

enum { N = 512, NROWS = 32, NRAW = 24 };

static const struct type q2_0 = {42, 64, 18, quantize_row_q2_0_ref, dequantize_row_q2_0, ggml_vec_dot_q2_0_q8_0, quantize_row_q8_0_ref, N / 32 * 34};
static const struct type raw_types[] = {
    {18, 256, 98, quantize_row_iq3_xxs_ref, dequantize_row_iq3_xxs, ggml_vec_dot_iq3_xxs_q8_K_generic, quantize_row_q8_K_ref, N / 256 * 292},
    {21, 256, 110, quantize_row_iq3_s_ref, dequantize_row_iq3_s, ggml_vec_dot_iq3_s_q8_K_generic, quantize_row_q8_K_ref, N / 256 * 292},
    q2_0,
};
enum { NRAWTYPES = 3 };


// Edge rows of 256 values for Q2_0 (blocks of 64) and the IQ3 types: golden_common.h's rows with
// every block of row 0 reaching 1, a second maximum past f16's range in row 4, and a seventh row
// of infinities and NaNs.
static int edge_rows(float rows[][NE]) {
    int r = edge_rows_256(rows);
    for (int b = 0; b < 4; b++) rows[0][64 * b + 63] = 1.0f;
    rows[4][130] = -7e4f;
    // 6: an infinity in block 0, a NaN in block 1 (first and later), -inf and NaN in block 3.
    float *x = rows[r++];
    for (int i = 0; i < NE; i++) x[i] = (float)((i * 7) % 11 - 5) * 0.3f;
    x[5] = INFINITY;
    x[64] = NAN;
    x[100] = NAN;
    x[200] = -INFINITY;
    x[201] = NAN;
    return r;
}

// raw_block fills one block of a type with random bytes and a chosen f16 d (first two bytes).
static void raw_row(uint64_t *st, const struct type *ty, int row, uint8_t *q) {
    static const uint16_t ds[] = {0x2e66, 0x3c00, 0xb800, 0x0000, 0x8000, 0x0001, 0x7bff, 0x1400};
    int nb = N / ty->blck;
    for (int b = 0; b < nb; b++) {
        uint8_t *blk = q + b * ty->size;
        for (uint32_t k = 0; k < ty->size; k++) blk[k] = (uint8_t)(rng_next(st) >> 56);
        uint16_t d = row < 8 ? ds[(row + b) % 8] : (uint16_t)(0x2000 + (rng_next(st) >> 50) % 0x2000);
        if (row >= 16 && (b & 1)) d |= 0x8000;
        memcpy(blk, &d, 2);
    }
}

// write_checks writes what a golden row holds after its blocks q: the FNV-1a hash of their
// dequantized values and their dot with the vec_dot_type's reference quantization of
// genInput(r, 1).
static void write_checks(FILE *f, const struct type *ty, int r, const uint8_t *q) {
    static float y[N], act[N];
    static uint8_t q8[N / 32 * 36 + N / 256 * 292];
    ty->dq(q, y, N);
    uint64_t h = fnv(y, N);
    fwrite(&h, 8, 1, f);
    gen_input(r, 1, N, act);
    ty->act(act, q8, N);
    float d;
    ty->dot(N, &d, 0, q, 0, q8, 0, 1);
    fwrite(&d, 4, 1, f);
}

// write_golden writes the quantizer golden file (ggml_golden.bin's format) of the types.
static int write_golden(const char *path, const struct type *tys, int nt) {
    static float x[N];
    static uint8_t q[N * 2];
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    put32(f, 0x31475154); // "TQG1"
    put32(f, NROWS);
    put32(f, N);
    put32(f, nt);
    for (int t = 0; t < nt; t++) {
        const struct type *ty = &tys[t];
        put32(f, ty->id);
        put32(f, ty->blck);
        put32(f, ty->size);
        for (int r = 0; r < NROWS; r++) {
            gen_input(r, 0, N, x);
            memset(q, 0, sizeof q);
            ty->q(x, q, N);
            fwrite(q, 1, N / ty->blck * ty->size, f);
            write_checks(f, ty, r, q);
        }
    }
    fclose(f);
    return 0;
}

// write_edges writes the edge rows' file (ggml_fp4_edges.bin's format) of the types, with the
// first nr_max edge rows at most (ggml's IQ3 quantizers abort on the non-finite row: no
// neighbour is nearer than FLT_MAX).
static int write_edges(const char *path, const struct type *tys, int nt, int nr_max) {
    static float rows[8][NE], y[NE];
    static uint8_t q[NE * 2];
    int nr = edge_rows(rows);
    if (nr > nr_max) nr = nr_max;
    FILE *f = fopen(path, "wb");
    if (!f) return 1;
    put32(f, 0x31455154); // "TQE1"
    put32(f, nr);
    put32(f, NE);
    put32(f, nt);
    fwrite(rows, 4, (size_t)nr * NE, f);
    for (int t = 0; t < nt; t++) {
        const struct type *ty = &tys[t];
        put32(f, ty->id);
        for (int r = 0; r < nr; r++) {
            memset(q, 0, sizeof q);
            ty->q(rows[r], q, NE);
            fwrite(q, 1, NE / ty->blck * ty->size, f);
            ty->dq(q, y, NE);
            fwrite(y, 4, NE, f);
        }
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: iq3_golden golden_q2_0.bin q2_0_edges.bin iq3_raw.bin golden_iq3.bin iq3_edges.bin\n");
        return 2;
    }
    ggml_cpu_init();
    ggml_quantize_init(18);
    ggml_quantize_init(21);
    static uint8_t q[N * 2];
    if (write_golden(argv[1], &q2_0, 1) || write_edges(argv[2], &q2_0, 1, 8) ||
        write_golden(argv[4], raw_types, 2) || write_edges(argv[5], raw_types, 2, 6)) {
        return 1;
    }

    FILE *f = fopen(argv[3], "wb");
    if (!f) return 1;
    put32(f, 0x52335149); // "IQ3R"
    put32(f, NRAW);
    put32(f, N);
    put32(f, NRAWTYPES);
    uint64_t st = 0x1234567887654321ULL;
    for (int t = 0; t < NRAWTYPES; t++) {
        const struct type *ty = &raw_types[t];
        put32(f, ty->id);
        put32(f, ty->blck);
        put32(f, ty->size);
        for (int r = 0; r < NRAW; r++) {
            raw_row(&st, ty, r, q);
            fwrite(q, 1, N / ty->blck * ty->size, f);
            write_checks(f, ty, r, q);
        }
    }
    fclose(f);
    return 0;
}
