// Test-data generation on the device for the tuner's timing and verification: element i
// is a hash of (seed, i), mapped to the values of a data set (tuner/reference.h says why
// each set looks as it does). tuner/src/reference.cpp (hashed_bits) computes the same
// values on the host; keep the two identical operation for operation.
#pragma once
#include "rt/common.cuh"

namespace rt {

enum FillKindId : int { fill_sum = 0, fill_prod = 1, fill_minmax = 2, fill_rounding = 3 };

template <class T, int KIND>
__device__ __forceinline__ T hashed_value(u64 seed, u64 i) {
  u64 z = i + seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  const u64 h = z ^ (z >> 31);
  if (!IsFloating<T>::value) return (T)(KIND == fill_prod ? (h | 1) : h);
  if (KIND == fill_sum) {
    const int k = (int)(h % 16) + 1;
    return (T)(((h >> 8) & 1) ? -k : k);
  }
  if (KIND == fill_prod) return ((h >> 1) & ((1u << 26) - 1)) == 5 ? T(2) : ((h & 1) ? T(1) : T(-1));
  if (KIND == fill_rounding) {
    if (IsSame<T, half_t>::value) return (T)(1.0f + (float)(h >> 54) * 0x1p-10f);
    if (IsSame<T, bfloat16_t>::value) return (T)(1.0f + (float)(h >> 57) * 0x1p-7f);
    return sizeof(T) == 4 ? (T)(1.0f + (float)(h >> 41) * 0x1p-23f) : (T)(1.0 + (double)(h >> 12) * 0x1p-52);
  }
  return (T)((double)((int)(h >> 40) - (1 << 23)) * 0x1p-10);
}

template <class T, int KIND>
__global__ void fill_kernel(T* out, u64 n, u64 seed) {
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
    out[i] = hashed_value<T, KIND>(seed, i);
}

}  // namespace rt
