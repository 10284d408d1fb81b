// Shared definitions for the NVRTC-compiled reduction kernels. NVRTC sees no standard
// library here: only built-in types and CUDA intrinsics.
#pragma once

// Mutation testing (tests/gpu/mutation_test.cpp): a program compiled with
// -DRT_MUTATION=<k> is deliberately wrong, and the tuner's checks must reject it:
//   1 skips one tile (the middle one), 2 drops the last element, 3 drops the head (the
//   vector peel, or the first element where there is none), 4 returns the identity;
//   6 leaves a two-kernel plan's second kernel not waiting for the first, 7 leaves a
//   call's first kernel not waiting for the work before it
//   (tests/gpu/programmatic_launch_test.cpp); 8 leaves out one element of each of the
//   general family's every-other-element vectors (fold_every_other in axis.cuh).
// Never set otherwise; the option is part of every binary-cache key.
#ifndef RT_MUTATION
#define RT_MUTATION 0
#endif

namespace rt {

typedef unsigned long long u64;

// Numbering shared with the host (reduce_tune::Strategy, WarpReduce, Passes, LoadHint);
// every generated source static_asserts that the numbers it was given match these.
// The device has one code path per id below; the host's first_add (3), unroll_blocks (4)
// and multi_element (7) are parameter ranges of interleaved and complete_unroll (the
// engine's strategy table), so they have no id here.
enum StrategyId : int {
  strategy_neighbored = 0,
  strategy_neighbored_less = 1,
  strategy_interleaved = 2,
  strategy_unroll_last_warp = 5,
  strategy_complete_unroll = 6,
  strategy_warp_shuffle = 8,
  strategy_vectorized = 9,
};
enum WarpReduceId : int { warp_shuffle = 0, warp_smem = 1, warp_redux = 2, warp_none = 3 };
enum PassesId : int { passes_two_pass = 0, passes_single_pass_ticket = 1, passes_single_pass_atomic = 2 };
enum LoadHintId : int { load_plain = 0, load_ldg = 1, load_ldcs = 2, load_ldcg = 3 };

// Programmatic dependent launch (sm_90 and later; nothing on older GPUs). Every kernel
// a call launches goes with programmatic stream serialization (the engine's
// StreamOrder::programmatic), so it may be launched before the kernel ahead of it in the
// stream has drained. Each kernel here therefore starts with begin_after_previous_grid:
//   - it waits (wait_for_previous_grid), before it touches memory, until the grid ahead
//     has finished and its writes are visible: a two-kernel plan's first kernel, the
//     previous call's last one, or a caller's kernel;
//   - `allow_next`: it lets the next kernel be launched from here
//     (allow_dependent_launch), rather than as its own blocks exit. Only where that next
//     kernel is small and certain: a two-kernel plan's first kernel (the finalize comes
//     next) and the finalize itself. Blocks launched early wait beside this grid's own,
//     and that costs a long kernel: on an H100, an f32 sum of 1000 rows of 65537 took
//     98.5-99.2 us back to back with every kernel allowing early, 93.1-94.2 us without
//     (set AA in docs/BENCHMARKS.md). Without the explicit trigger the next kernel is
//     still launched as this grid's blocks exit, not after it has drained.
// After work that is not a kernel, or a kernel that launches nothing early (a caller's,
// usually), the wait returns at once. A caller's kernel launched programmatically right
// after a call must wait the same way (cudaGridDependencySynchronize) before it reads
// the result.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
// The start of every kernel a call launches: `first` for the call's first kernel
// (mutation 7 drops its wait), else a two-kernel plan's second (mutation 6).
__device__ __forceinline__ void begin_after_previous_grid(bool first, bool allow_next) {
  if (RT_MUTATION != (first ? 7 : 6)) wait_for_previous_grid();
  if (allow_next) allow_dependent_launch();
}

template <bool B, class T, class F> struct Conditional { typedef T type; };
template <class T, class F> struct Conditional<false, T, F> { typedef F type; };

template <class A, class B> struct IsSame { static constexpr bool value = false; };
template <class A> struct IsSame<A, A> { static constexpr bool value = true; };

// The 16-bit floats, as storage: IEEE binary16 (half_t) and bfloat16 (bfloat16_t). They
// are read into float and reduced there; a result is rounded to them once, to nearest
// even (from double through "round to odd" float, so that a double rounds once too).
// No cuda_fp16.h: NVRTC does not ship it, and these need only conversions.
__device__ __forceinline__ float f16_to_float(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ unsigned short float_to_f16(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ float bf16_to_float(unsigned short b) { return __uint_as_float((unsigned)b << 16); }
// sm_80 and later round in one instruction; earlier, in integer arithmetic (a NaN stays
// a quiet NaN; the instruction gives the canonical one, 0x7fff).
__device__ __forceinline__ unsigned short float_to_bf16(float f) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  unsigned short b;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b) : "f"(f));
  return b;
#else
  const unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // quiet NaN
  return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#endif
}
// `d` toward zero to float, its last bit set when that dropped anything: rounding this
// to 16 bits gives the once-rounded result of `d` (float keeps over two extra bits).
__device__ __forceinline__ float round_to_odd_float(double d) {
  const float f = __double2float_rz(d);
  return (double)f == d || d != d ? f : __uint_as_float(__float_as_uint(f) | 1u);
}

