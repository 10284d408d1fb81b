// Choosing a config at call time (design section 10): exact (device, problem, bucket) ->
// nearest measured bucket in log2(n) -> same compute capability on another device -> a
// built-in default that is good everywhere. Pure logic over winners loaded once from the
// database, so every branch is tested without a GPU.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "reduce_tune/engine/axis.h"
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
  std::set<db::AxisProblemClass> tuned_classes_;
};

// Axis reductions (issue 12): rows and columns shapes are tuned per (R bucket, outputs
// bucket). The choice: this device's winner of the shape's class -> its winner of a
// neighbouring class (one bucket away in R or in outputs, not both: measured on an
// H200, a diagonal neighbour's winner ran at 0.71-1.95x the built-in choice, one
// differing in one dimension at 0.94x or better; ties to the smaller buckets) -> the
// class's winner on another device of the same compute
// capability -> the built-in choice, which is also what general strided views and every
// untuned neighbourhood get. A stored config that does not parse, or that cannot reduce
// this shape (a dense kernel past its limits), is passed over.
struct AxisSelection {
  AxisKernelSpec spec;
  // The winner's config for shapes on the 16-byte grid, where the class keeps one
  // (db::AxisWinner::grid_config); `spec` serves the shapes off it.
  std::optional<AxisKernelSpec> grid_spec;
  // The winner (the grid's winner) is kAxisBuiltinConfig: the built-in choice made for
  // each shape, which no config beat across the class's sample shapes. `spec` (`grid_spec`)
  // is then that choice for the shape selected for.
  bool builtin = false;
  bool grid_builtin = false;
  MatchKind match = MatchKind::default_config;
  std::optional<db::AxisWinner> winner;
  std::string source_device;
  std::string reason;  // one line
};

// The kernel a selection made for a shape's class runs for this very shape: the winner
// (its grid's, for a shape and base on the 16-byte grid where the class keeps one) where
// it can reduce the shape and is a config, else the built-in choice for the shape (and
// its base's alignment, `base` offset 0 of the canonical form), not the one made for the
// class's first shape. `plan` (optional) receives the launch plan.
AxisKernelSpec axis_spec_for(const AxisSelection& selection, Op op, const TypeRule& types, const CanonicalAxes& shape,
                             int sm_count, AxisLaunchPlan* plan, const void* base);
// Which of a selection's winners serves `shape` at `base`: the grid's (true) where the
// class keeps one and the shape and base lie on the 16-byte grid.
bool axis_grid_side(const AxisSelection& selection, const TypeRule& types, const CanonicalAxes& shape,
                    const void* base);

// The class whose winners serve `op` on `types` for `shape` (mean: the sum's), or empty
// for layouts that are not tuned (flat, general, and columns stepped over their outputs).
std::optional<db::AxisProblemClass> axis_tuning_problem(Op op, const TypeRule& types, const CanonicalAxes& shape);

// Serves a class its own winner (tuned, or filled in between tuned classes), else the
// winner of the nearest class one bucket away that was tuned (searched) on this device,
// else a same-arch device's winner of the class, else the built-in choice. `own_tuned`
// lists the device's tuned classes: a filled class's winner is never lent to another.
class AxisSelector {
 public:
  AxisSelector(DeviceKey device, std::vector<db::AxisWinner> own, std::vector<db::AxisWinner> same_arch,
               std::map<db::RowId, std::string> same_arch_names, const std::vector<db::AxisProblemClass>& own_tuned);
  AxisSelection select(Op op, const TypeRule& types, const CanonicalAxes& shape) const;
  bool empty() const { return own_.empty() && same_arch_.empty(); }

 private:
  DeviceKey device_;
  std::vector<db::AxisWinner> own_;
  std::vector<db::AxisWinner> own_tuned_;  // those of own_ whose class was tuned
  std::vector<db::AxisWinner> same_arch_;
  std::map<db::RowId, std::string> same_arch_names_;
  std::set<db::AxisProblemClass> tuned_classes_;
};

}  // namespace reduce_tune
