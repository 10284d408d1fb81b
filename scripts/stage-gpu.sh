#!/usr/bin/env bash
# Builds the GPU-facing executables here and copies them into gpu-stage/ (git-ignored),
# the folder to carry to the GPU machine, where scripts/gpu-check.sh runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
targets=(gpu_tests)
for t in reduce-tune reduce_tune_bench; do
  if cmake --build "$BUILD" --target help 2>/dev/null | grep -q "^$t:"; then targets+=("$t"); fi
done
cmake --build "$BUILD" -j2 --target "${targets[@]}"
rm -rf gpu-stage && mkdir -p gpu-stage
for t in "${targets[@]}"; do
  find "$BUILD" -type f -name "$t" -perm -u+x -exec cp {} gpu-stage/ \;
  # The tree that travels to the GPU machine is limited to 64 MiB: no debug info.
  [ -f "gpu-stage/$t" ] && strip --strip-debug "gpu-stage/$t"
done
ls -la gpu-stage
du -sh gpu-stage
