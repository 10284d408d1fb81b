#include "reduce_tune/tuner/axis_tuner.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>

#include "axis_run.h"
#include "device_state.h"
#include "reduce_tune/engine/source_gen.h"
#include "reduce_tune/error.h"
#include "reduce_tune/runtime/selector.h"
#include "reduce_tune/tuner/measure.h"
#include "reduce_tune/tuner/tuner.h"

namespace reduce_tune::tuner {

using namespace detail;

CanonicalAxes canonical_axis_shape(const AxisShape& s) {
  const auto r = static_cast<std::int64_t>(s.reduced), o = static_cast<std::int64_t>(s.outputs);
  const CanonicalResult c = s.layout == AxisLayout::rows ? canonicalize(TensorDesc::contiguous({o, r}), {1})
                                                         : canonicalize(TensorDesc::contiguous({r, o}), {0});
  if (!c.ok) throw InvalidArgument("axis shape: " + c.error);
  if (c.axes.layout != s.layout)
    throw InvalidArgument(std::string("axis shape R=") + std::to_string(s.reduced) + " x " + std::to_string(s.outputs) +
                          " outputs is " + to_string(c.axes.layout) + ", not " + to_string(s.layout));
  return c.axes;
}

const std::string& axis_tool_version_string() {
  static const std::string version = tool_version_string() + " axis " + std::to_string(kAxisRuleRevision);
  return version;
}

db::AxisProblemClass axis_class_of(Op op, const TypeRule& types, const AxisShape& shape) {
  return {op, types.in, types.out, shape.layout, size_bucket(shape.reduced), size_bucket(shape.outputs)};
}

namespace {

// The values of bucket b a class is measured at: 2^b, then 1.5 * 2^b + 1 where the
// bucket holds it (3 for [2, 4)).
std::vector<std::uint64_t> bucket_samples(int b) {
  const std::uint64_t low = std::uint64_t{1} << b;
  std::vector<std::uint64_t> v = {low};
  const std::uint64_t inside = b == 1 ? 3 : low + low / 2 + 1;
  if (b >= 1 && inside < 2 * low) v.push_back(inside);
  return v;
}

AxisShape with_op_shape(const db::AxisProblemClass& p, std::uint64_t r, std::uint64_t o) { return {p.layout, r, o}; }

}  // namespace

std::vector<AxisShape> axis_sample_shapes(const db::AxisProblemClass& p, int sm_count) {
  const auto rs = bucket_samples(p.reduced_bucket), os = bucket_samples(p.outputs_bucket);
  const AxisShape corner = with_op_shape(p, rs.front(), os.front());
  std::vector<AxisShape> shapes = {corner};
  auto add = [&](const AxisShape& s) {
    if (std::find(shapes.begin(), shapes.end(), s) == shapes.end()) shapes.push_back(s);
  };
  const bool rows = p.layout == AxisLayout::rows;
  // Each side of the 16-byte grid is sampled at the class's fewest outputs: the built-in
  // choice changes family there, and a config for the side off the grid that only the
  // shapes with more outputs judged can starve the longest reductions over the fewest
  // (f32 columns sum of 1000 x 16385: 513 blocks of half the threads of the built-in
  // choice's, 0.82 times its speed, set BH). The long corner: the class's longest R
  // (2^(a+1) - 1, odd) over its fewest outputs (columns: 2^b + 1, odd), off the grid,
  // where the corner is on it.
  const int contiguous_bucket = rows ? p.reduced_bucket : p.outputs_bucket;
  const bool corner_valid = rows ? corner.outputs >= 2 : corner.reduced >= 2 && corner.outputs >= 2;
  if (contiguous_bucket >= 1 && corner_valid &&
      axis_on_16byte_grid(canonical_axis_shape(corner), size_of(p.dtype))) {
    AxisShape long_corner = corner;
    long_corner.reduced = (std::uint64_t{2} << p.reduced_bucket) - 1;
    if (!rows) ++long_corner.outputs;
    add(long_corner);
  }
  add(with_op_shape(p, rs.back(), os.back()));
  // The top: contiguous extents of 8 and more are measured at 2^(k+1) - 8, a multiple of
  // every vector, so that the grid's side is sampled at both ends of the class as well
  // (rows of 512 and of 1016 in [512, 1024) time the plain rows kernel, the odd shapes
  // its peeled twin; columns of 131071 x 1016 the built-in choice's four outputs a thread,
  // where a config without vectors that held at 65536 x 512 took 1.11 times its time at
  // 65537 x 1000, set BH).
  AxisShape top = axis_top_shape(p);
  if (contiguous_bucket >= 3) (rows ? top.reduced : top.outputs) -= 7;
  add(top);
  // The grid's interior, where the built-in choice there is of another family than at the
  // corner: the contiguous extent one 16-byte vector past 1.5 * 2^k (f32: 100 in
  // [64, 128)), the other the inside shape's. Between the corner and the top, the only
  // samples on the grid, a config that is the corner's built-in choice can trail the one
  // made there (f32 rows of R 2^6: the plain rows kernel, the built-in choice at 64, ran
  // 0.91 to 0.98 times the staged one at 72 to 120 x 131072; with this sample, the sum of
  // R 2^6 x 2^19 outputs kept the built-in choice on the grid, where the plain kernel had
  // served 100 x 524288 at 0.97 times it, set BK). One vector past a multiple of every
  // power-of-two step up to 2^(k-1), each step of a kernel that walks the contiguous
  // extent in whole steps ends with a step of one vector there, its worst case: at
  // 1.5 * 2^k itself, the plain rows kernel's max held within 2% of the staged one, and
  // ran 100 x 131072 at 0.92 times it (set BK).
  const auto types = resolve_types(p.op, p.dtype, p.out_dtype);
  if (sm_count > 0 && types.rule && contiguous_bucket >= 1 && corner_valid) {
    AxisShape inside = with_op_shape(p, rs.back(), os.back());
    const std::uint64_t half_more = (std::uint64_t{3} << contiguous_bucket) / 2;
    const std::uint64_t vector = std::max<std::uint64_t>(1, 16 / size_of(p.dtype));
    const std::uint64_t contiguous =
        half_more + vector < (std::uint64_t{2} << contiguous_bucket) ? half_more + vector : half_more;
    (rows ? inside.reduced : inside.outputs) = contiguous;
    const CanonicalAxes at_corner = canonical_axis_shape(corner), at_inside = canonical_axis_shape(inside);
    if (inside.reduced >= 2 && inside.outputs >= 2 && axis_on_16byte_grid(at_inside, size_of(p.dtype)) &&
        builtin_axis_spec(p.op, *types.rule, at_inside, sm_count).family !=
            builtin_axis_spec(p.op, *types.rule, at_corner, sm_count).family)
      add(inside);
  }
  return shapes;
}

AxisShape axis_top_shape(const db::AxisProblemClass& p) {
  return {p.layout, (std::uint64_t{2} << p.reduced_bucket) - 1, (std::uint64_t{2} << p.outputs_bucket) - 1};
}

namespace {

// The canonical shapes a class's winner must fit: its sample shapes (the top of the
// class among them).
std::vector<CanonicalAxes> class_fit_shapes(const db::AxisProblemClass& problem, int sm_count = 0) {
  std::vector<CanonicalAxes> shapes;
  for (const auto& s : axis_sample_shapes(problem, sm_count)) shapes.push_back(canonical_axis_shape(s));
  shapes.push_back(canonical_axis_shape(axis_top_shape(problem)));  // the largest, where it is not sampled
  return shapes;
}

// `all` without repeats and without the specs that do not fit every shape, in order.
std::vector<AxisKernelSpec> fitting_once(const std::vector<AxisKernelSpec>& all,
                                         const std::vector<CanonicalAxes>& shapes) {
  std::vector<AxisKernelSpec> out;
  for (const auto& c : all) {
    bool fits = true;
    for (const auto& s : shapes) fits = fits && axis_spec_mismatch(c, s).empty();
    if (fits && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  return out;
}

// The built-in choice at each sample shape of a class (the first shape is its corner).
std::vector<AxisKernelSpec> builtin_specs(Op op, const TypeRule& types, const std::vector<CanonicalAxes>& shapes,
                                          int sm_count) {
  std::vector<AxisKernelSpec> specs;
  for (const auto& shape : shapes) specs.push_back(builtin_axis_spec(op, types, shape, sm_count));
  return specs;
}

struct ScopeClass {
  Op op;
  TypeRule types;
  db::AxisProblemClass problem;
  std::uint64_t reduced, outputs;  // the shape that named it
};

// The axis classes of a run's scope, each once: sums first (the other ops of a dtype
// start from the sum's best configs), f16 before bf16 (bf16's sums start from f16's).
std::vector<ScopeClass> scope_classes(const TuneOptions& options) {
  std::vector<ScopeClass> classes;
  std::vector<AxisLayout> layouts;
  for (AxisLayout l : {AxisLayout::rows, AxisLayout::columns})
    if (std::find(options.layouts.begin(), options.layouts.end(), l) != options.layouts.end()) layouts.push_back(l);
  if (layouts.empty()) return classes;
  std::vector<Op> ops;
  for (Op want : {Op::sum, Op::min, Op::max})
    for (Op op : options.ops)
      if ((op == Op::mean ? Op::sum : op) == want && std::find(ops.begin(), ops.end(), want) == ops.end())
        ops.push_back(want);
  std::vector<DType> dtypes;
  for (DType d : kAllDTypes)
    if (in_axis_scope(options, d) && std::find(options.dtypes.begin(), options.dtypes.end(), d) != options.dtypes.end())
      dtypes.push_back(d);
  const auto shapes = options.axis_shapes.empty() ? default_axis_shapes() : options.axis_shapes;
  std::set<db::AxisProblemClass> seen;
  for (Op op : ops)
    for (DType dtype : dtypes) {
      const TypeRule types = *resolve_types(op, dtype, default_out_dtype(op, dtype)).rule;
      for (AxisLayout layout : layouts)
        for (const auto& [r, o] : shapes) {
          const db::AxisProblemClass problem = axis_class_of(op, types, AxisShape{layout, r, o});
          if (seen.insert(problem).second) classes.push_back({op, types, problem, r, o});
        }
    }
  return classes;
}

// The bytes of input the largest sample shape of a class reads.
std::uint64_t largest_sample_bytes(const db::AxisProblemClass& problem) {
  std::uint64_t largest = 0;
  for (const auto& s : axis_sample_shapes(problem)) largest = std::max(largest, s.elements());
  return largest * size_of(problem.dtype);
}

}  // namespace

std::vector<AxisKernelSpec> axis_class_candidates(Op op, const TypeRule& types, const db::AxisProblemClass& problem,
                                                  int sm_count) {
  const std::vector<CanonicalAxes> shapes = class_fit_shapes(problem, sm_count);
  std::vector<AxisKernelSpec> all = builtin_specs(op, types, shapes, sm_count);
  for (const auto& c : axis_candidates(op, types, shapes.front(), sm_count)) all.push_back(c);
  // The batched tail beside every spec whose runs end in several loads at some shape of
  // the class (axis_candidates adds it for the corner shape only): rows of 512 read alike
  // either way, rows of 1016 faster batched, and the winner must hold at both.
  add_batched_twins(all, shapes);
  add_occupancy_twins(all, shapes);
  return fitting_once(all, shapes);
}

AxisWorkPlan plan_axis_work(const TuneOptions& options, const db::Database& database, db::RowId device_id,
                            std::uint64_t input_capacity, Progress& progress) {
  AxisWorkPlan plan;
  const auto done = database.axis_tuned_bucket_records(device_id);
  for (const auto& c : scope_classes(options)) {
    const db::AxisProblemClass& problem = c.problem;
    if (c.reduced < 2 || c.outputs < 2) {
      progress.note(db::to_string(problem) + ": skipped, axis classes need R >= 2 and outputs >= 2");
      ++plan.skipped;
      continue;
    }
    const auto mark = std::find_if(done.begin(), done.end(),
                                   [&](const db::AxisTunedBucket& b) { return b.problem == problem; });
    const bool stale = mark != done.end() && mark->tool_version != axis_tool_version_string();
    if (!options.fresh && mark != done.end() && !stale) {
      ++plan.already_done;
      continue;
    }
    const std::uint64_t bytes = largest_sample_bytes(problem);
    if (bytes > input_capacity) {
      ++plan.skipped;
      progress.note(db::to_string(problem) + ": skipped, needs " + std::to_string(bytes >> 20) +
                    " MiB of device memory");
      continue;
    }
    plan.items.push_back({c.op, c.types, problem, false, {}});
    if (stale && !options.fresh) ++plan.retuned;
  }
  return plan;
}

AxisWorkPlan plan_axis_fill(const TuneOptions& options, const db::Database& database, db::RowId device_id,
                            std::uint64_t input_capacity, int sm_count) {
  AxisWorkPlan plan;
  if (!options.fill_axis_neighbours) return plan;
  const auto tuned_list = database.axis_tuned_buckets(device_id);
  const std::set<db::AxisProblemClass> tuned(tuned_list.begin(), tuned_list.end());
  std::map<db::AxisProblemClass, std::vector<std::string>> winners;  // a class's winner and its grid's
  std::set<db::AxisProblemClass> current;  // winners this version of the tool stored
  for (const auto& w : database.axis_winners_for_device(device_id)) {
    winners[w.problem] = {w.config};
    if (!w.grid_config.empty()) winners[w.problem].push_back(w.grid_config);
    if (w.tool_version == axis_tool_version_string()) current.insert(w.problem);
  }
  auto neighbours = [](const db::AxisProblemClass& p) {
    std::vector<db::AxisProblemClass> v;
    for (const auto& [dr, dout] : {std::pair{-1, 0}, {1, 0}, {0, -1}, {0, 1}}) {
      db::AxisProblemClass n = p;
      n.reduced_bucket += dr;
      n.outputs_bucket += dout;
      // R >= 2 and outputs >= 2; no class past 2^40 elements fits a device.
      if (n.reduced_bucket >= 1 && n.outputs_bucket >= 1 && n.reduced_bucket + n.outputs_bucket <= 40)
        v.push_back(n);
    }
    return v;
  };
  std::set<db::AxisProblemClass> seen;
  for (const auto& c : scope_classes(options)) {
    if (!tuned.count(c.problem)) continue;
    for (const auto& n : neighbours(c.problem)) {
      if (tuned.count(n) || !seen.insert(n).second) continue;
      if (!options.fresh && current.count(n)) {
        ++plan.already_done;
        continue;
      }
      if (largest_sample_bytes(n) > input_capacity) {
        ++plan.skipped;
        continue;
      }
      const std::vector<CanonicalAxes> shapes = class_fit_shapes(n, sm_count);
      std::vector<AxisKernelSpec> all = builtin_specs(c.op, c.types, shapes, sm_count);
      for (const auto& m : neighbours(n)) {
        auto w = winners.find(m);
        if (w == winners.end() || !tuned.count(m)) continue;
        for (const auto& config : w->second)
          if (auto spec = parse_axis_config(config, c.op, c.types)) all.push_back(*spec);
      }
      std::vector<AxisKernelSpec> candidates = fitting_once(all, shapes);
      if (candidates.size() < 2) continue;
      plan.items.push_back({c.op, c.types, n, true, std::move(candidates)});
      if (winners.count(n) && !options.fresh) ++plan.retuned;
    }
  }
  return plan;
}

std::string axis_fill_note(const AxisWorkPlan& fill) {
  const std::size_t count = fill.items.size();
  std::string note = "filling " + std::to_string(count) + " untuned axis class" + (count == 1 ? "" : "es") +
                     " next to tuned ones: the neighbours' winners and the built-in choice, timed there";
  if (fill.retuned > 0)
    note += " (" + std::to_string(fill.retuned) + " of them filled before by another version of reduce-tune or " +
            "of its kernels: filled again)";
  return note;
}

namespace {

// Each config's best ok time at each sample shape (NaN: not ok there, or not timed), and
// the configs that failed somewhere.
struct AxisTimes {
  std::map<std::string, std::vector<double>> by_config;
  std::set<std::string> failed;
};

AxisTimes axis_times(const std::vector<db::AxisMeasurement>& ms, const std::vector<AxisShape>& shapes) {
  AxisTimes out;
  for (const auto& m : ms) {
    std::size_t at = shapes.size();
    for (std::size_t i = 0; i < shapes.size(); ++i)
      if (shapes[i].layout == m.layout && shapes[i].reduced == m.reduced && shapes[i].outputs == m.outputs) at = i;
    if (at == shapes.size()) continue;
    if (m.status != db::MeasurementStatus::ok || !(m.median_ms > 0)) {
      out.failed.insert(m.config);
      continue;
    }
    auto& t = out.by_config[m.config];
    if (t.empty()) t.assign(shapes.size(), std::numeric_limits<double>::quiet_NaN());
    t[at] = std::isnan(t[at]) ? m.median_ms : std::min(t[at], m.median_ms);
  }
  return out;
}

// Configs ok at every sample shape, with their score: the worst ratio of their time to
// the fastest config's at any shape (1.0: fastest everywhere). Best first; ties by text.
std::vector<std::pair<std::string, double>> rank_axis_configs(const AxisTimes& times, std::size_t shape_count) {
  std::vector<double> best(shape_count, std::numeric_limits<double>::infinity());
  for (const auto& [config, t] : times.by_config)
    for (std::size_t i = 0; i < shape_count; ++i)
      if (!std::isnan(t[i])) best[i] = std::min(best[i], t[i]);
  std::vector<std::pair<std::string, double>> ranked;
  for (const auto& [config, t] : times.by_config) {
    if (times.failed.count(config)) continue;
    double score = 0;
    bool complete = true;
    for (std::size_t i = 0; i < shape_count; ++i) {
      if (std::isnan(t[i])) complete = false;
      else score = std::max(score, t[i] / best[i]);
    }
    if (complete) ranked.emplace_back(config, score);
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : a.first < b.first;
  });
  return ranked;
}

std::vector<std::pair<std::string, double>> rank_axis_configs(const std::vector<db::AxisMeasurement>& ms,
                                                              const std::vector<AxisShape>& shapes) {
  return rank_axis_configs(axis_times(ms, shapes), shapes.size());
}

}  // namespace

namespace {

// The winning config among `ms` at `shapes` (choose_axis_winner's rule), held against the
// built-in choice at the shapes where `bars[i]` (every shape where `bars` is empty). It may
// be kAxisBuiltinConfig: the built-in choice made at each shape (`builtins[i]`), a
// candidate of its own where it was timed at all of them. Empty where none is complete.
std::optional<std::string> choose_axis_config(const std::vector<db::AxisMeasurement>& ms,
                                              const std::vector<AxisShape>& shapes,
                                              const std::vector<std::string>& builtins,
                                              const std::vector<bool>& bars = {}) {
  if (shapes.empty()) return std::nullopt;
  AxisTimes times = axis_times(ms, shapes);
  const std::string builtin(kAxisBuiltinConfig);
  {
    std::vector<double> t(shapes.size(), std::numeric_limits<double>::quiet_NaN());
    for (std::size_t i = 0; i < shapes.size() && i < builtins.size(); ++i) {
      const auto b = times.by_config.find(builtins[i]);
      if (b != times.by_config.end()) t[i] = b->second[i];
    }
    times.by_config[builtin] = t;  // incomplete (never ranked) where one was not timed
  }
  auto ranked = rank_axis_configs(times, shapes.size());
  if (ranked.empty()) return std::nullopt;
  // Where some configs hold against the built-in choice at every sample shape, only they
  // may win: the built-in choice changes inside a class (alignment, split thresholds),
  // and a config far ahead at one shape but behind it at another would make the tuned
  // call slower than no tuning there. The built-in choice made at each shape holds.
  auto holds = [&](const std::string& config) {
    if (config == builtin) return true;
    const auto& t = times.by_config.at(config);
    for (std::size_t i = 0; i < shapes.size() && i < builtins.size(); ++i) {
      if (!bars.empty() && !bars[i]) continue;
      const auto b = times.by_config.find(builtins[i]);
      if (b == times.by_config.end() || std::isnan(b->second[i])) continue;  // not timed there: no bar
      if (t[i] > b->second[i] * kAxisHoldFactor) return false;
    }
    return true;
  };
  std::vector<std::pair<std::string, double>> holding;
  for (const auto& entry : ranked)
    if (holds(entry.first)) holding.push_back(entry);
  if (!holding.empty()) ranked = std::move(holding);
  // Ties within 1% keep what a user gets untuned: the built-in choice made at each shape,
  // else (where it was not timed at every shape) the corner's.
  std::string winner = ranked.front().first;
  const std::string corner_builtin = builtins.empty() ? std::string() : builtins.front();
  for (const std::string& preferred : {corner_builtin, builtin})
    for (const auto& [config, score] : ranked)
      if (config == preferred && score <= ranked.front().second * 1.01) winner = config;
  return winner;
}

// The index of `config`'s ok measurement at `shape`, if any.
std::optional<std::size_t> measurement_at(const std::vector<db::AxisMeasurement>& ms, const std::string& config,
                                          const AxisShape& shape) {
  for (std::size_t i = 0; i < ms.size(); ++i)
    if (ms[i].config == config && ms[i].status == db::MeasurementStatus::ok && ms[i].reduced == shape.reduced &&
        ms[i].outputs == shape.outputs && ms[i].layout == shape.layout)
      return i;
  return std::nullopt;
}

// The measurement that stands for `config` (kAxisBuiltinConfig: the built-in choice at
// shapes[0]) at shapes[0], if any.
std::optional<std::size_t> winner_measurement(const std::vector<db::AxisMeasurement>& ms, const std::string& config,
                                              const std::vector<AxisShape>& shapes,
                                              const std::vector<std::string>& builtins) {
  if (shapes.empty()) return std::nullopt;
  if (config != kAxisBuiltinConfig) return measurement_at(ms, config, shapes[0]);
  if (builtins.empty()) return std::nullopt;
  return measurement_at(ms, builtins[0], shapes[0]);
}

}  // namespace

std::optional<std::string> choose_axis_winner(const std::vector<db::AxisMeasurement>& ms,
                                              const std::vector<AxisShape>& shapes,
                                              const std::vector<std::string>& builtins) {
  return choose_axis_config(ms, shapes, builtins);
}

AxisWinnerChoice choose_axis_winners(const std::vector<db::AxisMeasurement>& ms, const std::vector<AxisShape>& shapes,
                                     const std::vector<std::string>& builtins, const std::vector<bool>& on_grid) {
  AxisWinnerChoice choice;
  const auto whole = choose_axis_config(ms, shapes, builtins);
  if (!whole) return choice;
  const std::string builtin(kAxisBuiltinConfig);
  auto set = [&](std::optional<std::size_t>& index, bool& is_builtin, const std::string& config,
                 const std::vector<AxisShape>& at, const std::vector<std::string>& at_builtins) {
    index = winner_measurement(ms, config, at, at_builtins);
    is_builtin = config == builtin;
    return index.has_value();
  };
  set(choice.winner, choice.builtin, *whole, shapes, builtins);
  // Each side of the 16-byte grid may do better with a winner of its own, where both
  // sides were sampled: the built-in choice changes family across it (16-bit columns of
  // R = 2 to 4 read eight outputs a thread on it, four off it), and the kernels on it
  // differ from those off it (no peeled ends). The grid's is judged at the shapes on it
  // alone (it serves no other), and is the built-in choice made at each shape unless a
  // config beats it there: between the samples on the grid, a config can fall off a
  // cliff the built-in choice steps around (f32 columns sum of 2048 x 34816: 272 blocks
  // of the corner's kernel for 264 places, 0.86 times the built-in choice, which takes
  // twice the blocks there; set BK). Where one config holds at every shape and ranks
  // first, it serves the shapes off the grid. Otherwise the other side's winner must hold
  // against the built-in choice at the shapes off the grid, but is ranked at every shape:
  // a class's corner is its only sample at the low end of both extents, and a config it
  // shows slow there (too few blocks for the smallest output counts) is slow off the grid
  // alike. Either may be the built-in choice made at each shape.
  if (on_grid.size() != shapes.size()) return choice;
  std::vector<AxisShape> grid_shapes;
  std::vector<std::string> grid_builtins;
  std::vector<bool> off_bars;
  bool any_off = false;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (on_grid[i]) {
      grid_shapes.push_back(shapes[i]);
      grid_builtins.push_back(i < builtins.size() ? builtins[i] : std::string());
    }
    any_off = any_off || !on_grid[i];
    off_bars.push_back(!on_grid[i]);  // no bar on the grid
  }
  if (grid_shapes.empty() || !any_off) return choice;
  const auto grid = choose_axis_config(ms, grid_shapes, grid_builtins);
  if (!grid) return choice;
  auto grid_side = [&](AxisWinnerChoice& split) {
    return set(split.grid_winner, split.grid_builtin, *grid, shapes, builtins) ||
           set(split.grid_winner, split.grid_builtin, *grid, grid_shapes, grid_builtins);
  };
  if (*whole != builtin) {
    if (*grid == *whole) return choice;
    AxisWinnerChoice split = choice;
    return grid_side(split) ? split : choice;
  }
  const auto off = choose_axis_config(ms, shapes, builtins, off_bars);
  if (!off || *grid == *off) return choice;
  // Each stored measurement at the class's corner, as a single winner's is (the other
  // side's winner was timed at every shape), else at the first shape of the grid.
  AxisWinnerChoice split;
  if (!set(split.winner, split.builtin, *off, shapes, builtins)) return choice;
  return grid_side(split) ? split : choice;
}

std::vector<AxisKernelSpec> axis_runtime_specs(const db::AxisProblemClass& problem, const std::string& config,
                                               int sm_count) {
  std::vector<AxisKernelSpec> specs;
  const auto types = resolve_types(problem.op, problem.dtype, problem.out_dtype);
  if (!types.rule) return specs;
  auto add = [&](Op op, const TypeRule& rule) {
    if (config != kAxisBuiltinConfig) {
      if (auto spec = parse_axis_config(config, op, rule)) specs.push_back(*spec);
      return;
    }
    if (sm_count <= 0) return;
    for (const auto& shape : class_fit_shapes(problem, sm_count)) {
      const AxisKernelSpec spec = builtin_axis_spec(op, rule, shape, sm_count);
      if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
    }
  };
  add(problem.op, *types.rule);
  if (problem.op == Op::sum && is_floating(problem.dtype) && problem.dtype == problem.out_dtype) {
    const auto mean = resolve_types(Op::mean, problem.dtype, default_out_dtype(Op::mean, problem.dtype));
    if (mean.rule && mean.rule->acc == types.rule->acc) add(Op::mean, *mean.rule);
  }
  return specs;
}

namespace detail {

namespace {
constexpr std::uint64_t kAxisSeed = 0xa5eed;
constexpr std::uint64_t kCoverageSeed = 0xa5eed2;
// Candidates timed at the interior shape: the fastest few at the corner, within this
// factor of the best there.
constexpr std::size_t kAxisFinalists = 6;
constexpr double kAxisFinalistBand = 1.3;
}  // namespace

// The reference and comparison kernels of one (op, types).
struct AxisReferenceProgram {
  std::shared_ptr<const CompiledProgram> program;
  std::unique_ptr<LoadedLibrary> library;
  cudaKernel_t reference = nullptr;
  cudaKernel_t compare = nullptr;
  std::string binary_key;
};

AxisCheckState::AxisCheckState(DeviceState& device) : device_(device), result_(16) {}
AxisCheckState::~AxisCheckState() = default;

void AxisCheckState::reserve(std::uint64_t data_bytes, std::uint64_t out_bytes) {
  if (data_.size() < data_bytes) {
    RT_CUDA_CHECK(cudaStreamSynchronize(device_.stream()));
    data_ = DeviceBuffer();
    data_ = DeviceBuffer(data_bytes);
    holds_.reset();
  }
  if (out_.size() < out_bytes) {
    RT_CUDA_CHECK(cudaStreamSynchronize(device_.stream()));
    out_ = DeviceBuffer();
    reference_ = DeviceBuffer();
    out_ = DeviceBuffer(out_bytes);
    reference_ = DeviceBuffer(out_bytes);
    reference_holds_.reset();
  }
}

const unsigned char* AxisCheckState::data(DType dtype, verify::FillKind kind, std::uint64_t seed) {
  const auto want = std::make_tuple(dtype, kind, seed);
  if (!holds_ || *holds_ != want) {
    device_.fill(data_.get(), dtype, kind, seed, data_.size() / size_of(dtype));
    holds_ = want;
  }
  return static_cast<const unsigned char*>(data_.get());
}

AxisReferenceProgram& AxisCheckState::program(Op op, const TypeRule& types) {
  auto& slot = programs_[std::make_tuple(op, types.in, types.acc, types.out)];
  if (slot) return *slot;
  CompileRequest request;
  request.program_name = "reduce_tune_axis_check.cu";
  request.source = "#include \"tuner/axis_check.cuh\"\n";
  const auto templates = kernel_template_sources();
  const auto tuner_files = tuner_kernel_sources();
  request.headers.assign(templates.begin(), templates.end());
  request.headers.insert(request.headers.end(), tuner_files.begin(), tuner_files.end());
  request.name_expressions = {"rt::axis_reference_kernel<" + std::string(op_type(op)) + ", " +
                                  std::string(cuda_type_name(types.in)) + ", " + std::string(cuda_type_name(types.acc)) +
                                  ", " + std::string(cuda_type_name(types.out)) + ">",
                              "rt::axis_compare_kernel<" + std::string(cuda_type_name(types.out)) + ">"};
  request.arch = device_.key().arch();
  auto p = std::make_unique<AxisReferenceProgram>();
  p->binary_key = device_.request_binary_key(request);
  p->program = device_.compile_now(request);
  p->library = std::make_unique<LoadedLibrary>(p->program->cubin);
  p->reference = p->library->kernel(p->program->lowered_names.at(0));
  p->compare = p->library->kernel(p->program->lowered_names.at(1));
  binary_keys_.insert(p->binary_key);
  slot = std::move(p);
  return *slot;
}

const void* AxisCheckState::reference(Op op, const TypeRule& types, const AxisShape& shape, verify::FillKind kind,
                                      std::uint64_t seed) {
  const auto key = std::make_tuple(op, types.in, types.out, shape.layout, shape.reduced, shape.outputs, kind, seed);
  if (reference_holds_ && *reference_holds_ == key) return reference_.get();
  const unsigned char* in = data(types.in, kind, seed);
  AxisReferenceProgram& p = program(op, types);
  std::uint64_t outputs = shape.outputs, reduced = shape.reduced, inner = shape.layout == AxisLayout::columns ? shape.outputs : 1;
  int columns = shape.layout == AxisLayout::columns ? 1 : 0;
  void* out = reference_.get();
  const void* in_ptr = in;
  void* args[] = {&in_ptr, &out, &outputs, &reduced, &inner, &columns};
  const std::uint64_t warps_wanted = std::min<std::uint64_t>(outputs, 32ull * 1024 * 8);
  const auto grid = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (warps_wanted * 32 + 255) / 256));
  CudaLauncher().launch(reinterpret_cast<const void*>(p.reference), grid, 256, device_.stream(), args,
                        StreamOrder::serial);
  RT_CUDA_CHECK(cudaStreamSynchronize(device_.stream()));
  reference_holds_ = key;
  return reference_.get();
}

