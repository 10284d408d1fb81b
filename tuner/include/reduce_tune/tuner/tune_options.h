// What a tuning run covers and how it searches: one documented struct, filled by the
// command line (cli/tune_options.h parses it) or by a program.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "reduce_tune/tensor.h"
#include "reduce_tune/types.h"

namespace reduce_tune::tuner {

enum class SearchKind { exhaustive, random, local };
std::string_view to_string(SearchKind kind);

struct Budget {
  int evaluations_per_bucket = 0;  // 0: no limit on evaluations
  double seconds = 0;              // 0: no time limit (for the whole run)
};

struct TuneOptions {
  // Devices to tune: indices, or empty with all_devices set.
  std::vector<int> devices = {0};
  bool all_devices = false;
  std::vector<Op> ops = {Op::sum, Op::prod, Op::min, Op::max};
  std::vector<DType> dtypes = {DType::i32, DType::i64, DType::u32, DType::f32, DType::f64, DType::f16, DType::bf16};
  std::vector<std::uint64_t> sizes;  // empty: 2^10 .. 2^30, powers of two
  // What to tune: flat sizes, and axis classes of the rows and columns layouts
  // (--layouts). Axis classes are tuned for the float dtypes among `dtypes` and sum, min
  // and max among `ops` (mean is served by the sum's winners, as for flat sizes;
  // products along axes take the built-in choice).
  std::vector<AxisLayout> layouts = {AxisLayout::flat, AxisLayout::rows, AxisLayout::columns};
  // Axis classes by a shape in each, {R, outputs} (--axis-shapes 1000x4096,...); empty:
  // the default grid (default_axis_shapes()).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> axis_shapes;
  SearchKind search = SearchKind::local;
  Budget budget{48, 0};
  std::optional<std::string> db;     // --db PATH
  bool dry_run = false;              // print the space, touch nothing
  int dry_run_arch = 90;             // --arch for --dry-run without a GPU
  bool fresh = false;                // retune buckets that are already done
  bool keep_all_binaries = false;    // store every compiled kernel (else winners' and finalists' only)
  // After the axis classes: fill each untuned class one bucket from a tuned class of the
  // run's scope, timing the neighbours' winners and the built-in choice there (--no-fill
  // leaves them to the runtime's nearest-class fallback).
  bool fill_axis_neighbours = true;
  bool quiet = false;
  bool verbose = false;
  bool help = false;
  // Neither --ops nor --dtypes given: the default scope, which leaves out what would push
  // the default run past 12 minutes on an H200 (in_flat_scope, in_axis_scope). Named ops
  // and dtypes are tuned in full.
  bool default_scope = true;
};

// Whether (op, dtype) flat sizes and axis classes of dtype are tuned. Everything asked
// for is, except in the default scope: the 16-bit floats' products (f16 overflows past
// 65504 after a few dozen factors of 2) and their axis classes, which `--dtypes
// f16,bf16` (with --layouts rows,columns) tunes.
bool in_flat_scope(const TuneOptions& options, Op op, DType dtype);
bool in_axis_scope(const TuneOptions& options, DType dtype);

std::vector<std::uint64_t> default_sizes();
// The sizes the flat tuner tunes at, largest first: one per size bucket ([2^k, 2^(k+1))),
// the first of `sizes` in each (the CLI gives them in ascending order: the smallest),
// since a bucket holds one tuned result, measured at that size and checked across the
// bucket (interior_sizes). `dropped` receives the others.
std::vector<std::uint64_t> one_size_per_bucket(const std::vector<std::uint64_t>& sizes,
                                               std::vector<std::uint64_t>* dropped = nullptr);
// The default axis grid: R = 2^a and outputs = 2^b for odd a, b in 1..23 with
// 2^16 <= R * outputs <= 2^28 (a class with an odd bucket is then tuned or one bucket
// in one dimension from a tuned class; one with both buckets even takes the built-in
// choice).
std::vector<std::pair<std::uint64_t, std::uint64_t>> default_axis_shapes();

}  // namespace reduce_tune::tuner