// A mean's divisor n as a float and its reciprocal, taken once for a launch: n in [1,
// 2^24] (exact in float), else n = 0 (the quotient is then taken in double). The axis
// kernels take it from their parameters (the host's correctly rounded reciprocal): taken
// per output, the conversion of a 64-bit n and the reciprocal left an f32 mean of 2 x
// 2622080 along 0 at 13.9 us against 11.3 without them on an H200.
struct MeanDivisor {
  float n, inv;
};
__device__ __forceinline__ MeanDivisor mean_divisor(u64 n) {
  if (n < 1 || n > (1ull << 24)) return {0.0f, 0.0f};
  const float nf = (float)n;
  return {nf, __fdividef(1.0f, nf)};
}

// A mean's quotient total / n for a finite, non-zero float total, without a division:
// IEEE division's slow path (taken for a zero total, among others) is a call, and a bf16
// mean of 2 x 2622080 along 0 took 18.5 us with it (double division) against the sum's
// 8.7 on an H200. A reciprocal within 2 ulp of 1 / n and one Newton step give a faithful
// quotient q: one of the two floats around the exact one, the exact one strictly within
// an ulp of q.
__device__ __forceinline__ float faithful_quotient(float total, MeanDivisor d) {
  const float q = total * d.inv;
  return fmaf(fmaf(-q, d.n, total), d.inv, q);
}
// q's residual total - q * n, exact in an FMA, tells which of the two floats it is. The
// float toward zero from the exact quotient; `inexact` says whether that dropped anything.
__device__ __forceinline__ float quotient_toward_zero(float total, MeanDivisor d, bool& inexact) {
  const float q = faithful_quotient(total, d);
  const float rest = fmaf(-q, d.n, total);
  unsigned bits = __float_as_uint(q);
  inexact = rest != 0.0f;
  // Past the exact quotient (q's sign is total's, or q is 0 with total's sign): one step
  // back toward zero, then inexact.
  if (bits >> 31 ? rest > 0.0f : rest < 0.0f) bits -= 1u;
  return __uint_as_float(bits);
}
// The quotient rounded to odd at float precision (toward zero, the last bit set when that
// dropped anything): rounding this to 16 bits rounds the exact quotient once, as
// round_to_odd_float does for a double.
__device__ __forceinline__ float quotient_to_odd(float total, MeanDivisor d) {
  bool inexact;
  const float t = quotient_toward_zero(total, d, inexact);
  return inexact ? __uint_as_float(__float_as_uint(t) | 1u) : t;
}
// The quotient rounded to the nearest float (ties to even), as IEEE division gives it:
// of the two floats around it, the one with the smaller residual.
__device__ __forceinline__ float quotient_to_nearest(float total, MeanDivisor d) {
  bool inexact;
  const float t = quotient_toward_zero(total, d, inexact);
  if (!inexact) return t;
  const float u = __uint_as_float(__float_as_uint(t) + 1u);  // the next float away from zero
  const float rt = fabsf(fmaf(-t, d.n, total)), ru = fabsf(fmaf(-u, d.n, total));
  return ru < rt || (ru == rt && (__float_as_uint(u) & 1u) == 0) ? u : t;
}
// The quotient for a 16-bit result (BRAIN: bfloat16, else half), to be rounded to it
// once: the faithful quotient q where no 16-bit rounding boundary (a midpoint between two
// 16-bit values: bf16 the low 16 bits of a float 0x8000, f16 the low 13 bits 0x1000)
// lies within an ulp of q, for then q and the exact quotient round alike; else (and below
// f16's normal range, whose boundaries lie elsewhere) the quotient rounded to odd.
template <bool BRAIN> __device__ __forceinline__ float quotient_for_16bit(float total, MeanDivisor d) {
  const float q = faithful_quotient(total, d);
  const unsigned low = __float_as_uint(q) & (BRAIN ? 0xffffu : 0x1fffu);
  const unsigned boundary = BRAIN ? 0x8000u : 0x1000u;
  const bool clear = low - (boundary - 1u) > 2u && (BRAIN || fabsf(q) >= 6.103515625e-05f);
  return clear ? q : quotient_to_odd(total, d);
}