std::string AxisCheckState::compare(Op op, const TypeRule& types, const AxisShape& shape, verify::FillKind kind,
                                    std::uint64_t seed, const void* got) {
  const void* want = reference(op, types, shape, kind, seed);
  AxisReferenceProgram& p = program(op, types);
  const unsigned long long init[2] = {0, ~0ull};
  RT_CUDA_CHECK(cudaMemcpyAsync(result_.get(), init, sizeof(init), cudaMemcpyHostToDevice, device_.stream()));
  std::uint64_t n = shape.outputs;
  void* result = result_.get();
  void* args[] = {&got, &want, &n, &result};
  const auto grid = static_cast<std::uint32_t>(std::clamp<std::uint64_t>((n + 255) / 256, 1, 4096));
  CudaLauncher().launch(reinterpret_cast<const void*>(p.compare), grid, 256, device_.stream(), args,
                        StreamOrder::serial);
  unsigned long long found[2] = {0, 0};
  RT_CUDA_CHECK(cudaMemcpyAsync(found, result_.get(), sizeof(found), cudaMemcpyDeviceToHost, device_.stream()));
  RT_CUDA_CHECK(cudaStreamSynchronize(device_.stream()));
  if (found[0] == 0) return {};
  const std::size_t out_size = size_of(types.out);
  std::uint64_t got_bits = 0, want_bits = 0;
  RT_CUDA_CHECK(cudaMemcpy(&got_bits, static_cast<const unsigned char*>(got) + found[1] * out_size, out_size,
                           cudaMemcpyDeviceToHost));
  RT_CUDA_CHECK(cudaMemcpy(&want_bits, static_cast<const unsigned char*>(want) + found[1] * out_size, out_size,
                           cudaMemcpyDeviceToHost));
  return std::to_string(found[0]) + " of " + std::to_string(shape.outputs) + " outputs wrong at R=" +
         std::to_string(shape.reduced) + " x " + std::to_string(shape.outputs) + " (" + to_string(shape.layout) +
         "); first: output " + std::to_string(found[1]) + " = " +
         std::to_string(verify::bits_to_double(types.out, got_bits)) + ", expected " +
         std::to_string(verify::bits_to_double(types.out, want_bits));
}

