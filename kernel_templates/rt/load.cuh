// Global loads with a cache hint, scalar or as a built-in vector of up to 16 bytes.
#pragma once
#include "rt/common.cuh"

namespace rt {

// The built-in vector type of VW elements of T (VW * sizeof(T) <= 16).
template <class T, int VW> struct VectorOf;
template <class T> struct VectorOf<T, 1> { typedef T type; };
template <> struct VectorOf<int, 2> { typedef int2 type; };
template <> struct VectorOf<int, 4> { typedef int4 type; };
template <> struct VectorOf<unsigned int, 2> { typedef uint2 type; };
template <> struct VectorOf<unsigned int, 4> { typedef uint4 type; };
template <> struct VectorOf<float, 2> { typedef float2 type; };
template <> struct VectorOf<float, 4> { typedef float4 type; };
template <> struct VectorOf<long long, 2> { typedef longlong2 type; };
template <> struct VectorOf<double, 2> { typedef double2 type; };
template <bool B> struct VectorOf<Float16Storage<B>, 2> { typedef unsigned int type; };
template <bool B> struct VectorOf<Float16Storage<B>, 4> { typedef uint2 type; };
template <bool B> struct VectorOf<Float16Storage<B>, 8> { typedef uint4 type; };

// The load intrinsics by hint, for the built-in types and, as 16-bit integers, for the
// 16-bit float storage types.
template <int LOAD, class V>
__device__ __forceinline__ V load_builtin(const V* p) {
  if (LOAD == load_ldg) return __ldg(p);
  if (LOAD == load_ldcs) return __ldcs(p);
  if (LOAD == load_ldcg) return __ldcg(p);
  return *p;
}
template <class V> struct Loader {
  template <int LOAD> static __device__ __forceinline__ V load(const V* p) { return load_builtin<LOAD>(p); }
};
template <bool B> struct Loader<Float16Storage<B> > {
  template <int LOAD> static __device__ __forceinline__ Float16Storage<B> load(const Float16Storage<B>* p) {
    Float16Storage<B> s;
    s.bits = load_builtin<LOAD>(reinterpret_cast<const unsigned short*>(p));
    return s;
  }
};

template <int LOAD, class V>
__device__ __forceinline__ V load_hinted(const V* p) {
  return Loader<V>::template load<LOAD>(p);
}
// __ldg for any element type (the axis kernels' read-only loads).
template <class V>
__device__ __forceinline__ V ldg(const V* p) {
  return Loader<V>::template load<load_ldg>(p);
}

// Element i of a loaded vector; with i a compile-time constant after unrolling, this
// stays in registers.
template <class T, class V>
__device__ __forceinline__ T vector_element(const V& v, int i) {
  return reinterpret_cast<const T*>(&v)[i];
}

}  // namespace rt
