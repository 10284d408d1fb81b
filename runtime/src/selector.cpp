#include "reduce_tune/runtime/selector.h"

#include <cstdlib>
#include <sstream>
#include <tuple>

namespace reduce_tune {

ReduceConfig builtin_default_config(Op op, const TypeRule& types, int arch) {
  ReduceConfig c = default_config_for(Strategy::vectorized, op, types, arch);
  c.block_threads = 256;
  c.items_per_thread = 4;
  c.unroll = 2;
  c.grid = GridPolicy{GridKind::per_sm, 4};
  c.passes = Passes::single_pass_ticket;
  c.load = LoadHint::ldg;
  c.warp_reduce = WarpReduce::shuffle;
  return c;
}

db::ProblemClass tuning_problem(Op op, const TypeRule& types) {
  // A mean runs the sum's kernel with another epilogue: the sum into the accumulator type
  // (f32 -> f32, i32 -> i64, ...), or for a 16-bit float into the mean's own output type.
  if (op == Op::mean)
    return db::ProblemClass{Op::sum, types.in, is_16bit_float(types.in) ? types.out : types.acc, {}};
  return db::ProblemClass{op, types.in, types.out, {}};
}

Selector::Selector(DeviceKey device, std::vector<db::Winner> own, std::vector<db::Winner> same_arch,
                   std::map<db::RowId, std::string> same_arch_names)
    : device_(std::move(device)),
      own_(std::move(own)),
      same_arch_(std::move(same_arch)),
      same_arch_names_(std::move(same_arch_names)) {
  limits_.arch = device_.arch();
  limits_.sm_count = device_.sm_count;
}

namespace {

// The best usable winner for `problem` among `winners`: in `bucket` only, or else in the
// nearest bucket (ties to the smaller). Deterministic winners only unless allowed, and
// then the faster of the two classes.
const db::Winner* pick(const std::vector<db::Winner>& winners, const db::ProblemClass& problem, int bucket,
                       bool exact_only, bool allow_nondeterministic, Op op, const TypeRule& types,
                       const DeviceLimits& limits) {
  const db::Winner* best = nullptr;
  int best_distance = 0;
  for (const auto& w : winners) {
    if (!(w.problem == problem)) continue;
    if (w.determinism == db::Determinism::nondeterministic && !allow_nondeterministic) continue;
    if (check_config(KernelSpec{op, types, w.config}, limits)) continue;
    const int distance = std::abs(w.bucket - bucket);
    if (exact_only && distance != 0) continue;
    const bool better = !best || distance < best_distance ||
                        (distance == best_distance && (w.bucket < best->bucket ||
                                                       (w.bucket == best->bucket && w.median_ms < best->median_ms)));
    if (better) {
      best = &w;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace

Selection Selector::select(Op op, const TypeRule& types, std::uint64_t n, bool allow_nondeterministic) const {
  const db::ProblemClass problem = tuning_problem(op, types);
  const int bucket = size_bucket(n);
  Selection s;
  std::ostringstream why;
  if (const auto* w = pick(own_, problem, bucket, true, allow_nondeterministic, op, types, limits_)) {
    s.match = MatchKind::exact;
    s.winner = *w;
    s.source_device = device_.name;
    why << "tuned on this device for " << to_string(problem) << " at 2^" << bucket;
  } else if (const auto* w = pick(own_, problem, bucket, false, allow_nondeterministic, op, types, limits_)) {
    s.match = MatchKind::nearest_size;
    s.winner = *w;
    s.source_device = device_.name;
    why << "no winner for " << to_string(problem) << " at 2^" << bucket << " on this device; nearest tuned size 2^"
        << w->bucket;
  } else if (const auto* w = pick(same_arch_, problem, bucket, false, allow_nondeterministic, op, types, limits_)) {
    s.match = MatchKind::same_arch;
    s.winner = *w;
    auto name = same_arch_names_.find(w->device_id);
    s.source_device = name == same_arch_names_.end() ? "another device" : name->second;
    why << "nothing tuned for " << to_string(problem) << " on this device; using the winner at 2^" << w->bucket
        << " from " << s.source_device << " (same compute capability sm_" << device_.arch() << ")";
  } else {
    s.match = MatchKind::default_config;
    why << "nothing tuned for " << to_string(problem) << " on sm_" << device_.arch() << "; using the built-in default";
  }
  s.config = s.winner ? s.winner->config : builtin_default_config(op, types, device_.arch());
  s.reason = why.str();
  return s;
}

AxisKernelSpec axis_spec_for(const AxisSelection& selection, Op op, const TypeRule& types, const CanonicalAxes& shape,
                             int sm_count, AxisLaunchPlan* plan, const void* base) {
  const bool grid = axis_grid_side(selection, types, shape, base);
  const AxisKernelSpec& spec = grid ? *selection.grid_spec : selection.spec;
  const bool builtin = grid ? selection.grid_builtin : selection.builtin;
  if (!selection.winner || builtin || !axis_spec_mismatch(spec, shape).empty())
    return builtin_axis_spec(op, types, shape, sm_count, plan, base);
  if (plan) *plan = plan_axis_launch(spec, shape, sm_count);
  return spec;
}

bool axis_grid_side(const AxisSelection& selection, const TypeRule& types, const CanonicalAxes& shape,
                    const void* base) {
  return selection.grid_spec && axis_on_16byte_grid(shape, size_of(types.in), base);
}

std::optional<db::AxisProblemClass> axis_tuning_problem(Op op, const TypeRule& types, const CanonicalAxes& shape) {
  // Stepped columns (a view's outputs a few elements apart) read each output by itself,
  // which a winner tuned on contiguous columns was not chosen for.
  if (shape.layout != AxisLayout::rows && shape.layout != AxisLayout::columns) return std::nullopt;
  if (shape.inner_step != 1) return std::nullopt;
  const db::ProblemClass p = tuning_problem(op, types);
  return db::AxisProblemClass{p.op, p.dtype, p.out_dtype, shape.layout, size_bucket(shape.reduced),
                              size_bucket(shape.outputs)};
}

AxisSelector::AxisSelector(DeviceKey device, std::vector<db::AxisWinner> own, std::vector<db::AxisWinner> same_arch,
                           std::map<db::RowId, std::string> same_arch_names,
                           const std::vector<db::AxisProblemClass>& own_tuned)
    : device_(std::move(device)),
      own_(std::move(own)),
      same_arch_(std::move(same_arch)),
      same_arch_names_(std::move(same_arch_names)),
      tuned_classes_(own_tuned.begin(), own_tuned.end()) {
  for (const auto& w : own_)
    if (tuned_classes_.count(w.problem)) own_tuned_.push_back(w);
}

namespace {

// A stored config parsed for `shape`: kAxisBuiltinConfig is the built-in choice for it.
std::optional<AxisKernelSpec> stored_axis_spec(const std::string& config, Op op, const TypeRule& types,
                                               const CanonicalAxes& shape, int sm_count) {
  if (config == kAxisBuiltinConfig) return builtin_axis_spec(op, types, shape, sm_count);
  return parse_axis_config(config, op, types);
}

// The nearest usable axis winner for `problem` at most `reach` buckets away in R and
// outputs together (0: the class itself; 1: one bucket in one dimension), with its
// parsed spec.
const db::AxisWinner* pick_axis(const std::vector<db::AxisWinner>& winners, const db::AxisProblemClass& problem,
                                int reach, Op op, const TypeRule& types, const CanonicalAxes& shape, int sm_count,
                                AxisKernelSpec* spec) {
  const db::AxisWinner* best = nullptr;
  int best_distance = 0;
  for (const auto& w : winners) {
    const db::AxisProblemClass& c = w.problem;
    if (c.op != problem.op || c.dtype != problem.dtype || c.out_dtype != problem.out_dtype ||
        c.layout != problem.layout)
      continue;
    const int dr = std::abs(c.reduced_bucket - problem.reduced_bucket);
    const int dout = std::abs(c.outputs_bucket - problem.outputs_bucket);
    const int distance = dr + dout;
    if (distance > reach) continue;
    const bool better = !best || distance < best_distance ||
                        (distance == best_distance && std::tie(c.reduced_bucket, c.outputs_bucket) <
                                                          std::tie(best->problem.reduced_bucket,
                                                                   best->problem.outputs_bucket));
    if (!better) continue;
    const auto parsed = stored_axis_spec(w.config, op, types, shape, sm_count);
    if (!parsed || !axis_spec_mismatch(*parsed, shape).empty()) continue;
    best = &w;
    best_distance = distance;
    *spec = *parsed;
  }
  return best;
}

std::string bucket_text(int reduced_bucket, int outputs_bucket) {
  return "R 2^" + std::to_string(reduced_bucket) + " x 2^" + std::to_string(outputs_bucket) + " outputs";
}

}  // namespace

AxisSelection AxisSelector::select(Op op, const TypeRule& types, const CanonicalAxes& shape) const {
  AxisSelection s;
  const auto problem = axis_tuning_problem(op, types, shape);
  std::ostringstream why;
  AxisKernelSpec spec;
  const db::AxisWinner* w = nullptr;
  if (!problem) {
    if (shape.layout == AxisLayout::columns)
      why << "built-in choice: columns whose outputs are not contiguous are not tuned";
    else
      why << "built-in choice: the " << to_string(shape.layout) << " layout is not tuned";
  } else if ((w = pick_axis(own_, *problem, 0, op, types, shape, device_.sm_count, &spec))) {
    s.match = MatchKind::exact;
    s.source_device = device_.name;
    if (tuned_classes_.count(*problem))
      why << "tuned on this device for " << db::to_string(*problem);
    else
      why << "timed on this device for " << db::to_string(*problem)
          << " (filled in between tuned classes: their winners and the built-in choice)";
  } else if ((w = pick_axis(own_tuned_, *problem, 1, op, types, shape, device_.sm_count, &spec))) {
    s.match = MatchKind::nearest_size;
    s.source_device = device_.name;
    why << "no winner for " << db::to_string(*problem) << " on this device; nearest tuned class "
        << bucket_text(w->problem.reduced_bucket, w->problem.outputs_bucket);
  } else if ((w = pick_axis(same_arch_, *problem, 0, op, types, shape, device_.sm_count, &spec))) {
    s.match = MatchKind::same_arch;
    auto name = same_arch_names_.find(w->device_id);
    s.source_device = name == same_arch_names_.end() ? "another device" : name->second;
    why << "nothing tuned for " << db::to_string(*problem) << " on this device; using the winner from "
        << s.source_device << " (same compute capability sm_" << device_.arch() << ")";
  } else {
    why << "nothing tuned for " << db::to_string(*problem) << " or its neighbours on sm_" << device_.arch()
        << "; using the built-in choice";
  }
  if (w) {
    s.winner = *w;
    s.spec = spec;
    s.builtin = w->config == kAxisBuiltinConfig;
    if (!w->grid_config.empty())
      if (auto grid = stored_axis_spec(w->grid_config, op, types, shape, device_.sm_count)) {
        s.grid_spec = *grid;
        s.grid_builtin = w->grid_config == kAxisBuiltinConfig;
      }
  } else {
    s.spec = builtin_axis_spec(op, types, shape, device_.sm_count);
  }
  s.reason = why.str();
  return s;
}

}  // namespace reduce_tune
