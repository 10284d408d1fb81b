#include "reduce_tune/engine/kernel_spec.h"

#include <bit>
#include <cstring>
#include <limits>

#include "reduce_tune/error.h"

namespace reduce_tune {

KernelSpec make_spec(Op op, DType in, DType out, const ReduceConfig& config) {
  TypeRuleResult r = resolve_types(op, in, out);
  if (!r.rule) throw InvalidArgument(r.error);
  return KernelSpec{op, *r.rule, config};
}

bool is_deterministic(const KernelSpec& spec) {
  return !(spec.config.passes == Passes::single_pass_atomic && is_floating(spec.types.acc));
}

std::string to_string(const KernelSpec& spec) {
  // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict inside chained
  // std::string operator+ (GCC bug 105329).
  std::string s(to_string(spec.op));
  s.append("<").append(to_string(spec.types.in)).append("->").append(to_string(spec.types.out));
  s.append(" acc ").append(to_string(spec.types.acc)).append("> ").append(to_string(spec.config));
  return s;
}

namespace {
template <typename T>
std::uint64_t bits_of(T v) {
  std::uint64_t out = 0;
  std::memcpy(&out, &v, sizeof(T));
  return out;
}
template <typename T>
std::uint64_t identity_of(Op op) {
  switch (op) {
    case Op::sum:
    case Op::mean: return bits_of(T(0));
    case Op::prod: return bits_of(T(1));
    case Op::min:
      return bits_of(std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                          : std::numeric_limits<T>::max());
    case Op::max:
      return bits_of(std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                          : std::numeric_limits<T>::lowest());
  }
  return 0;
}
}  // namespace

std::uint64_t identity_bits(Op op, DType acc) {
  switch (acc) {
    case DType::i32: return identity_of<std::int32_t>(op);
    case DType::i64: return identity_of<std::int64_t>(op);
    case DType::u32: return identity_of<std::uint32_t>(op);
    case DType::f32: return identity_of<float>(op);
    case DType::f64: return identity_of<double>(op);
  }
  return 0;
}

int accumulator_slot(Op op, DType acc) { return static_cast<int>(op) * 5 + static_cast<int>(acc); }

}  // namespace reduce_tune
