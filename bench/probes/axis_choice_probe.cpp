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
#include <cstdio>
#include <cstdlib>
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
  if (args.size() < 5 || (args.size() - 3) % 2 != 0) {
    std::fprintf(stderr, "usage: axis_choice_probe OP DTYPE builtin|CONFIG R OUTPUTS [R OUTPUTS ...] [--sms N] [--layout rows|columns]\n");
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
  for (std::size_t i = 3; i + 1 < args.size(); i += 2) {
    const std::uint64_t r = std::stoull(args[i]), n = std::stoull(args[i + 1]);
    const CanonicalAxes shape = tuner::canonical_axis_shape(tuner::AxisShape{layout, r, n});
    std::string error;
    const auto spec = args[2] == "builtin" ? std::optional<AxisKernelSpec>(builtin_axis_spec(*op, *types.rule, shape, sms))
                                           : parse_axis_config(args[2], *op, *types.rule, &error);
    if (!spec) {
      std::fprintf(stderr, "%s: %s\n", args[2].c_str(), error.c_str());
      return 2;
    }
    const AxisLaunchPlan p = plan_axis_launch(*spec, shape, sms);
    std::printf("%llu x %llu: %s | grid %u, splits %llu, finalize grid %u, fold trips %llu\n",
                static_cast<unsigned long long>(r), static_cast<unsigned long long>(n), axis_config_text(*spec).c_str(),
                p.grid, static_cast<unsigned long long>(p.splits), p.finalize_grid,
                static_cast<unsigned long long>(axis_columns_fold_trips(*spec, p.splits)));
  }
  return 0;
}
