#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds small consumer projects with
# find_package(reduce_tune) + target_link_libraries(app reduce_tune::runtime): a C++17
# host program with the host compiler, and a .cu file with nvcc (its default standard).
# Usage: install_test.sh BUILD_DIR [NVCC]   (no NVCC: the .cu consumer is not built)
set -euo pipefail
build_dir=$1
nvcc=${2:-}
source_dir=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log"
# The installed command starts with the loader's cache bypassed, as on a fresh machine
# where nothing tells the loader about the CUDA toolkit: it finds NVRTC by itself.
/lib64/ld-linux-x86-64.so.2 --inhibit-cache "$work/prefix/bin/reduce-tune" tune --dry-run --arch 90 --ops sum \
  --dtypes f32 --sizes 2^20 >"$work/dry-run.log" 2>&1 || { cat "$work/dry-run.log"; exit 1; }
cuda_args=()
if [ -n "$nvcc" ]; then cuda_args=(-DWITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc"); fi
cmake -S "$source_dir/consumer" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" "${cuda_args[@]}" \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/build/consumer"
if [ -n "$nvcc" ]; then
  "$work/build/cuda_consumer"
else
  echo "no CUDA compiler in the parent build: the nvcc consumer was not built"
fi
