// What the standalone probes in this folder share (each is one nvcc command, see its
// head; this header sits beside them): a CUDA call checked, and a 16-byte f32 load with
// each of the load instructions the probes compare.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                             \
  do {                                                                                    \
    cudaError_t err_ = (x);                                                               \
    if (err_ != cudaSuccess) {                                                            \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));            \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

constexpr int kLoads = 6;
const char* kLoadNames[kLoads] = {"plain", "nc", "nc.L2::128B", "nc.L2::256B", "nc.L1::no_allocate.L2::256B", "cs"};

template <int LOAD>
__device__ __forceinline__ float4 load4(const float4* p) {
  float4 v;
  if (LOAD == 0)
    asm volatile("ld.global.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  else if (LOAD == 1)
    asm volatile("ld.global.nc.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  else if (LOAD == 2)
    asm volatile("ld.global.nc.L2::128B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  else if (LOAD == 3)
    asm volatile("ld.global.nc.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  else if (LOAD == 4)
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0,%1,%2,%3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(p));
  else
    asm volatile("ld.global.cs.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
  return v;
}
