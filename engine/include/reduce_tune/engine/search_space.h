// The tuning space, declared in one place next to the kernels it tunes: for each
// strategy, the values each parameter may take, and the constraints between parameters,
// types and the device. A config that breaks a constraint is rejected with a reason
// before anything is compiled.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reduce_tune/engine/kernel_spec.h"

namespace reduce_tune {

// What the constraints need to know about the device.
struct DeviceLimits {
  int arch = 90;                            // compute capability, major * 10 + minor
  int max_threads_per_block = 1024;
  std::size_t max_static_shared_bytes = 48 * 1024;
  int sm_count = 132;
};

// Why `spec` cannot run on a device with `limits`, or nullopt when it can.
std::optional<std::string> check_config(const KernelSpec& spec, const DeviceLimits& limits);

// The values the search space declares for one strategy, before constraints.
struct ParameterValues {
  std::vector<std::uint32_t> block_threads;
  std::vector<std::uint32_t> items_per_thread;
  std::vector<std::uint32_t> vec_width;
  std::vector<GridPolicy> grid;
  std::vector<WarpReduce> warp_reduce;
  std::vector<Passes> passes;
  std::vector<LoadHint> load;
  std::vector<std::uint32_t> unroll;
};
ParameterValues declared_values(Strategy strategy);

// Every config of the strategy's declared space that passes check_config for the problem.
std::vector<ReduceConfig> enumerate_space(Strategy strategy, Op op, const TypeRule& types,
                                          const DeviceLimits& limits);
// The size of the declared space before constraints.
std::size_t declared_space_size(Strategy strategy);

// The strategy's default config made valid for the types (vector width halved for
// 8-byte elements, redux swapped for shuffle where it does not apply).
ReduceConfig default_config_for(Strategy strategy, Op op, const TypeRule& types, int arch);

// Starting points for local search besides the strategy defaults: configs that
// exhaustive search found best on an H200 (sm_90) at several sizes, adapted to the types
// (vector width capped at 16 bytes). Seeds only: every one is measured like any other.
std::vector<ReduceConfig> portfolio_seeds(Op op, const TypeRule& types, int arch);

// The classic strategies keep their original shape: one tile per block, fixed items
// per thread, shared-memory trees.
bool is_classic(Strategy strategy);
// The device code path a strategy runs: itself, or for the three classic names that are
// parameter ranges of a shared path (first_add, unroll_blocks: interleaved;
// multi_element: complete_unroll), that path.
Strategy code_path(Strategy strategy);
// Static shared memory of a reduce kernel, in bytes (mirrors BlockTemp in block_reduce.cuh).
std::size_t static_shared_bytes(const KernelSpec& spec);

}  // namespace reduce_tune