void AxisCheckState::run(const AxisKernelSpec& spec, const KernelHandles& kernels, const AxisShape& shape,
                         verify::FillKind kind, std::uint64_t seed, void* out) {
  const CanonicalAxes canonical = canonical_axis_shape(shape);
  const AxisLaunchPlan plan = plan_axis_launch(spec, canonical, device_.key().sm_count);
  const WorkspaceView ws = device_.workspace(plan.partial_count * size_of(spec.types.acc));
  const unsigned char* in = data(spec.types.in, kind, seed);
  // Poisoned outputs: a kernel that leaves one unwritten cannot match by luck.
  RT_CUDA_CHECK(cudaMemsetAsync(out, 0xa5, shape.outputs * size_of(spec.types.out), device_.stream()));
  CudaLauncher launcher;
  enqueue_axis_reduction(launcher, kernels, spec, plan, canonical, in, out, plan.partial_count > 0 ? &ws : nullptr,
                         device_.stream());
  RT_CUDA_CHECK(cudaStreamSynchronize(device_.stream()));
}

std::string AxisCheckState::check(const AxisKernelSpec& spec, const KernelHandles& kernels, const AxisShape& shape,
                                  verify::FillKind kind, std::uint64_t seed) {
  run(spec, kernels, shape, kind, seed, out_.get());
  return compare(spec.op, spec.types, shape, kind, seed, out_.get());
}

