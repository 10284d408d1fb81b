// Probe (not part of the build): how long the tuner's host references take, the checks'
// expected values that the host computes while the GPU times candidates. Four data sets
// of 2^26 elements on two threads: the exact sum of f32 and max of f16 over the three
// ranges a bucket checks (the whole size, the head and tail peeled, an interior size),
// the rounding set of f32, the exact sum of i64. Build against a build folder (one line):
//   g++ -std=c++20 -O2 -Icore/include -Ibuild/core/include -Iengine/include -Ituner/include
//     -I/usr/local/cuda/include bench/probes/host_reference_speed.cpp build/tuner/libreduce_tune_tuner.a
//     build/engine/libreduce_tune_engine.a build/core/libreduce_tune_core.a -lpthread -o reference_speed
#include <chrono>
#include <cstdio>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "reduce_tune/tuner/reference.h"

using namespace reduce_tune;
using namespace reduce_tune::verify;

int main() {
  const std::uint64_t n = 1ull << 26;
  const std::tuple<Op, DType, FillKind> sets[] = {{Op::sum, DType::f32, FillKind::sum},
                                                  {Op::max, DType::f16, FillKind::minmax},
                                                  {Op::sum, DType::f32, FillKind::rounding},
                                                  {Op::sum, DType::i64, FillKind::sum}};
  for (const auto& [op, dtype, kind] : sets) {
    const TypeRule types = *resolve_types(op, dtype, default_out_dtype(op, dtype)).rule;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges = {{0, n}, {3, n - 2}, {0, n + n / 2 + 1}};
    if (kind == FillKind::rounding) ranges = {{0, n}};
    const auto start = std::chrono::steady_clock::now();
    const auto expected = reference_hashed(op, types, kind, 0x5eed, ranges, 2);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s<%s> %s set, %zu ranges: %.3f s, result bits %llx\n", std::string(to_string(op)).c_str(),
                std::string(to_string(dtype)).c_str(), kind == FillKind::rounding ? "rounding" : "exact",
                ranges.size(), seconds, static_cast<unsigned long long>(expected[0].bits));
  }
}
