// The axis tuner's checks on the device (tuner/src/axis_tuner.cpp): a plain reference
// reduction of every output of a C-contiguous rows ([outputs, R]) or columns
// ([outputs / inner, R, inner]) shape, and a bitwise comparison of a candidate's outputs
// with it. The checks run on the exact data sets (tuner/reference.h), where every order
// of combining gives the same bits, so the reference's own order (a warp per output,
// lanes striding R, then a fixed shuffle tree) decides nothing: a right kernel matches
// it bit for bit, and a kernel that drops, repeats or misplaces an element does not.
// Nothing here is shared with the kernels under test except the op's combine and the
// epilogue (mean's division), whose results are exact on this data.
#pragma once
#include "rt/common.cuh"
#include "rt/ops.cuh"

namespace rt {

template <class OpT, class InT, class AccT, class OutT>
__global__ void axis_reference_kernel(const InT* in, OutT* out, u64 outputs, u64 reduced, u64 inner, int columns) {
  const unsigned lane = threadIdx.x & 31u;
  const u64 warp = ((u64)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const u64 warps = ((u64)gridDim.x * blockDim.x) >> 5;
  for (u64 j = warp; j < outputs; j += warps) {
    const InT* first = columns ? in + (j / inner) * reduced * inner + (j % inner) : in + j * reduced;
    const u64 stride = columns ? inner : 1;
    AccT v = OpT::template identity<AccT>();
    for (u64 k = lane; k < reduced; k += 32) v = OpT::template apply<AccT>(v, (AccT)first[k * stride]);
    for (int offset = 16; offset > 0; offset /= 2)
      v = OpT::template apply<AccT>(v, __shfl_xor_sync(0xffffffffu, v, offset));
    if (lane == 0) out[j] = epilogue<OpT, OutT>(v, reduced);
  }
}

// result[0] += mismatches; result[1] = min(result[1], first mismatching index). NaN
// matches any NaN (a NaN's payload is not a result).
template <class T>
__device__ __forceinline__ bool same_value(T a, T b) {
  if (IsFloating<T>::value && a != a && b != b) return true;
  if (sizeof(T) == 8) {
    unsigned long long x, y;
    memcpy(&x, &a, 8);
    memcpy(&y, &b, 8);
    return x == y;
  }
  unsigned int x = 0, y = 0;
  memcpy(&x, &a, sizeof(T) < 4 ? sizeof(T) : 4);
  memcpy(&y, &b, sizeof(T) < 4 ? sizeof(T) : 4);
  return x == y;
}

template <class T>
__global__ void axis_compare_kernel(const T* got, const T* want, u64 n, unsigned long long* result) {
  unsigned long long mismatches = 0, first = ~0ull;
  for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
    if (!same_value(got[i], want[i])) {
      ++mismatches;
      if (i < first) first = i;
    }
  if (mismatches > 0) {
    atomicAdd(result, mismatches);
    atomicMin(result + 1, first);
  }
}

}  // namespace rt