TimingResult AxisCheckState::time(const AxisKernelSpec& spec, const KernelHandles& kernels, const AxisShape& shape,
                                  double best_ms) {
  const CanonicalAxes canonical = canonical_axis_shape(shape);
  const AxisLaunchPlan plan = plan_axis_launch(spec, canonical, device_.key().sm_count);
  const WorkspaceView ws = device_.workspace(plan.partial_count * size_of(spec.types.acc));
  const unsigned char* in = data(spec.types.in, verify::exact_fill(spec.op), kAxisSeed);
  const std::uint64_t bytes = shape.elements() * size_of(spec.types.in);
  // Slices 256-byte aligned, as allocations are.
  const std::uint64_t stride = (bytes + 255) / 256 * 256;
  const int rotations = rotation_count(stride, device_.key().l2_bytes, data_.size());
  CudaLauncher launcher;
  TimingPolicy policy;
  policy.warmup_calls = 1;
  policy.min_samples = 3;
  policy.max_samples = 9;
  policy.target_spread = 0.02;
  policy.min_sample_ms = 0.1;
  policy.best_ms = best_ms;
  policy.abandon_factor = kAxisFinalistBand + 0.1;  // no candidate stopped early is a finalist
  return time_reduction(
      [&](int slice) {
        enqueue_axis_reduction(launcher, kernels, spec, plan, canonical, in + static_cast<std::uint64_t>(slice) * stride,
                               out_.get(), plan.partial_count > 0 ? &ws : nullptr, device_.stream());
      },
      rotations, device_.stream(), policy);
}

