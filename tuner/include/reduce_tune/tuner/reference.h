// What the tuner checks every candidate against. Test data is hashed: element i of a data
// set is a function of (seed, i) alone, generated on the device by
// tuner/kernels/tuner/fill.cuh and here on the host, so gigabytes are filled on the GPU
// and checked without copying them back.
//
// Two data sets (docs/ARCHITECTURE.md, "Verifying"):
// - exact: every correct reduction order gives the same bits, so results are compared
//   bit for bit at every size. Integers span their whole range (sums and products wrap;
//   products use odd values). Float sums use nonzero integers in [-16, 16]: a partial sum
//   over m <= 2^31 elements has a standard deviation under 10 sqrt(m) < 5e5, so it stays
//   below 2^24 (exact in f32) by more than 30 standard deviations; no element is zero, so
//   a dropped element or head/tail peel always changes the sum. Float products use +-1
//   with a factor 2 about once in 2^26 elements; min and max use arbitrary values.
// - rounding (float sum and mean): values in [1, 2) with full mantissas, so the result
//   depends on the order of additions. It is checked against the exact sum with the
//   worst-case bound of the kernel's reduction tree: |got - S| <= gamma(L) * S (all values
//   are positive, so the bound is relative to the result and returning 0 or a partial
//   sum fails), L the longest chain of additions any element goes through.
//
// Coverage: min, max and products cannot see a dropped tile (the extreme or the product
// is usually elsewhere), so a config that may win such a bucket is also checked as a
// sum of the same dtype on the exact set (the "coverage twin"): the traversal of the
// input is the same code for every op. A 16-bit float result cannot show a dropped
// element either (its rounding swallows it), so every op of f16 and bf16 written in
// its own type has a twin too, which sums into f32: exact for this data.
#pragma once

#include <optional>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "reduce_tune/engine/kernel_spec.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/types.h"

namespace reduce_tune::verify {

// Numbering shared with tuner/fill.cuh.
enum class FillKind : int { sum = 0, prod = 1, minmax = 2, rounding = 3 };

// The exact data set's kind for an op.
FillKind exact_fill(Op op);
// Whether the rounding set applies (float sum and mean).
bool has_rounding_set(Op op, const TypeRule& types);

// The types of the coverage twin of (op, types), or none where the result itself shows a
// dropped element (sum and mean into a 32- or 64-bit type).
std::optional<TypeRule> coverage_twin(Op op, const TypeRule& types);

std::uint64_t hashed_bits(FillKind kind, DType dtype, std::uint64_t seed, std::uint64_t i);

// The result of reducing elements [offset, offset + n) of a data set, as the output
// type's bytes (8 bytes, low part used for 4-byte types).
struct Expected {
  std::uint64_t bits = 0;
  double value = 0;   // exact (rounding set: the exact real result)
  bool exact = true;  // false: compare against `value` with the bound below
  double magnitude = 0;  // sum |x|, as the result is scaled (divided by n for mean)
};
Expected reference_hashed(Op op, const TypeRule& types, FillKind kind, std::uint64_t seed, std::uint64_t offset,
                          std::uint64_t n, unsigned threads);
// The same for several ranges {offset, n} of one data set, in one pass over the data
// (a bucket checks [0, n), [3, n + 1) and its interior sizes: one hash per element).
std::vector<Expected> reference_hashed(Op op, const TypeRule& types, FillKind kind, std::uint64_t seed,
                                       const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges,
                                       unsigned threads);

// The most additions (or other combines) any one element goes through when `spec`
// reduces n elements with `plan`: its thread's sequential accumulation, the unroll
// accumulators, the block's tree, and the hand-off across blocks.
std::uint64_t longest_chain(const KernelSpec& spec, const LaunchPlan& plan, std::uint64_t n);

// "" when `got_bits` is right, else a description. Exact expectations compare bits (NaN
// matches NaN); inexact ones allow gamma(chain) * magnitude plus one rounding of the
// output type.
std::string compare_result(const TypeRule& types, std::uint64_t got_bits, const Expected& expected,
                           std::uint64_t chain);

double bits_to_double(DType dtype, std::uint64_t bits);

}  // namespace reduce_tune::verify
