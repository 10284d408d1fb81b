#!/usr/bin/env bash
# Installs what reduce-tune needs to build and test on Debian 12 (the CUDA toolkit itself
# is expected at /usr/local/cuda, or wherever CUDAToolkit_ROOT points).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
packages=(
  cmake ninja-build g++ pkg-config
  libsqlite3-dev libboost-program-options-dev libxxhash-dev nlohmann-json3-dev
  libgtest-dev zlib1g-dev liblzma-dev
  python3 python3-dev python3-pip python3-venv  # the Python module (python/)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
if ! command -v nvcc >/dev/null 2>&1 && [ ! -x "${CUDAToolkit_ROOT:-/usr/local/cuda}/bin/nvcc" ]; then
  echo "install-deps: the CUDA toolkit (12.0 or newer) is not at /usr/local/cuda; install it or set CUDAToolkit_ROOT" >&2
  exit 1
fi
# nanobind (PyPI) for the Python module's build, into .deps/python where CMake looks for it:
# a folder of its own (pip --target), so Debian's system Python is left as it is.
repo="$(cd "$(dirname "$0")/.." && pwd)"
nanobind_version=2.9.2
# Without PyPI the C++ library and the command still build; only the module is skipped.
if ! grep -qx "Version: ${nanobind_version}" "$repo"/.deps/python/nanobind-*.dist-info/METADATA 2>/dev/null; then
  rm -rf "$repo/.deps/python"
  if ! python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
      --target "$repo/.deps/python" "nanobind==${nanobind_version}"; then
    rm -rf "$repo/.deps/python"
    echo "install-deps: warning: nanobind ${nanobind_version} could not be installed from PyPI; the Python module will not be built" >&2
  fi
fi
echo "install-deps: all dependencies present"
