// CPU references and test inputs for the reduction kernels.
//
// Inputs are chosen so that the exact answer is known and any missing, repeated or
// misplaced element changes it: integers span their whole range (sums wrap), products
// use odd integers (never collapse to 0 mod 2^k) or +-1 with a few 2s, float sums use
// small integers (exact in the accumulator), min/max use arbitrary values. A separate
// "real" pattern checks float sums of arbitrary values against a double reference with
// a worst-case error bound.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "reduce_tune/types.h"

namespace reduce_tune::verify {

enum class Pattern { exact, real, nan, inf, mixed_inf };
std::string_view to_string(Pattern p);

// A typed host buffer of `count` elements of `dtype`, as raw bytes.
struct HostArray {
  DType dtype;
  std::vector<unsigned char> bytes;
  std::size_t count() const { return bytes.size() / size_of(dtype); }
};

// Generates `count` elements for reducing with `op` (deterministic for a seed).
HostArray make_input(Op op, DType dtype, Pattern pattern, std::size_t count, std::uint64_t seed);

// Hashed inputs: element i is a function of (seed, i) alone, computed identically by
// the GPU fill kernel (kernel_templates/rt/fill.cuh) and here, so the tuner fills
// gigabytes on the device and checks results without copying the data back. The values
// follow the "exact" pattern: every correct reduction order gives the same answer.
enum class FillKind : int { sum = 0, prod = 1, minmax = 2 };  // numbering shared with rt/fill.cuh
FillKind fill_kind(Op op);
std::uint64_t hashed_bits(FillKind kind, DType dtype, std::uint64_t seed, std::uint64_t i);

// The result of reducing elements [offset, offset + n) as the library defines it,
// as the output type's bytes (8 bytes, low part used for 4-byte types), plus the sum
// of magnitudes and the bound on the rounding error where the result is inexact.
struct Expected {
  std::uint64_t bits = 0;
  double value = 0;           // as double, for tolerance checks
  bool exact = true;
  double error_per_link = 0;  // when !exact: eps * sum|x| (divided by n for mean)
  double slack = 0;           // when !exact: rounding of the final conversion
};
Expected reference_reduce(Op op, const TypeRule& types, const HostArray& input,
                          std::size_t offset, std::uint64_t n);
// The same for hashed inputs, elements [offset, offset + n), on `threads` threads.
Expected reference_reduce_hashed(Op op, const TypeRule& types, std::uint64_t seed,
                                 std::uint64_t offset, std::uint64_t n, unsigned threads);

// Compares a result (the output type's bytes) with the expectation; "" when it matches,
// else a description. `longest_chain` bounds how many additions any element went
// through (the worst-case error of an inexact float sum is longest_chain * eps * sum|x|).
std::string compare_result(const TypeRule& types, std::uint64_t got_bits, const Expected& expected,
                           std::uint64_t longest_chain);

// The double value of an output's bytes.
double bits_to_double(DType dtype, std::uint64_t bits);

}  // namespace reduce_tune::verify
