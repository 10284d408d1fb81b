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

template <int LOAD, class V>
__device__ __forceinline__ V load_hinted(const V* p) {
  if (LOAD == load_ldg) return __ldg(p);
  if (LOAD == load_ldcs) return __ldcs(p);
  if (LOAD == load_ldcg) return __ldcg(p);
  return *p;
}

// Element i of a loaded vector; with i a compile-time constant after unrolling, this
// stays in registers.
template <class T, class V>
__device__ __forceinline__ T vector_element(const V& v, int i) {
  return reinterpret_cast<const T*>(&v)[i];
}

}  // namespace rt
