// Choosing a config at call time (design section 10): exact (device, problem, bucket) ->
// nearest measured bucket in log2(n) -> same compute capability on another device -> a
// built-in default that is good everywhere. Pure logic over winners loaded once from the
// database, so every branch is tested without a GPU.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reduce_tune/engine/kernel_spec.h"
#include "reduce_tune/db/records.h"
#include "reduce_tune/device_key.h"
#include "reduce_tune/types.h"
#include "reduce_tune/engine/search_space.h"

namespace reduce_tune {

struct Selection {
  ReduceConfig config;
  MatchKind match = MatchKind::default_config;
  std::optional<db::Winner> winner;  // the stored winner used, when there was one
  std::string source_device;         // where the winner was measured
  std::string reason;                // one line, for explain() and the fallback log
};

// The default used when nothing was tuned: 16-byte loads, a single pass with a ticket,
// a grid of four blocks per SM.
ReduceConfig builtin_default_config(Op op, const TypeRule& types, int arch);

// The problem whose winners serve `op` on `types`: mean uses the winners of the sum that
// accumulates like it (mean<f32> -> sum<f32>, mean<i32,f64> -> sum<i32,i64>).
db::ProblemClass tuning_problem(Op op, const TypeRule& types);

class Selector {
 public:
  // own: this device's winners; same_arch: winners of other devices with the same
  // compute capability, with the names of those devices by id (for explain()).
  Selector(DeviceKey device, std::vector<db::Winner> own, std::vector<db::Winner> same_arch,
           std::map<db::RowId, std::string> same_arch_names);
  // Winners whose config is invalid on this device are passed over, as if not stored.
  Selection select(Op op, const TypeRule& types, std::uint64_t n, bool allow_nondeterministic) const;
  const DeviceKey& device() const { return device_; }

 private:
  DeviceKey device_;
  DeviceLimits limits_;
  std::vector<db::Winner> own_;
  std::vector<db::Winner> same_arch_;
  std::map<db::RowId, std::string> same_arch_names_;
};

}  // namespace reduce_tune
