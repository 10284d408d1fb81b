// KernelSpec: everything that decides one compiled kernel instantiation: the operator,
// the resolved types and the tuning config. Host-side helpers that depend on it only.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "reduce_tune/config.h"
#include "reduce_tune/types.h"

namespace reduce_tune {

struct KernelSpec {
  Op op = Op::sum;
  TypeRule types{DType::f32, DType::f32, DType::f32};
  ReduceConfig config;
  friend bool operator==(const KernelSpec&, const KernelSpec&) = default;
};

// Builds a spec, throwing InvalidArgument when (op, in, out) is unsupported.
KernelSpec make_spec(Op op, DType in, DType out, const ReduceConfig& config);

// Atomic accumulation of floating values depends on the order blocks finish in; every
// other combination gives the same bits on every run.
bool is_deterministic(const KernelSpec& spec);

std::string to_string(const KernelSpec& spec);

// The operator's identity in type T: 0 for sum and mean, 1 for prod, +inf (or the
// largest value) for min, -inf (or the lowest) for max.
template <typename T>
T identity_value(Op op) {
  switch (op) {
    case Op::sum:
    case Op::mean: return T(0);
    case Op::prod: return T(1);
    case Op::min:
      return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
    case Op::max:
      return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                  : std::numeric_limits<T>::lowest();
  }
  return T(0);
}

// The operator's identity in the accumulator type, as the 8 bytes a workspace slot holds
// (little-endian; 4-byte types use the low half). Used to initialise atomic accumulators.
std::uint64_t identity_bits(Op op, DType acc);

// The types anything accumulates in (the 16-bit floats accumulate in f32).
inline constexpr DType kAccumulatorDTypes[] = {DType::i32, DType::i64, DType::u32, DType::f32, DType::f64};

// Index of the (op, accumulator type) slot in a workspace's accumulator array, so one
// workspace serves every op: single-pass atomic kernels leave their slot at the identity.
// Throws InvalidArgument for a type that is not an accumulator type.
constexpr int kAccumulatorSlots = 5 * 5;
int accumulator_slot(Op op, DType acc);

}  // namespace reduce_tune
