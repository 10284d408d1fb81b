#include "reduce_tune/engine/kernel_spec.h"

#include <bit>
#include <cstring>
#include <limits>

#include "reduce_tune/dtype_visit.h"
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

std::uint64_t identity_bits(Op op, DType acc) {
  return visit_dtype(acc, [&](auto tag) { return value_bits(identity_value<decltype(tag)>(op)); });
}

int accumulator_slot(Op op, DType acc) {
  const int a = static_cast<int>(acc);
  if (a >= static_cast<int>(std::size(kAccumulatorDTypes)) || kAccumulatorDTypes[a] != acc)
    throw InvalidArgument("no accumulator slot for " + std::string(to_string(acc)) + " (it accumulates in f32)");
  return static_cast<int>(op) * 5 + a;
}

}  // namespace reduce_tune
