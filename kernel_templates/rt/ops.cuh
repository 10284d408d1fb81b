// Reduction operators. Integer sums and products wrap like two's complement (computed
// in unsigned arithmetic, where wrapping is defined); floating min and max propagate
// NaN, as NumPy and PyTorch do (fminf/fmaxf would drop it).
#pragma once
#include "rt/common.cuh"

namespace rt {

template <class T> struct UnsignedOf { typedef T type; };
template <> struct UnsignedOf<int> { typedef unsigned int type; };
template <> struct UnsignedOf<long long> { typedef unsigned long long type; };

template <class T> __device__ __forceinline__ T wrapping_add(T a, T b) {
  typedef typename UnsignedOf<T>::type U;
  return IsFloating<T>::value ? a + b : (T)((U)a + (U)b);
}
template <class T> __device__ __forceinline__ T wrapping_mul(T a, T b) {
  typedef typename UnsignedOf<T>::type U;
  return IsFloating<T>::value ? a * b : (T)((U)a * (U)b);
}

// Min and max where a NaN on either side wins (a != a is true only for NaN): a compare
// and select, two compares and a select in one dependent chain. From sm_80 an f32 pair
// also takes one instruction, min/max.NaN (its NaN result the canonical one): `fold`,
// which the rows kernels use, where a lane folds a long run of its row in one chain
// (on an H200, rows max 100 x 2^20 f32 122.0 -> 106.8 us). `apply` keeps the compare and
// select everywhere else: with the instruction, a 16-bit columns kernel kept two of its
// four loads in flight and ran 1.4 times slower (bf16 max 12289 x 5000 on an H100).
template <class T> __device__ __forceinline__ T nan_min(T a, T b) { return (a < b || a != a) ? a : b; }
template <class T> __device__ __forceinline__ T nan_max(T a, T b) { return (a > b || a != a) ? a : b; }
template <class T> __device__ __forceinline__ T nan_min_fold(T a, T b) { return nan_min(a, b); }
template <class T> __device__ __forceinline__ T nan_max_fold(T a, T b) { return nan_max(a, b); }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
template <> __device__ __forceinline__ float nan_min_fold<float>(float a, float b) {
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
template <> __device__ __forceinline__ float nan_max_fold<float>(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
#endif

struct SumOp {
  static constexpr int kId = 0;
  template <class A> static __device__ __forceinline__ A identity() { return A(0); }
  template <class A> static __device__ __forceinline__ A apply(A a, A b) { return wrapping_add(a, b); }
  template <class A> static __device__ __forceinline__ A fold(A a, A b) { return apply(a, b); }
};
struct ProdOp {
  static constexpr int kId = 1;
  template <class A> static __device__ __forceinline__ A identity() { return A(1); }
  template <class A> static __device__ __forceinline__ A apply(A a, A b) { return wrapping_mul(a, b); }
  template <class A> static __device__ __forceinline__ A fold(A a, A b) { return apply(a, b); }
};
struct MinOp {
  static constexpr int kId = 2;
  template <class A> static __device__ __forceinline__ A identity() { return Limits<A>::highest(); }
  template <class A> static __device__ __forceinline__ A apply(A a, A b) { return nan_min(a, b); }
  template <class A> static __device__ __forceinline__ A fold(A a, A b) { return nan_min_fold(a, b); }
};
struct MaxOp {
  static constexpr int kId = 3;
  template <class A> static __device__ __forceinline__ A identity() { return Limits<A>::lowest(); }
  template <class A> static __device__ __forceinline__ A apply(A a, A b) { return nan_max(a, b); }
  template <class A> static __device__ __forceinline__ A fold(A a, A b) { return nan_max_fold(a, b); }
};
// mean combines like sum; the epilogue divides by n (0/0 gives NaN for empty input).
struct MeanOp : SumOp {
  static constexpr int kId = 4;
};

// What the last step writes: the accumulator converted to the output type, or for mean
// the accumulated sum divided by n, rounded once to the output type. `d`: n's divisor
// (mean_divisor), passed by callers that take it once for many outputs.
//
// A float sum over n <= 2^24 (exact in float) divides without a division (common.cuh):
// to f32 rounded to nearest, to 16 bits through a quotient that rounds to them once. A
// float quotient rounded to nearest and then to 16 bits would round twice: f16 mean of
// 8875 elements summing to 8888 is 1 + 2^-10, but 8888 / 8875 rounds to 1 + 3 * 2^-11
// in float, a tie that f16 breaks upward. A zero, infinite or NaN total is its own
// quotient.
template <class Op, class Out, class Acc>
__device__ __forceinline__ Out epilogue(Acc total, u64 n, MeanDivisor d) {
  if (RT_MUTATION == 4) return (Out)Op::template identity<Acc>();  // common.cuh
  if (Op::kId == MeanOp::kId) {
    if (IsSame<Acc, float>::value && d.n != 0.0f) {
      const float t = (float)total;
      if (t == 0.0f || !(fabsf(t) <= 3.402823466e38f)) return (Out)t;
      // Totals below 2^-100, whose quotients could fall below float's normal range (where
      // the Newton step is not faithful), take the double division.
      if (fabsf(t) >= 7.888609052e-31f) {
        // n a power of two (exact in d.n, as every n there is): its reciprocal is exact,
        // and so is t * inv, a normal float (|t| >= 2^-100, n <= 2^24), rounded once here.
        if ((__float_as_uint(d.n) & 0x7fffffu) == 0 && d.inv * d.n == 1.0f) return (Out)(t * d.inv);
        if (IsSame<Out, float>::value) return (Out)quotient_to_nearest(t, d);
        if (IsSame<Out, bfloat16_t>::value) return (Out)quotient_for_16bit<true>(t, d);
        if (IsSame<Out, half_t>::value) return (Out)quotient_for_16bit<false>(t, d);
      }
    }
    return (Out)((double)total / (double)n);
  }
  return (Out)total;
}
template <class Op, class Out, class Acc> __device__ __forceinline__ Out epilogue(Acc total, u64 n) {
  return epilogue<Op, Out, Acc>(total, n, Op::kId == MeanOp::kId ? mean_divisor(n) : MeanDivisor{0.0f, 0.0f});
}

}  // namespace rt
