// golden_common.h: what the golden drivers of this directory (fp4_golden.c, tq_golden.c,
// iq3_golden.c, iq_golden.c) share: ggml's common entry points, golden_test.go's input generator,
// the row hash, the u32 writer and the edge rows of one super-block.
#ifndef TANDEM_GOLDEN_COMMON_H
#define TANDEM_GOLDEN_COMMON_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

// ggml's entry points every driver calls, and the function types of its tables.
void quantize_row_q8_0_ref(const float *x, void *y, int64_t k);
void quantize_row_q8_K_ref(const float *x, void *y, int64_t k);
void ggml_cpu_init(void); // fills the CPU's f16 table the dot products read

typedef void (*quant_fn)(const float *, void *, int64_t);
typedef void (*dequant_fn)(const void *, float *, int64_t);
typedef void (*dot_fn)(int, float *, size_t, const void *, size_t, const void *, size_t, int);

// The generator of golden_test.go's genInput (xorshift64*), family row%16.
static uint64_t rng_next(uint64_t *s) {
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 2685821657736338717ULL;
}
static float rng_u(uint64_t *s) { return (float)(rng_next(s) >> 40) * (1.0f / 16777216.0f); }

static void gen_input(int row, int salt, int n, float *x) {
    uint64_t st = (uint64_t)(row * 2 + salt) * 0x9E3779B97F4A7C15ULL + 1;
    for (int k = 0; k < 4; k++) rng_next(&st);
    float c = 0;
    for (int i = 0; i < n; i++) {
        float a = rng_u(&st), v = 0, b;
        switch (row % 16) {
        case 0: v = 2 * a - 1; break;
        case 1:
            b = a + rng_u(&st);
            b += rng_u(&st);
            b += rng_u(&st);
            v = (b - 2) * 1.7f;
            break;
        case 2:
            v = 2 * a - 1;
            if ((rng_next(&st) & 63) == 0) v *= 100;
            break;
        case 3: v = a + 0.01f; break;
        case 4: v = -a - 0.5f; break;
        case 5: if ((i / 32) % 3 != 0 && i < 256) v = 2 * a - 1; break;
        case 6:
            if (i % 32 == 0) c = 2 * a - 1;
            v = c;
            break;
        case 7: v = (2 * a - 1) * 1e-20f; break;
        case 8: v = (2 * a - 1) * 3e4f; break;
        case 9: v = (float)((int32_t)(a * 9) - 4); break;
        case 10: v = (float)((int32_t)(a * 17) - 8) * 0.5f; break;
        case 11:
            b = a * a;
            v = b * b * 8;
            if (rng_next(&st) & 1) v = -v;
            break;
        case 13: if (i % 32 == (row / 16) % 32) v = 2 * a - 1; break;
        case 14: v = (2 * a - 1) * (float)(1 + (i / 16) % 7); break;
        case 15: v = i < n / 2 ? (2 * a - 1) * 10 : (2 * a - 1) * 0.1f; break;
        }
        x[i] = v;
    }
}

static uint64_t fnv(const float *y, int n) {
    uint64_t h = 1469598103934665603ULL;
    const uint8_t *b = (const uint8_t *)y;
    for (int i = 0; i < 4 * n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static void put32(FILE *f, uint32_t v) { fwrite(&v, 4, 1, f); }

// Edge rows of 256 values (one super-block; tq_golden.c's, which iq3_golden.c extends): exact ties at half the block maximum, values one
// ulp either side of them, inexact inverses, signed zeros and zero blocks, maxima past f16's range.
enum { NE256 = 256 };
static inline int edge_rows_256(float rows[][NE256]) {
    int r = 0;
    float *x;
    // 0: amax 1: ±0.5 exactly (lroundf rounds half away), one ulp either side.
    x = rows[r++];
    for (int i = 0; i < NE256; i++) {
        float v = (float[]){0.5f, nextafterf(0.5f, 0), nextafterf(0.5f, 1), 0.25f, 0.75f, 1.0f, 0.0f}[i % 7];
        x[i] = (i / 7) % 2 ? -v : v;
    }
    x[255] = 1.0f;
    // 1: maxima whose inverse is inexact (3, 7, 0.1, 1e-3), halves and thirds of them.
    x = rows[r++];
    for (int i = 0; i < NE256; i++) {
        float s = (float[]){3.0f, 7.0f, 0.1f, 1e-3f}[i / 64];
        x[i] = s * (float)((i * 7) % 13 - 6) / 12.0f;
        if (i % 64 == 63) x[i] = -s;
    }
    // 2: signed zeros only (a zero block, d = 0).
    x = rows[r++];
    for (int i = 0; i < NE256; i++) x[i] = (i % 2) ? -0.0f : 0.0f;
    // 3: one nonzero value among zeros, negative maximum.
    x = rows[r++];
    for (int i = 0; i < NE256; i++) x[i] = (i % 3 == 0) ? -0.0f : 0.0f;
    x[77] = -2.5f;
    x[200] = 1.25f;
    // 4: a maximum past f16's range (d becomes inf), small values beside it.
    x = rows[r++];
    for (int i = 0; i < NE256; i++) x[i] = (float)((i * 5) % 11 - 5) * 1e4f;
    x[3] = 1e5f;
    // 5: a tiny maximum (1e-7) and the smallest normal magnitudes.
    x = rows[r++];
    for (int i = 0; i < NE256; i++) x[i] = (i < 128 ? 1e-7f : 0x1p-100f) * (float)((i * 3) % 9 - 4) / 4.0f;
    return r;
}

#endif