namespace {

std::string axis_kernel_key(const AxisKernelSpec& spec, const std::vector<std::string>& options) {
  std::string key = "axis " + to_string(spec);
  for (const auto& o : options) key.append(" ").append(o);
  return key;
}

CompileRequest axis_request(const AxisKernelSpec& spec, int arch, const std::vector<std::string>& options) {
  CompileRequest request = make_axis_compile_request(spec, arch);
  request.extra_options = options;
  return request;
}

}  // namespace

void tune_axis_classes(DeviceState& device, db::Database& database, db::RowId device_id, const AxisWorkPlan& plan,
                       const TuneOptions& options, Progress& progress, const std::atomic<bool>& interrupt,
                       DeviceTuneResult& result, int index_offset, int total) {
  if (plan.items.empty()) return;
  const int arch = device.key().arch();
  const int sm_count = device.key().sm_count;
  AxisCheckState checks(device);
  // Room for the largest sample shape of any class, at least 8x L2 (rotation), and the
  // largest output count.
  std::uint64_t data_bytes = 8 * static_cast<std::uint64_t>(std::max<std::int64_t>(device.key().l2_bytes, 1 << 20));
  std::uint64_t out_bytes = 64;
  for (const auto& w : plan.items)
    for (const auto& s : axis_sample_shapes(w.problem)) {
      data_bytes = std::max(data_bytes, s.elements() * size_of(w.types.in));
      out_bytes = std::max<std::uint64_t>(out_bytes, s.outputs * 8);
    }
  checks.reserve(data_bytes, out_bytes);
  double tuned_seconds = 0;
  int done_here = 0;
  // The kernels a winner serves besides its own (a float sum's mean) compile in the
  // background and are stored when the classes are done or the run is interrupted.
  // Compiled in each class's store step, one at a time, they held up the run: the axis
  // classes' store steps took 68 s of the first 560 s of a default run on an H200, and
  // on an H100 the f32 sum classes took 112 s that way against 81 s this way.
  std::vector<std::pair<std::string, CompileRequest>> deferred;
  auto store_deferred = [&] {
    if (deferred.empty()) return;
    PhaseTimer timer(result.phases.store);
    std::set<std::string> keep;
    for (const auto& [key, request] : deferred) {
      try {
        device.request_kernels(key, request);
        keep.insert(device.request_binary_key(request));
      } catch (const NvrtcError&) {
        // Left to the runtime to report at its first call.
      }
    }
    deferred.clear();
    result.binaries_stored += options.keep_all_binaries ? device.store().keep_all() : device.store().keep(keep);
  };

  // The built-in choice at each sample shape of a class (it can change inside a class):
  // each is timed at its own shape at least, and sets the bar a winner must hold against
  // there. (Those that cannot reduce every shape of the class are dropped from the
  // candidates, as any config is, and set no bar.)
  auto class_builtins = [&](const AxisWorkItem& w, const std::vector<AxisShape>& shapes,
                            std::vector<std::string>* texts) {
    std::vector<AxisKernelSpec> builtins;
    for (const auto& s : shapes) {
      const AxisKernelSpec b = builtin_axis_spec(w.op, w.types, canonical_axis_shape(s), sm_count);
      if (texts) texts->push_back(axis_config_text(b));
      if (!fitting_once({b}, class_fit_shapes(w.problem, sm_count)).empty()) builtins.push_back(b);
    }
    return builtins;
  };
  // A class's candidates. The sum searches the whole space; another op starts from the
  // sum's best configs of the same class (the traversal is the op-independent part), where
  // they are stored. So does bf16's sum from f16's: the same bytes through the same code,
  // only the conversion to float differs. `ahead`: asked for a class after the one in
  // hand, whose sum may not be stored yet; then nothing (the whole space is not guessed).
  auto class_candidates = [&](const AxisWorkItem& w, const std::vector<AxisShape>& shapes,
                              const std::vector<AxisKernelSpec>& builtins,
                              bool ahead) -> std::optional<std::vector<AxisKernelSpec>> {
    if (w.fill) return w.candidates;
    if (w.op == Op::sum && w.types.in != DType::bf16)
      return axis_class_candidates(w.op, w.types, w.problem, sm_count);
    std::vector<AxisKernelSpec> candidates;
    const DType lead_dtype = w.op == Op::sum ? DType::f16 : w.types.in;
    const db::AxisProblemClass sum_class{Op::sum, lead_dtype, lead_dtype, w.problem.layout,
                                         w.problem.reduced_bucket, w.problem.outputs_bucket};
    const auto ranked = rank_axis_configs(database.axis_measurements(device_id, sum_class), shapes);
    for (const auto& b : builtins)
      if (std::find(candidates.begin(), candidates.end(), b) == candidates.end()) candidates.push_back(b);
    const std::size_t builtin_count = candidates.size();
    for (std::size_t i = 0; i < ranked.size() && i < 4; ++i)
      if (auto spec = parse_axis_config(ranked[i].first, w.op, w.types))
        if (std::find(candidates.begin(), candidates.end(), *spec) == candidates.end()) candidates.push_back(*spec);
    // Nothing from the sum (not tuned here): the whole space.
    if (candidates.size() == builtin_count) {
      if (ahead) return std::nullopt;
      candidates = axis_class_candidates(w.op, w.types, w.problem, sm_count);
    }
    return candidates;
  };
  // The programs of the classes ahead compile in the background while the class in hand
  // is timed, up to a few per compile thread: a class of a few candidates (another op
  // than the sum, a filled class) otherwise waited for NVRTC at its start, one class at a
  // time. A class's own programs are asked for sooner than those ahead.
  // The window is bounded: the pool finishes what is queued before a run stops (Ctrl-C).
  const std::size_t ahead_programs = 4 * static_cast<std::size_t>(device.compile_threads());
  std::size_t ahead_next = 0;    // the first class whose programs were not queued yet
  std::size_t ahead_queued = 0;  // the candidates of the classes queued ahead of the one in hand
  std::vector<std::size_t> ahead_counts(plan.items.size(), 0);
  auto queue_programs = [&](const AxisWorkItem& w, const std::vector<AxisKernelSpec>& candidates,
                            DeviceState::Urgency urgency) {
    for (const auto& c : candidates) device.compile_request_async(axis_kernel_key(c, {}), axis_request(c, arch, {}), urgency);
    // The coverage twins of the finalists (below) come from these candidates: asked for
    // ahead where the candidates are few (another op than the sum: most are finalists);
    // a 16-bit sum's whole space waits to know its finalists.
    if (const auto twin_types = verify::coverage_twin(w.op, w.types); twin_types && w.op != Op::sum)
      for (AxisKernelSpec twin : candidates) {
        twin.op = Op::sum;
        twin.types = *twin_types;
        device.compile_request_async(axis_kernel_key(twin, {}), axis_request(twin, arch, {}),
                                     DeviceState::Urgency::background);
      }
  };
  auto queue_ahead = [&](std::size_t index) {  // once per class, as it comes in hand
    if (index < ahead_next) ahead_queued -= ahead_counts[index];
    ahead_next = std::max(ahead_next, index + 1);
    while (ahead_next < plan.items.size() && ahead_queued < ahead_programs) {
      const AxisWorkItem& next = plan.items[ahead_next];
      const std::vector<AxisShape> shapes = axis_sample_shapes(next.problem, sm_count);
      const auto candidates = class_candidates(next, shapes, class_builtins(next, shapes, nullptr), true);
      if (!candidates) break;  // its sum is not stored yet: asked again from the next class
      queue_programs(next, *candidates, DeviceState::Urgency::speculative);
      ahead_counts[ahead_next] = candidates->size();
      ahead_queued += candidates->size();
      ++ahead_next;
    }
  };

  for (std::size_t index = 0; index < plan.items.size(); ++index) {
    if (interrupt.load()) {
      result.interrupted = true;
      store_deferred();
      return;
    }
    const auto class_started = Clock::now();
    const AxisWorkItem& w = plan.items[index];
    const std::vector<AxisShape> shapes = axis_sample_shapes(w.problem, sm_count);
    std::vector<std::string> builtin_texts;
    const std::vector<AxisKernelSpec> builtins = class_builtins(w, shapes, &builtin_texts);
    auto is_builtin = [&](const AxisKernelSpec& c) {
      return std::find(builtins.begin(), builtins.end(), c) != builtins.end();
    };
    const std::vector<AxisKernelSpec> candidates = *class_candidates(w, shapes, builtins, false);
    queue_programs(w, candidates, DeviceState::Urgency::soon);
    queue_ahead(index);

    BucketReport report;
    report.device_name = device.key().name;
    report.axis = w.problem;
    report.fill = w.fill;
    report.index = index_offset + static_cast<int>(index) + 1;
    report.total = total;

    std::vector<db::AxisMeasurement> measurements;
    std::map<std::string, bool> failed;
    auto measure = [&](const AxisKernelSpec& spec, const AxisShape& shape) -> std::optional<double> {
      db::AxisMeasurement m;
      m.op = w.op;
      m.dtype = w.types.in;
      m.out_dtype = w.types.out;
      m.layout = shape.layout;
      m.reduced = shape.reduced;
      m.outputs = shape.outputs;
      m.inner = shape.layout == AxisLayout::columns ? shape.outputs : 1;
      m.config = axis_config_text(spec);
      m.tool_version = axis_tool_version_string();
      m.created_at = db::now_timestamp();
      m.median_ms = m.spread = m.gbps = std::numeric_limits<double>::quiet_NaN();
      auto finish = [&](db::MeasurementStatus status, std::string detail) -> std::optional<double> {
        m.status = status;
        m.detail = std::move(detail);
        if (status != db::MeasurementStatus::ok) failed[m.config] = true;
        measurements.push_back(m);
        if (shape == shapes.front()) {
          ++report.candidates;
          if (status != db::MeasurementStatus::ok) ++report.failed;
          else if (!report.winner_ms || m.median_ms < report.winner_ms) {
            report.winner_ms = m.median_ms;
            report.winner_gbps = m.gbps;
            report.axis_winner = m.config;
          }
          progress.candidate_finished(report);
        }
        return status == db::MeasurementStatus::ok ? std::optional<double>(m.median_ms) : std::nullopt;
      };
      const KernelHandles* kernels = nullptr;
      try {
        PhaseTimer timer(result.phases.compile_wait);
        kernels = &device.request_kernels(axis_kernel_key(spec, {}), axis_request(spec, arch, {}));
      } catch (const NvrtcError& e) {
        return finish(db::MeasurementStatus::compile_failed, first_lines(e.what()));
      } catch (const CudaError& e) {
        if (is_sticky(e.code())) throw;
        return finish(db::MeasurementStatus::launch_failed, e.what());
      }
      try {
        std::string wrong;
        {
          PhaseTimer timer(result.phases.verify);
          wrong = checks.check(spec, *kernels, shape, verify::exact_fill(w.op), kAxisSeed);
        }
        if (!wrong.empty()) return finish(db::MeasurementStatus::wrong_result, wrong);
        TimingResult t;
        {
          PhaseTimer timer(shape == shapes.front() ? result.phases.timing : result.phases.finalists);
          // Candidates at the corner race against the best so far; finalists inside the
          // class do not.
          t = checks.time(spec, *kernels, shape, shape == shapes.front() ? report.winner_ms : 0.0);
        }
        m.median_ms = t.median_ms;
        m.spread = t.spread;
        m.repetitions = t.repetitions;
        m.gbps = static_cast<double>(shape.elements() * size_of(w.types.in)) / (t.median_ms * 1e6);
        return finish(db::MeasurementStatus::ok, {});
      } catch (const CudaError& e) {
        // An error that ends the run names the candidate it came from.
        if (is_sticky(e.code()))
          throw CudaError(e.code(), e.expression(),
                          std::string(e.what()) + " (axis candidate " + to_string(spec) + " at R=" +
                              std::to_string(shape.reduced) + " x " + std::to_string(shape.outputs) + " outputs, " +
                              to_string(shape.layout) + ")");
        cudaGetLastError();
        return finish(db::MeasurementStatus::launch_failed, e.what());
      }
    };

    // Every candidate at the corner; the fastest few also inside the class.
    std::vector<std::pair<double, AxisKernelSpec>> timed;
    for (const auto& c : candidates) {
      if (interrupt.load()) break;
      if (auto t = measure(c, shapes.front())) timed.emplace_back(*t, c);
    }
    if (interrupt.load()) {
      result.interrupted = true;
      store_deferred();
      return;  // the class in flight is not stored
    }
    std::stable_sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<AxisKernelSpec> finalists;
    for (const auto& [t, c] : timed)
      if (finalists.size() < kAxisFinalists && t <= timed.front().first * kAxisFinalistBand) finalists.push_back(c);
    for (const auto& b : builtins)
      if (std::find(finalists.begin(), finalists.end(), b) == finalists.end() &&
          std::any_of(timed.begin(), timed.end(), [&](const auto& e) { return e.second == b; }))
        finalists.push_back(b);
    // min, max and products cannot see a dropped element themselves, nor can a 16-bit
    // result: each finalist also reduces the exact sum data as a sum (the same
    // traversal) into a type that shows every element (verify::coverage_twin).
    if (const auto twin_types = verify::coverage_twin(w.op, w.types)) {
      const TypeRule sum_types = *twin_types;
      for (const auto& c : finalists) {
        AxisKernelSpec twin = c;
        twin.op = Op::sum;
        twin.types = sum_types;
        std::string why;
        try {
          PhaseTimer timer(result.phases.finalists);
          const KernelHandles& k = device.request_kernels(axis_kernel_key(twin, {}), axis_request(twin, arch, {}));
          why = checks.check(twin, k, shapes.front(), verify::FillKind::sum, kCoverageSeed);
        } catch (const NvrtcError& e) {
          why = "does not compile: " + first_lines(e.what());
        } catch (const CudaError& e) {
          if (is_sticky(e.code())) throw;
          cudaGetLastError();
          why = e.what();
        }
        if (!why.empty())
          for (auto& m : measurements)
            if (m.config == axis_config_text(c)) {
              m.status = db::MeasurementStatus::wrong_result;
              m.detail = "coverage (sum twin): " + why;
              m.median_ms = m.spread = m.gbps = std::numeric_limits<double>::quiet_NaN();
            }
      }
    }
    // The other sample shapes in turn: a finalist more than the band slower than the best
    // at a shape already timed on the same side of the 16-byte grid (its worst ratio
    // there so far) is not timed further, and cannot win; the built-in choices always
    // are. Each side races apart: a config for the grid, slow off it, can win the grid's
    // side of the class (choose_axis_winners).
    std::vector<bool> on_grid;
    for (const auto& shape : shapes)
      on_grid.push_back(axis_on_16byte_grid(canonical_axis_shape(shape), size_of(w.types.in)));
    for (std::size_t s = 1; s < shapes.size(); ++s) {
      std::vector<AxisShape> same_side;
      for (std::size_t i = 0; i < s; ++i)
        if (on_grid[i] == on_grid[s]) same_side.push_back(shapes[i]);
      const auto so_far = rank_axis_configs(measurements, same_side);
      for (const auto& c : finalists) {
        if (interrupt.load()) break;
        const std::string text = axis_config_text(c);
        if (failed[text]) continue;
        if (!same_side.empty()) {
          const auto found =
              std::find_if(so_far.begin(), so_far.end(), [&](const auto& e) { return e.first == text; });
          if (found == so_far.end() || (found->second > kAxisFinalistBand && !is_builtin(c))) continue;
        }
        measure(c, shapes[s]);
      }
    }
    if (interrupt.load()) {
      result.interrupted = true;
      store_deferred();
      return;
    }

    db::AxisBucketResult stored;
    stored.device = device.key();
    stored.problem = w.problem;
    stored.measurements = measurements;
    {
      const AxisWinnerChoice choice = choose_axis_winners(measurements, shapes, builtin_texts, on_grid);
      stored.winner = choice.winner;
      stored.grid_winner = choice.grid_winner;
      if (choice.builtin) stored.winner_config = kAxisBuiltinConfig;
      if (choice.grid_builtin) stored.grid_winner_config = kAxisBuiltinConfig;
    }
    auto stored_config = [&](const std::optional<std::size_t>& index, const std::string& text) {
      return !text.empty() ? text : measurements[*index].config;
    };
    stored.tool_version = axis_tool_version_string();
    stored.created_at = db::now_timestamp();
    stored.mark_tuned = !w.fill;
    {
      PhaseTimer timer(result.phases.store);
      std::set<std::string> keep = checks.binary_keys();
      keep.insert(device.fill_key());
      for (const auto& spec : finalists) {
        try {
          const CompileRequest request = axis_request(spec, arch, {});
          device.request_kernels(axis_kernel_key(spec, {}), request);
          keep.insert(device.request_binary_key(request));
        } catch (const NvrtcError&) {
          // Left to the runtime to report at its first call.
        }
      }
      for (const auto& [index, text] : {std::pair{stored.winner, stored.winner_config},
                                        std::pair{stored.grid_winner, stored.grid_winner_config}}) {
        if (!index) continue;
        for (const auto& spec : axis_runtime_specs(w.problem, stored_config(index, text), sm_count)) {
          if (std::find(finalists.begin(), finalists.end(), spec) != finalists.end()) continue;  // kept above
          const std::string key = axis_kernel_key(spec, {});
          const CompileRequest request = axis_request(spec, arch, {});
          device.compile_request_async(key, request);
          deferred.emplace_back(key, request);
        }
      }
      result.binaries_stored += options.keep_all_binaries ? device.store().keep_all() : device.store().keep(keep);
      database.store_axis_bucket(stored);
    }
    ++(w.fill ? result.axis_classes_filled : result.axis_classes_tuned);
    ++done_here;
    result.candidates += report.candidates;
    result.failed_candidates += report.failed;
    if (stored.winner) {
      const auto& m = measurements[*stored.winner];
      report.axis_winner = stored_config(stored.winner, stored.winner_config);
      if (stored.grid_winner)
        report.axis_winner += ", on the 16-byte grid " + stored_config(stored.grid_winner, stored.grid_winner_config);
      report.winner_ms = m.median_ms;
      report.winner_gbps = m.gbps;
    }
    report.seconds = std::chrono::duration<double>(Clock::now() - class_started).count();
    tuned_seconds += report.seconds;
    report.eta_seconds =
        tuned_seconds / static_cast<double>(done_here) * static_cast<double>(plan.items.size() - index - 1);
    progress.bucket_finished(report);
  }
  store_deferred();
}

}  // namespace detail

