#!/usr/bin/env bash
# Builds the GPU-facing executables here and copies them into gpu-stage/ (git-ignored),
# the folder to carry to the GPU machine, where scripts/gpu-check.sh runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
targets=(gpu_tests reduce-tune)
# Optional targets exist when configure found what they need (nvcc for the bench).
# Asked of the build folder itself, so it works for Ninja and Makefile builds alike.
for t in reduce_tune_bench reduce_tune_axis_bench; do
  if [ -n "$(find "$BUILD" -type d -name "$t.dir" -print -quit)" ]; then targets+=("$t"); fi
done
cmake --build "$BUILD" -j2 --target "${targets[@]}"
rm -rf gpu-stage && mkdir -p gpu-stage
for t in "${targets[@]}"; do
  found=$(find "$BUILD" -type f -name "$t" -perm -u+x -print -quit)
  if [ -z "$found" ]; then echo "stage-gpu: $t was built but not found under $BUILD" >&2; exit 1; fi
  cp "$found" gpu-stage/
  # The tree that travels to the GPU machine is limited to 64 MiB: no debug info.
  strip --strip-debug "gpu-stage/$t"
done
# The Python package: this build's extension, and those of other build folders named in
# PYTHON_BUILDS (the GPU machine's Python may differ from this one's; each build's
# extension carries its Python version in its name).
if [ -d "$BUILD/python/reduce_tune" ]; then
  cmake --build "$BUILD" -j2 --target reduce_tune_python
  mkdir -p gpu-stage/python/reduce_tune
  for b in "$BUILD" ${PYTHON_BUILDS:-}; do
    cmake --build "$b" -j2 --target reduce_tune_python
    cp "$b"/python/reduce_tune/_core*.so gpu-stage/python/reduce_tune/
  done
  cp python/reduce_tune/*.py gpu-stage/python/reduce_tune/
  strip --strip-debug gpu-stage/python/reduce_tune/*.so
fi
ls -la gpu-stage gpu-stage/python/reduce_tune 2>/dev/null
du -sh gpu-stage
