// Device-wide atomic combination for single-pass atomic reductions: native atomics where
// the hardware has them (integer add/min/max, float and double add), a compare-and-swap
// loop on the value's bits otherwise (products, floating min/max with NaN propagation).
#pragma once
#include "rt/ops.cuh"

namespace rt {

template <class A> struct Bits;
template <> struct Bits<int> {
  typedef unsigned int word;
  static __device__ word to(int v) { return (word)v; }
  static __device__ int from(word w) { return (int)w; }
};
template <> struct Bits<unsigned int> {
  typedef unsigned int word;
  static __device__ word to(unsigned int v) { return v; }
  static __device__ unsigned int from(word w) { return w; }
};
template <> struct Bits<float> {
  typedef unsigned int word;
  static __device__ word to(float v) { return __float_as_uint(v); }
  static __device__ float from(word w) { return __uint_as_float(w); }
};
template <> struct Bits<long long> {
  typedef unsigned long long word;
  static __device__ word to(long long v) { return (word)v; }
  static __device__ long long from(word w) { return (long long)w; }
};
template <> struct Bits<double> {
  typedef unsigned long long word;
  static __device__ word to(double v) { return (word)__double_as_longlong(v); }
  static __device__ double from(word w) { return __longlong_as_double((long long)w); }
};

template <class Op, class A>
__device__ __forceinline__ void atomic_combine_cas(A* target, A v) {
  typedef typename Bits<A>::word W;
  W* word = reinterpret_cast<W*>(target);
  W old = *reinterpret_cast<volatile W*>(word);
  W assumed;
  do {
    assumed = old;
    old = atomicCAS(word, assumed, Bits<A>::to(Op::template apply<A>(Bits<A>::from(assumed), v)));
  } while (old != assumed);
}

template <class Op, class A> struct AtomicCombine {
  static __device__ __forceinline__ void apply(A* target, A v) { atomic_combine_cas<Op>(target, v); }
};
template <class A> struct AtomicCombine<MeanOp, A> : AtomicCombine<SumOp, A> {};
template <> struct AtomicCombine<SumOp, int> {
  static __device__ __forceinline__ void apply(int* t, int v) { atomicAdd(t, v); }
};
template <> struct AtomicCombine<SumOp, unsigned int> {
  static __device__ __forceinline__ void apply(unsigned int* t, unsigned int v) { atomicAdd(t, v); }
};
template <> struct AtomicCombine<SumOp, long long> {
  // Two's complement: an unsigned add is the wrapping signed add.
  static __device__ __forceinline__ void apply(long long* t, long long v) {
    atomicAdd(reinterpret_cast<unsigned long long*>(t), (unsigned long long)v);
  }
};
template <> struct AtomicCombine<SumOp, float> {
  static __device__ __forceinline__ void apply(float* t, float v) { atomicAdd(t, v); }
};
template <> struct AtomicCombine<SumOp, double> {
  static __device__ __forceinline__ void apply(double* t, double v) { atomicAdd(t, v); }
};
template <> struct AtomicCombine<MinOp, int> {
  static __device__ __forceinline__ void apply(int* t, int v) { atomicMin(t, v); }
};
template <> struct AtomicCombine<MinOp, unsigned int> {
  static __device__ __forceinline__ void apply(unsigned int* t, unsigned int v) { atomicMin(t, v); }
};
template <> struct AtomicCombine<MinOp, long long> {
  static __device__ __forceinline__ void apply(long long* t, long long v) { atomicMin(t, v); }
};
template <> struct AtomicCombine<MaxOp, int> {
  static __device__ __forceinline__ void apply(int* t, int v) { atomicMax(t, v); }
};
template <> struct AtomicCombine<MaxOp, unsigned int> {
  static __device__ __forceinline__ void apply(unsigned int* t, unsigned int v) { atomicMax(t, v); }
};
template <> struct AtomicCombine<MaxOp, long long> {
  static __device__ __forceinline__ void apply(long long* t, long long v) { atomicMax(t, v); }
};

// Reads the accumulated value and puts `fresh` in its place, in one atomic step.
template <class A>
__device__ __forceinline__ A atomic_take(A* target, A fresh) {
  typedef typename Bits<A>::word W;
  return Bits<A>::from(atomicExch(reinterpret_cast<W*>(target), Bits<A>::to(fresh)));
}

}  // namespace rt
