// The GPU tests' own inputs and expected results, written apart from the tuner's
// verification (tuner/reference.h) so that a mistake there cannot hide a wrong kernel
// here: host arrays from a seeded generator, references evaluated on the host, and a
// tolerance of the tests' own for the one inexact pattern.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reduce_tune/engine/kernel_spec.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/types.h"

namespace reduce_tune::testing {

// exact: values every reduction order gives the same answer for (integers over their
//        whole range, float sums of small integers, products of +-1 with a few 2s,
//        arbitrary values for min and max);
// real:  float sums of arbitrary values in [-1, 1) (inexact; checked with a bound);
// nan, inf, mixed_inf: the exact values with a few NaN, +Inf, or +Inf and -Inf placed.
enum class Pattern { exact, real, nan, inf, mixed_inf };
const char* pattern_name(Pattern p);

struct HostArray {
  DType dtype;
  std::vector<unsigned char> bytes;
};
HostArray make_input(Op op, DType dtype, Pattern pattern, std::size_t count, std::uint64_t seed);

struct Expectation {
  std::uint64_t bits = 0;   // the output's bytes when exact
  bool exact = true;
  long double value = 0;    // the exact real result
  long double abs_sum = 0;  // sum |x| (divided by n for mean), for the bound
};
// What op over elements [offset, offset + n) of `input` must give, as the library
// defines it (NaN propagates, integers wrap, mean is the accumulated sum over n).
Expectation expect(Op op, const TypeRule& types, const HostArray& input, std::size_t offset, std::uint64_t n);

// A bound on the additions any element goes through, from the launch alone: the
// elements one thread reads, every accumulator, two block trees and the blocks.
std::uint64_t addition_depth(const KernelSpec& spec, const LaunchPlan& plan, std::uint64_t n);

// "" when `got` (the output's bytes) is right: exact results bit for bit (any NaN for a
// NaN), the real pattern within depth * eps * sum|x| plus an output rounding.
std::string mismatch(const TypeRule& types, std::uint64_t got, const Expectation& e, std::uint64_t depth);

}  // namespace reduce_tune::testing
