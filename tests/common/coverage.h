// The instantiations the compile and GPU tests cover: for every strategy, its default
// config for every (op, types) pair, plus one variant for every other declared value of
// every kernel parameter (spread over the op/type pairs so the set stays small).
#pragma once

#include <vector>

#include "reduce_tune/engine/kernel_spec.h"
#include "reduce_tune/engine/search_space.h"

namespace reduce_tune::testing {

// Every op with every input type at its default output, plus the widening pairs.
std::vector<TypeRule> type_rules_for(Op op);
std::vector<std::pair<Op, TypeRule>> all_problem_types();

std::vector<KernelSpec> coverage_specs(Strategy strategy, int arch);

}  // namespace reduce_tune::testing