struct AxisChecker::Impl {
  DeviceKey key;
  DeviceState device;
  AxisCheckState checks;
  explicit Impl(int ordinal)
      : key(select(ordinal)), device(key, std::nullopt), checks(device) {}
  static DeviceKey select(int ordinal) {
    DeviceKey k = query_device(ordinal);
    RT_CUDA_CHECK(cudaSetDevice(ordinal));
    return k;
  }
  void reserve(const AxisShape& shape, DType dtype) {
    checks.reserve(std::max<std::uint64_t>(shape.elements() * size_of(dtype), 1 << 20), shape.outputs * 8 + 64);
  }
};

AxisChecker::AxisChecker(int ordinal) : impl_(std::make_unique<Impl>(ordinal)) {}
AxisChecker::~AxisChecker() = default;

std::string AxisChecker::check(const AxisKernelSpec& spec, const AxisShape& shape,
                               const std::vector<std::string>& nvrtc_options) {
  impl_->reserve(shape, spec.types.in);
  const CompileRequest request = axis_request(spec, impl_->key.arch(), nvrtc_options);
  const KernelHandles& kernels = impl_->device.request_kernels(axis_kernel_key(spec, nvrtc_options), request);
  return impl_->checks.check(spec, kernels, shape, verify::exact_fill(spec.op), kAxisSeed);
}

void AxisChecker::run(const AxisKernelSpec& spec, const AxisShape& shape, void* out) {
  impl_->reserve(shape, spec.types.in);
  const CompileRequest request = axis_request(spec, impl_->key.arch(), {});
  const KernelHandles& kernels = impl_->device.request_kernels(axis_kernel_key(spec, {}), request);
  impl_->checks.run(spec, kernels, shape, verify::exact_fill(spec.op), kAxisSeed, out);
}

std::string AxisChecker::compare(Op op, const TypeRule& types, const AxisShape& shape, const void* got) {
  impl_->reserve(shape, types.in);
  return impl_->checks.compare(op, types, shape, verify::exact_fill(op), kAxisSeed, got);
}

}  // namespace reduce_tune::tuner
