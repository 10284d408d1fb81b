#include "coverage.h"

#include <algorithm>

namespace reduce_tune::testing {

std::vector<TypeRule> type_rules_for(Op op) {
  std::vector<TypeRule> rules;
  for (DType in : kAllDTypes) rules.push_back(*resolve_types(op, in, default_out_dtype(op, in)).rule);
  if (op == Op::sum || op == Op::prod) {
    rules.push_back(*resolve_types(op, DType::i32, DType::i64).rule);
    rules.push_back(*resolve_types(op, DType::u32, DType::i64).rule);
    rules.push_back(*resolve_types(op, DType::f32, DType::f64).rule);
  }
  return rules;
}

std::vector<std::pair<Op, TypeRule>> all_problem_types() {
  std::vector<std::pair<Op, TypeRule>> out;
  for (Op op : kAllOps)
    for (const TypeRule& r : type_rules_for(op)) out.emplace_back(op, r);
  return out;
}

std::vector<KernelSpec> coverage_specs(Strategy strategy, int arch) {
  DeviceLimits limits;
  limits.arch = arch;
  const auto problems = all_problem_types();
  std::vector<KernelSpec> specs;
  for (const auto& [op, types] : problems)
    specs.push_back(KernelSpec{op, types, default_config_for(strategy, op, types, arch)});

  // One-factor variants: each declared value of each kernel parameter, on the first
  // op/type pair (rotating) for which the variant is valid.
  const ParameterValues values = declared_values(strategy);
  std::size_t rotation = 0;
  auto add_variant = [&](auto mutate) {
    for (std::size_t tries = 0; tries < problems.size(); ++tries) {
      const auto& [op, types] = problems[(rotation + tries) % problems.size()];
      KernelSpec spec{op, types, default_config_for(strategy, op, types, arch)};
      mutate(spec.config);
      if (!check_config(spec, limits) &&
          std::find(specs.begin(), specs.end(), spec) == specs.end()) {
        specs.push_back(spec);
        rotation = (rotation + tries + 1) % problems.size();
        return;
      }
    }
  };
  for (auto v : values.block_threads) add_variant([v](ReduceConfig& c) { c.block_threads = v; });
  for (auto v : values.items_per_thread) add_variant([v](ReduceConfig& c) { c.items_per_thread = v; });
  for (auto v : values.vec_width) add_variant([v](ReduceConfig& c) { c.vec_width = v; });
  for (auto v : values.unroll) add_variant([v](ReduceConfig& c) { c.unroll = v; });
  for (auto v : values.warp_reduce) add_variant([v](ReduceConfig& c) { c.warp_reduce = v; });
  for (auto v : values.passes) add_variant([v](ReduceConfig& c) { c.passes = v; });
  for (auto v : values.load) add_variant([v](ReduceConfig& c) { c.load = v; });
  // The smallest block with every pass structure: the most blocks, the most partials.
  for (auto p : values.passes)
    add_variant([p](ReduceConfig& c) {
      c.block_threads = 32 * (c.strategy == Strategy::warp_shuffle || c.strategy == Strategy::vectorized ? 3 : 1);
      c.passes = p;
    });
  return specs;
}

}  // namespace reduce_tune::testing
