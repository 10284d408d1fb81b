// Probe (not part of the build; no GPU): the stored axis winners that are the built-in
// choice at their class's corner, and how often the built-in choice made for another
// shape of the class on the 16-byte grid is another config (set BJ, docs/BENCHMARKS.md).
// A tuned or filled class serves its one (grid) winner at every shape of it, so where
// the built-in choice changes inside the class (f32 rows of 64: the plain rows kernel;
// of 68 to 127: the staged one) such a winner stands in for the built-in choice at
// shapes it was never timed at. Reads `reduce-tune show` on stdin. Since axis rule
// revision 21 a class may store `built-in` (the built-in choice made for each shape,
// docs/BENCHMARKS.md set BK): not a config, passed over here.
//   g++ -O2 -std=c++20 $(ls -d */include | sed 's/^/-I /') -I/usr/local/cuda/include \
//     bench/probes/axis_builtin_drift_probe.cpp -o axis_builtin_drift_probe \
//     $(ls build/*/lib*.a) $(ls build/*/lib*.a) -L/usr/local/cuda/lib64 -lcudart_static -lnvrtc \
//     -lsqlite3 -llzma -lz -ldl -lpthread -lrt
//   reduce-tune show --db DB | ./axis_builtin_drift_probe [--list]
#include <cstdio>
#include <cstring>
#include <iostream>
#include <regex>
#include <string>

#include "reduce_tune/engine/axis.h"
#include "reduce_tune/tuner/axis_tuner.h"
using namespace reduce_tune;

int main(int argc, char** argv) {
  const bool list = argc > 1 && std::strcmp(argv[1], "--list") == 0;
  const std::regex line_re(
      R"(^\s+(\w+)<(\w+)>\[(rows|columns) R 2\^(\d+) x 2\^(\d+) outputs\]\s+\S+\s+\S+\s+(\S+)(\s+on the 16-byte grid: (\S+))?(.*)$)");
  const auto family = [](const std::string& config) { return config.substr(0, config.find(':')); };
  const auto without_tail = [](std::string config) {
    const auto at = config.find(",tail=");
    return at == std::string::npos ? config : config.substr(0, at);
  };
  int classes = 0, corner_builtin = 0, drifting = 0, by_family = 0, by_tail = 0;
  std::string line;
  while (std::getline(std::cin, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, line_re)) continue;
    const Op op = m[1] == "sum" ? Op::sum : m[1] == "min" ? Op::min : Op::max;
    const auto dtype = parse_dtype(m[2].str());
    if (!dtype) continue;
    const auto types = resolve_types(op, *dtype, default_out_dtype(op, *dtype));
    if (!types.rule) continue;
    const AxisLayout layout = m[3] == "rows" ? AxisLayout::rows : AxisLayout::columns;
    const int a = std::stoi(m[4]), b = std::stoi(m[5]);
    const std::string served = m[8].matched ? m[8].str() : m[6].str();  // the winner on the grid
    ++classes;
    const std::uint64_t vector = 16 / size_of(*dtype);
    const std::uint64_t low = layout == AxisLayout::rows ? 1ull << a : 1ull << b;  // contiguous extent
    const std::uint64_t other = layout == AxisLayout::rows ? 1ull << b : 1ull << a;
    auto shape = [&](std::uint64_t c) {
      return layout == AxisLayout::rows ? tuner::AxisShape{layout, c, other} : tuner::AxisShape{layout, other, c};
    };
    auto builtin = [&](std::uint64_t c) {
      return axis_config_text(builtin_axis_spec(op, *types.rule, tuner::canonical_axis_shape(shape(c)), 132));
    };
    if (low < vector || (layout == AxisLayout::columns && other < 2) || builtin(low) != served) continue;
    ++corner_builtin;
    int shapes = 0, differ = 0, family_differs = 0, tail_only = 0;
    std::string example;
    const std::uint64_t step = std::max<std::uint64_t>(vector, low / 32);
    for (std::uint64_t c = low + step; c < 2 * low; c += step) {
      ++shapes;
      const std::string here = builtin(c);
      if (here == served) continue;
      ++differ;
      if (family(here) != family(served)) ++family_differs;
      else if (without_tail(here) == without_tail(served)) ++tail_only;
      if (example.empty()) example = std::to_string(shape(c).reduced) + " x " + std::to_string(shape(c).outputs) + ": " + here;
    }
    if (differ == 0) continue;
    ++drifting;
    by_family += family_differs > 0;
    by_tail += family_differs == 0 && tail_only == differ;
    if (list)
      std::printf("%s<%s>[%s R 2^%d x 2^%d]%s: %s, the built-in choice elsewhere at %d of %d (family %d, tail only %d; %s)\n",
                  m[1].str().c_str(), m[2].str().c_str(), m[3].str().c_str(), a, b,
                  m[9].str().find("filled") != std::string::npos ? " (filled)" : "", served.c_str(), differ, shapes,
                  family_differs, tail_only, example.c_str());
  }
  std::printf("%d winners; %d are the built-in choice at their corner; at %d of those the built-in choice is another "
              "config at other shapes of the class on the grid (another family at %d, only the tail at %d)\n",
              classes, corner_builtin, drifting, by_family, by_tail);
}
