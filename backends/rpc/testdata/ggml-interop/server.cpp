#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-rpc.h"
#include <cstdio>
int main(int argc, char ** argv) {
    if (argc < 2) { fprintf(stderr, "usage: server host:port\n"); return 1; }
    ggml_backend_dev_t dev = ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU);
    ggml_backend_rpc_start_server(argv[1], nullptr, 1, 1, &dev);
    return 0;
}
