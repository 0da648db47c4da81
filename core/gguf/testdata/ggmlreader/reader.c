// reader.c: ggml's gguf reader and writer over a file, for TestGGMLReadsTandemFile.
//
// Build against a checkout of github.com/ggml-org/ggml (outside this repository), e.g.:
//
//	S=$GGML/src; FL="-O1 -I$GGML/include -I$S -DNDEBUG -D_GNU_SOURCE -DGGML_VERSION=\"0\" -DGGML_COMMIT=\"x\""
//	for f in ggml.c ggml-alloc.c ggml-quants.c; do gcc $FL -std=c11 -c $S/$f -o $f.o; done
//	for f in ggml.cpp ggml-backend.cpp ggml-backend-meta.cpp ggml-threading.cpp gguf.cpp; do g++ $FL -std=c++17 -c $S/$f -o $f.o; done
//	gcc $FL -std=c11 -c reader.c && g++ -o reader reader.o *.c.o *.cpp.o -lm -lpthread
//	TANDEM_GGML_GGUF_READER=$PWD/reader go test -run GGML ./core/gguf
//
// Usage: reader file.gguf [copy.gguf]: prints version, keys, values and tensors (with a checksum of
// the data); with a second argument writes the same metadata and tensors with gguf_write_to_file.
#include "ggml.h"
#include "gguf.h"
#include <stdio.h>
#include <inttypes.h>
#include <string.h>

static void print_val(const struct gguf_context *g, int64_t k, enum gguf_type t, size_t i, int arr) {
    const void *base = t == GGUF_TYPE_STRING ? NULL : arr ? gguf_get_arr_data(g, k) : gguf_get_val_data(g, k);
    switch (t) {
    case GGUF_TYPE_UINT8:   printf("%u", ((const uint8_t*)base)[i]); break;
    case GGUF_TYPE_INT8:    printf("%d", ((const int8_t*)base)[i]); break;
    case GGUF_TYPE_UINT16:  printf("%u", ((const uint16_t*)base)[i]); break;
    case GGUF_TYPE_INT16:   printf("%d", ((const int16_t*)base)[i]); break;
    case GGUF_TYPE_UINT32:  printf("%u", ((const uint32_t*)base)[i]); break;
    case GGUF_TYPE_INT32:   printf("%d", ((const int32_t*)base)[i]); break;
    case GGUF_TYPE_FLOAT32: printf("%.9g", ((const float*)base)[i]); break;
    case GGUF_TYPE_BOOL:    printf("%d", ((const int8_t*)base)[i] != 0); break;
    case GGUF_TYPE_UINT64:  printf("%" PRIu64, ((const uint64_t*)base)[i]); break;
    case GGUF_TYPE_INT64:   printf("%" PRId64, ((const int64_t*)base)[i]); break;
    case GGUF_TYPE_FLOAT64: printf("%.17g", ((const double*)base)[i]); break;
    case GGUF_TYPE_STRING: {
        const char *s = arr ? gguf_get_arr_str(g, k, i) : gguf_get_val_str(g, k);
        printf("%zu:", strlen(s));
        for (const char *p = s; *p; p++) printf("%02x", (unsigned char)*p);
        break; }
    default: printf("?");
    }
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) { fprintf(stderr, "usage: reader file.gguf [copy.gguf]\n"); return 2; }
    struct ggml_context *ctx = NULL;
    struct gguf_init_params p = { .no_alloc = false, .ctx = &ctx };
    struct gguf_context *g = gguf_init_from_file(argv[1], p);
    if (!g) { printf("ERROR: ggml could not read %s\n", argv[1]); return 1; }
    printf("version %u alignment %zu data_offset %zu\n", gguf_get_version(g), gguf_get_alignment(g), gguf_get_data_offset(g));
    int64_t nkv = gguf_get_n_kv(g);
    for (int64_t k = 0; k < nkv; k++) {
        enum gguf_type t = gguf_get_kv_type(g, k);
        printf("kv %s %s", gguf_get_key(g, k), gguf_type_name(t));
        if (t == GGUF_TYPE_ARRAY) {
            enum gguf_type at = gguf_get_arr_type(g, k);
            size_t n = gguf_get_arr_n(g, k);
            printf("[%s] %zu =", gguf_type_name(at), n);
            for (size_t i = 0; i < n; i++) { printf(" "); print_val(g, k, at, i, 1); }
        } else {
            printf(" = ");
            print_val(g, k, t, 0, 0);
        }
        printf("\n");
    }
    int64_t nt = gguf_get_n_tensors(g);
    for (int64_t i = 0; i < nt; i++) {
        const char *name = gguf_get_tensor_name(g, i);
        struct ggml_tensor *t = ggml_get_tensor(ctx, name);
        uint64_t sum = 0;
        const uint8_t *d = (const uint8_t*)t->data;
        for (size_t j = 0; j < ggml_nbytes(t); j++) sum = sum * 31 + d[j];
        printf("tensor %s %s %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 " offset %zu bytes %zu sum %" PRIu64 "\n",
            name, ggml_type_name(t->type), t->ne[0], t->ne[1], t->ne[2], t->ne[3],
            gguf_get_tensor_offset(g, i), ggml_nbytes(t), sum);
    }
    if (argc == 3) {
        // write the same metadata and tensors with ggml's writer
        struct gguf_context *out = gguf_init_empty();
        gguf_set_kv(out, g);
        for (int64_t i = 0; i < nt; i++) {
            gguf_add_tensor(out, ggml_get_tensor(ctx, gguf_get_tensor_name(g, i)));
        }
        if (!gguf_write_to_file(out, argv[2], false)) { printf("ERROR: write failed\n"); return 1; }
        gguf_free(out);
    }
    gguf_free(g);
    ggml_free(ctx);
    return 0;
}
