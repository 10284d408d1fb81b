#include "reduce_tune/tuner/tune_options.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace reduce_tune::tuner {

std::string_view to_string(SearchKind kind) {
  switch (kind) {
    case SearchKind::exhaustive: return "exhaustive";
    case SearchKind::random: return "random";
    case SearchKind::local: return "local";
  }
  return "?";
}

std::vector<std::uint64_t> default_sizes() {
  std::vector<std::uint64_t> sizes;
  for (int b = 10; b <= 30; ++b) sizes.push_back(1ull << b);
  return sizes;
}

std::vector<std::uint64_t> one_size_per_bucket(const std::vector<std::uint64_t>& sizes,
                                               std::vector<std::uint64_t>* dropped) {
  std::vector<std::uint64_t> kept;
  std::set<int> buckets;
  for (std::uint64_t n : sizes) {
    if (buckets.insert(size_bucket(n)).second)
      kept.push_back(n);
    else if (dropped)
      dropped->push_back(n);
  }
  std::sort(kept.rbegin(), kept.rend());
  return kept;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> default_axis_shapes() {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> shapes;
  for (int a = 1; a <= 23; a += 2)
    for (int b = 1; b <= 23; b += 2)
      if (a + b >= 16 && a + b <= 28) shapes.emplace_back(1ull << a, 1ull << b);
  return shapes;
}

}  // namespace reduce_tune::tuner