// The storage type of one 16-bit format: BRAIN selects bfloat16 over IEEE half.
template <bool BRAIN> struct Float16Storage {
  unsigned short bits;
  Float16Storage() = default;
  static __device__ __forceinline__ unsigned short round(float f) { return BRAIN ? float_to_bf16(f) : float_to_f16(f); }
  __device__ __forceinline__ explicit Float16Storage(float f) : bits(round(f)) {}
  __device__ __forceinline__ explicit Float16Storage(double d) : bits(round(round_to_odd_float(d))) {}
  __device__ __forceinline__ explicit Float16Storage(int i) : bits(round((float)i)) {}
  __device__ __forceinline__ explicit Float16Storage(unsigned i) : bits(round((float)i)) {}
  __device__ __forceinline__ explicit Float16Storage(long long i) : Float16Storage((double)i) {}
  __device__ __forceinline__ explicit Float16Storage(unsigned long long i) : Float16Storage((double)i) {}
  __device__ __forceinline__ operator float() const { return BRAIN ? bf16_to_float(bits) : f16_to_float(bits); }
};
typedef Float16Storage<false> half_t;
typedef Float16Storage<true> bfloat16_t;

template <class T> struct IsFloating { static constexpr bool value = false; };
template <> struct IsFloating<float> { static constexpr bool value = true; };
template <> struct IsFloating<double> { static constexpr bool value = true; };
template <bool BRAIN> struct IsFloating<Float16Storage<BRAIN> > { static constexpr bool value = true; };

// Takes a ticket of a single-pass finish: an atomic increment with acquire-release
// semantics at device scope. It releases the caller's earlier writes (and, being
// cumulative, those of its block that a __syncthreads ordered before it) and acquires
// those of every earlier taker, so the last taker reads all partials without a fence
// (one acq_rel atomic costs about 0.3 us less than __threadfence then atomicAdd, H100).
__device__ __forceinline__ unsigned take_ticket(unsigned* ticket) {
#if __CUDA_ARCH__ >= 700
  unsigned old;
  asm volatile("atom.add.acq_rel.gpu.u32 %0, [%1], 1;" : "=r"(old) : "l"(ticket) : "memory");
  return old;
#else
  __threadfence();
  const unsigned old = atomicAdd(ticket, 1u);
  __threadfence();
  return old;
#endif
}

// Largest and smallest values, the identities of min and max for integers.
template <class T> struct Limits;
template <> struct Limits<int> {
  static __device__ int lowest() { return -2147483647 - 1; }
  static __device__ int highest() { return 2147483647; }
};
template <> struct Limits<unsigned int> {
  static __device__ unsigned int lowest() { return 0u; }
  static __device__ unsigned int highest() { return 0xffffffffu; }
};
template <> struct Limits<long long> {
  static __device__ long long lowest() { return -9223372036854775807LL - 1; }
  static __device__ long long highest() { return 9223372036854775807LL; }
};
template <> struct Limits<float> {
  static __device__ float lowest() { return -__int_as_float(0x7f800000); }
  static __device__ float highest() { return __int_as_float(0x7f800000); }
};
template <> struct Limits<double> {
  static __device__ double lowest() { return -__longlong_as_double(0x7ff0000000000000LL); }
  static __device__ double highest() { return __longlong_as_double(0x7ff0000000000000LL); }
};

}  // namespace rt
