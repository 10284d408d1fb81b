// Probe (not part of the build; no GPU): the built-in choice, or a given config, over
// columns (or, with --layout rows, rows) shapes R x outputs, with its launch plan and its ticket fold's round trips
// (set BP in docs/BENCHMARKS.md: which shapes a rule reaches, before timing them).
// Built from the repository root after a build in build/ (one command line):
//   g++ -O1 -std=c++20 $(ls -d */include | sed 's/^/-I /') -I/usr/local/cuda/include
//     bench/probes/axis_choice_probe.cpp -o axis_choice_probe
//     $(ls build/*/lib*.a) $(ls build/*/lib*.a) -L/usr/local/cuda/lib64 -lcudart_static -lnvrtc
//     -lsqlite3 -llzma -lz -ldl -lpthread -lrt
//   ./axis_choice_probe OP DTYPE builtin|CONFIG R OUTPUTS [R OUTPUTS ...] [--sms N] [--layout rows|columns]
//   ./axis_choice_probe sum f16 builtin 65537 3002 30001 8448
// A shape may also be a view as the axis bench's --views names it, EXTENTS[@STRIDES]/AXES
// (any layout class; where the runtime would reduce it in the order of its strides,
// axis_reorder, the stage-1 view's choice is printed too):
//   ./axis_choice_probe max i64 builtin 2x13x2x242197@1x2x6297122x26/0,3 3x11x20001x45/0,2
// With "candidates" in place of the config, a view's line lists the search space's
// candidates there (engine/axis.h's axis_candidates), ';'-separated for the axis bench's
// --configs:
//   ./axis_choice_probe max i64 candidates 1x2399x3x5/1
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "reduce_tune/engine/axis.h"
#include "reduce_tune/tuner/axis_tuner.h"
using namespace reduce_tune;

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  int sms = 132;
  AxisLayout layout = AxisLayout::columns;
  for (std::size_t i = 0; i + 1 < args.size();)
    if (args[i] == "--sms" || args[i] == "--layout") {
      if (args[i] == "--sms") sms = std::atoi(args[i + 1].c_str());
      else layout = args[i + 1] == "rows" ? AxisLayout::rows : AxisLayout::columns;
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i), args.begin() + static_cast<std::ptrdiff_t>(i) + 2);
    } else {
      ++i;
    }
  if (args.size() < 4) {
    std::fprintf(stderr,
                 "usage: axis_choice_probe OP DTYPE builtin|CONFIG (R OUTPUTS | EXTENTS[@STRIDES]/AXES) ... [--sms N] "
                 "[--layout rows|columns]\n");
    return 2;
  }
  const auto op = parse_op(args[0]);
  const auto dtype = parse_dtype(args[1]);
  if (!op || !dtype) {
    std::fprintf(stderr, "unknown op or dtype\n");
    return 2;
  }
  const auto types = resolve_types(*op, *dtype, default_out_dtype(*op, *dtype));
  if (!types.rule) {
    std::fprintf(stderr, "no type rule for that op and dtype\n");
    return 2;
  }
  // The spec for a canonical shape (the built-in choice or the config given), or null
  // with a message.
  const auto spec_for = [&](const CanonicalAxes& shape) -> std::optional<AxisKernelSpec> {
    std::string error;
    auto spec = args[2] == "builtin" ? std::optional<AxisKernelSpec>(builtin_axis_spec(*op, *types.rule, shape, sms))
                                     : parse_axis_config(args[2], *op, *types.rule, &error);
    if (!spec) std::fprintf(stderr, "%s: %s\n", args[2].c_str(), error.c_str());
    return spec;
  };
  const auto print_plan = [&](const AxisKernelSpec& spec, const CanonicalAxes& shape) {
    const AxisLaunchPlan p = plan_axis_launch(spec, shape, sms);
    std::printf("%s | grid %u, splits %llu, finalize grid %u, fold trips %llu\n", axis_config_text(spec).c_str(),
                p.grid, static_cast<unsigned long long>(p.splits), p.finalize_grid,
                static_cast<unsigned long long>(axis_columns_fold_trips(spec, p.splits)));
  };
  const auto numbers = [](const std::string& list, char sep) {
    std::vector<std::int64_t> out;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, sep);) out.push_back(std::stoll(item));
    return out;
  };
  for (std::size_t i = 3; i < args.size(); ++i) {
    const std::size_t slash = args[i].find('/');
    if (slash == std::string::npos) {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "%s: R without OUTPUTS\n", args[i].c_str());
        return 2;
      }
      const std::uint64_t r = std::stoull(args[i]), n = std::stoull(args[i + 1]);
      ++i;
      const CanonicalAxes shape = tuner::canonical_axis_shape(tuner::AxisShape{layout, r, n});
      const auto spec = spec_for(shape);
      if (!spec) return 2;
      std::printf("%llu x %llu: ", static_cast<unsigned long long>(r), static_cast<unsigned long long>(n));
      print_plan(*spec, shape);
      continue;
    }
    // A view: EXTENTS[@STRIDES]/AXES.
    const std::string dims = args[i].substr(0, slash);
    const std::size_t at = dims.find('@');
    const std::vector<std::int64_t> extents = numbers(dims.substr(0, at), 'x');
    const std::vector<std::int64_t> strides = at == std::string::npos ? std::vector<std::int64_t>{}
                                                                       : numbers(dims.substr(at + 1), 'x');
    std::vector<int> axis_list;
    for (std::int64_t a : numbers(args[i].substr(slash + 1), ',')) axis_list.push_back(static_cast<int>(a));
    if (extents.empty() || extents.size() > static_cast<std::size_t>(kMaxRank) ||
        (!strides.empty() && strides.size() != extents.size())) {
      std::fprintf(stderr, "%s: expected EXTENTS[@STRIDES]/AXES\n", args[i].c_str());
      return 2;
    }
    const int rank = static_cast<int>(extents.size());
    const TensorDesc view = strides.empty() ? TensorDesc::contiguous(extents.data(), rank)
                                            : TensorDesc::strided(extents.data(), strides.data(), rank);
    const AxisList axes(axis_list.data(), static_cast<int>(axis_list.size()));
    const CanonicalResult c = canonicalize(view, axes);
    if (!c.ok) {
      std::fprintf(stderr, "%s: %s\n", args[i].c_str(), c.error.c_str());
      return 2;
    }
    if (args[2] == "candidates") {
      std::string list;
      for (const AxisKernelSpec& candidate : axis_candidates(*op, *types.rule, c.axes, sms))
        list += (list.empty() ? "" : ";") + axis_config_text(candidate);
      std::printf("%s: %s\n%s\n", args[i].c_str(), c.axes.to_string().c_str(), list.c_str());
      continue;
    }
    const auto spec = spec_for(c.axes);
    if (!spec) return 2;
    std::printf("%s: %s\n  ", args[i].c_str(), c.axes.to_string().c_str());
    print_plan(*spec, c.axes);
    // The runtime's reorder (context.cpp's staged_reorder, its workspace cap aside).
    if (!axis_reorder_may_pay(c.axes)) continue;
    const std::optional<AxisReorder> reorder = axis_reorder(view, axes, c.axes);
    if (!reorder || !axis_reorder_pays(*reorder, c.axes, size_of(types.rule->in))) continue;
    const auto staged = spec_for(reorder->stage1_shape);
    if (!staged) return 2;
    std::printf("  in stride order (%s): %s\n  ", reorder->order.rank > 0 ? "written in the caller's order" : "then a copy",
                reorder->stage1_shape.to_string().c_str());
    print_plan(*staged, reorder->stage1_shape);
  }
  return 0;
}
