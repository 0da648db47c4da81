#!/bin/bash
set -e
cd /tmp/ggml
DEFS="-DGGML_USE_CPU -DGGML_USE_RPC -DGGML_VERSION=\"0.0.0\" -DGGML_COMMIT=\"d99724f2\" -D_GNU_SOURCE -DNDEBUG -DGGML_SCHED_MAX_COPIES=4"
INC="-Iinclude -Isrc -Isrc/ggml-cpu"
OPT="-O1 -march=native -fPIC -pthread"
srcs="src/ggml.c src/ggml-alloc.c src/ggml-quants.c src/ggml-backend.cpp src/ggml-backend-reg.cpp src/ggml-threading.cpp src/ggml.cpp src/gguf.cpp src/ggml-opt.cpp src/ggml-backend-meta.cpp
src/ggml-cpu/ggml-cpu.c src/ggml-cpu/ggml-cpu.cpp src/ggml-cpu/ops.cpp src/ggml-cpu/binary-ops.cpp src/ggml-cpu/unary-ops.cpp src/ggml-cpu/vec.cpp src/ggml-cpu/quants.c src/ggml-cpu/repack.cpp src/ggml-cpu/traits.cpp
src/ggml-cpu/arch/x86/quants.c src/ggml-cpu/arch/x86/repack.cpp src/ggml-cpu/arch/x86/cpu-feats.cpp
src/ggml-rpc/ggml-rpc.cpp src/ggml-rpc/transport.cpp"
objs=""
for s in $srcs; do
  o=obj/$(echo $s | tr / _).o
  objs="$objs $o"
  if [ ! -f $o ]; then
    case $s in
      *.c) gcc -std=c11 $OPT $DEFS $INC -c $s -o $o ;;
      *.cpp) g++ -std=c++17 $OPT $DEFS $INC -c $s -o $o ;;
    esac
    echo built $s
  fi
done
echo $objs > obj/list
