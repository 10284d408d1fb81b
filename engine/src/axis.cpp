#include "reduce_tune/engine/axis.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <charconv>
#include <initializer_list>
#include <map>
#include <sstream>

#include "reduce_tune/engine/kernel_sources.h"
#include "reduce_tune/engine/source_gen.h"
#include "reduce_tune/error.h"

namespace reduce_tune {

namespace {

// |stride| as unsigned (well defined for the most negative stride too).
std::uint64_t magnitude(std::int64_t stride) {
  return stride < 0 ? 0 - static_cast<std::uint64_t>(stride) : static_cast<std::uint64_t>(stride);
}

std::uint32_t pow2_ceil(std::uint64_t v) {
  std::uint32_t p = 1;
  while (p < v && p < (1u << 30)) p <<= 1;
  return p;
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

std::string config_text(const AxisKernelSpec& s) {
  std::ostringstream os;
  os << "rt::AxisConfig<" << op_type(s.op) << ", " << cuda_type_name(s.types.in) << ", "
     << cuda_type_name(s.types.acc) << ", " << cuda_type_name(s.types.out) << ", rt::axis_" << to_string(s.family)
     << ", " << s.block << ", " << s.group << ", " << s.vec << ", " << static_cast<int>(s.split) << ", "
     << s.rows_per_pass << ", " << s.unroll;
  // The template's defaults otherwise: the source of older specs.
  if (s.tail != 0 || s.ordered != 0 || s.occupancy != 0) os << ", " << s.tail;
  if (s.ordered != 0 || s.occupancy != 0) os << ", " << s.ordered;
  if (s.occupancy != 0) os << ", " << s.occupancy;
  os << ">";
  return os.str();
}

// Blocks per output along R so that a few long outputs still fill the GPU: about
// blocks_per_sm blocks per SM in all, each reading at least kMinSplitElements.
//
// General views (`balanced`) take, of the two counts nearest that (want / output_blocks
// rounded down and up), the one whose busiest SM has the least to read: a grid a few
// blocks past a whole number per SM leaves those few for a last round on their SMs. On an
// H200 (held, general rows of every other element, 2^25 in all, blocks of 256 at four
// per SM): 7 rows in 7 x 76 blocks (four SMs given five) took 77.5 us in f32 sums and
// 51.9 in f16, 8 rows in 8 x 66 65.1 and 36.9, 1 row in 528 66.0 and 37.5
// (`h200-2026-11-29at-probe-general-strided-*`). The count so chosen: 1.11 to 1.41 times
// faster over 7, 13 and 100 rows (f32 and f16 sums, bf16 means; the bench's times,
// `…-ab-final.log`). Other families keep the count rounded up: split columns so were
// 1.08 to 1.16 times faster (30001 x 3001, 94 blocks of outputs: 6 splits against 5,
// `…-ab-first-form.log`).
constexpr std::uint64_t kMinSplitElements = 4096;
std::uint64_t split_count(std::uint64_t output_blocks, std::uint64_t outputs_per_block, std::uint64_t reduced,
                          int sm_count, std::uint32_t blocks_per_sm, bool balanced) {
  const std::uint64_t sms = static_cast<std::uint64_t>(std::max(sm_count, 1));
  const std::uint64_t want = blocks_per_sm * sms;
  if (output_blocks >= want / 2) return 1;
  const std::uint64_t min_rows = ceil_div(kMinSplitElements, std::max<std::uint64_t>(outputs_per_block, 1));
  const std::uint64_t most = std::max<std::uint64_t>(1, reduced / min_rows);
  const std::uint64_t up = std::min(ceil_div(want, output_blocks), most);
  if (!balanced) return std::max<std::uint64_t>(1, up);
  const std::uint64_t down = std::max<std::uint64_t>(1, std::min(want / output_blocks, most));
  // The busiest SM's blocks, each 1/splits of an output: compare ceil(b*up/sms)/up with
  // ceil(b*down/sms)/down without division; the smaller count on a tie (fewer partials).
  const auto busiest = [&](std::uint64_t splits) { return ceil_div(output_blocks * splits, sms); };
  return busiest(down) * up <= busiest(up) * down ? down : up;
}
// rows_dense: the elements of one staged tile, and the longest row it takes (at least
// eight rows a tile).
constexpr std::uint64_t kRowsDenseTileBytes = 32768;
// rt::axis_columns_staged_kernel's static shared memory at most (the 48 KiB a kernel may
// hold statically).
constexpr std::uint64_t kColumnsStagedSharedBytes = 49152;
std::uint64_t rows_dense_tile_elements(const AxisKernelSpec& s) {
  return static_cast<std::uint64_t>(s.block) * s.unroll * s.vec;
}
std::uint64_t rows_dense_max_reduced(const AxisKernelSpec& s) { return rows_dense_tile_elements(s) / 8; }
// columns_staged is compiled to keep 1024 threads an SM resident (rt::axis_columns_staged_kernel).
constexpr std::uint64_t kColumnsStagedResidentThreads = 1024;
// Dense columns read a slice of at least this many bytes (builtin_axis_spec).
constexpr std::uint64_t kDenseSliceBytes = 16384;
// Up to this many outputs, the last block folds every partial itself (one launch).
constexpr std::uint64_t kTicketOutputs = 64;
// Dense columns split so that this many partials or fewer fold in the last block (one launch).
constexpr std::uint64_t kTicketPartials = 1536;
// Split columns fold in one launch (a ticket per group) over inputs of at most
// kColumnsFoldBytes where a group's fold (axis_columns_fold_trips) takes at most eight
// round trips to L2 (four for 8-byte partials, whose wider forms of the kernel measured
// slower: set AS) in at most four passes of the block over its tile (builtin_axis_choice).
constexpr std::uint64_t kColumnsFoldBytes = 1ull << 24;
// Whether split columns `s` (a ticket) fold in one launch over `shape` with `splits`.
bool columns_fold_in_one_launch(const AxisKernelSpec& s, const CanonicalAxes& shape, std::uint64_t splits) {
  const std::uint64_t bytes = shape.outputs * shape.reduced * size_of(s.types.in);
  const std::uint64_t most_trips = size_of(s.types.acc) > 4 ? 4 : 8;
  const std::uint64_t passes = axis_columns_fold_trips(s, 1);  // one trip a pass
  return bytes <= kColumnsFoldBytes && passes <= 4 && axis_columns_fold_trips(s, splits) <= most_trips;
}
// Columns of up to this many elements are not read as one dense run (see builtin_axis_spec),
constexpr std::uint64_t kShortColumnsElements = 1u << 20;
// except one slice whose split interleaves steps, from this many elements.
constexpr std::uint64_t kInterleavedColumnsElements = 1u << 17;
// Dense columns with four loads in flight over up to this many outputs a slice, split in
// tiles, interleave single steps (rt::dense_interleaves, kernel_templates/rt/axis.cuh).
constexpr std::uint64_t kDenseInterleavedInner = 16;
// Where the built-in choice splits dense columns of up to 16 outputs in interleaved steps
// (four loads in flight); elsewhere in tiles of eight steps (eight loads in flight).
// 4-byte elements at every size; 16-bit sums, products and means of up to 8 outputs below
// 2^22 elements. Interleaved, f16 sums of 7 outputs over 2^22 and 2^24 rows ran 0.92 to
// 0.95 times as fast on an H100, f16 sums of 16 outputs 0.97 on both GPUs, and f16 max
// of 16777216 x 7 74.7 against 62.1 us on an H200 (held). 8-byte elements at every size
// too (blocks of 256: builtin_axis_choice).
bool dense_interleaved_pays(Op op, const TypeRule& types, const CanonicalAxes& shape) {
  if (shape.inner > kDenseInterleavedInner) return false;
  if (size_of(types.in) == 4) return true;
  if (size_of(types.in) == 8) return true;
  return size_of(types.in) == 2 && op != Op::max && op != Op::min && shape.inner <= 8 &&
         shape.reduced * shape.inner < (1ull << 22);
}
bool axis_dense_interleaves(const AxisKernelSpec& s, const CanonicalAxes& shape) {
  return s.family == AxisFamily::columns_dense && s.unroll == 4 && shape.inner <= kDenseInterleavedInner;
}

// General shapes whose densest dimension (the smallest stride) is a kept one.
bool general_kept_densest(const CanonicalAxes& shape) {
  if (shape.reduced_rank == 0 || shape.kept_rank == 0) return false;
  const std::int64_t reduced = shape.reduced_strides[shape.reduced_rank - 1];  // sorted, positive
  for (int d = 0; d < shape.kept_rank; ++d) {
    if (magnitude(shape.kept_strides[d]) < static_cast<std::uint64_t>(reduced)) return true;
  }
  return false;
}

// The widest vector of the element type (16 bytes at most, 1 where none) for which
// fits(v) holds.
template <class Fits> std::uint32_t widest_vector(const TypeRule& types, Fits fits) {
  for (std::uint32_t v = static_cast<std::uint32_t>(16 / size_of(types.in)); v > 1; v /= 2)
    if (fits(static_cast<std::int64_t>(v))) return v;
  return 1;
}

// The general family's widest vector (rt::general_vectors): along the innermost reduced
// dimension where it is contiguous and it and every other reduced stride are multiples
// of the vector.
std::uint32_t general_vector_width(const TypeRule& types, const CanonicalAxes& shape) {
  if (shape.reduced_rank == 0) return 1;
  const int in = shape.reduced_rank - 1;
  return widest_vector(types, [&](std::int64_t v) {
    bool ok = shape.reduced_strides[in] == 1 && shape.reduced_extents[in] % v == 0;
    for (int d = 0; d < in; ++d) ok = ok && shape.reduced_strides[d] % v == 0;
    return ok;
  });
}

// General views whose innermost reduced dimension is a contiguous run of 2 to 4
// elements and whose innermost kept dimension steps by that run: the outputs' runs lie
// side by side ([n, m, e] reduced over (0, 2)).
bool general_interleaved_runs(const CanonicalAxes& shape) {
  if (shape.layout != AxisLayout::general || shape.reduced_rank < 1 || shape.kept_rank < 1) return false;
  const std::int64_t run = shape.reduced_extents[shape.reduced_rank - 1];
  return shape.reduced_strides[shape.reduced_rank - 1] == 1 && run >= 2 && run <= 4 &&
         shape.kept_strides[shape.kept_rank - 1] == run;
}

// With a kept dimension the densest, whether a shape's outputs lie on the grid of vectors
// of v adjacent outputs (rt::general_output_vectors' vector loads, the base aside): the
// innermost kept dimension contiguous, its extent and every other stride multiples of v.
bool general_outputs_on_vector_grid(const CanonicalAxes& shape, std::int64_t v) {
  if (shape.kept_rank == 0) return false;
  const int in = shape.kept_rank - 1;
  bool ok = shape.kept_strides[in] == 1 && shape.kept_extents[in] % v == 0;
  for (int d = 0; d < in; ++d) ok = ok && shape.kept_strides[d] % v == 0;
  for (int d = 0; d < shape.reduced_rank; ++d) ok = ok && shape.reduced_strides[d] % v == 0;
  return ok;
}

// The widest such vector.
std::uint32_t general_output_vector_width(const TypeRule& types, const CanonicalAxes& shape) {
  return widest_vector(types, [&](std::int64_t v) { return general_outputs_on_vector_grid(shape, v); });
}

}  // namespace

// rows_dense's shared-memory skew (rt::rows_dense_slot). A warp-wide access of shared
// memory takes, in each bank (4-byte word w in bank w % 32), one pass per distinct word
// its lanes touch there (lanes that read one word share it). 8-byte elements, two words
// each, are served a half-warp at a time: each half is counted and the sum halved, so
// that an access without conflicts counts 1 at every element size.
namespace {

double warp_access_passes(const std::int64_t (&q)[32], std::size_t size, std::uint32_t skew) {
  const int phases = size > 4 ? 2 : 1;
  const int lanes = 32 / phases;
  int total = 0;
  for (int phase = 0; phase < phases; ++phase) {
    std::uint64_t words[64];
    int n = 0;
    for (int l = phase * lanes; l < (phase + 1) * lanes; ++l) {
      if (q[l] < 0) continue;
      const std::uint64_t slot = static_cast<std::uint64_t>(q[l]) + (static_cast<std::uint64_t>(q[l]) >> 5) * skew;
      const std::uint64_t first = slot * size / 4;
      for (std::uint64_t w = first; w < first + (size > 4 ? 2 : 1); ++w) words[n++] = w;
    }
    if (n == 0) continue;
    // Distinct words, by bank: sorted by (bank, word), a pass for each new word of a bank.
    std::sort(words, words + n, [](std::uint64_t a, std::uint64_t b) {
      return (a % 32) != (b % 32) ? (a % 32) < (b % 32) : a < b;
    });
    int worst = 0, in_bank = 0;
    for (int i = 0; i < n; ++i) {
      if (i == 0 || words[i] % 32 != words[i - 1] % 32) {
        in_bank = 1;
      } else if (words[i] != words[i - 1]) {
        ++in_bank;
      }
      worst = std::max(worst, in_bank);
    }
    total += worst;
  }
  return static_cast<double>(total) / phases;
}

bool power_of_two_within(std::uint64_t x, std::uint64_t most) { return std::has_single_bit(x) && x <= most; }

int log2_of(std::uint64_t power_of_two) { return static_cast<int>(std::bit_width(power_of_two)) - 1; }

// Skews chosen so far, by element size (2, 4, 8 bytes), group and vector (powers of two
// up to 32 and 16) and R (up to an eighth of 32 KiB of 16-bit elements): 0 where not yet
// known. Filled on first use, racing threads storing the same value.
constexpr std::uint64_t kSkewCacheMaxReduced = kRowsDenseTileBytes / 2 / 8;
std::atomic<std::uint8_t> skew_cache[3][6][5][kSkewCacheMaxReduced + 1];

}  // namespace

double rows_dense_fold_passes(std::size_t element_size, std::uint32_t group, std::uint32_t vec,
                              std::uint64_t reduced, std::uint32_t skew) {
  if (!power_of_two_within(element_size, 8) || !power_of_two_within(group, 32) || !power_of_two_within(vec, 16) ||
      reduced < 1)
    throw Error("rows_dense_fold_passes: an element size of 1 to 8 bytes, a group of 1 to 32 lanes and a vector of "
                "1 to 16 elements, all powers of two, over rows of at least one element");
  // As rt::axis_rows_dense_kernel folds: warp w's lanes fold rows w * 32 / G + l / G, lane l
  // the row's elements l % G, l % G + G, ...; a tile starts m < vec elements past the
  // vector grid. Warps a multiple of G apart meet the same banks (32 rows further on,
  // every slot moves by the same amount), so the first min(G, 8) warps stand for all.
  const std::uint64_t steps = (reduced + group - 1) / group;
  const std::uint32_t warps = std::min<std::uint32_t>(group, 8);
  double total = 0;
  std::uint64_t accesses = 0;
  for (std::uint32_t m = 0; m < vec; ++m) {
    for (std::uint32_t w = 0; w < warps; ++w) {
      for (std::uint64_t step = 0; step < steps; ++step) {
        std::int64_t q[32];
        for (std::uint32_t l = 0; l < 32; ++l) {
          const std::uint64_t row = w * (32 / group) + l / group, e = l % group + group * step;
          q[l] = e < reduced ? static_cast<std::int64_t>(m + row * reduced + e) : -1;
        }
        total += warp_access_passes(q, element_size, skew);
        ++accesses;
      }
    }
  }
  return total / static_cast<double>(accesses);
}

// Measured on an H200 (set BM in docs/BENCHMARKS.md; f32 sum and max, the built-in
// choice: vectors of 4, a lane per row below R = 64, groups of 4 from 64):
// - where skew 3 took over, every shape of R = 33..128 over 131072 rows and of those R
//   over 1048576 ran 0.47 to 1.00 times as long as at skew 1 alone: R = 62 (16 passes a
//   read at skew 1, 2 at skew 3) 23.3 -> 12.2 us over 131072 rows, 124 (8 -> 2) 26.1 ->
//   20.6, 93 (7.9 -> 2.5) 20.9 -> 16.4, 108 (3.6 -> 2.0) 18.3 -> 18.4;
// - where skew 1's fold took 3 passes or fewer, skew 3 (in a kernel that chose it
//   itself) ran slower: R = 96 (2.0 -> 2.1 passes) 15.35 -> 16.10 us, 72 (3.0 -> 2.4)
//   11.69 -> 11.85, 104 (2.9 -> 2.0) 16.46 -> 16.79.
std::uint32_t rows_dense_skew(std::size_t element_size, std::uint32_t group, std::uint32_t vec,
                              std::uint64_t reduced) {
  const bool cached = (element_size == 2 || element_size == 4 || element_size == 8) &&
                      power_of_two_within(group, 32) && power_of_two_within(vec, 16) && reduced >= 1 &&
                      reduced <= kSkewCacheMaxReduced;
  std::atomic<std::uint8_t>* slot =
      cached ? &skew_cache[log2_of(element_size) - 1][log2_of(group)][log2_of(vec)][reduced] : nullptr;
  if (slot != nullptr) {
    if (const std::uint8_t known = slot->load(std::memory_order_relaxed); known != 0) return known;
  }
  const double at_one = rows_dense_fold_passes(element_size, group, vec, reduced, 1);
  const double at_three = rows_dense_fold_passes(element_size, group, vec, reduced, kRowsDenseMaxSkew);
  const std::uint32_t skew =
      at_one >= kRowsDenseSkewConflict && at_three <= at_one - 1 ? kRowsDenseMaxSkew : 1;
  if (slot != nullptr) slot->store(static_cast<std::uint8_t>(skew), std::memory_order_relaxed);
  return skew;
}

std::uint64_t columns_staged_width(const AxisKernelSpec& s) {
  return static_cast<std::uint64_t>(s.block) / std::max<std::uint32_t>(s.group, 1) * s.rows_per_pass;
}

ColumnsStagedTiles columns_staged_tiles(const AxisKernelSpec& s, std::uint64_t inner) {
  // As rt::axis_columns_staged_kernel cuts a slice: the fewest tiles of the widest width,
  // then each the same width, rounded up to a whole number of vectors.
  const std::uint64_t most = std::max<std::uint64_t>(columns_staged_width(s), 1);
  const std::uint64_t vec = std::max<std::uint32_t>(s.vec, 1);
  const std::uint64_t n = std::max<std::uint64_t>(inner, 1);
  ColumnsStagedTiles t;
  t.width = ceil_div(ceil_div(n, ceil_div(n, most)), vec) * vec;
  t.count = ceil_div(n, t.width);
  t.rows = std::max<std::uint64_t>(1, std::uint64_t{s.block} * s.unroll / (t.width / vec + 1));
  return t;
}

const char* to_string(AxisSplit split) {
  switch (split) {
    case AxisSplit::none: return "none";
    case AxisSplit::two_pass: return "two_pass";
    case AxisSplit::ticket: return "ticket";
    case AxisSplit::ticket_tiles: return "ticket_tiles";
  }
  return "?";
}

const char* to_string(AxisFamily family) {
  switch (family) {
    case AxisFamily::rows: return "rows";
    case AxisFamily::general: return "general";
    case AxisFamily::columns: return "columns";
    case AxisFamily::columns_dense: return "columns_dense";
    case AxisFamily::rows_dense: return "rows_dense";
    case AxisFamily::transpose: return "transpose";
    case AxisFamily::short_columns: return "short_columns";
    case AxisFamily::columns_staged: return "columns_staged";
    case AxisFamily::rows_packed: return "rows_packed";
    case AxisFamily::columns_folded: return "columns_folded";
  }
  return "?";
}

std::string to_string(const AxisKernelSpec& s) {
  std::ostringstream os;
  os << to_string(s.op) << "<" << to_string(s.types.in) << "->" << to_string(s.types.out) << "> " << to_string(s.family)
     << ":block=" << s.block << "," << (s.family == AxisFamily::columns ? "by=" : "group=") << s.group
     << ",vec=" << s.vec << ",split=" << to_string(s.split);
  if (s.rows_per_pass != 1) os << ",rows=" << s.rows_per_pass;
  if (s.unroll != 4) os << ",unroll=" << s.unroll;
  if (s.blocks_per_sm != 4) os << ",sm=" << s.blocks_per_sm;
  if (s.tail != 0) os << ",tail=" << s.tail;
  if (s.ordered != 0) os << ",ordered=" << s.ordered;
  if (s.occupancy != 0) os << ",occ=" << s.occupancy;
  return os.str();
}

std::uint64_t axis_spec_key(const AxisKernelSpec& s) {
  std::uint64_t k = static_cast<std::uint64_t>(s.op);
  k = k << 4 | static_cast<std::uint64_t>(s.types.in);
  k = k << 4 | static_cast<std::uint64_t>(s.types.out);
  k = k << 4 | static_cast<std::uint64_t>(s.types.acc);
  k = k << 4 | static_cast<std::uint64_t>(s.family);
  k = k << 11 | s.block;
  k = k << 11 | s.group;
  k = k << 5 | s.vec;
  k = k << 2 | static_cast<std::uint64_t>(s.split);
  k = k << 3 | s.rows_per_pass;
  k = k << 2 | (s.unroll == 8 ? 1u : s.unroll == 1 ? 2u : s.unroll == 2 ? 3u : 0u);
  k = k << 2 | (s.blocks_per_sm == 16 ? 2u : s.blocks_per_sm == 8 ? 1u : 0u);
  k = k << 1 | (s.tail != 0 ? 1u : 0u);
  k = k << 1 | (s.ordered != 0 ? 1u : 0u);
  k = k << 2 | (s.occupancy == 2048 ? 3u : s.occupancy == 1536 ? 2u : s.occupancy == 1024 ? 1u : 0u);
  return k;
}

std::string axis_spec_problem(const AxisKernelSpec& s) {
  if (s.block < 32 || s.block > 1024 || s.block % 32 != 0) return "block must be 32..1024, a multiple of 32";
  if (s.family == AxisFamily::columns_staged) {
    // rt::axis_columns_staged_kernel: block / group threads across the columns, rows
    // columns a thread; a tile of block x unroll 16-byte vectors (static shared memory,
    // with the fold of a column's threads beside it) holding at least four rows'
    // segments of the widest tile.
    if ((s.block & (s.block - 1)) != 0 || s.block < 64 || s.block > 512)
      return "columns_staged takes a block of 64, 128, 256 or 512";
    if (s.group != 1 && s.group != 2 && s.group != 4) return "columns_staged folds a column with 1, 2 or 4 threads";
    if (s.rows_per_pass != 1 && s.rows_per_pass != 2 && s.rows_per_pass != 4)
      return "columns_staged folds 1, 2 or 4 columns a thread";
    if (s.vec * size_of(s.types.in) != 16) return "columns_staged reads 16-byte vectors (vec = 16 / element size)";
    if (s.split != AxisSplit::none && s.split != AxisSplit::two_pass) return "columns_staged splits in two passes only";
    if (s.unroll != 4 && s.unroll != 8) return "unroll is 4 or 8";
    if (s.blocks_per_sm != 4 && s.blocks_per_sm != 8 && s.blocks_per_sm != 16) return "sm is 4, 8 or 16";
    if (s.split == AxisSplit::none && s.blocks_per_sm != 4) return "sm applies to split plans only";
    if (s.tail != 0 || s.occupancy != 0) return "columns_staged takes no tail or occ";
    if (s.ordered > 1) return "ordered is 0 or 1";
    const std::uint64_t slots = std::uint64_t{s.block} * s.unroll;
    const std::uint64_t fold = s.group > 1 ? std::uint64_t{s.block} * s.rows_per_pass * size_of(s.types.acc) : 0;
    if (slots * 16 + fold > kColumnsStagedSharedBytes)
      return "columns_staged stages at most 48 KiB (block x unroll x 16 bytes, and the fold of a column's threads)";
    if (slots < 4 * (columns_staged_width(s) / s.vec + 1))
      return "a columns_staged tile holds at least four rows (block x unroll >= 4 x (block / group x rows / vec + 1))";
    return {};
  }
  if (s.family == AxisFamily::rows_packed) {
    // rt::axis_rows_packed_kernel: whole 16-byte vectors, `unroll` chunks of rows a
    // thread a pass, nothing split.
    if (s.group != 1 || s.vec * size_of(s.types.in) != 16 || s.split != AxisSplit::none || s.rows_per_pass != 1 ||
        s.blocks_per_sm != 4 || s.tail != 0 || s.occupancy != 0)
      return "rows_packed takes group 1, vec = 16 / element size, split none, rows 1, sm 4, and no tail or occ";
    if (s.unroll != 1 && s.unroll != 2 && s.unroll != 4) return "rows_packed takes unroll 1, 2 or 4";
    return {};
  }
  if (s.group < 1 || s.group > s.block || s.block % s.group != 0) return "groups must tile the block";
  if (s.family == AxisFamily::rows || s.family == AxisFamily::general) {
    if (s.group > 32 && s.group != s.block) return "a group is a power of two within a warp, or the whole block";
  } else if ((s.family == AxisFamily::columns_dense || s.family == AxisFamily::columns_folded) && s.group != 1) {
    return s.family == AxisFamily::columns_dense ? "columns_dense takes group 1" : "columns_folded takes group 1";
  } else if (s.family == AxisFamily::rows_dense && s.group > 32) {
    return "rows_dense folds a row with at most 32 lanes";
  }
  if (s.family == AxisFamily::rows_dense && s.split != AxisSplit::none) return "rows_dense is never split";
  if (s.split == AxisSplit::ticket_tiles && s.family != AxisFamily::rows && s.family != AxisFamily::columns_dense &&
      s.family != AxisFamily::columns_folded)
    return "ticket_tiles splits rows, columns_dense and columns_folded only";
  // Its tile (block x unroll vectors, plus a 1/32 skew) is static shared memory.
  if (s.family == AxisFamily::rows_dense && rows_dense_tile_elements(s) * size_of(s.types.in) > kRowsDenseTileBytes)
    return "rows_dense stages at most 32 KiB a tile (block x unroll x vec x element size)";
  if ((s.group & (s.group - 1)) != 0) return "group must be a power of two";
  if (s.vec < 1 || (s.vec & (s.vec - 1)) != 0 || s.vec * size_of(s.types.in) > 16)
    return "vec must be a power of two of at most 16 bytes";
  // Columns of vectors: `rows` vectors a thread a pass (rt::axis_columns_kernel), unsplit.
  const bool column_vectors = s.family == AxisFamily::columns && s.vec != 1;
  if (column_vectors && s.rows_per_pass != 1 &&
      ((s.rows_per_pass != 2 && s.rows_per_pass != 4) || s.group != 1 || s.split != AxisSplit::none))
    return "columns of vectors take rows 1, or 2 or 4 vectors a pass with by=1 and split=none";
  if (s.unroll != 4 && s.unroll != 8 && !(s.family == AxisFamily::short_columns && (s.unroll == 1 || s.unroll == 2)))
    return "unroll is 4 or 8 (short_columns: 1, 2, 4 or 8)";
  if (s.blocks_per_sm != 4 && s.blocks_per_sm != 8 && s.blocks_per_sm != 16) return "sm is 4, 8 or 16";
  if (s.split == AxisSplit::none && s.blocks_per_sm != 4) return "sm applies to split plans only";
  if (s.rows_per_pass != 1 && !column_vectors &&
      (s.rows_per_pass != 4 || s.group > 32 || (s.family == AxisFamily::columns && s.group != 1) ||
       s.family == AxisFamily::columns_dense || s.family == AxisFamily::columns_folded ||
       s.family == AxisFamily::rows_dense))
    return "rows per pass is 1, or 4 for rows and general with groups within a warp and columns with by=1";
  if (s.tail > 1) return "tail is 0 or 1";
  if (s.tail == 1 &&
      ((s.family != AxisFamily::rows && s.family != AxisFamily::columns) || s.split == AxisSplit::ticket_tiles))
    return "tail=1 is for rows and columns, not split in tiles";
  if (s.ordered > 1) return "ordered is 0 or 1";
  if (s.occupancy != 0 && s.occupancy != 1024 && s.occupancy != 1536 && s.occupancy != 2048)
    return "occ is 0, 1024, 1536 or 2048";
  if (s.occupancy != 0 &&
      ((s.family != AxisFamily::columns && s.family != AxisFamily::short_columns) || s.occupancy % s.block != 0))
    return "occ applies to columns and short_columns, a multiple of the block";
  // A 32 x 32 tile, block / 32 of its rows a pass (axis_transpose_kernel).
  if (s.family == AxisFamily::transpose &&
      (s.group != 1 || s.vec != 1 || s.split != AxisSplit::none || s.rows_per_pass != 1 || s.tail != 0 ||
       s.ordered != 0 || (s.block & (s.block - 1)) != 0))
    return "transpose takes a block of a power of two, group 1, vec 1, split none, rows 1, and no tail or order";
  if (s.family == AxisFamily::short_columns &&
      (s.group != 1 || s.split != AxisSplit::none || s.rows_per_pass != 1 || s.tail != 0 || s.ordered != 0))
    return "short_columns takes group 1, split none, rows 1, and no tail or order";
  return {};
}

std::uint64_t rows_packed_rows(std::uint64_t reduced, std::size_t element_size) {
  const std::uint64_t bytes = reduced * element_size;  // as rt::rows_packed_rows
  return bytes % 16 == 0 ? 1 : bytes % 8 == 0 ? 2 : bytes % 4 == 0 ? 4 : bytes % 2 == 0 ? 8 : 16;
}

std::optional<FoldedColumns> axis_folded_columns(const CanonicalAxes& shape) {
  if (shape.layout != AxisLayout::general || shape.reads_nothing() || shape.reduced_rank != 2 || shape.kept_rank < 1 ||
      shape.kept_rank > 3)
    return std::nullopt;
  for (int d = 0; d < shape.kept_rank; ++d)
    if (shape.kept_strides[d] <= 0 || shape.kept_extents[d] < 2) return std::nullopt;
  for (int d = 0; d < 2; ++d)
    if (shape.reduced_strides[d] <= 0 || shape.reduced_extents[d] < 2) return std::nullopt;
  // The run of b folded inside a row is the reduced dimension of the smaller stride; the
  // other steps from row to row.
  const int in = shape.reduced_strides[0] < shape.reduced_strides[1] ? 0 : 1;
  FoldedColumns f;
  f.b = static_cast<std::uint64_t>(shape.reduced_extents[in]);
  f.rows = static_cast<std::uint64_t>(shape.reduced_extents[1 - in]);
  const std::uint64_t run_stride = static_cast<std::uint64_t>(shape.reduced_strides[in]);
  const std::uint64_t row_stride = static_cast<std::uint64_t>(shape.reduced_strides[1 - in]);
  // Each kept dimension's multiplier in the output's index (C order over the kept ones).
  std::uint64_t mul[kMaxRank] = {};
  std::uint64_t m = 1;
  for (int d = shape.kept_rank - 1; d >= 0; --d) {
    mul[d] = m;
    m *= static_cast<std::uint64_t>(shape.kept_extents[d]);
  }
  // A kept dimension of stride 1 inside the run (c), one just outside it (a): together
  // with the run they fill a row exactly. Any other kept dimension takes slices.
  int c_dim = -1, a_dim = -1, slice_dim = -1;
  for (int d = 0; d < shape.kept_rank; ++d)
    if (shape.kept_strides[d] == 1 && c_dim < 0) c_dim = d;
  f.c = c_dim >= 0 ? static_cast<std::uint64_t>(shape.kept_extents[c_dim]) : 1;
  if (run_stride != f.c) return std::nullopt;
  for (int d = 0; d < shape.kept_rank; ++d) {
    if (d == c_dim) continue;
    if (static_cast<std::uint64_t>(shape.kept_strides[d]) == f.b * f.c && a_dim < 0)
      a_dim = d;
    else if (slice_dim < 0)
      slice_dim = d;
    else
      return std::nullopt;
  }
  f.a = a_dim >= 0 ? static_cast<std::uint64_t>(shape.kept_extents[a_dim]) : 1;
  if (f.a == 1 && f.c == 1) return std::nullopt;  // a run of whole rows: the rows layout's
  if (f.width() > kFoldedColumnsMaxWidth || row_stride != f.width()) return std::nullopt;
  if (slice_dim >= 0) {
    f.slices = static_cast<std::uint64_t>(shape.kept_extents[slice_dim]);
    f.slice_stride = shape.kept_strides[slice_dim];
    f.out_slice = mul[slice_dim];
  }
  f.out_a = a_dim >= 0 ? mul[a_dim] : 0;
  f.out_c = c_dim >= 0 ? mul[c_dim] : 0;
  return f;
}

bool axis_copies(const CanonicalAxes& shape) {
  return shape.layout == AxisLayout::columns && shape.reduced == 1 && shape.inner_step == 1 && shape.outputs > 0 &&
         (shape.outputs == shape.inner || shape.outer_stride == static_cast<std::int64_t>(shape.inner));
}

namespace {

// Whether columns' vectors of `vec` adjacent outputs lie on their grid whatever the base
// (rt::axis_short_columns_kernel's on_grid but for the pointers): outputs adjacent, every
// row a multiple of `vec` apart, and one slice or slices of whole vectors.
bool short_columns_vectors_fit(const CanonicalAxes& shape, std::uint64_t vec) {
  return shape.layout == AxisLayout::columns && shape.inner_step == 1 &&
         static_cast<std::uint64_t>(shape.reduced_stride) % vec == 0 &&
         (shape.outputs <= shape.inner ||
          (shape.inner % vec == 0 && static_cast<std::uint64_t>(shape.outer_stride) % vec == 0));
}

}  // namespace

bool short_16bit_columns_pay(const TypeRule& types, const CanonicalAxes& shape, const void* in) {
  return size_of(types.in) == 2 && shape.reduced >= 2 && shape.reduced <= 4 && shape.outputs >= (1u << 21) &&
         short_columns_vectors_fit(shape, 8) && (in == nullptr || reinterpret_cast<std::uintptr_t>(in) % 16 == 0);
}

// Packed rows (rt::axis_rows_packed_kernel) against the built-in choice before them, on
// an H200 (set BU in docs/BENCHMARKS.md; paced, one binary, each side's kernel launched
// directly where the time is under 10 us):
// - 16-bit sums, max and means of 2^24 rows of 2 to 4 and 2^23 of 5 to 7: R = 2 and 3
//   1.78 to 2.13 times as fast (f16 sum of 2^24 x 2: 56.40 -> 26.44 us), R = 4 to 6 1.21
//   to 1.45, R = 7 1.03 to 1.16; but means over 4 0.99 (the quotient's power-of-two
//   path), which keep the rows kernel;
// - 4-byte sums, min, max and means of 2^24 rows of 2 and 3 and 2^23 of 6: 0.99 to 1.33
//   (R = 3 1.06 to 1.33), 2000001 rows of 2 1.22 to 1.40; of 5 0.99 to 1.01, which keep
//   the kernels before; of 4 (a vector a row, which rows_dense stages), not the choice;
// - 8-byte sums of rows of 2, 3, 4 and 6: 1.01 to 1.06; of 5, 0.98 and 0.99.
// Rows of 7 four- or eight-byte elements ran 0.91 to 0.92 times as fast packed (2^23
// rows), seven vectors a chunk a lane apart. Under 2^20 elements (1003 to 100003 rows;
// two rounds each, the lower taken) both kernels take 2.6 to 3.7 us, packed 0.94 to 1.24
// times as fast; from 2^20, 262147 and 300007 rows of the R it takes 0.96 to 1.38, and
// 1048577 rows of 3 and 2000001 of 2 1.01 to 2.54 (f16 sums 4.50 -> 2.79 and 7.40 ->
// 2.91 us): from 2^20. A base off the 16-byte grid leaves every row to the kernel's thread
// per row: not there.
// Nor rows of 8 (1.02 to 1.10 times as fast packed, f16 means 0.79): a tuned class of
// rows of 8 to 15 draws its candidates from its corner's choice, and packed rows fit
// rows of 8 alone.
bool rows_packed_pays(Op op, const TypeRule& types, const CanonicalAxes& shape, const void* in) {
  const std::uint64_t r = shape.reduced;
  const std::size_t es = size_of(types.in);
  if (shape.layout != AxisLayout::rows || shape.outer_stride != static_cast<std::int64_t>(r) || r < 2 ||
      r >= kRowsPackedMaxReduced || r * shape.outputs < (std::uint64_t{1} << 20))
    return false;
  if (in != nullptr && reinterpret_cast<std::uintptr_t>(in) % 16 != 0) return false;
  if (es == 2) return !(op == Op::mean && r == 4);
  if (es == 4) return r == 2 || r == 3 || r == 6;
  return r != 5 && r != 7;
}

bool axis_on_16byte_grid(const CanonicalAxes& shape, std::size_t element_bytes, const void* base) {
  if (element_bytes == 0) return false;
  const auto whole = [&](std::int64_t elements) {
    return (static_cast<std::uint64_t>(elements) * element_bytes) % 16 == 0;
  };
  if (base != nullptr &&
      (reinterpret_cast<std::uintptr_t>(base) + static_cast<std::uint64_t>(shape.base_offset) * element_bytes) % 16 != 0)
    return false;
  if (shape.layout == AxisLayout::rows)
    return whole(static_cast<std::int64_t>(shape.reduced)) && (shape.outputs <= 1 || whole(shape.outer_stride));
  if (shape.layout == AxisLayout::columns)
    return shape.inner_step == 1 && whole(static_cast<std::int64_t>(shape.inner)) && whole(shape.reduced_stride) &&
           (shape.outputs <= shape.inner || whole(shape.outer_stride));
  return false;
}

int axis_transpose_dim(const CanonicalAxes& shape) {
  if (shape.layout != AxisLayout::general || shape.reduced != 1 || shape.outputs == 0 || shape.kept_rank < 2)
    return -1;
  // As rt::transpose_dim finds it: the least stride of extent > 1, the innermost on a tie.
  int a = -1;
  for (int d = 0; d < shape.kept_rank; ++d)
    if (shape.kept_extents[d] > 1 && (a < 0 || magnitude(shape.kept_strides[d]) <= magnitude(shape.kept_strides[a])))
      a = d;
  const int b = shape.kept_rank - 1;
  if (a < 0 || a == b || shape.kept_extents[a] < kAxisTransposeMinExtent ||
      shape.kept_extents[b] < kAxisTransposeMinExtent)
    return -1;
  return a;
}

namespace {

// Loads in flight per thread of a columns walk that reads one output per thread with
// `group` threads across R, unsplit: eight where the threads resident per SM (outputs x
// group / SMs) are few enough that four leave the memory idle, 1750 for 16-bit elements
// and 1280 for 4-byte ones, and every thread reads at least 48 rows; four otherwise. On
// an H200 (f16 and f32 sums, R = 300 .. 30001 over 2049 .. 50001 outputs, off the
// 4-element grid, `..-2026-11-27ag-{configs,lanes,split}-*.log`), eight against four:
//   16-bit, 1024 .. 1697 threads per SM: 1.04 to 1.48 times faster (5001 x 8449: 42.1
//     against 29.5 us; 2049 x 40001, 8 threads across R: 69.5 against 50.3); 1818 and
//     1986: 1.01 to 1.10 times slower; R = 300 and 600 (19 to 38 rows a thread): up to
//     1.10 times slower.
//   4-byte, 993 .. 1241 threads per SM: 0.98 to 1.21 times faster (5001 x 8449: 51.6
//     against 42.6); 1489 .. 1986: up to 1.19 times slower.
// 8-byte elements were not measured: four.
std::uint32_t columns_walk_unroll(const TypeRule& types, const CanonicalAxes& shape, std::uint32_t group,
                                  std::uint64_t sms) {
  const std::size_t size = size_of(types.in);
  if (size > 4 || group < 2 || shape.reduced < 48ull * group) return 4;
  const std::uint64_t threads_per_sm = shape.outputs * group / sms;
  return threads_per_sm <= (size == 2 ? 1750u : 1280u) ? 8 : 4;
}

// Where the built-in choice reads folded columns (rt::axis_columns_folded_kernel) rather
// than as a general view: from 2^22 elements, 16 rows a slice. On an H200 (set BW in
// docs/BENCHMARKS.md, paced, the built-in choice before timed in the same call), from
// 2^22 elements 1.02 to 2.49 times as fast at six shapes, five of them in two calls (i64
// max of a permuted [2, 13, 2, 242197] over (0, 3) 63.28 -> 30.71 us, f32 max of [100003,
// 100, 3] over (0, 2) 94.72 -> 38.51, f32 sum of [65536, 16, 16] 27.37 -> 21.80, f16 sum
// of [65536, 32, 32] 40.08 -> 39.15). From 2^20 to 2^22 elements the time of its split
// in two kernels varied from call to call (one config and shape: 5.8 to 9.1 us, 4.8 back
// to back), 0.63 to 1.64 times the general kernels'; below 2^20, the general kernels,
// which launch once in fewer blocks, beat its best config at 5 of 8 shapes.
// Tried from 2^20 elements for 16-bit views, and not kept (set BX): against the general
// kernels in the same call (paced, two rounds alternating), 0.62 to 1.41 times their
// time at 19 such views, longer at 10 (f16 sum of [8192, 128, 2] over (0, 2) 11.40, 11.51
// -> 6.39, 7.74 us; of [70000, 5, 3] 6.20, 6.24 -> 8.75, 8.77). Nor one launch folding
// every split's partials in a two-level tree of tickets a slice (set BX): its best
// config took 0.92 to 1.48 times the two kernels' best config's time at 12 views from
// 2^20 to 2^22 elements, longer at 11.
bool folded_columns_pay(const FoldedColumns& f) {
  return f.rows >= 16 && f.slices * f.rows * f.width() >= (std::uint64_t{1} << 22);
}
// Elements a block of rt::axis_columns_folded_kernel reads a step: whole rows of `width`
// and whole vectors, as many as the block's threads hold.
std::uint64_t folded_columns_step(const AxisKernelSpec& s, std::uint64_t width) {
  std::uint64_t whole = std::max<std::uint64_t>(width, 1);
  while (whole % s.vec != 0) whole += width;
  return std::max<std::uint64_t>(1, std::uint64_t{s.block} * s.vec / whole) * whole;
}
// Up to this many partials, the last block of a split folded-columns launch folds them;
// past it a second kernel does (the built-in choice).
constexpr std::uint64_t kFoldedTicketPartials = 2048;

// The built-in choice but for its tail (builtin_axis_spec).
AxisKernelSpec builtin_axis_choice(Op op, const TypeRule& types, const CanonicalAxes& shape, int sm_count,
                                   AxisLaunchPlan* plan, const void* in) {
  AxisKernelSpec s;
  s.op = op;
  s.types = types;
  s.block = 256;
  const std::uint64_t r = shape.reduced;
  const std::uint64_t sms = static_cast<std::uint64_t>(std::max(sm_count, 1));
  std::uint64_t ticket_outputs = kTicketOutputs;  // up to this many outputs, a split folds in one launch
  bool off_grid_16bit = false;  // 16-bit columns that would take vectors of four outputs on the grid
  bool many_slices = false;     // slices of short columns read a thread per output (below)
  bool last_block_folds = false;  // 16-bit pairs or vectors of four split, the last block of each group folding
  if (short_16bit_columns_pay(types, shape, in)) {
    // 16-bit columns of R = 2 to 4 over 2^21 outputs and more, on the 16-byte grid: the
    // short_columns family, eight outputs a thread, every row's load in flight. On an
    // H200 (set BA in docs/BENCHMARKS.md, paced, the lower of two rounds), against the
    // columns kernel's built-in choice (four outputs a thread in blocks of 128, capped at
    // 1536 threads per SM for R = 2 and 3): R = 2 in blocks of 256, f16 sum 2 x 8388608
    // 19.87 -> 12.88 us, 2 x 2097152 5.85 -> 3.54, bf16 mean 2 x 8388608 23.23 -> 16.42;
    // R = 3 and 4 four rows a round in blocks of 128, f16 sum 3 x 16777216 39.98 -> 32.18,
    // 4 x 4194304 11.88 -> 10.84, bf16 mean 3 x 16777216 53.53 -> 40.93. In the probe
    // before it, R = 8 and 16 from 2% slower to 6% faster, views off the grid (scalar
    // loads) slower, the best config up to 1.86 times, 4-byte columns within 2% but at 2 x
    // 2097152 (4% faster), so not there.
    s.family = AxisFamily::short_columns;
    s.group = 1;
    s.vec = 8;
    s.block = r == 2 ? 256 : 128;
    s.unroll = r == 2 ? 2 : 4;
    if (plan) *plan = plan_axis_launch(s, shape, sm_count);
    return s;
  }
  if (axis_copies(shape)) {
    // Nothing reduced over one contiguous run: a converting copy, one 16-byte vector a
    // thread (rt::axis_short_columns_kernel), in blocks of 256. On an H200 (set BA in
    // docs/BENCHMARKS.md, paced), 2^24 outputs against the columns kernel's built-in
    // choice before: f32 sum 36.59 -> 33.62 us, max 40.60 -> 33.58, off the vector grid
    // (16777215) 42.81 -> 33.56; f16 sum 27.79 -> 17.41; bf16 mean 36.06 -> 19.91; f64 sum
    // 67.24 -> 65.10; i32 max 36.77 -> 33.51 (cudaMemcpyAsync of those f32 bytes 35.88 in
    // the same call). At 2^24 outputs blocks of 128 within 2% of 256, of 512 within 4%,
    // of 1024 up to 5% slower; an element a thread 1.10 (f64) to 2.67 (f16) times slower.
    s.family = AxisFamily::short_columns;
    s.group = 1;
    s.vec = static_cast<std::uint32_t>(16 / size_of(types.in));
    s.unroll = 1;
    if (plan) *plan = plan_axis_launch(s, shape, sm_count);
    return s;
  }
  switch (shape.layout) {
    case AxisLayout::columns: {
      // Dense only where there is enough to read to pay for it: up to 2^20 elements in
      // all, a thread per output with threads across R (below) measured 1.05 to 2.4 times
      // faster (H100, held, f32 sum and max, R = 64 .. 16385 over 2 .. 64 outputs of one
      // slice; f16 over 2 .. 7). 16-bit columns of more than 16 outputs over R > 1024
      // stay dense: f16 max of 33 and 64 outputs read 1.05 to 1.09 times faster so.
      // One slice of few outputs whose split interleaves steps: dense from 2^17 elements
      // and R = 2^15 (16-bit: R = 2^16). The built-in choice before and after, two
      // alternating rounds on one machine (sum and max; docs/BENCHMARKS.md, sets R and S):
      // f32 sum 65537 x 7 7.57 -> 5.71 us on an H200 and 7.84 -> 6.01 on an H100, max
      // 65536 x 2 7.68 -> 4.99 and 7.76 -> 5.40; f16 sum 65537 x 3 7.43 -> 5.75 and
      // 7.74 -> 6.00. Below R = 2^15, 18725 x 7 and 16384 x 16 f32 ran 0.93 to 0.97 times
      // as fast so on the H100, 16-bit 32769 x 7 0.94 to 0.97 on both.
      const bool few_interleaved = shape.outputs == shape.inner && dense_interleaved_pays(op, types, shape) &&
                                   r * shape.outputs >= kInterleavedColumnsElements &&
                                   r >= (size_of(types.in) == 4 ? (1u << 15) : (1u << 16));
      const bool short_run = r * shape.outputs <= kShortColumnsElements && !few_interleaved &&
                             (size_of(types.in) >= 4 || shape.inner <= 16 || r <= 1024);
      // Up to 256 outputs over R >= 2^17, or rows of 240 bytes and more over R >= 2^16
      // (elements of 4 bytes and less, those measured; 8-byte ones from R = 2^20). Over
      // 65 .. 256 outputs the columns program reads a warp's 32 outputs of each row and
      // folds many splits. Held device times and A/Bs of the built-in choice before and
      // this (sum and max; docs/BENCHMARKS.md, sets P and Q): on an H200, R = 2^18 + 1 and
      // 2^19 + 1, f32 1.05 to 1.98 times faster (524289 x 200 max: 110.3 against 218.4
      // us), f16 1.41 to 4.83 (524289 x 200 max: 63.5 against 306.6); R = 131073 ..
      // 196609, f16 and bf16 over 65 .. 127 outputs, 1.31 to 2.50 on the H200 and 1.22 to
      // 2.11 on an H100; R = 65537, f32 1.04 to 1.39, 16-bit rows of 127 outputs 1.06 to
      // 1.62 on both GPUs, of 120 (240 bytes) 1.31 to 1.42 for sum and 0.96 to 1.01 for
      // max, of 65 .. 101 0.90 to 1.43 (max 0.90 to 0.95 on the H200); R <= 32769 mostly
      // slower (0.73 to 1.28).
      const bool measured_elements = size_of(types.in) <= 4;
      const std::uint64_t row_bytes = shape.inner * size_of(types.in);
      // 8-byte elements over 65 .. 200 outputs from R = 2^18 too (H200, held, i64 max and
      // min, f64 sum, in blocks of 512: 262144 x 100 82.2 -> 68.9 us, 524288 x 131 197.3
      // -> 158.4, 327680 x 131 125.8 -> 107.6, f64 sum 262144 x 131 99.9 -> 89.3; 256
      // outputs 156.3 -> 166.5, R = 2^17 over 100 39.7 -> 44.0, so not there).
      const bool wide_dense =
          shape.inner <= 256 &&
          (r >= (1u << 20) || (measured_elements && (r >= (1u << 17) || (r >= (1u << 16) && row_bytes >= 240))) ||
           (size_of(types.in) == 8 && shape.inner <= 200 && r >= (1u << 18)));
      // A block reads one slice at a time, folding it through shared memory: slices of
      // less than 16 KiB leave that fold, not the reads, to set the pace. On an H200
      // (sums), the built-in choice before and after: bf16 [30000, 65, 3] along 1 115.0
      // -> 7.5 us, bf16 [2049*13, 67, 7] along 1 117.6 -> 12.5, f32 84.6 -> 18.2; slices
      // of 58 and 66 KiB read faster dense (bf16 [512, 1000, 33]: 12.2 us, the columns
      // configs tried 18.2 and more).
      const bool dense_slices = r * shape.inner * size_of(types.in) >= kDenseSliceBytes;
      if (shape.inner_step == 1 && shape.reduced_stride == static_cast<std::int64_t>(shape.inner) &&
          !short_run && dense_slices && ((shape.inner <= 64 && r >= 64) || wide_dense)) {
        // Eight slices and more over R <= 2^14, too few for a block each at four blocks
        // per SM (the dense plan splits them): a thread per output in blocks of 256, 8
        // threads across R, four loads in flight, split. On an H200 (held, sums, [slices,
        // R, inner] along 1, `h200-2026-11-29at-probe-slices-*`), dense against this: f16
        // [256,1921,15] 19.3 against 7.8 us, [64,1921,15] 10.6 against 4.8, [64,8191,15]
        // 14.8 against 8.2, [8,16384,15] 8.8 against 5.1, [64,1921,64] 14.3 against 10.9;
        // f32 1.17 to 1.68 times slower dense. With eight loads in flight, as the rule for
        // many split outputs below would give, the f16 sum of [64,1921,64] took 17.0 us
        // (the bench's time of the built-in choice; 10.9 with four). One slice, R past
        // 2^14, or 8-byte elements (not measured), stay dense.
        const std::uint64_t slices = shape.outputs / shape.inner;
        if (slices >= 8 && slices < 2 * sms && r <= (1u << 14) && size_of(types.in) <= 4) {
          many_slices = true;
          s.family = AxisFamily::columns;
          s.block = 256;
          s.group = 8;
          s.vec = 1;
          s.unroll = 4;
          break;
        }
        // Narrow contiguous rows: the block reads them as one run, in 16-byte vectors
        // (up to 256 of them over a million rows and more: on an H100, f32 and f16 with
        // 97 to 193 outputs over 1.5M rows, the fastest config or within 8% of it).
        s.family = AxisFamily::columns_dense;
        s.group = 1;
        s.vec = static_cast<std::uint32_t>(16 / size_of(types.in));
        // 8-byte elements in blocks of 512 for min and max, and over more than 64 outputs
        // (H200, held, against blocks of 256: i64 max 1048576 x 9 32.3 -> 27.6 us, 100000
        // x 41 24.8 -> 21.8, 300000 x 17 22.8 -> 21.4, 131072 x 64 36.8 -> 29.0, i64 min
        // alike). f64 sums of 9 and 41 outputs read 1.08 to 1.10 times slower so. (Those
        // were contiguous splits, the last block folding; split over up to 64 outputs,
        // blocks of 256 in other forms now: builtin_axis_choice.)
        if (size_of(types.in) == 8 && (op == Op::min || op == Op::max || shape.inner > 64)) s.block = 512;
        break;
      }
      s.family = AxisFamily::columns;
      const std::uint64_t threads_wanted = 1024ull * sms;
      // 16-bit elements: four adjacent outputs per thread (8-byte loads on the grid, four
      // scalar loads from one address off it: the program's twin) where the outputs
      // leave at least 256 threads per SM, or where R is long enough to be split across
      // blocks anyway. Measured on an H100 (f16 sums, on the grid): 1.1 to 1.2 times
      // faster from 2^18 outputs (R = 4 .. 4096), 2.6 times slower with 2^14 (R = 64 ..
      // 512); 1.1 to 1.8 times faster at R = 2^16 with 512 and 769 outputs, slower with
      // 64. Off the grid, on an H200 (f16 sum and max, R = 3 .. 1000 over 2^18 + 1 ..
      // 2^24 - 1 outputs): 1.07 to 1.38 times faster than a thread per output, except
      // R = 100 over 2^18 + 1 (0.99 times).
      //
      // Off the 4-element grid (rows of a number of outputs that 4 does not divide), only
      // below R = 32: from there a thread per output reads faster wherever the vectors'
      // scalar loads do not happen to suit the rows' alignment. On an H200 (f16 sums,
      // the built-in choice against the thread-per-output configs tried): outputs of 3
      // mod 4 1.16 to 1.40 times faster so (100 x 1048575 64.5 against 90.5 us, 257 x
      // 262143 43.1 against 52.2, 1000 x 262143 161.8 against 193.0, 127 x 2097151 163.3
      // against 189.1), 1 mod 4 1.04 to 1.08 times slower (100 x 1048577 64.4 against
      // 61.8, 1000 x 262145 161.8 against 149.7); at R = 33 the same (33 x 4194303, 89.0
      // against 89.6). The grid of the benchmarks held only 2^k + 1 outputs (1 mod 4),
      // where the rules below were first measured.
      // Stepped columns (inner_step > 1) are on no grid: each output is read by itself.
      const bool unit = shape.inner_step == 1;
      const bool on_grid =
          unit && shape.inner % 4 == 0 && shape.reduced_stride % 4 == 0 && shape.outer_stride % 4 == 0;
      const bool on_grid2 =
          unit && shape.inner % 2 == 0 && shape.reduced_stride % 2 == 0 && shape.outer_stride % 2 == 0;
      const bool wants_16bit_vectors =
          size_of(types.in) == 2 && (shape.outputs >= threads_wanted || (r >= (1u << 16) && shape.outputs >= 512));
      // Not from 8 up to 31 outputs per SM over R >= 8192, where two outputs a thread read
      // faster (the pairs rule below). On an H200, paced: set BP from 16 per SM (f16 sum
      // 65537 x 3500 162.4 -> 120.4 us, torch 134.7); set BQ from 8 (f16 and bf16 sums,
      // f16 max, bf16 mean of R = 65537 .. 262145 over 1056 .. 1900 outputs, against four
      // outputs a thread in blocks of 256 with four loads in flight: 1.03 to 1.42 times as
      // fast, f16 sum 65537 x 1056 53.3 -> 39.6 us, 262145 x 1800 323.6 -> 245.5, torch.sum
      // 278.4). The vectors read fastest where the outputs fill their tiles of 128 and
      // slowest just past a whole number of tiles (1056 and 1800 outputs: 8.25 and 14.06);
      // at 1500 (11.7 tiles) pairs read 0.93 to 0.96 times as fast as they did in set BP's
      // probe, 0.95 to 1.01 in set BQ's A/Bs.
      const bool pairs_band = on_grid2 && r >= 8192 && shape.outputs >= 8 * sms && shape.outputs < 31 * sms;
      if (wants_16bit_vectors && unit && (on_grid || r < 32) && !pairs_band) s.vec = 4;
      off_grid_16bit = wants_16bit_vectors && s.vec == 1;
      // 16-bit columns on the 2-element grid but off the 4-element one (outputs and
      // strides of 2 mod 4), R >= 32: two adjacent outputs a thread, one 4-byte load a
      // row, eight loads in flight. Over many outputs a thread walks R alone in blocks of
      // 256; over R >= 1000 and 64 outputs per SM up to the many, blocks of 512 with 16
      // threads across R, unsplit (four loads in flight over the most of those). Not
      // where the base is known to lie off the 4-byte grid (the twin: two scalar loads a
      // row). On an H200 (set BB in docs/BENCHMARKS.md: f16 sums and bf16 max, paced, the
      // lower of two rounds), against a thread per output, the choice before: 1.10 to 1.28
      // times faster over many outputs (f16 sums: 33 x 4194302 90.1 -> 77.1 us, 100 x
      // 1048578 64.9 -> 57.8, 257 x 262142 43.3 -> 34.7, 1000 x 262146 161.4 -> 127.3),
      // 1.02 to 1.28 over fewer (4097 x 16386 43.2 -> 34.4, 8191 x 16382 83.7 -> 66.1,
      // 2049 x 30002 41.0 -> 32.2, 1000 x 16386 12.4 -> 10.1, 1000 x 8450 7.7 -> 7.6,
      // 1000 x 65538 42.5 -> 40.2 with the batched tail, 38.1 without it). Below R = 32
      // the twin's vectors of four read faster (3 x 4194306: 12.1 against 19.4 us with
      // pairs; 31 x 1048578 21.8 against 22.9), and so did a thread per output, 4 across
      // R, over 600 x 40002 (16.9 against 17.5).
      const bool pairs_on_grid =
          on_grid2 && !on_grid && (in == nullptr || reinterpret_cast<std::uintptr_t>(in) % 4 == 0);
      if (size_of(types.in) == 2 && pairs_on_grid && r >= 32 &&
          (shape.outputs >= threads_wanted || (r >= 1000 && shape.outputs >= 64 * sms))) {
        s.vec = 2;
        s.split = AxisSplit::none;
        s.unroll = 8;
        if (shape.outputs >= threads_wanted) {
          s.block = 256;
          s.group = 1;
        } else {
          // Four loads in flight where the threads resident per SM are many (as
          // columns_walk_unroll counts them, in pairs): 2049 x 30002 32.2 us with four,
          // 36.7 with eight; 1000 x 16386 12.6 and 11.0.
          s.block = 512;
          s.group = 16;
          if (ceil_div(shape.outputs, 2) * s.group / sms > 1750) s.unroll = 4;
        }
        if (plan) *plan = plan_axis_launch(s, shape, sm_count);
        return s;
      }
      // 16-bit columns off the 4-element grid, one slice (revision 37): the twin's funnel
      // (rt::columns_funnel_rows) reads each row as the aligned vectors that hold it, a
      // lane taking the outputs below its vector from its lower neighbour's. It needs
      // threads across R whose rows span whole vectors (every count here is a multiple
      // of 4), warps within a row of threads and rows in increasing address order. From R
      // = 255 where blocks of 128 with 4 threads across R (four outputs a thread, four
      // loads in flight, unsplit) fill 7/8 of a wave at 8 an SM. On an H200 (set CF in
      // docs/BENCHMARKS.md, r1920: f16 sum and max, bf16 sum and mean, configs forced
      // beside main's built-in choice), against a thread per output: R = 255 to 300 1.08
      // to 1.14 times as fast (f16 sum 256 x 524291 83.6 -> 74.9 us), 1000 x 262145 and
      // 1000 x 131071 1.13 to 1.18 (156.8 -> 132.9); R = 100 and 127 0.99 to 1.03, R = 64
      // 0.96 to 1.00, R = 32 0.84 to 0.91. Over the shapes it takes, eight outputs a thread
      // (16-byte vectors, blocks of 256) read 0.57 to 0.94 times as fast (f16 max the
      // slowest), eight loads in flight 0.91 to 1.13. The rule against the choice before
      // (r1921, 15 shapes here and below): 1.10 to 1.22 times as fast. Fewer outputs take
      // the vectors' rule below.
      const bool funnel_fits =
          size_of(types.in) == 2 && unit && !on_grid && shape.outputs <= shape.inner && shape.reduced_stride > 0;
      if (funnel_fits && r >= 255 && ceil_div(shape.outputs, 4) >= 224ull * sms) {
        s.vec = 4;
        s.block = 128;
        s.group = 4;
        s.unroll = 4;
        s.split = AxisSplit::none;
        if (plan) *plan = plan_axis_launch(s, shape, sm_count);
        return s;
      }
      // 4-byte elements over short columns (R <= 128) of many outputs on the 16-byte
      // grid: four adjacent outputs per thread, one 16-byte load per row and one vector
      // store of the results. Tuned on an H100 and an H200 (f32 sums and max, R = 2 ..
      // 97 over 2^18 .. 2^24 outputs): the fastest configs, R = 3 x 2^24 in 94.5 against
      // 106.8 us (H100) and 71.3 against 92.1 us (H200); off the grid (rows of an odd
      // number of outputs: scalar loads) 1 to 4% slower than a thread per output, so not there.
      if (size_of(types.in) == 4 && r <= 128 && on_grid && shape.outputs >= threads_wanted) s.vec = 4;
      // Off the grid too where R = 2 or 3 over 2^21 outputs and more: the twin's vectors
      // with registers capped (occupancy_that_pays) read them faster than a thread per
      // output, four a pass, at every count of outputs mod 4. H200, paced, the lower of
      // two rounds (set AZ, `…-az-off-grid-probe-*.log`): f32 sum and max, i32 sum 1.13 to
      // 1.31 times faster (f32 sum 2 x 2097153 8.65 -> 7.50 us, 2 x 8388611 32.11 ->
      // 27.72, 3 x 4194303 22.63 -> 17.98, 3 x 16777215 82.93 -> 64.76; max 3 x 16777215
      // 84.93 -> 64.93); uncapped 0.98 to 1.23. Not over slices narrower than 256
      // outputs, where a vector that crosses a slice's end reads each output alone: f32
      // sum of [1000000,3,5] along 1 37.5 us so, 25.8 four outputs a thread a pass (H200,
      // paced, set BS). The bound of 256 lies between slices of 5 and single slices of
      // 2^21 and more; no width between was measured.
      if (size_of(types.in) == 4 && r >= 2 && r <= 3 && unit && !on_grid && shape.inner >= 256 &&
          shape.outputs >= (1u << 21))
        s.vec = 4;
      // Wider elements: a 16-byte vector of adjacent outputs per thread, in blocks of
      // 128, where R is long and split across blocks over more than 256 outputs (fewer
      // than two blocks' worth per SM at 32 outputs a block). Tuned on an H200 (f32
      // sums): from R = 2^16 over 512 and 769 outputs the fastest configs, 1.1 times
      // faster than a thread per output.
      // 4-byte elements, R > 512 over many outputs (too many to split R): a 16-byte
      // vector of adjacent outputs per thread, unsplit, with as many threads across R as
      // keep about 1024 threads per SM busy (8 to 32; blocks of 512, or 1024 at 32).
      // Measured on an H100 (f32 sums, R = 1000 and 4097 over 16385 .. 262145 outputs,
      // off the vector grid, so the program's twin): 1.02 to 1.08 times faster than a
      // thread per output, 1000 x 262145 in 356.9 against 386.2 us, 4097 x 16385 92.4
      // against 97.8.
      // 16-bit elements likewise (four adjacent outputs, 8-byte loads) from 64 outputs
      // per SM up to the many outputs that the 16-bit rule above serves, on the 4-element
      // grid or over fewer than 2^15 outputs. Built-in choice before and after (f16 sums):
      // 0.66 to 1.00 times the time over 513 .. 16385 x 9000 .. 100000 on an H200 (16385
      // x 9000: 88.7 against 133.9 us; 4097 x 16385, off the grid, 38.9 against 43.5),
      // 0.78 to 1.00 on an H100; off the grid over 131071 outputs 1.35 times slower on the
      // H200 (1000 x 131071).
      // Both only on the 4-element grid. Off it (the program's twin: four scalar loads from
      // one address a row) the outputs' count mod 4 decides, and a thread per output is
      // the choice that holds for every count. On an H200, the built-in choice against the
      // thread-per-output configs tried: outputs of 3 mod 4 1.16 to 1.68 times slower with
      // the twin (f32 sums: 4097 x 16383 100.7 against 66.4 us, 1001 x 65535 83.9 against
      // 64.0, 2047 x 65535 169.6 against 128.6, 8191 x 32767 307.3 against 264.8; f16 4097
      // x 16383 70.2 against 42.6, 8191 x 16383 139.2 against 82.8), so slower than
      // torch.sum at twelve odd shapes (f32 0.83 to 1.00 times, f16 0.70 to 0.96); 1 and 2
      // mod 4 up to 1.05 (f32) and 1.12 (f16) times faster with it (4097 x 16385: 63.3
      // against 65.9 and 37.8 against 42.4), except 8191 x 32765 (1.10 and 1.25 times
      // slower).
      const std::uint64_t columns = ceil_div(shape.outputs, 4);
      std::uint32_t vectors_by = 8;
      while (vectors_by < 32 && columns * vectors_by * 2 <= threads_wanted) vectors_by *= 2;
      // Off that grid too for 16-bit columns of one slice (revision 37: the twin's funnel,
      // above, four loads in flight) where the blocks fill most of a wave: 16 threads
      // across R in blocks of 512 (two an SM) from R = 2048, or 32 in blocks of 1024 (one an
      // SM) from R = 4096. On an H200 (set CF, r1920, as above), against a thread per
      // output: by 16, 2049 x 30003, 3001 x 31001, 4001 x 32001, 5001 x 30001 and 8191 x
      // 32767 (0.89 to 0.97 waves) 1.10 to 1.22 times as fast (f16 sum 8191 x 32767 162.4
      // -> 134.2 us), 5001 x 20479 (0.61) 0.75 to 0.86; by 32, 4097 x 16385 (0.98 waves)
      // 1.10 to 1.13, 12345 x 9999 (0.60) 0.87 to 0.93, 1000 x 16385 0.93 to 0.99; where
      // they take 8 (2049 x 50001) no funnel config above 0.99.
      const std::uint64_t funnel_blocks = ceil_div(columns, (vectors_by == 32 ? 1024u : 512u) / vectors_by);
      const bool funnel_vectors =
          funnel_fits && ((vectors_by == 16 && r >= 2048 && 4 * funnel_blocks >= 7ull * sms) ||
                          (vectors_by == 32 && r >= 4096 && 10 * funnel_blocks >= 9ull * sms));
      if ((on_grid || funnel_vectors) &&
          (size_of(types.in) == 4 || (size_of(types.in) == 2 && shape.outputs < threads_wanted)) && r > 512 &&
          shape.outputs >= 64 * sms) {
        s.vec = 4;
        s.group = vectors_by;
        s.block = vectors_by == 32 ? 1024 : 512;
        s.split = AxisSplit::none;
        // 16-bit vectors (8-byte loads) on the grid from R = 4096: eight loads in flight
        // (the funnel off it: four, above). On an H200
        // (set BP, paced; R = 4097 .. 30001 over 8448 .. 16384 outputs), against four: f16
        // sums and bf16 max 1.03 to 1.24 times as fast (f16 sum 30001 x 8448 146.5 ->
        // 118.8 us, torch.sum 132.5).
        if (size_of(types.in) == 2 && r >= 4096 && on_grid) s.unroll = 8;
        if (plan) *plan = plan_axis_launch(s, shape, sm_count);
        return s;
      }
      // 16-bit elements on the 4-element grid (rows and base on the 8-byte grid): four
      // adjacent outputs a thread (8-byte loads) in blocks of 128 with 4 threads across R,
      // eight loads in flight, split,
      // - from R = 16384 over 31 to 64 outputs per SM, and from R = 2^16 over 16 to 31
      //   where a group's fold takes at most 7 round trips (about 2400 outputs): the last
      //   block of each group folds;
      // - from R = 2^16 over 512 outputs up to 8 per SM: a second kernel folds.
      // On an H200 (set BQ, paced; f16 and bf16 sums, f16 max, bf16 mean), against two
      // outputs a thread in blocks of 256 (the pairs rules below) and, below 8 per SM, four
      // in blocks of 256 with four loads in flight (the A/B of the built-in choice before and
      // after, 230 columns shapes): over 31 to 64 per SM 1.01 to 1.18 times as fast (f16
      // sum 65537 x 5000 184.6 -> 159.4 us, torch.sum 179.1; 100003 x 5000 277.2 -> 242.4 in
      // a probe), 0.96 to 0.99 at 60 (65537 x 8000, 30001 x 8000); over 16 to 31 0.98 to
      // 1.17 (200000 x 3400 389.6 -> 333.3, 100003 x 3000 165.4 -> 150.3), but at 9 round
      // trips 0.92 in a probe (65537 x 2112: 74.6 against 68.6 us); below 8 per SM 0.97 to
      // 1.43 (1048577 x 600 442.0 -> 309.6; 1048577 x 512 243.2 -> 247.3). Below R = 16384
      // two outputs a thread read as fast or faster (12345 x 4096: 29.2 against 28.0 us
      // with pairs folded by the last block), and over 16 to 31 per SM below R = 2^16 as
      // fast (30001 x 3000: 49.9 and 50.2). Off the 8-byte grid these vectors' twin reads
      // scalars (about twice as slow as pairs): not there.
      const bool quads_fit = size_of(types.in) == 2 && on_grid &&
                             (in == nullptr || reinterpret_cast<std::uintptr_t>(in) % 8 == 0);
      if (quads_fit && r >= 16384 && shape.outputs >= 16 * sms && shape.outputs < 64 * sms) {
        AxisKernelSpec t = s;
        t.vec = 4;
        t.block = 128;
        t.group = 4;
        t.unroll = 8;
        t.split = AxisSplit::ticket;
        const std::uint64_t trips = axis_columns_fold_trips(t, plan_axis_launch(t, shape, sm_count).splits);
        if (shape.outputs >= 31 * sms || (r >= (1u << 16) && trips <= 7)) {
          s = t;  // split below, the last block folding
          last_block_folds = true;
          break;
        }
      }
      if (quads_fit && r >= (1u << 16) && shape.outputs >= 512 && shape.outputs < 8 * sms) {
        s.vec = 4;
        s.block = 128;
        s.group = 4;
        s.unroll = 8;
        break;
      }
      // Few outputs over a long R (257 outputs up to 8 per SM, R >= 8192; elements of 2
      // bytes, and of 4 off the 4-element grid): blocks of 256 with 8 threads across R, split
      // in two passes, eight loads in flight, two adjacent outputs a thread on the
      // 2-element grid. On an H200 (sums, R = 12345 .. 65537 over 300 .. 900 outputs,
      // `..-2026-11-27ah-few-configs-*.log`), against the choice before (16-bit: a thread per
      // output, four loads in flight; f32: four outputs a thread in blocks of 128): f16 on
      // the 2-element grid 1.37 to 2.67 times faster (65537 x 500: 56.8 against 21.3 us,
      // torch.sum 74.6), of an odd count 1.54 and 1.69 (32768 x 757: 42.9 against 27.8,
      // torch 24.4); f32 27344 x 462 26.1 against 17.2 us, 32768 x 757 40.8 against 34.6
      // and 37217 x 669 43.3 against 34.6. f32 on the 4-element grid keeps its vectors of
      // four (within 7% of the fastest config there), and 16-bit ones from R = 2^16 over
      // 512 outputs and more their four outputs a thread (above; not measured against these).
      //
      // Min and max off the 2-element grid (a thread per output): four loads in flight at
      // eight blocks per SM. On an H200 (held device times, `..-2026-11-27aj-probe*.log`):
      // 32768 x 757 and every other row of it bf16 max 33.87 -> 23.47 us, f32 max 39.98 ->
      // 31.98; over R = 8192 .. 65537 and 333 .. 1001 outputs (shapes the rule was not made
      // from) bf16 max 0.93 to 1.52 times as fast (65537 x 999: 77.13 -> 50.75), f32 max 0.94
      // to 1.27. Sums so: 0.86 to 1.33 (f16 32768 x 757 27.70 -> 22.29, f32 16385 x 601
      // 16.71 -> 19.51), not taken. On the grid (two outputs a thread) eight blocks per SM
      // were 1.07 to 1.19 times slower (f16 sum and bf16 max, 520 .. 1000 outputs).
      //
      // 16-bit pairs on the 2-element grid so from 8 up to 31 outputs per SM too (where the
      // band of 31 to 64 below takes over), uncapped, the last block of each group folding
      // up to 384 MiB. On an H200 (set BP, paced; R = 8193 .. 100003 over 1058 .. 4090
      // outputs), against a thread per output split and capped (capped_split_columns):
      // with a second kernel 0.91 to 1.25 times as fast (f16 sum 65537 x 3002 127.8 ->
      // 110.2 us, torch.sum 109.7), with the fold 1.01 to 1.18 times as fast as that up to
      // 384 MiB, 0.97 to 0.98 past it (100003 x 3002: 164.3 -> 167.7).
      const bool pairs_few = size_of(types.in) == 2 && on_grid2 && shape.outputs < 31 * sms;
      if (s.vec == 1 && (size_of(types.in) == 2 || (size_of(types.in) == 4 && !on_grid)) && r >= 8192 &&
          shape.outputs > 256 && (shape.outputs < 8 * sms || pairs_few)) {
        last_block_folds = pairs_few && shape.outputs >= 8 * sms && r * shape.outputs * size_of(types.in) <= (384ull << 20);
        s.vec = on_grid2 ? 2 : 1;
        s.block = 256;
        s.group = 8;
        s.unroll = 8;
        if (!on_grid2 && (op == Op::min || op == Op::max)) {
          s.blocks_per_sm = 8;
          s.unroll = 4;
        }
        break;
      }
      // 4-byte elements off the 4-element grid stop at 20 outputs per SM: from there a thread
      // per output, split with eight loads in flight, and from 31 outputs per SM a block of
      // 1024 threads per SM unsplit (below). On an H200 (f32 sums, R = 4097 .. 30001, off
      // the grid, `..-2026-11-27ag-between-configs-f32.log`): 2049 and 2305 outputs 1.01 to
      // 1.07 times faster in vectors (30001 x 2049: 67.8 against 72.6 us), 2641 and 3001
      // 1.31 to 1.39 times slower (30001 x 2641: 126.2 against 90.7). On the grid, vectors
      // of four up to 64 outputs per SM, as before (30001 x 4096: 117.3 against 127.4 us).
      // Not for min and max off the grid, nor for 8-byte elements: on an H200 (held), max of
      // 20249 x 2047 took 74.3 against 52.2 us with a thread per output split (i32), 66.7
      // against 52.9 (f32); f64 max of [4, 16384, 359] along 1 93.4 against 57.9, i64
      // 83.1 against 58.7 (two 8-byte outputs a thread).
      //
      // On the grid up to 48 outputs per SM (from 2048 outputs, or over R < 16384 from
      // 257), a thread per output split and capped instead (capped_split_columns, below):
      // its eight loads in flight at four blocks per SM read faster than the vectors. On an
      // H200 (set BP, paced, f32 sum and max, R = 4097 .. 30001 over 300 .. 6144 outputs),
      // 1.01 to 1.40 times as fast (max 12345 x 6144 90.3 -> 73.2 us, torch 82.1; sum 4097
      // x 2048 13.7 -> 12.1); at 7000 and 8000 outputs 0.81 to 1.15 (sum 30001 x 7000
      // 201.8 -> 234.8), over R = 30001 and 100003 with 1000 outputs 0.95 to 0.99: not there.
      // Nor from R = 16384 where a row is not a whole number of 128-byte lines (a warp's
      // 128 bytes of a row then straddle two): 0.80 to 0.98 times as fast over R = 30001 ..
      // 100003 with 3000 and 5000 outputs (sum 100003 x 5000 469.4 -> 584.4 us), and the
      // vectors folded by the last block faster still at 24000 x 5000 (113.3 against
      // 128.4).
      const bool extremum_off_grid = !on_grid && (op == Op::min || op == Op::max);
      if (size_of(types.in) == 4 && unit && !extremum_off_grid && r >= 4096 && shape.outputs > 256 &&
          shape.outputs < (!on_grid ? 20 : 64) * sms) {
        const bool whole_lines = static_cast<std::uint64_t>(shape.reduced_stride) * size_of(types.in) % 128 == 0;
        if (on_grid && shape.outputs <= 48 * sms && (r < 16384 || (shape.outputs >= 2048 && whole_lines))) {
          s.block = 256;
          s.group = 8;
          s.unroll = 8;
          break;  // split below, then capped (capped_split_columns)
        }
        s.vec = static_cast<std::uint32_t>(16 / size_of(types.in));
        s.block = 128;
      }
      // 16-bit elements on the 2-element grid, R > 2048 over 31 to 64 outputs per SM: two
      // adjacent outputs a thread (4-byte loads), blocks of 256 with 8 threads across R,
      // split, eight loads in flight, the last block of each group folding (one round
      // trip). On an H200 (set BQ, paced; f16 and bf16 sums, f16 max, bf16 mean of R =
      // 2049 .. 100003 over 4202 .. 8446 outputs, rows of 2 mod 4), against a second
      // kernel: 1.02 to 1.24 times as fast (f16 sum 100003 x 5002 285.5 -> 263.2 us, torch
      // 284.1; 2049 x 6002 12.6 -> 10.5). On an H200 (f16 sums, R = 12345 and 30001 over 4096
      // and 6144 outputs, `..-2026-11-27ag-between-configs-f16.log`), against a thread per
      // output in blocks of 1024 unsplit (below): 1.29 to 1.56 times faster (30001 x 4096:
      // 62.8 against 97.7 us, torch.sum 74.3), and 1.00 to 1.28 times against two outputs
      // a thread unsplit. The split is the one below the switch (two passes where the plan
      // splits R at all).
      if (size_of(types.in) == 2 && on_grid2 && r > 2048 && shape.outputs >= 31 * sms && shape.outputs < 64 * sms) {
        s.vec = 2;
        s.block = 256;
        s.group = 8;
        s.unroll = 8;
        last_block_folds = true;
        break;
      }
      // Long columns, few of them: blocks of 512 (so 16 threads across R), the last
      // block folding the partials (H100, f32 and f16, R = 2^18 .. 2^20 with 64 to 256
      // outputs: 1.1 to 1.8 times faster than blocks of 256 and a second kernel).
      const bool long_few = r >= (1u << 18) && shape.outputs <= 256;
      if (long_few) {
        s.block = 512;
        ticket_outputs = 256;
      }
      // Many outputs (too many to split R) over R >= 256, in one wave of blocks of 512
      // (32 outputs a block, four blocks per SM): 16 threads across R instead of 8, twice
      // the loads in flight. Tuned on an H200 (f32 sums): R = 512 x 16384 outputs 11.0
      // against 12.8 us in blocks of 256; at 24577 outputs (a wave and a half) 1.15 times
      // slower than those, so only where the blocks fit one wave.
      const bool one_wave = s.vec == 1 && !long_few && r >= 256 && shape.outputs >= 64 * sms &&
                            ceil_div(shape.outputs, 32) <= 4 * sms;
      if (one_wave) s.block = 512;
      // Threads across R only where the outputs alone would leave the GPU idle, and never
      // fewer than 32 threads across the outputs (a warp reads 128 contiguous bytes).
      const std::uint64_t outputs = shape.outputs / s.vec;
      std::uint32_t by = 1;
      while (by < s.block / 32 && (one_wave || outputs * by < threads_wanted) && r >= 16ull * by) by *= 2;
      s.group = by;
      // Many outputs of very short columns (a thread walks R alone): four outputs per
      // thread and pass, where that still leaves every SM busy. From R = 4 on a thread
      // per output reads faster: tuned on an H200, R = 16 and 64 over 2^20 and 2^24
      // outputs, f16 and f32, chose one output per thread (R = 16 x 2^24: 3849 against
      // 3057 GB/s in f32), R = 2 four; on an H100, R = 4 over 2^20 .. 2^24 outputs read
      // 1.1 to 1.3 times faster with one.
      // Not for sums of 8-byte elements over R = 3 that the batched tail serves (from
      // 2^22 elements: batched_tail_pays). H200, paced, the built-in choice before and
      // after (set BS): f64 sum of [1000000,3,5] along 1 47.5 -> 40.6 us (torch.sum 45.4
      // from Python), of [3,2000001] along 0 17.4 -> 16.5, i64 likewise; over R = 2 four
      // outputs a pass stay (f64 and i64 [2,4000001] along 0: 24.9 against 25.8 batched).
      const bool wide_sum_tail = size_of(types.in) == 8 && (op == Op::sum || op == Op::mean) && r == 3 &&
                                 r * shape.outputs >= (1u << 22);
      if (by == 1 && s.vec == 1 && outputs >= 4 * threads_wanted && r < 4 && !wide_sum_tail) s.rows_per_pass = 4;
      // 16-bit vectors of four outputs over R <= 4 on the grid, 2^21 outputs and more:
      // blocks of 128 (H200, held, bf16 sums against blocks of 256: R = 2, 3, 4 over 2^22
      // outputs 14.97 -> 12.75, 15.96 -> 13.71, 13.84 -> 12.85 us, 2 x 2622080 8.83 ->
      // 7.03, its mean 14.00 -> 11.59; over 2^20 outputs and R = 8, 16 no faster).
      if (size_of(types.in) == 2 && s.vec == 4 && on_grid && by == 1 && r <= 4 && shape.outputs >= (1u << 21))
        s.block = 128;
      // Where this plan would split R but R is short, one launch with more threads across
      // R instead: every thread reads at most 32 rows (64 over 1000 outputs and more), its
      // loads in flight together, and no block waits on another. Few outputs over a
      // longer R: blocks of 512 (16 threads across R), the last block folding. Built-in
      // choice before and after, held, on an H100 (f32 and f16, sum and max; with the
      // dense rule above): R = 64 .. 1024 over 2 .. 4097 outputs 1.06 to 2.5 times faster
      // (f32 sum 256 x 100: 6.55 -> 3.13 us); R = 1025 .. 2048 over 1000 and 4097 outputs
      // 1.01 to 1.96 times; R = 2049 .. 16385 over 2 .. 64 outputs 1.00 to 1.75 times.
      // Blocks of 1024 over R = 2048 and up to 512 outputs were up to 1.15 times slower
      // for max than the split.
      if (s.vec == 1 && !long_few && s.rows_per_pass == 1) {
        AxisKernelSpec t = s;
        t.split = AxisSplit::two_pass;
        // Likewise over R > 2048 from 31 outputs per SM up to the one wave above (elements
        // of 4 bytes and less), split or not: a block of 1024 per SM, or two, unsplit, 32
        // threads across R.
        // On an H200 (f16 and f32 sums, R = 2049 .. 30001 over 2049 .. 7001 outputs, off the
        // 4-element grid, `..-2026-11-27ag-split-*.log`), the split plan before (blocks of
        // 256 and a second kernel; f32 from R = 4096 four outputs a thread in blocks of 128)
        // against this: 4099 .. 7001 outputs 0.99 to 2.07 times faster (f16 30001 x 6143:
        // 262.9 against 127.3 us with eight loads in flight, f32 12345 x 6143 140.6 against
        // 78.1). Below, the split with eight loads in flight (the end of this function) read
        // 2049 and 3001 outputs faster from R = 4097 (f16 12345 x 2049: 26.3 against 38.5 us
        // unsplit).
        // Not 16-bit columns of R >= 12288 up to 6200 outputs: split and capped, eight loads
        // in flight (capped_split_columns, below), they read 1.03 to 1.36 times as fast on
        // an H200 (set BO, paced; f16 sum 12345 x 4093 45.62 -> 33.59 us, bf16 mean 65537 x
        // 5001 263.55 -> 194.52, f16 max 30001 x 6143 125.58 -> 120.63).
        const bool wide_unsplit = size_of(types.in) <= 4 && r > 2048 && shape.outputs >= 31 * sms &&
                                  shape.outputs < 64 * sms &&
                                  !(size_of(types.in) == 2 && r >= 12288 && shape.outputs <= 6200);
        if (wide_unsplit || plan_axis_launch(t, shape, sm_count).splits > 1) {
          // Also R up to 2560 over 256 outputs and more, paced by the second launch: on an
          // H200 (f32 min, f16 sum; single calls paced apart, then back to back), 2049 x
          // 300 .. 1000 f32 8.2 .. 8.7 -> 5.6 .. 5.8 us paced (4.5 .. 5.3 -> 5.6 .. 5.8
          // back to back), f16 6.7 .. 7.0 -> 4.6 .. 4.8 (4.2 .. 4.9 -> 4.6 .. 4.8), 1920 x
          // 617 f32 min 7.1 -> 5.3 (4.5 -> 5.3); from R = 3000 the split as fast or faster.
          const bool short_enough = r <= 1024 || (r <= 2048 && shape.outputs >= 1000) ||
                                    (r <= 2560 && shape.outputs >= 256 && shape.outputs < 2000);
          if (short_enough || wide_unsplit) {
            s.block = r <= 512 ? 512 : 1024;
            s.group = s.block / 32;
            s.split = AxisSplit::none;
            s.unroll = columns_walk_unroll(types, shape, s.group, sms);
            if (plan) *plan = plan_axis_launch(s, shape, sm_count);
            return s;
          }
          // Up to 8 outputs over R <= 8192: one block of 512, its threads all across R
          // (512 / the outputs, rounded up to a power of two), where each reads at most 64
          // rows, eight loads in flight; no ticket, no partials. Held device times on an
          // H200 against the split below (`..-2026-11-27aj-probe2.log`): f32 sums of 2
          // outputs over R = 1100 .. 8192 2.09 to 2.64 against 3.65 to 3.74 us, of 7 over
          // R = 1100 .. 4096 2.0 to 3.2 against 3.7 to 3.9; bf16 max 2.4 to 3.8 against 4.8
          // to 5.0. Over 7 outputs at R = 8192 (128 rows a thread) the split stays: 3.71
          // against 4.79.
          std::uint32_t wide = 1;  // the outputs rounded up to a power of two (at most 8 here)
          while (wide < 8 && wide < shape.outputs) wide *= 2;
          const std::uint32_t across = 512 / wide;
          if (shape.outputs <= 8 && r <= 8192 && r <= 64ull * across) {
            s.block = 512;
            s.group = across;
            s.split = AxisSplit::none;
            s.unroll = 8;
            if (plan) *plan = plan_axis_launch(s, shape, sm_count);
            return s;
          }
          if (shape.outputs <= ticket_outputs) {
            s.block = 512;
            s.group = 16;
          }
        }
      }
      break;
    }
    case AxisLayout::rows:
    case AxisLayout::flat:  // served by the flat kernels; a rows program works too
    case AxisLayout::general: {
      // Contiguous rows of 4-byte elements, 128 to 512 bytes long but not a power of two
      // (whose vectors do not split evenly over a lane group's loads in flight), from 2^21
      // elements in all: staged a tile at a time (rows_dense). Held device times on an
      // H100 (f32 sum and max), the rows kernel against rows_dense: R = 33 over 65537 ..
      // 2097153 rows 1.03 to 1.08 times faster staged (33 x 2097153: 99.7 against 107.5
      // us), R = 100 over 65537 .. 2097153 rows 1.04 to 1.07 (100 x 2097153: 287.6
      // against 309.0); rows of 16, 64, 128 and 255 elements were as fast or faster with
      // the rows kernel, and every shape below 2^21 elements (its one round trip to
      // memory against the staged kernel's two: 3 x 4099 in 2.41 against 3.52 us).
      if (axis_transpose_dim(shape) >= 0) {
        s.family = AxisFamily::transpose;
        s.group = 1;
        s.vec = 1;
        s.split = AxisSplit::none;
        s.rows_per_pass = 1;
        s.unroll = 4;
        if (plan) *plan = plan_axis_launch(s, shape, sm_count);
        return s;
      }
      if (rows_packed_pays(op, types, shape, in)) {
        s.family = AxisFamily::rows_packed;
        s.block = 256;
        s.group = 1;
        s.vec = static_cast<std::uint32_t>(16 / size_of(types.in));
        s.split = AxisSplit::none;
        s.rows_per_pass = 1;
        s.unroll = 1;
        if (plan) *plan = plan_axis_launch(s, shape, sm_count);
        return s;
      }
      if (const std::optional<FoldedColumns> f = axis_folded_columns(shape); f && folded_columns_pay(*f)) {
        s.family = AxisFamily::columns_folded;
        s.group = 1;
        s.vec = static_cast<std::uint32_t>(16 / size_of(types.in));
        s.rows_per_pass = 1;
        s.unroll = 4;
        s.block = f->width() <= 256 ? 256 : f->width() <= 512 ? 512 : 1024;
        s.split = AxisSplit::two_pass;
        const std::uint64_t splits = plan_axis_launch(s, shape, sm_count).splits;
        if (splits <= 1)
          s.split = AxisSplit::none;
        else if (shape.outputs * splits <= kFoldedTicketPartials)
          s.split = AxisSplit::ticket_tiles;
        if (plan) *plan = plan_axis_launch(s, shape, sm_count);
        return s;
      }
      const std::uint64_t row_bytes = r * size_of(types.in);
      // Contiguous rows of 2 to 7 four-byte elements, from 2^22 rows (R = 2, 3) or 2^24
      // (R = 4 to 7): staged too, a lane per row. A thread per row reading its elements
      // one by one leaves a warp's loads 8 to 28 bytes apart. On an H200 (set BC in
      // docs/BENCHMARKS.md, paced; f32 sum, f32 max and i32 sum alike within 2%), the
      // built-in choice before against rows_dense in blocks of 256: R = 2 over 16777216
      // rows 62.10 -> 53.98 us, over 4194304 17.09 -> 15.59; R = 3 over 16777216 74.51 ->
      // 66.58, over 4194304 20.26 -> 19.18; R = 4 to 7 over 16777216 1.02 to 1.04 times
      // faster. Not below: R = 3 over 1048577 rows 4.51 -> 5.48, R = 2 and 3 over 2097152
      // 0.94 to 0.98 times as fast, R = 4 and 6 over 4194304 0.96 to 0.99; nor 16-bit rows
      // (staged 0.58 to 1.02 times as fast as their built-in choice); nor means over
      // R that is not a power of two (f32, 16777216 rows: R = 3 84.23 -> 90.72 us, R = 5
      // 101.30 -> 119.35; R = 2 67.69 -> 60.78).
      const bool tiny_dense_rows = r >= 2 && r <= 7 && shape.outputs >= (r <= 3 ? (1ull << 22) : (1ull << 24)) &&
                                   (op != Op::mean || (r & (r - 1)) == 0);
      if (shape.layout == AxisLayout::rows && size_of(types.in) == 4 &&
          shape.outer_stride == static_cast<std::int64_t>(r) &&
          (tiny_dense_rows || (row_bytes >= 128 && row_bytes <= 512 && (row_bytes & (row_bytes - 1)) != 0 &&
                               r * shape.outputs >= (1u << 21)))) {
        s.family = AxisFamily::rows_dense;
        s.vec = 4;
        s.unroll = 4;
        s.group = r >= 64 ? 4 : 1;  // lanes per row
        s.split = AxisSplit::none;
        if (plan) *plan = plan_axis_launch(s, shape, sm_count);
        return s;
      }
      s.family = shape.layout == AxisLayout::general ? AxisFamily::general : AxisFamily::rows;
      if (shape.layout == AxisLayout::general && general_kept_densest(shape)) {
        // A kept dimension is the densest: a thread per vector of adjacent outputs, so
        // that a warp reads neighbouring outputs at each reduced index (a group per
        // output would read them one stride apart). Vectors of 16 bytes (8 for 16-bit
        // elements where 16 would leave the plan split: with a thread per vector, f16 sum
        // of 4096 outputs over 64 x 128 on an H200, 36.4 us against 40.4), eight loads in
        // flight. Split across blocks where the outputs fill fewer than a quarter of the
        // SMs, or where their loads are few (below), not otherwise: on an H200 (f16 sums, a
        // thread per vector), 262144 outputs over 16 x 16 took 88.6 us in 128 blocks and a
        // second kernel, 51.6 in those blocks alone.
          s.vec = general_output_vector_width(types, shape);
        s.rows_per_pass = 1;
        s.block = 256;
        s.unroll = 8;
        if (s.vec == 8 && 4 * ceil_div(shape.outputs, std::uint64_t{s.block} * 8) < sms) s.vec = 4;
        // Threads across R (up to 32) until the blocks' loads in flight hold 16 bytes a
        // block per SM: a block per SM of 16-byte vectors, two of 8-byte ones. H100 (f32 and
        // f16 sums; a thread per vector and a second kernel before): 4096 outputs over 64 x
        // 128 f32 56.9 against 62.9 us; 10000 over 100 x 100 f32 157.4 against 179.1, f16
        // 85.1 against 109.9; 48 over 3 x 100000 f32 38.5 against 180.6.
        const std::uint64_t vectors = ceil_div(shape.outputs, s.vec);
        const std::uint64_t bytes = std::uint64_t{s.vec} * size_of(types.in);
        // No more lanes than R / 2, so that each reads two elements or more: lanes past R
        // read nothing but still take their place in the blocks and the shuffles. H200,
        // sums and max of [R, a, b] along 0 (strides [a*b, 1, a], not reordered: above), 8
        // lanes against 32 and 16: R = 8 over 128 x 129 3.41 against 8.90 and 5.18 us
        // (bf16 max), R = 16 over 1024 x 16 3.78 against 9.09 and 5.67 (f32 sum).
        s.group = 1;
        while (s.group < 32 && 4ull * s.group <= r && ceil_div(vectors * s.group, s.block) * bytes < 16 * sms)
          s.group *= 2;
        // Loads of 8 and 16 bytes whose blocks (32 threads across R each) hold fewer than
        // 8 bytes a load per SM split across blocks as well: 8-byte loads in fewer blocks
        // than SMs, 16-byte ones in fewer than half as many. H100, f16 sums (four outputs
        // a thread), unsplit against split in blocks of 128 and a second kernel: 4096
        // outputs over 64 x 128 (128 blocks) 49.8 against 37.4 us, 3200 over 10 x 1000
        // (100 blocks) 59.4 against 37.5, 1536 over 40 x 300 (48) 66.7 against 26.1; and
        // unsplit, 4224 over 100 x 100 (132 blocks) 60.4, 8000 over 50 x 30 (250) 17.1
        // against 17.5 split. f32 sums: 48 blocks 67.4 against 39.2, 100 blocks 66.3
        // against 62.2, 128 blocks 56.6 against 71.0 (unsplit).
        const std::uint64_t blocks = ceil_div(vectors * s.group, s.block);
        // 16-bit vectors of four in one to two blocks per SM over long reductions split
        // too, in those blocks of 256 (blocks of 128 left the plan unsplit), where the base
        // is off the vector grid: the twin's scalar loads. H200, f16 sum over (0,2) of
        // [100,33,100,128] one element in: 38.65 us split against 53.32 unsplit. On the
        // grid, the main kernel's vectors on a short walk (rt::fold_output_vectors) read
        // them faster unsplit: H200, sums over (0,2) of [100,n,100,128] and [50,n,300,128]
        // (4224 .. 7936 outputs, 132 .. 248 blocks), split against unsplit, f16 1.01 to
        // 1.25 times faster unsplit (n = 62: 57.12 against 45.57 us), bf16 0.97 to 1.21
        // (n = 38: 39.40 against 40.47); H100, f16 [100,33,100,128] 43.80 against 40.18,
        // [50,50,300,128] 84.79 against 73.66. (Before that walk, split was up to 1.19
        // times faster on the grid too.) Over R = 1500, 8000 outputs (250 blocks) took
        // 25.6 us split against 17.1 (H100).
        const bool long_16bit = size_of(types.in) == 2 && bytes == 8 && blocks >= sms && blocks < 2 * sms &&
                                r >= 10000 && in != nullptr && axis_launch_takes_twin(s, shape, AxisLaunchPlan{}, in);
        // Scalar loads of 4 bytes and less (an innermost kept extent off every vector's
        // grid) split too in fewer blocks than SMs over R >= 6000. H200 (set BT, the
        // bench's calls), sums over (0,2): [3,11,20001,45] (62 blocks of 256) f32 146.3 ->
        // 52.6 us, bf16 142.9 -> 43.9; [2,9,8193,37] (42 blocks) f32 40.2 -> 14.9, bf16
        // 25.1 -> 11.0; [5,25,4001,35] (110 blocks) f32 53.1 -> 35.9, bf16 51.1 -> 30.9
        // (groups of 8, below); by config, R = 6002 over 42 and 62 blocks 1.25 to 1.49
        // times as fast, R = 8192 over 42 and 87 blocks 1.21 to 1.66. Mixed at R = 4096 to
        // 5005 (0.93 to 1.17), slower over R = 2005 to 2056 (0.67 to 0.84: the second
        // launch costs more than the idle SMs); nor in 231 to 495 blocks (f32 and bf16 sums
        // 0.64 to 0.96 times as fast: [16,41,513,45], [2,63,10001,33], [2,120,5001,33]).
        const bool scalars = s.vec == 1 && bytes <= 4;
        const bool few_scalar_loads = scalars && blocks < sms && r >= 6000;
        if (4 * blocks >= sms && !(bytes >= 8 && blocks * bytes < 8 * sms) && !few_scalar_loads && !long_16bit) {
          s.split = AxisSplit::none;
          if (plan) *plan = plan_axis_launch(s, shape, sm_count);
          return s;
        }
        // Split: blocks of 128 and a second kernel that folds the partials (H100, sums of
        // 512 outputs over 1000 x 20: f16 19.5 against 24.1 us in blocks of 256, f32 28.3
        // against 29.0), but up to 64 outputs below 1.5 x 2^20 elements, where the last
        // block folds them in blocks of 256 (one launch). Held on an H200 (bf16 sum, f32
        // max and f64 sum over (0,2) of [R, 2 .. 32, 3 .. 7, 2], 4 to 64 outputs, R = 14000
        // .. 600000), blocks of 128 and a second kernel were the fastest of the four forms
        // (blocks of 128 or 256, either fold) in 19 of 21 views, within 2% in the other two
        // (`h200-2026-11-29aw-probe-kept-densest-*`). At the host's pace (the bench's
        // calls), against the fold in blocks of 256: from 1.6 x 10^6 elements 1.10 to 1.80
        // times faster (`…-ab-kept-densest-*`: bf16 sum of [200000,20,3,2] 34.67 -> 24.71
        // us, bf16 mean of [3,6,20000,8] 13.83 -> 7.67; and by config, [40000,4,5,2] and
        // [20000,16,3,2] 1.36 to 1.60); below 10^6 0.89 to 1.04 times the speed (the second
        // launch cost the host more than the fold cost the device); 1.05 to 1.54 x 10^6
        // mixed (bf16 sums 0.78 to 0.99, f32 max 1.10 to 1.26). From 66 outputs the last
        // block's fold in blocks of 128 took 0.96 to 1.62 times the second kernel's time
        // (held).
        const bool fold_in_last_block = shape.outputs <= ticket_outputs && r * shape.outputs < (3ull << 19);
        if (!fold_in_last_block) {
          if (!long_16bit) s.block = 128;
          ticket_outputs = 0;
          // Scalar loads of 4 bytes and less over 128 outputs or more: groups of 8 across
          // R, so that a warp reads 16 outputs side by side at each reduced index (32 lanes
          // across R read four outputs' elements, a stride apart). H200 (set BT, the
          // bench's calls; held in brackets), groups of 8 against 32: sums over (0,2) of
          // [2,7,3541,33] (231 outputs) f32 8.97 -> 7.70 us, bf16 8.39 -> 7.94 (bf16 mean
          // held 8.78 -> 8.29); its permuted form [33,7,2,3541] over (2,3), through the
          // reorder, f32 9.71 -> 8.38, bf16 8.81 -> 8.32; [3,11,20001,45] f32 (80.0 ->
          // 52.8), bf16 (54.3 -> 43.9).
          // Not over fewer outputs, whose lanes across them a group of 8 leaves idle: 21
          // outputs of [4,3,50001,7] f32 15.16 -> 16.75, bf16 10.86 -> 12.37. Nor where the
          // last block folds: its partials grow with the splits (bf16 sum of
          // [2,7,3541,33] in blocks of 256 and one launch, held, 8.54 -> 17.45).
          if (scalars && vectors >= 128) s.group = std::min<std::uint32_t>(s.group, 8);
        }
        break;
      }
      // 16-byte loads where a row holds at least two of them, or one where its rows
      // start aligned (a multiple of the vector); a row of a misaligned short run
      // reads faster element by element.
      // 16-bit rows of 32 to 127 elements, and of 16, load 8 bytes (four elements) at a
      // time. On an H200 (f16 sums), an exhaustive tune of R = 2^4 .. 2^7 over 2^18 ..
      // 2^22 rows chose them with the lane groups below; against 16-byte vectors, built-in
      // choice before and after over 262145 .. 4194305 rows: R = 16, 33, 48, 64, 100 and
      // 127 0.77 to 1.01 times the time on an H200 and an H100 (100 x 1048577: 57.8
      // against 65.7 us and 77.4 against 85.2); R = 17 and 24 up to 1.18 times slower (R
      // = 31, 0.87 to 1.03, stays with them), R = 8 and 12 1.1 to 1.3 times, and R = 128
      // .. 255 no faster.
      // General: vectors along the innermost reduced dimension where it is contiguous
      // and its extent and every other reduced stride are multiples of one.
      std::uint32_t full = s.family == AxisFamily::rows ? static_cast<std::uint32_t>(16 / size_of(types.in))
                                                         : general_vector_width(types, shape);
      if (s.family == AxisFamily::rows && full == 8 && r < 128 && (r >= 32 || r == 16)) full = 4;
      s.vec = full > 1 && (r >= 4ull * full || (r >= 2ull * full && r % full == 0)) ? full : 1;
      // Each lane of a group reads about four vectors (eight elements without vectors)
      // of its row, so that several loads are in flight without a long shuffle tree
      // (longer rows: below). Measured on an
      // H100 over f32 and f16 rows of R = 4 .. 1537 and 2^10 .. 2^24 outputs: within
      // a few percent of the tuned best, where one lane per vector (the former choice)
      // was 1.2 to 4 times slower below R = 1024; an earlier shared-memory staging of
      // very short rows (scalar loads, a thread per row) was 2 to 3 times slower than a
      // thread per row (today's rows_dense: above).
      const std::uint64_t lanes = ceil_div(std::max<std::uint64_t>(r, 1), s.vec);
      const std::uint64_t per_lane = s.vec > 1 ? 4 : 8;
      std::uint32_t group = 1;
      while (group < 32 && lanes >= per_lane * 2ull * group) group *= 2;
      // The block per row from 2048 elements where a row holds 1024 loads or more, or
      // where the rows are too few to give each SM eight warps' worth; a warp per row
      // otherwise (H100, f32 and f16 rows of 2048 .. 12289 elements: a warp was up to
      // 1.6 times faster over 2^14 rows and more below 1024 loads per row, the block
      // 1.3 to 1.9 times faster over 512 and 769 rows, in blocks of 128 threads).
      const bool few_rows = shape.outputs < 8 * sms;
      // General rows of elements read with a warp up to 8192 loads (a block would fold
      // every few loads per lane behind a barrier).
      const std::uint64_t block_lanes = s.family == AxisFamily::general && s.vec == 1 ? 8192 : 1024;
      s.group = r >= 2048 && (lanes >= block_lanes || few_rows) ? s.block : group;
      // Blocks of 128, or 256 over 2 to 4 rows per SM (unsplit: a block per row), where
      // 128 leave too few loads in flight. On an H200 (held; max and sum, f32 and i64),
      // 256 against 128: 300 x 70000 f32 max 21.9 against 30.9 us, i64 45.4 against 58.9;
      // 359 x 70281 26.1 against 34.0 (f32), 53.5 against 65.0 (i64); 500 x 40000 0.85 to
      // 0.95 times the time; general rows of 2851 x 15 over 307 outputs (sums) 26.8
      // against 43.0 (f32) and 32.5 against 49.1 (i64). Over 700 and 1000 rows 128 were as
      // fast or faster (700 x 30000 i64 max 42.5 against 49.4).
      // i64 min and max of rows there: blocks of 512 (why they gain and sums do not was
      // not traced). Held on an H200 (i64 max, 512 against 256): 264 x
      // 60000 30.82 against 36.03 us, 359 x 70281 50.60 against 53.32, 450 x 50000 44.49
      // against 47.04, 527 x 40000 40.74 against 41.41. Not sums: i64 took 0.96 to 1.02
      // times the time in blocks of 512, f64 1.03 to 1.11 (`h200-2026-11-29aw-probe-rows8-*`).
      if (s.group == s.block && few_rows) {
        const bool middling = shape.outputs >= 2ull * sms && shape.outputs < 4ull * sms;
        const bool wide_compares =
            s.family == AxisFamily::rows && types.in == DType::i64 && (op == Op::min || op == Op::max);
        s.block = middling ? (wide_compares ? 512 : 256) : 128;
        s.group = s.block;
      }
      // Rows of two loads per lane or less: four rows per pass.
      s.rows_per_pass = s.group <= 32 && r <= 2ull * s.group * s.vec ? 4 : 1;
      // Few rows: smaller blocks, so that more SMs get one.
      const std::uint64_t rows_per_block = s.block / s.group * s.rows_per_pass;
      if (s.group <= 32 && ceil_div(shape.outputs, rows_per_block) < 2 * sms) s.block = 128;
      // Dense rows of 9 to 16 elements, a thread per row, over 2^24 rows and more: blocks
      // of 512 (the plan keeps its grid of 32 blocks an SM, so each thread reads half as
      // many rows; why that pays was not traced). On an H200 (set BY in docs/BENCHMARKS.md;
      // paced, 256 against 512), over 16777216 rows: f32 sums of R = 9, 12, 16 160.28 ->
      // 156.73, 209.35 -> 205.82, 271.46 -> 268.35 us, f32 max of 16 269.57 -> 266.40;
      // f16 sums of 12 and 16 1.01 times as fast, of 9 0.997; f64 sums of 9 and 12 1.03
      // and 1.05. Not over 4194305 rows, where it went both ways (f32 sum of 12 and f16 sum
      // of 24 0.96 times as fast, f64 sum of 9 1.03).
      // Of those, four rows a pass where no case timed ran below 0.99 times as fast:
      // 16-bit sums and max of rows read in vectors (R = 16; min, untimed, with max), f64
      // sums and means, i64 min and max. On an H200 (set CD: paced, the faster of two
      // alternating rounds, four rows a pass against one over 16777216 to 33554432 rows;
      // three calls): f16 sums of 16 1.04 to 1.06 times as fast (16 x 16777216 143.40 ->
      // 135.86 us), f16 max 1.03 to 1.04, bf16 sums and max 0.99 to 1.01; f64 sums of R =
      // 9 to 14 1.02 to 1.11 (9 x 16777216 348.53 -> 319.49), means 1.01 to 1.07; i64 max
      // 1.01 to 1.09, min 1.02 to 1.12. Not where it went both ways: f64 min and max (R =
      // 9, 11, 13: 0.92; even R 1.03 to 1.11), i64 sums and products (R = 10, 12, 14:
      // 0.88 to 0.98; odd R 1.02 to 1.15), 16-bit means (0.98 to 1.03); nor 16-bit rows
      // read element by element (R = 9 to 14: 0.96 to 1.01) or f32 rows (R = 12 and 16:
      // 0.98 to 0.99; 9 to 13 1.00 to 1.01).
      if (s.family == AxisFamily::rows && s.group == 1 && s.rows_per_pass == 1 && r >= 9 && r <= 16 &&
          shape.outer_stride == static_cast<std::int64_t>(r) && shape.outputs >= (1ull << 24)) {
        s.block = 512;
        const bool compares = op == Op::min || op == Op::max;
        if ((size_of(types.in) == 2 && s.vec > 1 && (op == Op::sum || compares)) ||
            (types.in == DType::f64 && (op == Op::sum || op == Op::mean)) || (types.in == DType::i64 && compares))
          s.rows_per_pass = 4;
      }
      // General rows of elements: eight loads in flight in a group within a warp (H200,
      // every other element of 16384 rows of 4096: f16 sums 59.4 -> 55.4 us, f32 75.2 ->
      // 71.6).
      if (s.family == AxisFamily::general && s.vec == 1 && s.group <= 32) s.unroll = 8;
      // General views whose innermost reduced run of 2 to 4 contiguous elements
      // interleaves with the outputs (the innermost kept stride is the run: [n, m, e] over
      // (0, 2)): neighbouring outputs' runs are adjacent, so a group of g lanes per output
      // reads them together where the lanes of a wider group read runs a whole slice
      // apart. g the smallest power of two that gives 768 threads per SM, where that is
      // at most 4 (from 192 outputs per SM); eight loads in flight, blocks of 256. Held
      // device times on an H100, the choice before against this
      // (`h100-2026-11-27ai-interleaved-*.log`): f32 max over (0,2) of [146,32768,3] 40.54
      // -> 23.44 us (g = 4; torch 36.18 in a loop of calls), of [16,262144,3] 29.73 ->
      // 21.53 (g = 1; torch 86.47); f16 max of [50,200000,3] 74.82 -> 34.37 (g = 1, the
      // probe; torch 107.97); sums of [100,65536,2] 34.30 -> 13.11 (f16, g = 2, vectors of
      // two) and 42.55 -> 21.01 (f32; torch 39.81), of [64,100000,4] 43.71 -> 21.71 (f16)
      // and 49.30 -> 37.94 (f32). Over 10000 outputs ([1000,10000,3]) groups of 1 to 4 were
      // 1.2 to 3.6 times slower than the 32 above (the probe): not taken.
      // So too where R would give each output a block: on an H200 (held), max over (0,2)
      // of [1024,65213,2] (a block per output before, two lanes per output now) 721.0 ->
      // 277.2 us in i64 (torch 339.4 in a loop of calls), 515.8 -> 137.3 in f32.
      if (s.family == AxisFamily::general && general_interleaved_runs(shape)) {
        std::uint32_t g = 1;
        while (g < 32 && shape.outputs * g < 768ull * sms) g *= 2;
        if (g <= 4) {
          s.group = g;
          s.block = 256;
          s.rows_per_pass = 1;
          s.unroll = 8;
        }
      }
      if (s.group <= 32) {
        // A group within a warp reads at most 2047 elements: never worth a second launch.
        s.split = AxisSplit::none;
        if (plan) *plan = plan_axis_launch(s, shape, sm_count);
        return s;
      }
      // General outputs of a block each, split: the last block folds the partials (one
      // launch) up to 256 outputs. H100, held, f32 and f16 sum and max over R = 32768 of
      // 96 to 256 outputs and R = 131072 of 128 (blocks of 128, two_pass against ticket):
      // 1.05 to 1.17 times faster (f16 sum of 128 outputs 9.61 -> 8.36 us, f32 256 outputs
      // 20.97 -> 19.46).
      if (s.family == AxisFamily::general) ticket_outputs = 256;
      break;
    }
  }
  // Long reductions over few outputs are split across blocks, each split reading at
  // least 32 rows: a split of fewer writes and reads again partials of a size near the
  // input's, in a second launch (columns of four outputs a thread read 1024 outputs a
  // block, and the plan's 4096 elements a split are four rows there). f16 sum of
  // 10 x 196611 (a view of 10 x 65537 x 3 along 0) took 29.8 us on an H100 in two
  // splits, torch.sum 9.8.
  s.split = AxisSplit::two_pass;
  AxisLaunchPlan p = plan_axis_launch(s, shape, sm_count);
  if (p.splits > 1 && r < 32 * p.splits) {
    s.split = AxisSplit::none;
    p = plan_axis_launch(s, shape, sm_count);
  } else if (p.splits <= 1) {
    s.split = AxisSplit::none;
  } else if (shape.outputs <= ticket_outputs) {
    s.split = AxisSplit::ticket;
    p.finalize_grid = 0;  // the last block folds the partials
    // At most 16 rows over R >= 2^20: the splits take tiles of the row in turn, at 8
    // blocks per SM. Tuned on an H100 and an H200 (f32 sum and max, 4 and 7 rows of
    // 2^22 .. 2^24.6), tiles were the fastest configs; the built-in choice before and
    // after (f32 sum and max, f16 sum; 3 to 16 rows of 2^20 .. 2^24.6): 1.00 to 1.17
    // times faster on both GPUs, 7 rows of 2^24 f32 max 174.3 -> 159.3 us on an H100
    // (torch 171.3), 120.4 -> 111.5 on an H200 (torch 121.4). Dense columns keep their
    // contiguous splits here: tiles made f32 max 1.05 to 1.08 times slower on an H100.
    if (s.family == AxisFamily::rows && shape.outputs <= 16 && r >= (1u << 20)) {
      s.split = AxisSplit::ticket_tiles;
      s.blocks_per_sm = 8;
      p = plan_axis_launch(s, shape, sm_count);
    }
  }
  // Dense columns of 4-byte elements that a plan splits: up to 32 outputs, the splits
  // take tiles of R in turn, the last block folding; 33 to 64 outputs, contiguous splits
  // with eight loads in flight and a second kernel. Built-in choice before (contiguous
  // splits, four loads in flight, the last block folding) and after, on an H100 (f32 sum
  // and max, 2^16 .. 2^24 rows of 3 .. 64 outputs): 16777216 x 7 in 164.7 against 183.4
  // us (max), 65537 x 64 14.1 against 27.3 (sum). Up to 16 outputs the tiles are single
  // steps interleaved across the splits, four loads in flight, a split for every four
  // steps (dense_interleaved_pays); 17 to 32, tiles of eight steps with eight loads in
  // flight. The built-in choice before and after (sum and max, 2^15 .. 2^24 rows of 2 ..
  // 16 outputs, two alternating rounds on one machine): f32 0.99 to 1.54 times the speed
  // on an H200 (1048577 x 3 sum 10.41 -> 8.52 us), 0.99 to 1.47 on an H100; f16 sums
  // 1.01 to 1.43 and 1.01 to 1.38.
  // 16-bit elements the same way, and at every width the dense rule takes (eight loads
  // in flight, contiguous splits and a second kernel past 32 outputs). Held device times
  // on an H200 (f16 sum and max; before, four loads in flight and contiguous splits, the
  // last block folding up to 64 outputs): 16777216 x 7 62.1 against 75.5 us (sum),
  // 1048577 x 33 25.7 against 35.4, 1048577 x 100 57.5 against 69.9, 1048577 x 200
  // 107.2 against 130.0.
  if (s.family == AxisFamily::columns_dense && p.splits > 1 &&
      (size_of(types.in) == 2 || (size_of(types.in) == 4 && shape.inner <= 64))) {
    s.split = shape.inner <= 32 ? AxisSplit::ticket_tiles : AxisSplit::two_pass;
    s.unroll = dense_interleaved_pays(op, types, shape) ? 4 : 8;
    p = plan_axis_launch(s, shape, sm_count);
    if (p.splits <= 1) s.split = AxisSplit::none;
  }
  // 8-byte elements over up to 64 outputs a slice, one slice or slices of R >= 2^16:
  // blocks of 256, four loads in flight; up to 16 outputs interleaved steps (the last
  // block folding), 17 to 64 contiguous splits and a second kernel. On an H200 (held,
  // `h200-2026-11-29au-probe-dense8-*`), against the contiguous splits of blocks of 512
  // (min, max) or 256 (sums) with the last block folding every partial before: i64 and
  // f64 over 2 .. 16 outputs 0.81 to 0.99 times the time (2097151 x 5 i64 min 30.3 ->
  // 25.1 us, 8151487 x 3 f64 max 54.6 -> 49.9, 16777216 x 7 i64 sum 220.6 -> 218.1), over
  // 17 .. 64 0.60 to 0.96 (65537 x 33 i64 max 16.9 -> 10.2, 99861 x 41 i64 min 21.9 ->
  // 14.9, 1000003 x 37 f64 sum 80.4 -> 76.7). Eight loads in flight were 1.03 to 1.56
  // times slower over 2 .. 16 outputs. The built-in choice before and after (two
  // alternating rounds, `…-ab-dense8.log`): one slice 1.01 to 1.88 times faster (median
  // 1.21, 68 cases); several slices of R = 65537 .. 2^20 0.99 to 1.39; but 64 slices of R
  // = 1921 (15 outputs) 0.69 to 0.88 and 3 of R = 40001 0.89 to 1.19 (sums slower), so
  // slices of R < 2^16 keep the splits before.
  if (s.family == AxisFamily::columns_dense && p.splits > 1 && size_of(types.in) == 8 && shape.inner <= 64 &&
      (shape.outputs == shape.inner || r >= (1u << 16))) {
    s.block = 256;
    s.unroll = 4;
    s.split = shape.inner <= kDenseInterleavedInner ? AxisSplit::ticket_tiles : AxisSplit::two_pass;
    p = plan_axis_launch(s, shape, sm_count);
    if (p.splits <= 1) s.split = AxisSplit::none;
  }
  // Dense columns whose splits leave at most 1536 partials: the last block folds them
  // (one launch) instead of a second kernel (split columns: below). On an H200 (`..-2026-11-27aj-probe*.log`; f16 and
  // f32 sums, f32 and bf16 max, R = 1100 .. 4096 over 33 .. 150 outputs, 264 .. 1500
  // partials), held device times within -0.6 .. +0.9 us of the second kernel's (2011 x
  // 33 f16 sum 4.37 against 4.41, 1285 x 150 f32 max 5.05 against 4.18), and at the
  // host's pace 4.2 to 5.1 us against 5.4 to 8.5: the second launch costs the host more
  // than the fold costs the last block. From about 2000 partials the fold is slower
  // either way (4096 x 65 f32 sum, 2080 partials: 4.92 against 4.30 held).
  if (s.family == AxisFamily::columns_dense && s.split == AxisSplit::two_pass && p.splits > 1 &&
      p.partial_count <= kTicketPartials) {
    s.split = AxisSplit::ticket;
    p.finalize_grid = 0;
  }
  // 16-bit columns of four adjacent outputs per thread, a thread walking R >= 8 alone:
  // eight loads in flight. Held device times on an H200 (f16 sum and max): 8 x 2^24 73.5
  // against 78.7 us, 16 x 2^22 36.5 against 39.4, 16 x 2^24 135.1 against 140.6, R = 16
  // .. 256 over 2^18 .. 2^20 outputs 1.00 to 1.04 times faster; at R = 3 1.02 times
  // slower. f32 (R = 8 .. 128 over 2^18 .. 2^24 outputs) gained nothing so (0.99 to 1.04).
  if (s.family == AxisFamily::columns && size_of(types.in) == 2 && s.vec == 4 && s.group == 1 &&
      s.rows_per_pass == 1 && s.split == AxisSplit::none && r >= 8)
    s.unroll = 8;
  // So too a thread per output off the grid that four would take (above), R < 256. On an
  // H200 (f16 sums, four loads in flight against eight): 33 x 4194303 96.0 against 88.9
  // us, 100 x 1048575 67.7 against 64.5, 127 x 2097151 172.0 against 163.6; from R = 300
  // four read faster (300 x 524287 97.5 against 99.4, 1000 x 262143 160.3 against 172.4).
  if (off_grid_16bit && s.family == AxisFamily::columns && s.vec == 1 && s.group == 1 && s.rows_per_pass == 1 &&
      s.split == AxisSplit::none && r >= 8 && r < 256)
    s.unroll = 8;
  // A thread per output with threads across R, unsplit: eight loads in flight where the
  // threads resident per SM are few (columns_walk_unroll).
  if (s.family == AxisFamily::columns && s.vec == 1 && s.group >= 2 && s.rows_per_pass == 1 &&
      s.split == AxisSplit::none)
    s.unroll = columns_walk_unroll(types, shape, s.group, sms);
  // Split so, from 15 outputs per SM (elements of 4 bytes and less): eight as well. On an
  // H200 (sums, R = 2049 .. 30001 over 2049 .. 7001 outputs, blocks of 256 with 8 threads
  // across R and a second kernel, `..-2026-11-27ag-split-*.log`), eight against four: f16
  // 1.10 to 1.66 times faster over 2049 and 3001 outputs (30001 x 2049: 92.4 against 55.7
  // us), f32 at R = 2049 1.13 and 1.23 (2049 x 3001: 14.7 against 12.0; from R = 4096 f32
  // reads four outputs a thread).
  // Not for min and max, which read faster with four (H200, `..-2026-11-27aj-probe*.log`:
  // bf16 and f32 max of 4097 and 32768 x 3001, 0.89 to 0.92 times the time of eight; then
  // f16 and f32 max of 2049 .. 30001 x 2100 .. 3001, 0.87 to 0.92 but f16 2049 x 3001,
  // 1.11); 16-bit sums from 8 outputs per SM (f16 and bf16 sums of R = 3000 .. 65537 over
  // 1100 .. 1977 outputs, 0.60 to 0.91 times the time of four, 65537 x 1201 124.5 -> 75.0
  // us; f32 sums over 1500 0.97 to 1.02, not taken). Not for many slices of short columns
  // (above).
  const bool extremum = op == Op::min || op == Op::max;
  if (s.family == AxisFamily::columns && s.vec == 1 && s.rows_per_pass == 1 && s.split == AxisSplit::two_pass &&
      size_of(types.in) <= 4 && !extremum && shape.outputs >= (size_of(types.in) == 2 ? 8 : 15) * sms &&
      !many_slices)
    s.unroll = 8;
  // Long rows that a plan splits, more than 64 of them (a block per row, fewer rows than
  // 8 per SM): one launch instead of two, the splits taking tiles of R in turn and the
  // last block folding, in blocks of 256 at 8 per SM, or 512 at 16 per SM from 2^25
  // elements. Held device times on an H100, blocks of 128 and a second kernel before,
  // this after (f32 sums of 65537 and 1048577 x 100, 65537 x 257, 262145 x 100, 257 and
  // 1000; f32 max of the x 100): 1.05 to 1.14 times faster, 100 rows of 1048577 in 140.6
  // against 152.3 us (sum). Up to 64 rows keep contiguous splits: with tiles, max of
  // 17 to 64 rows ran 0.91 to 0.98 times as fast (1048577 x 33: 59.4 against 54.3 us).
  //
  // 16-bit rows, up to 256 of them: blocks of 128 at 8 per SM. Against the blocks above,
  // f16 sum and max of 65537, 262145 and 1048577 x 100 took 0.77 to 0.99 times the time
  // on an H200 (1048577 x 100: 53.7 against 63.1 us) and 0.85 to 0.99 on an H100; over
  // 257 rows 1.02 to 1.06 times. f32 (H100) 1.05 times slower at 1048577 x 100 so.
  if (s.family == AxisFamily::rows && s.group == s.block && p.splits > 1 && s.split == AxisSplit::two_pass) {
    const bool large = r * shape.outputs >= (1ull << 25);
    const bool narrow = size_of(types.in) == 2 && shape.outputs <= 256;
    s.block = s.group = narrow ? 128 : large ? 512 : 256;
    s.split = AxisSplit::ticket_tiles;
    s.blocks_per_sm = large && !narrow ? 16 : 8;
    p = plan_axis_launch(s, shape, sm_count);
    if (p.splits <= 1) {
      s.split = AxisSplit::none;
      s.blocks_per_sm = 4;
    }
  }
  // Rows that a plan splits (a block per row, fewer than 2 per SM at four per SM), of 4
  // bytes and less, from 2^22 elements: blocks of 128, the splits taking tiles of R in
  // turn, the last block folding, at four blocks per SM below 2^23 elements and eight
  // from there (the plan rounds eight per SM down where rounding up would overfill the
  // SMs: plan_axis_launch); eight loads in flight for 4-byte elements, four for 16-bit
  // ones. But 4-byte rows over more than 64 outputs from 2^25 elements keep blocks of
  // 512 at 16 per SM (above). On an H200 (set CC in docs/BENCHMARKS.md, the bench's
  // calls, two alternating rounds; 3 to 257 rows of 4.2 x 10^6 to 1.0 x 10^8 elements, f32
  // sum and max, f16 sum and max, bf16 mean, i32 sum, u32 max), against the choices above
  // (contiguous splits at four per SM for 17 to 64 rows, and below R = 2^20; tiles at 8
  // per SM in blocks of 128 to 512): 379 cases that changed, 0.94 to 1.34 times as fast,
  // median 1.08, 308 of them faster by more than 2% (f32 max 898779 x 7 12.29 -> 9.95 us,
  // f16 sum 24577 x 256 6.97 -> 5.65, bf16 mean 4194305 x 24 62.07 -> 50.77; the slowest,
  // 0.94 to 0.95, f16 max and bf16 means of 9 and 20 rows of 4.6 x 10^6 elements, about
  // 5 us either way). Below 2^22 elements both ways (0.90 to 1.17).
  if (s.family == AxisFamily::rows && s.group == s.block && p.splits > 1 &&
      (s.split == AxisSplit::ticket || s.split == AxisSplit::ticket_tiles) && size_of(types.in) <= 4 &&
      r * shape.outputs >= (1ull << 22) &&
      !(size_of(types.in) == 4 && shape.outputs > 64 && r * shape.outputs >= (1ull << 25))) {
    s.block = s.group = 128;
    s.split = AxisSplit::ticket_tiles;
    s.unroll = size_of(types.in) == 4 ? 8 : 4;
    s.blocks_per_sm = r * shape.outputs < (1ull << 23) ? 4 : 8;
    p = plan_axis_launch(s, shape, sm_count);
    if (p.splits <= 1) {
      s.split = AxisSplit::none;
      s.blocks_per_sm = 4;
    }
  }
  // General outputs of a block each read element by element (no vectors along R: a
  // strided densest reduced dimension, such as every other element), split: blocks of
  // 256 with eight loads in flight, at four blocks per SM, where the view reduces one
  // dimension (the strided loop, its tail batched) or each split reads 24 KiB or more
  // (32768 elements before set BT). Unsplit, one reduced dimension: eight loads in
  // flight. Held device times on an H200 against blocks of 128 with four
  // (`..-2026-11-27ai-strided-*.log`, 24 configs of block, loads in flight and blocks
  // per SM, and `..-ai-ab-*`): every other element of
  // 37046327 f16 max 73.34 -> 42.97 us (torch 45.20), f32 sum 94.93 -> 74.81; 24 rows of
  // 262143 every other element, f16 max 16.16 -> 10.67, f32 sum 19.87 -> 15.94; 100 rows of
  // 1000000 so 166.98 -> 131.01 and 231.58 -> 211.58; 100 outputs over (0,2) of
  // [1000,100,1001] (splits of 166833) 164.64 -> 114.45 and 177.09 -> 142.05. Over (0,2)
  // of [64,128,513] (splits of 6566 along two dimensions) 0.93 and 0.95 times as fast:
  // not taken. Unsplit, 1000 rows of 8191 every other element: 12.72 -> 10.81 (f16 max),
  // 18.77 -> 17.88 (f32 sum). On an H100 (`h100-..-ai-ab-*`, `..-ai-unsplit-*`): 37046327
  // f16 max 81.60 -> 58.42, f32 sum 120.37 -> 108.22, [1000,100,1001] 169.60 -> 122.20 and
  // 194.86 -> 176.72, [64,128,513] kept at 9.43 and 13.39 (10.21 and 14.73 with the rule),
  // 4096 rows of 8192 every other element unsplit 51.49 -> 46.34 and 89.50 -> 88.44.
  // Vectors of 16 bytes over the span, keeping every other element (pairs of elements as
  // one word), read no faster on an H100 (0.84 to 1.13 times the speed, `..-ai-pairs-*`): not made.
  // Set BT (H200, held; config probes at the plan's splits, two reduced dimensions, `[a,
  // b, c, d]` over (1,3)): blocks of 256 with eight loads in flight against the choice
  // before (128, four), by the bytes a split reads: [2,13,2,242197] (23853 elements) f32
  // sum 30.50 -> 19.56 us, f32 max 30.62 -> 19.81, i64 max 37.87 -> 29.39, f16 sum 28.57
  // -> 18.44; [4,8,4,60001] (14546) f32 1.46 to 1.47 times as fast, i64 1.25, f16 1.04;
  // [8,3,8,30001] (11250) f32 1.37 to 1.39, i64 1.21, f16 1.00; [64,128,513] over (0,2)
  // (8208; 0.93 to 0.95 times as fast in set AI's plan, splits of 6566) f32 1.35 to
  // 1.36, i64 1.19, f16 0.99; [4,5,4,50001] (7576) f32 1.27 to 1.28, i64 1.19, f16
  // 0.97; [3,9,5,20001] (5143) f32 0.92 to 0.93, f16 0.94, i64 1.11; [2,4,2,100003]
  // (4124) 1.00 to 1.03. Hence 24 KiB: f32 from 6144 elements, 16-bit from 12288,
  // 8-byte from 3072.
  if (s.family == AxisFamily::general && s.vec == 1 && s.group == s.block) {
    const bool one_dimension = shape.reduced_rank == 1;
    if (s.split != AxisSplit::none && p.splits > 1 &&
        (one_dimension || ceil_div(r, p.splits) * size_of(types.in) >= 24576)) {
      s.block = s.group = 256;
      s.unroll = 8;
      p = plan_axis_launch(s, shape, sm_count);
    } else if (s.split == AxisSplit::none && one_dimension) {
      s.unroll = 8;
    }
  }
  // Split columns a thread per output, 8 threads across R in blocks of 256 (elements of 4
  // bytes and less; not the many slices above): eight loads in flight at four blocks per
  // SM, registers capped to keep those resident (capped_split_columns), the last block of
  // each group folding where its fold is short, at any size. Capped, the ticket's fold no
  // longer costs the main loop its loads in flight (below): on an H200 (set BO, paced),
  // the capped ticket against the capped second kernel mostly as fast or faster (f16 max
  // 4097 x 3001 15.90 -> 12.81 us, 2049 x 3001 10.15 -> 7.56; 262145 x 1001 190.60 ->
  // 186.53). It takes min and max at eight blocks per SM and four loads in flight too (the
  // rule above, made uncapped): f16 max 16385 x 1001 17.57 -> 15.75 us, f32 max 16385 x 257
  // 10.72 -> 9.27; 16-bit ones at R = 262145 over 1001 0.99 times as fast (184.67 ->
  // 186.53).
  if (s.family == AxisFamily::columns && s.vec == 1 && s.group == 8 && s.block == 256 && s.rows_per_pass == 1 &&
      (s.split == AxisSplit::two_pass || s.split == AxisSplit::ticket) && p.splits > 1 &&
      size_of(types.in) <= 4 && !many_slices) {
    s.unroll = 8;
    s.blocks_per_sm = 4;
    AxisKernelSpec t = s;
    t.split = AxisSplit::ticket;
    const AxisLaunchPlan q = plan_axis_launch(t, shape, sm_count);
    if (q.splits > 1 && axis_columns_fold_trips(t, 1) <= 4 && axis_columns_fold_trips(t, q.splits) <= 8) {
      s = t;
      p = q;  // the call path plans once where the ticket is taken
    } else {
      s.split = AxisSplit::two_pass;
      p = plan_axis_launch(s, shape, sm_count);
    }
    if (plan) *plan = p;
    return s;
  }
  // Split columns of up to 16 MiB fold in one launch where each group's fold is short:
  // the last of each group of blocks that share tiles of outputs folds those outputs
  // (rt::columns_ticket_finish), all groups side by side, as torch's reduction does with a
  // semaphore per tile. A second kernel costs the host a launch, which is most of the
  // call's time where the device's is small. On an H200, the bench's calls at the host's
  // pace, the second kernel against this (`..-2026-11-29as-ab.log`, the faster of two
  // rounds; f32 sum and max, bf16 max and mean, i64 sum and max, R = 1285 .. 8192 over 65
  // .. 3001 outputs): 1.03 to 2.15 times faster (bf16 max 4095 x 479: 7.43 -> 5.34 us;
  // f32 max 4096 x 65: 8.45 -> 3.93). Past 16 MiB the fold's code leaves the main loop
  // fewer loads in flight or fewer blocks per SM (`..-as-fold-forms-ab.log`): f32 sum
  // 30001 x 3001 104.1 -> 140.8 us, i64 max 200.2 -> 282.4, while a second kernel's
  // launch is a small part of the call. Where a group's fold takes more round trips (a
  // tile of many outputs over many splits: vectors of four outputs in blocks of 128), the
  // second kernel's warp per output folds faster.
  //
  // So too 4-byte vectors of four outputs in blocks of 128 at any size where each group's
  // fold takes at most four round trips (about 33 tiles of outputs and more). On an H200
  // (set BP, paced; f32 sum and max, R = 4097 .. 40000 over 5000 .. 8000 outputs), against
  // the second kernel: 1.01 to 1.23 times as fast (max 33000 x 5000 191.4 -> 156.0 us,
  // torch 168.3); at six trips (3000 outputs) 1.00 to 1.03, at nine (2048) 0.73 to 0.97.
  const bool short_vector_fold = s.family == AxisFamily::columns && s.vec == 4 && s.block == 128 &&
                                 s.group == 4 && size_of(types.in) == 4;
  if (s.family == AxisFamily::columns && s.split == AxisSplit::two_pass && p.splits > 1) {
    AxisKernelSpec t = s;
    t.split = AxisSplit::ticket;
    const AxisLaunchPlan q = plan_axis_launch(t, shape, sm_count);
    if (columns_fold_in_one_launch(t, shape, q.splits) || (last_block_folds && q.splits > 1) ||
        (short_vector_fold && q.splits > 1 && axis_columns_fold_trips(t, q.splits) <= 4)) {
      s = t;
      p = q;
    }
  }
  if (plan) *plan = p;
  return s;
}

}  // namespace

// Split columns a thread per output, in blocks of 256 with 8 threads across R at four
// blocks per SM (the plan's whole residency: 1024 threads an SM), eight loads in flight
// (4-byte elements and less, the last block of each group folding or a second kernel) or
// four (8-byte sums, products and means, a second kernel): their registers capped to fit
// those 1024 threads.
// Uncapped, the compiler aims for 32 registers a thread (2048 threads an SM, which the
// plan never launches) and gets there by folding a load before the later ones are
// issued: a sum's thread issued 5 of its 8 loads before its first fold (NVRTC for sm_90,
// f16 and f32), and the ones after it wait a second round trip. Capped (40 to 44
// registers), all eight go first. On an H200 (set BO in docs/BENCHMARKS.md, paced), the
// built-in choice before and after over 42 columns shapes of R = 2049 to 262145 and 257
// to 6199 outputs, where the choice changed (the first of two rounds): 16-bit sums 1.06
// to 1.72 times as fast where they were not staged (median 1.28; f16 sum 8193 x 1001
// 16.85 -> 9.82 us), and 1.02 to 1.28 where they were (one binary's staged choice against
// this config: f16 sum 30001 x 4093 88.87 -> 75.19); means 0.98 to 1.35 (median 1.08), min
// and max 0.99 to 1.48 (median 1.25, where they read four loads, at eight blocks per SM
// in a band, before); f32 sums and means 1.07 to 1.36, min and max 1.05 to 1.28; i32 sums
// and max 1.03 to 1.27; f64 and i64 sums (four loads, a second kernel) 1.03 to 1.22. Not
// 8-byte min and max: capped, 0.89 to 1.21 times as fast (f64 max 2049 x 3001 18.90 ->
// 21.12 us).
bool capped_split_columns(const AxisKernelSpec& s) {
  const std::size_t size = size_of(s.types.in);
  return s.family == AxisFamily::columns && s.vec == 1 && s.group == 8 && s.block == 256 && s.rows_per_pass == 1 &&
         s.blocks_per_sm == 4 && s.tail == 0 &&
         ((size <= 4 && s.unroll == 8 && (s.split == AxisSplit::ticket || s.split == AxisSplit::two_pass)) ||
          (size == 8 && s.unroll == 4 && s.split == AxisSplit::two_pass && s.op != Op::min && s.op != Op::max));
}

// Short columns of many outputs, vectors of them a thread, each thread walking R <= 3
// alone: their loads are all a thread has in flight, and the kernel's registers (68 to 77
// a thread for f32 and bf16 sums, no spills) leave 896 threads per SM in blocks of 128,
// 768 in blocks of 256. Capped so that more stay resident, the memory is kept busier. On an
// H200, the built-in configs compiled at each cap against the compiler's choice (at the
// host's pace, the lower of two rounds, `h200-2026-11-29ax-occupancy-probe.log`), from
// 2^21 outputs: f32 sum and max at 1024 threads 1.06 to 1.17 times faster (2 x 8388608
// sum 31.03 -> 27.39 us, 3 x 16777216 67.30 -> 63.76), R = 4 to 16 no faster (64
// registers, no spills); 16-bit sums and bf16 means at 1536 (40 registers, their spills
// off the path these shapes take) 1.00 to 1.16 (bf16 mean of 2 x 8388608 32.46 ->
// 28.02, f16 sum of 3 x 16777216 45.77 -> 40.17), but from R = 4 up to 1.28 times slower
// (bf16 mean of 8 x 2097152 11.57 -> 14.84). Held at 2^21 outputs (`…-ax-held-*.log`):
// f32 sum of 2 x 2097152 8.19 -> 7.30 us, bf16 6.73 -> 6.79. Below 2^21 outputs no
// faster (f32 sum of 2 x 1048576 3.46 and 3.47 us), and at the host's pace the calls'
// noise (3.6 to 5.0 us a call, `…-ax-ab-short-columns.log`) hid any difference.
std::uint32_t occupancy_that_pays(const AxisKernelSpec& s, const CanonicalAxes& shape) {
  // A converting copy's program (short_columns at unroll=1) fits 2048 threads with no
  // spills (NVRTC for sm_90: 24 to 32 registers).
  if (s.family == AxisFamily::short_columns) return s.unroll == 1 && s.occupancy == 0 ? 2048 : 0;
  if (capped_split_columns(s)) return 1024;
  if (s.family != AxisFamily::columns || s.vec == 1 || s.group != 1 || s.rows_per_pass == 4 ||
      s.split != AxisSplit::none || shape.reduced > 3 || shape.outputs < (1u << 21))
    return 0;
  const std::size_t size = size_of(s.types.in);
  const std::uint32_t threads = size == 2 ? 1536 : size == 4 ? 1024 : 0;
  return threads != 0 && threads % s.block == 0 ? threads : 0;
}

// Whether builtin_axis_spec reads `shape` with `s` two vectors of outputs a thread a
// pass (rows=2; rt::axis_columns_kernel issues both vectors' loads along R before it
// folds either): where occupancy_that_pays caps 4-byte columns at 1024 threads, in blocks
// of 256. Probed on an H200 beside the built-in choice (set AZ, `…-az-probe-*.log`, paced
// us): f32 sum 2 x 8388608 27.37 -> 25.36, 3 x 4194304 17.47 -> 17.30, 3 x 16777216
// 64.64 -> 63.13, 2 x 2622080 8.88 -> 8.66, 2 x 2097152 7.35 -> 7.36; max 28.46 -> 25.54,
// 17.81 -> 17.47, 64.15 -> 62.90, 9.54 -> 8.78, 7.84 -> 7.50. Uncapped, capped at 1536, in
// blocks of 128 or four vectors a pass, slower than that at each (four vectors up to 1.36
// times the built-in choice's time). The rule against the old choice's config: 0.98 to
// 1.11 times as fast (0.98 for rows of 2100000 padded to 2100008). 16-bit columns mixed:
// f16 sums of R = 2 four vectors a pass in blocks of 128 1.15 to 1.35 times faster, of R =
// 3 0.86 to 0.87; bf16 sums 0.66 to 1.27; bf16 means slower on the grid (the tuner's
// candidates do not hold them).
// Not off the grid, where the twin reads one vector a pass over half the blocks (3 x
// 4194303: f32 sum 17.98 -> 20.97 us with two).
bool two_vectors_a_pass_pay(const AxisKernelSpec& s, const CanonicalAxes& shape) {
  const std::uint64_t v = s.vec;
  const bool on_grid = shape.inner_step == 1 && shape.inner % v == 0 &&
                       static_cast<std::uint64_t>(shape.reduced_stride) % v == 0 &&
                       static_cast<std::uint64_t>(shape.outer_stride) % v == 0;
  return s.family == AxisFamily::columns && s.vec > 1 && s.block == 256 && s.rows_per_pass == 1 &&
         size_of(s.types.in) == 4 && on_grid && occupancy_that_pays(s, shape) == 1024;
}

// Whether the batched tail (AxisKernelSpec::tail, rt::batched_index) reads `shape` faster
// with `s` than a guarded load per step, by where a thread's run along R ends: the loads
// of its last, partial tile, which the guarded loop takes one or two round trips at a
// time. Built-in choice with and without it on an H200 and an H100 (f32 and f16, sum
// and max, the same machine, alternating; docs/BENCHMARKS.md, sets N and O):
//   rows, groups of 8 to 32 lanes with vectors, where a row holds more than one tile
//     and its last one more vectors than the group has lanes (a lane then has two or
//     three loads left): R = 999 .. 2000 over 16385 .. 100000 rows 1.06 to 1.30 times
//     faster (f32 sum 1000 x 16385: 22.19 -> 18.56 us on the H200, 27.81 -> 25.05 on
//     the H100). Where the last tile leaves a lane one load or none (R = 300, f32 and
//     f16), batched everywhere ran 0.86 to 0.93 times as fast.
//   columns unsplit with 16 or 32 threads across R, where some thread has two or three
//     loads past its last whole tile: 1000 x 1000 and 300 x 16385 1.03 to 1.14 times
//     faster. With 8 threads across R and a second kernel (65537 x 100), the compiler
//     scheduled the whole loop's loads one at a time: 0.66 to 0.92.
//   columns whose threads have fewer loads than a tile (R = 2 or 3 with one thread
//     across it) from 2^22 elements: f32 3 x 2^24 1.03 to 1.05 times faster (f16, in an
//     earlier form of the kernel, 1.17 to 1.32); over 2^20 outputs 0.95 to 1.03. Not
//     16-bit means: held on an H200 (vectors of four in blocks of 128), the guarded loads
//     read them 1.02 to 1.15 times faster: bf16 2 x 2622080 11.39 -> 10.06 us, 3 x 2622080
//     12.67 -> 12.10, 2 x 8388608 34.03 -> 31.93; f16 9.84 -> 8.56, 11.28 -> 11.05, 30.71
//     -> 29.55 (`h200-2026-11-29av-tail-configs-*.log`). 16-bit sums there were mixed
//     (f16 0.97 to 1.16, bf16 1.00 to 1.13): kept.
bool batched_tail_pays(const AxisKernelSpec& s, const CanonicalAxes& shape) {
  // (Columns of two vectors a pass: the twin reads one vector a pass, so as one does.)
  const bool two_vectors = s.family == AxisFamily::columns && s.vec > 1 && s.rows_per_pass == 2;
  if ((s.rows_per_pass != 1 && !two_vectors) || s.split != AxisSplit::none) return false;
  const std::uint64_t r = shape.reduced;
  if (s.family == AxisFamily::rows) {
    if (s.group < 8 || s.group > 32 || s.vec == 1) return false;
    const std::uint64_t vectors = r / s.vec;
    const std::uint64_t tile = static_cast<std::uint64_t>(s.unroll) * s.group;
    return vectors > tile && vectors % tile > s.group;
  }
  if (s.family != AxisFamily::columns) return false;
  // Thread t across R reads steps t, t + by, ... < R: ceil((R - t) / by) loads.
  const std::uint64_t longest = ceil_div(r, s.group);
  if (longest < s.unroll)
    return longest >= 2 && s.group == 1 && r * shape.outputs >= (1u << 22) &&
           !(s.op == Op::mean && size_of(s.types.in) == 2);
  // Sums (and means of 4- and 8-byte elements) of a thread per output reading one tile
  // and two or more loads past it (R = 6 and 7 at four loads in flight), likewise: two
  // round trips instead of three or four. H200, paced, the built-in choice before and
  // after (set BS): 1.01 to 1.13 times as fast over f64, f32, i32 and i64 sums (f64
  // [131071,8,7,7] along 2 121.9 -> 113.8 us, torch.sum 118.1 from Python; f32 [6,3000001]
  // along 0 28.9 -> 25.7); f32 max 0.90 to 1.02 (131071 x 8 x 7 x 7 71.3 -> 75.0), not
  // taken; R = 5 (one load past the tile) 0.97 to 1.00, not taken.
  if (s.group == 1 && s.vec == 1 && longest < 2ull * s.unroll)
    return r % s.unroll >= 2 && r * shape.outputs >= (1u << 22) &&
           (s.op == Op::sum || (s.op == Op::mean && size_of(s.types.in) != 2));
  if (s.group < 16) return false;
  // With R = q by + m, threads t < m read q + 1 loads and the others q (no division per
  // thread: the runtime asks this on every call it serves with the built-in choice).
  const std::uint64_t q = r / s.group, m = r % s.group;
  const std::uint64_t most_left = std::max<std::uint64_t>(q % s.unroll, m > 0 ? (q + 1) % s.unroll : 0);
  return most_left >= 2;
}

// A small view in one launch: held device times on an H200, the two launches against the
// general kernel alone (its lanes per output capped at R / 2, builtin_axis_choice), f32
// sum and bf16 max of [R, a, b] with strides [a*b, 1, a] along 0
// (`..-2026-11-27aj-probe2.log`): 16 x 64 x 64 5.18 against 3.03 us, 8 x 128 x 129 5.30
// against 3.41, 16 x 1024 x 16 5.57 against 3.79, 32 x 128 x 64 5.32 against 4.25; at the
// host's pace 7.6 to 9.6 us against 3.4 to 4.3. Past R = 256 or 2^18 elements two
// launches read faster: 64 x 128 x 100 5.69 against 7.78, 512 x 32 x 32 6.40 against
// 8.91, 1000 x 16 x 16 5.57 against 14.14.
//
// A transposed batch of rows (the densest dimension reduced) read in the caller's order
// by the general kernel, against rows in the order of the strides written directly, held
// device times on an H200, f32 sum and bf16 max (docs/BENCHMARKS.md, set AL): 31640 x 468
// 29.5 -> 16.1 and 23.3 -> 9.5 us; 131072 x 128 27.4 -> 17.5 and 16.8 -> 9.6; 131072 x 8
// 7.0 -> 3.0 and 6.6 -> 1.8; 512 x 100 3.0 -> 1.7 and 3.2 -> 1.7 (contiguous rows' times,
// the order's stores not included). Past 2^18 outputs the result is staged and copied
// (axis_reorder_writes_directly) by the transpose family; held on an H100, the general
// kernel as it reads the view against staged and copied (docs/BENCHMARKS.md, set AM):
// rows of up to 32 bytes gained at every count measured: 2^19 rows of 8 f32 12.91 ->
// 11.30 us, of 8 bf16 21.14 -> 7.36; 2^20 of 8 f32 26.75 -> 21.47, of 16 bf16 27.47 ->
// 20.16; 2^22 of 8 f32 91.90 -> 77.95, of 16 bf16 95.64 -> 74.29. Rows of 64 bytes were
// mixed (2^20 of 16 f32 31.38 -> 33.30, of 32 bf16 30.72 -> 32.31; 2^22 of 16 f32 132.02
// -> 122.93) and stay as they are.
bool axis_reorder_may_pay(const CanonicalAxes& shape) {
  if (shape.layout != AxisLayout::general || shape.reduced < kAxisReorderMinReduced) return false;
  // Folded columns read every row whole in one launch, the outputs in the caller's order.
  if (const std::optional<FoldedColumns> f = axis_folded_columns(shape); f && folded_columns_pay(*f)) return false;
  if (shape.reduced > kAxisReorderSmallReduced || shape.reduced * shape.outputs > kAxisReorderSmallElements)
    return true;
  // A small view pays only as the second kind: its densest dimension reduced (merging
  // keeps each run's innermost stride, so the canonical dimensions tell).
  const auto least = [](const std::int64_t* extents, const std::int64_t* strides, int rank) {
    std::uint64_t m = ~std::uint64_t{0};
    for (int i = 0; i < rank; ++i)
      if (extents[i] > 1) m = std::min(m, magnitude(strides[i]));
    return m;
  };
  return least(shape.reduced_extents, shape.reduced_strides, shape.reduced_rank) <
         least(shape.kept_extents, shape.kept_strides, shape.kept_rank);
}

bool axis_reorder_pays(const AxisReorder& reorder, const CanonicalAxes& shape, std::size_t in_size) {
  if (reorder.reduces_densest())
    return shape.outputs <= kAxisDirectOrderFewOutputs || shape.reduced * in_size <= kAxisReorderShortRowBytes;
  return shape.reduced > kAxisReorderSmallReduced || shape.reduced * shape.outputs > kAxisReorderSmallElements;
}

std::optional<AxisReorder> axis_reorder(const TensorDesc& tensor, const AxisList& axes, const CanonicalAxes& shape) {
  if (shape.layout != AxisLayout::general || shape.kept_rank < 2 || shape.reads_nothing() ||
      shape.reduced < kAxisReorderMinReduced || tensor.rank < 2 || tensor.rank > kMaxRank)
    return std::nullopt;
  bool reduced_dim[kMaxRank] = {};
  for (int i = 0; i < axes.count; ++i) reduced_dim[(axes.axes[i] + tensor.rank) % tensor.rank] = true;
  // The densest dimension (of extent > 1) kept but not the last kept one, or reduced
  // (then only where the stride order makes rows, below).
  int densest = -1, last_kept = -1;
  for (int d = 0; d < tensor.rank; ++d) {
    if (tensor.extents[d] <= 1) continue;
    if (!reduced_dim[d]) {
      if (tensor.strides[d] <= 0) return std::nullopt;  // broadcast or reversed outputs: not here
      last_kept = d;
    }
    if (densest < 0 || magnitude(tensor.strides[d]) < magnitude(tensor.strides[densest])) densest = d;
  }
  if (densest < 0 || densest == last_kept) return std::nullopt;
  // Dimensions by stride, largest first (extent-1 dimensions go with their strides).
  int order[kMaxRank];
  for (int d = 0; d < tensor.rank; ++d) order[d] = d;
  std::stable_sort(order, order + tensor.rank,
                   [&](int a, int b) { return magnitude(tensor.strides[a]) > magnitude(tensor.strides[b]); });
  AxisReorder r;
  r.stage1.rank = tensor.rank;
  for (int i = 0; i < tensor.rank; ++i) {
    r.stage1.extents[i] = tensor.extents[order[i]];
    r.stage1.strides[i] = tensor.strides[order[i]];
    if (reduced_dim[order[i]]) r.stage1_axes.axes[r.stage1_axes.count++] = i;
  }
  const CanonicalResult c1 = canonicalize(r.stage1, r.stage1_axes);
  if (!c1.ok || c1.axes.outputs != shape.outputs) return std::nullopt;
  if (reduced_dim[densest] && c1.axes.layout != AxisLayout::rows) return std::nullopt;
  r.stage1_shape = c1.axes;
  // The stage-1 result is C-contiguous over the kept dimensions in stage-1 order: each
  // kept dimension's stride there.
  std::int64_t stride_in_result[kMaxRank] = {};
  std::int64_t step = 1;
  for (int i = tensor.rank - 1; i >= 0; --i) {
    if (reduced_dim[order[i]]) continue;
    stride_in_result[order[i]] = step;
    step *= tensor.extents[order[i]];
  }
  r.copy.rank = 0;
  for (int d = 0; d < tensor.rank; ++d) {
    if (reduced_dim[d]) continue;
    r.copy.extents[r.copy.rank] = tensor.extents[d];
    r.copy.strides[r.copy.rank] = stride_in_result[d];
    ++r.copy.rank;
  }
  const CanonicalResult c2 = canonicalize(r.copy, AxisList{});
  if (!c2.ok || c2.axes.outputs != shape.outputs) return std::nullopt;
  r.copy_shape = c2.axes;
  // The inverse of the copy: each kept dimension in stage-1 order (extent > 1) with its
  // stride in the caller's C-contiguous output, neighbours merged where that stays one
  // run. Only where every index fits 32 bits.
  if (shape.outputs <= 0xffffffffull) {
    std::int64_t stride_in_output[kMaxRank] = {};
    step = 1;
    for (int d = tensor.rank - 1; d >= 0; --d) {
      if (reduced_dim[d]) continue;
      stride_in_output[d] = step;
      step *= tensor.extents[d];
    }
    for (int i = 0; i < tensor.rank; ++i) {
      const int d = order[i];
      if (reduced_dim[d] || tensor.extents[d] <= 1) continue;
      const auto extent = static_cast<std::uint32_t>(tensor.extents[d]);
      const auto stride = static_cast<std::uint32_t>(stride_in_output[d]);
      AxisOutputOrder& o = r.order;
      if (o.rank > 0 && o.strides[o.rank - 1] == static_cast<std::uint64_t>(stride) * extent) {
        o.extents[o.rank - 1] *= extent;  // the outer one continues this run
        o.strides[o.rank - 1] = stride;
      } else {
        o.extents[o.rank] = extent;
        o.strides[o.rank] = stride;
        ++o.rank;
      }
    }
  }
  return r;
}

namespace {
bool same_view(const TensorDesc& a, const TensorDesc& b) {
  if (a.rank != b.rank || a.rank < 0 || a.rank > kMaxRank) return false;
  for (int i = 0; i < a.rank; ++i)
    if (a.extents[i] != b.extents[i] || a.strides[i] != b.strides[i]) return false;
  return true;
}
bool same_axes(const AxisList& a, const AxisList& b) {
  if (a.count != b.count || a.count < 0 || a.count > kMaxRank + 1) return false;
  for (int i = 0; i < a.count; ++i)
    if (a.axes[i] != b.axes[i]) return false;
  return true;
}
}  // namespace

const std::optional<AxisReorder>& AxisReorderCache::get(const TensorDesc& tensor, const AxisList& axes,
                                                        const CanonicalAxes& shape) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  const int rank = tensor.rank < 0 || tensor.rank > kMaxRank ? 0 : tensor.rank;
  mix(static_cast<std::uint64_t>(tensor.rank));
  for (int i = 0; i < rank; ++i) {
    mix(static_cast<std::uint64_t>(tensor.extents[i]));
    mix(static_cast<std::uint64_t>(tensor.strides[i]));
  }
  const int count = axes.count < 0 || axes.count > kMaxRank + 1 ? 0 : axes.count;
  mix(static_cast<std::uint64_t>(axes.count));
  for (int i = 0; i < count; ++i) mix(static_cast<std::uint64_t>(axes.axes[i]));
  Entry& e = entries_[(h ^ (h >> 29)) % std::size(entries_)];
  if (e.used && same_view(e.tensor, tensor) && same_axes(e.axes, axes)) {
    ++hits_;
    return e.value;
  }
  ++misses_;
  e.value = axis_reorder(tensor, axes, shape);
  e.tensor = tensor;
  e.axes = axes;
  // A view or axis list past the limits is never reused (canonicalize refuses it first).
  e.used = same_view(tensor, tensor) && same_axes(axes, axes);
  return e.value;
}

std::uint64_t AxisOutputOrder::offset(std::uint64_t j) const {
  if (rank == 0) return j;
  std::uint64_t off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    off += j % extents[d] * strides[d];
    j /= extents[d];
  }
  return off;
}

// Writing the caller's order from the stage-1 kernels scatters their stores (a sector
// written for each output element) and costs an index per output (a 32-bit division per
// dimension), against a second launch that reads and writes the outputs once more. Held
// device times, staged and copied -> written directly (docs/BENCHMARKS.md, set AK):
// - H200, this form: R = 1024 over 687 outputs 7.65 -> 3.62 us (bf16 max); R = 4 over
//   65792 5.8 -> 3.3; R = 256 over 2^18 41.8 -> 38.0; R = 64 over 10^6 45.9 -> 43.8 (bf16),
//   75.5 -> 72.5 (f32); R = 16 over 2^20 32.6 -> 28.8 (f32), over 2^22 115 -> 112 (f32).
// - H100, every kernel deciding at run time (the same stores): R = 16 over 2^20 26.1 ->
//   27.5 (bf16), R = 8 19.4 -> 23.1 (bf16) but 28.1 -> 26.6 (f32); over 2^22 R = 16 94.2
//   -> 98.1 (bf16), R = 4 76.4 -> 90.5 (f32); over 2^24 R = 4 278 -> 378 (f32).
//
// Those were against a copy by the general family (a thread per output, reading the
// staged result a stride apart). With the copy in tiles (the transpose family), staging
// read faster past 2^18 outputs wherever it was measured; held on an H100, written
// directly -> staged and copied (set AM): the first kind, R = 8 over 2^19 f32 14.90 ->
// 10.73 us; R = 8, 16 and 32 over 2^20 f32 27.36 -> 20.55, 37.84 -> 33.09, 58.98 ->
// 55.32, bf16 max R = 32 37.57 -> 32.73; R = 64 over 10^6 95.69 -> 94.60 (bf16 57.32 ->
// 53.16); R = 16 over 2^22 143.54 -> 121.92 (bf16 95.48 -> 74.22); R = 4 over 2^24 376.64
// -> 180.77. At 2^18 (R = 256) the two were even: 91.91 against 93.26 (f32), 50.39
// against 50.05 (bf16). The second kind likewise (2^22 rows of 8 f32 112.85 -> 77.95).
// Between 2^16 and 2^18 outputs (held, both kinds, R = 4 to 64, f32 sum and bf16 max;
// docs/BENCHMARKS.md, set AN), on an H200: written directly was faster up to 2^17 outputs
// in f32 (staged 0.06 to 1.64 us slower), and in bf16 98304 and 2^17 were within -0.57 ..
// +0.63; from 196608 staging was faster where an output reads up to 64 bytes (2^18
// outputs, R = 4: f32 5.93 -> 4.27, bf16 6.64 -> 4.41; f32 rows of 16 at 196608 even,
// 5.66 -> 5.68), mixed at 128 (f32 R = 32: rows 14.26 -> 13.76, columns 12.01 -> 12.40)
// and slower past it (f32 R = 64: rows 18.26 -> 20.63). On an H100, a rule that staged up
// to 128 bytes against 49d4d5f's (written directly up to 2^18): 1.04 to 1.69 times as
// fast up to 64 bytes, but 0.92 to 1.07 at 128 (f32 R = 32 columns of 2^18 14.69 ->
// 15.95, bf16 rows of 64 12.04 -> 12.75 at 196608).
bool axis_spec_has_ordered_form(const AxisKernelSpec& spec) {
  // A family test, not axis_spec_problem: the runtime asks on every call of a permuted
  // view, where a refusal's message would allocate. AxisSpec's test holds the two alike.
  return spec.family != AxisFamily::short_columns && spec.family != AxisFamily::transpose;
}

bool axis_reorder_writes_directly(const AxisReorder& reorder, std::size_t in_size) {
  if (reorder.order.rank < 1 || reorder.order.rank > kAxisOrderMaxRank) return false;
  const CanonicalAxes& stage1 = reorder.stage1_shape;
  if (stage1.outputs <= kAxisDirectOrderAnyRows) return true;
  return stage1.outputs <= kAxisDirectOrderFewOutputs && stage1.reduced * in_size > kAxisDirectOrderLongRowBytes;
}

// Long columns of a few thousand outputs side by side: the columns program reads them a
// thread per output (2 or 4 bytes a load, a warp 64 or 128 bytes of a row) and there kept
// too few bytes in flight. The staged kernel reads whole 16-byte vectors wherever the
// rows start, but folds an element at a time from shared memory, so it pays only where
// the fold is cheap and the columns program slow. On H200s (set BN in
// docs/BENCHMARKS.md; the built-in choice of 1c92ea8 against this one, the lower of two
// rounds, held device times):
// - f32 sums and means, R = 24577 to 262145 over 1001 to 6143 outputs: 1.00 to 1.90
//   times as fast (sum 65537 x 5001 414.0 -> 314.8 us; 100003 x 1502 280.7 -> 150.1,
//   where the columns program read four outputs a thread off their grid), but means of
//   30001 x 4093 and 4097 0.94 and 0.95 (the columns program, with the config its sums
//   take, read means there 1.16 times as fast as sums);
// - f16 sums, R = 20000 to 262145 over 1001 to 5001 outputs: 0.95 to 1.29 on one
//   machine (65537 x 4093 the 0.95; 1.03 on another), 1.03 to 1.39 on the other; at R =
//   16385 over 1001 and 2049 0.98 to 1.08, over 6143 0.98 to 1.03;
// - f16 means 0.81 to 1.18 (the columns program again faster for means than for sums),
//   f16 and f32 max 0.76 to 1.10 (a compare and select an element: the fold sets the
//   pace): not taken then.
// Since set BR a staged f32 element folds into min and max with one instruction
// (rt::staged_fold), and f32 min and max are staged in the same band from 2500 outputs,
// or from 2^27 elements below that. Against edac217's choice (the capped split or a
// thread per output unsplit), the lower of two alternating rounds: max 1.01 to 1.30
// times as fast over 21 such shapes, median 1.06 (65537 x 5001 412.6 -> 316.2 us, torch
// 365.4; 262145 x 3001 897.6 -> 739.9; 200003 x 2049 490.5 -> 413.0), min 1.00 to 1.31;
// but below 2500 outputs under 2^27 elements 0.86 to 1.04 (24576 x 1001 29.6 -> 34.1,
// 30001 x 1234 0.93): not staged there. 16-bit max still compares and selects. i32 and
// u32 min and max (whose compare and select is one instruction already) staged in the
// same band, in one probe of the same binary, the lower of paced and held: 1.02 to 1.33
// times as fast as the columns program over 9 shapes each (i32 max 65537 x 5001 413.9 ->
// 315.4 us, torch 372.2; 200003 x 2049 510.8 -> 414.4, torch 460.2), and below the
// bounds 0.88 to 1.01 (24576 x 1001, 30001 x 1234, 65537 x 1001), as f32's.
// The columns program's means ran faster than its sums because the compiler scheduled
// them otherwise: at the 32 registers a thread it aims for, a sum's thread issued five to
// seven of its eight loads before folding the first, a mean's (39 registers) all eight.
// Capped at four blocks of 256 an SM (capped_split_columns), f16 and bf16 sums read 1.02
// to 1.28 times as fast as staged at the 13 staged shapes of set BO's probe (one binary,
// paced): 2-byte sums are no longer staged.
bool columns_staged_pays(Op op, const TypeRule& types, const CanonicalAxes& shape) {
  if (shape.layout != AxisLayout::columns || shape.inner_step != 1) return false;
  const std::uint64_t r = shape.reduced, n = shape.outputs;
  if (shape.inner < 1000 || n < 1000 || size_of(types.in) != 4 || r < 24576 || n > 6200) return false;
  if (op == Op::sum || op == Op::mean) return true;
  // Min and max from 2500 outputs, or from 2^27 elements below that (set BR).
  return (op == Op::min || op == Op::max) && (n >= 2500 || r * n >= (std::uint64_t{1} << 27));
}

AxisKernelSpec columns_staged_builtin(Op op, const TypeRule& types) {
  AxisKernelSpec s;
  s.op = op;
  s.types = types;
  s.family = AxisFamily::columns_staged;
  s.block = 256;
  s.group = 1;
  // 512 columns a tile (256 of 8-byte elements: a tile of 16 KiB holds 7 rows' segments).
  s.rows_per_pass = size_of(types.in) == 8 ? 1 : 2;
  s.vec = static_cast<std::uint32_t>(16 / size_of(types.in));
  s.unroll = 4;
  s.split = AxisSplit::two_pass;
  s.blocks_per_sm = 4;
  return s;
}

AxisKernelSpec builtin_axis_spec(Op op, const TypeRule& types, const CanonicalAxes& shape, int sm_count,
                                 AxisLaunchPlan* plan, const void* in) {
  AxisKernelSpec s = builtin_axis_choice(op, types, shape, sm_count, plan, in);
  // Where the columns program would read an output a thread, or 4-byte outputs four a
  // thread off their grid (the twin's scalar loads) over fewer than 2048 outputs: f32 sums
  // of 1234 and 1502 outputs over R = 30001 to 262145 took 1.59 to 1.87 times as long so
  // as staged, 2049 and 2050 0.97 to 1.04 (set BN). Not an output a thread on the 16-byte
  // grid (split and capped there, set BP; staged not measured against it).
  if (s.family == AxisFamily::columns && columns_staged_pays(op, types, shape) &&
      ((s.vec == 1 && s.rows_per_pass == 1) || (s.vec == 4 && size_of(types.in) == 4 && shape.outputs < 2048)) &&
      !axis_on_16byte_grid(shape, size_of(types.in), in)) {
    s = columns_staged_builtin(op, types);
    // One split: the unsplit spec, whose plan is this one (no partials, no second kernel).
    const AxisLaunchPlan staged = plan_axis_launch(s, shape, sm_count);
    if (staged.splits <= 1) s.split = AxisSplit::none;
    if (plan) *plan = staged;
    return s;
  }
  s.tail = batched_tail_pays(s, shape) ? 1 : 0;
  s.occupancy = occupancy_that_pays(s, shape);
  if (two_vectors_a_pass_pay(s, shape)) s.rows_per_pass = 2;
  return s;
}

std::string axis_config_text(const AxisKernelSpec& s) {
  std::ostringstream os;
  os << to_string(s.family) << ":block=" << s.block << "," << (s.family == AxisFamily::columns ? "by=" : "group=")
     << s.group << ",vec=" << s.vec << ",split=" << to_string(s.split) << ",rows=" << s.rows_per_pass
     << ",unroll=" << s.unroll << ",sm=" << s.blocks_per_sm;
  if (s.tail != 0) os << ",tail=" << s.tail;
  if (s.ordered != 0) os << ",ordered=" << s.ordered;
  if (s.occupancy != 0) os << ",occ=" << s.occupancy;
  return os.str();
}

std::optional<AxisKernelSpec> parse_axis_config(std::string_view text, Op op, const TypeRule& types,
                                                std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<AxisKernelSpec> {
    if (error) *error = "axis config \"" + std::string(text) + "\": " + why;
    return std::nullopt;
  };
  AxisKernelSpec s;
  s.op = op;
  s.types = types;
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return fail("expected FAMILY:key=value,...");
  const std::string_view family = text.substr(0, colon);
  bool family_found = false;
  for (AxisFamily f : {AxisFamily::rows, AxisFamily::general, AxisFamily::columns, AxisFamily::columns_dense,
                       AxisFamily::rows_dense, AxisFamily::transpose, AxisFamily::short_columns,
                       AxisFamily::columns_staged, AxisFamily::rows_packed, AxisFamily::columns_folded})
    if (family == to_string(f)) {
      s.family = f;
      family_found = true;
    }
  if (!family_found) return fail("unknown family \"" + std::string(family) + "\"");
  std::map<std::string, std::string> fields;
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    const auto eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0) return fail("expected key=value, got \"" + std::string(item) + "\"");
    std::string key(item.substr(0, eq));
    if (key == "by") key = "group";
    if (!fields.emplace(key, std::string(item.substr(eq + 1))).second) return fail("\"" + key + "\" given twice");
  }
  auto number = [&](const char* key, std::uint32_t* value, bool required) -> bool {
    auto it = fields.find(key);
    if (it == fields.end()) return !required;
    const std::string& v = it->second;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), *value);
    fields.erase(it);
    return ec == std::errc() && end == v.data() + v.size();
  };
  if (!number("block", &s.block, true) || !number("group", &s.group, true) || !number("vec", &s.vec, true) ||
      !number("rows", &s.rows_per_pass, false) || !number("unroll", &s.unroll, false) ||
      !number("sm", &s.blocks_per_sm, false) || !number("tail", &s.tail, false) ||
      !number("ordered", &s.ordered, false) || !number("occ", &s.occupancy, false))
    return fail("block, group (by), vec, rows, unroll, sm, tail, ordered and occ take a number; block, group and vec "
                "are required");
  auto split = fields.find("split");
  if (split == fields.end()) return fail("split is required");
  bool split_found = false;
  for (AxisSplit v : {AxisSplit::none, AxisSplit::two_pass, AxisSplit::ticket, AxisSplit::ticket_tiles})
    if (split->second == to_string(v)) {
      s.split = v;
      split_found = true;
    }
  if (!split_found) return fail("unknown split \"" + split->second + "\"");
  fields.erase(split);
  if (!fields.empty()) return fail("unknown key \"" + fields.begin()->first + "\"");
  const std::string problem = axis_spec_problem(s);
  if (!problem.empty()) return fail(problem);
  return s;
}

std::string_view axis_spec_mismatch(const AxisKernelSpec& s, const CanonicalAxes& shape) {
  switch (s.family) {
    case AxisFamily::general:
      return {};  // decomposes any kept and reduced dimensions
    case AxisFamily::rows:
      if (shape.layout != AxisLayout::rows) return "the rows family reduces rows only";
      return {};
    case AxisFamily::rows_dense:
      if (shape.layout != AxisLayout::rows) return "the rows_dense family reduces rows only";
      if (shape.outer_stride != static_cast<std::int64_t>(shape.reduced)) return "rows_dense needs contiguous rows";
      if (shape.reduced < 1 || shape.reduced > rows_dense_max_reduced(s))
        return "rows_dense takes rows of at most an eighth of its tile";
      return {};
    case AxisFamily::rows_packed:
      if (shape.layout != AxisLayout::rows) return "the rows_packed family reduces rows only";
      if (shape.outer_stride != static_cast<std::int64_t>(shape.reduced)) return "rows_packed needs contiguous rows";
      if (shape.reduced < 2 || shape.reduced > kRowsPackedMaxReduced) return "rows_packed takes rows of 2 to 8 elements";
      return {};
    case AxisFamily::columns:
      if (shape.layout != AxisLayout::columns) return "the columns family reduces columns only";
      return {};
    case AxisFamily::short_columns:
      if (shape.layout != AxisLayout::columns || shape.inner_step != 1)
        return "the short_columns family reads columns whose outputs are contiguous in a row";
      if (s.unroll == 1 && !axis_copies(shape))
        return "the short_columns family at unroll=1 copies shapes that reduce nothing (R = 1) from one contiguous run";
      return {};
    case AxisFamily::transpose:
      if (axis_transpose_dim(shape) < 0)
        return "the transpose family copies general views that reduce nothing, their densest kept dimension not the "
               "outputs' innermost (both of 8 or more)";
      return {};
    case AxisFamily::columns_staged:
      if (shape.layout != AxisLayout::columns || shape.inner_step != 1)
        return "the columns_staged family reads columns whose outputs are contiguous in a row";
      return {};
    case AxisFamily::columns_folded: {
      const std::optional<FoldedColumns> f = axis_folded_columns(shape);
      if (!f) return "the columns_folded family reads general views of dense rows whose columns fold (FoldedColumns)";
      if (f->width() > s.block) return "columns_folded needs rows of at most a block of elements";
      return {};
    }
    case AxisFamily::columns_dense:
      if (shape.layout != AxisLayout::columns) return "the columns_dense family reduces columns only";
      if (shape.reduced_stride != static_cast<std::int64_t>(shape.inner) || shape.inner_step != 1)
        return "columns_dense needs the reduced rows contiguous";
      if (shape.inner > s.block) return "columns_dense needs inner <= block";
      return {};
  }
  return "unknown family";
}

std::vector<AxisKernelSpec> axis_candidates(Op op, const TypeRule& types, const CanonicalAxes& shape, int sm_count) {
  std::vector<AxisKernelSpec> out;
  auto add = [&](AxisKernelSpec s) {
    s.op = op;
    s.types = types;
    if (!axis_spec_problem(s).empty() || !axis_spec_mismatch(s, shape).empty()) return;
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  // A spec unsplit, or, where its plan splits R for this shape, split at 4, 8 and 16
  // blocks per SM (or those given), the last block folding for few outputs, a second
  // kernel otherwise.
  auto add_splits = [&](AxisKernelSpec s, std::initializer_list<std::uint32_t> per_sms = {4u, 8u, 16u}) {
    s.op = op;
    s.types = types;
    s.split = AxisSplit::two_pass;
    s.blocks_per_sm = 4;
    if (plan_axis_launch(s, shape, sm_count).splits <= 1) {
      s.split = AxisSplit::none;
      add(s);
      return;
    }
    s.split = shape.outputs <= 4 * kTicketOutputs ? AxisSplit::ticket : AxisSplit::two_pass;
    for (std::uint32_t per_sm : per_sms) {
      s.blocks_per_sm = per_sm;
      // Columns fold in one launch where the built-in choice's rule has them (small inputs,
      // each group's fold short: builtin_axis_choice).
      if (s.family == AxisFamily::columns) {
        AxisKernelSpec t = s;
        t.split = AxisSplit::ticket;
        s.split = columns_fold_in_one_launch(t, shape, plan_axis_launch(t, shape, sm_count).splits)
                      ? AxisSplit::ticket
                      : AxisSplit::two_pass;
      }
      add(s);
    }
    // Rows and dense columns split with a last-block finish also take tiles of R in
    // turn, at 4 and 8 blocks per SM. Neither reading order wins on every GPU (rows,
    // built-in choice, 7 rows of 2^24: tiles 1.10 times faster for f32 sums on an H100
    // and an H200, 1.08 times slower for f32 max on an H200), so the tuner measures both.
    if ((s.family == AxisFamily::rows || s.family == AxisFamily::columns_dense ||
         s.family == AxisFamily::columns_folded) &&
        s.split == AxisSplit::ticket) {
      s.split = AxisSplit::ticket_tiles;
      for (std::uint32_t per_sm : per_sms) {
        if (per_sm > 8) continue;
        s.blocks_per_sm = per_sm;
        add(s);
      }
    }
  };
  // Whether a spec of this family and block splits R here (rows per pass are for many
  // outputs, never split).
  auto splits_here = [&](AxisFamily family, std::uint32_t block, std::uint32_t group, std::uint32_t vec = 1) {
    AxisKernelSpec s;
    s.op = op;
    s.types = types;
    s.family = family;
    s.block = block;
    s.group = group;
    s.vec = vec;
    s.split = AxisSplit::two_pass;
    return plan_axis_launch(s, shape, sm_count).splits > 1;
  };
  add(builtin_axis_spec(op, types, shape, sm_count));
  const std::uint64_t r = std::max<std::uint64_t>(shape.reduced, 1);
  const std::uint32_t max_vec = static_cast<std::uint32_t>(16 / size_of(types.in));
  // Eight loads in flight only where R gives each thread that many, and blocks of at
  // most 256 threads (registers).
  auto unrolls = [&](std::uint32_t block) {
    return r >= 256 && block <= 256 ? std::vector<std::uint32_t>{4, 8} : std::vector<std::uint32_t>{4};
  };
  // One spec at each unroll its block allows, split or not as add_splits says.
  auto add_unrolled = [&](AxisFamily family, std::uint32_t block, std::uint32_t group, std::uint32_t vec,
                          std::uint32_t rows) {
    for (std::uint32_t unroll : unrolls(block)) {
      AxisKernelSpec s;
      s.family = family;
      s.block = block;
      s.group = group;
      s.vec = vec;
      s.rows_per_pass = rows;
      s.unroll = unroll;
      add_splits(s);
    }
  };
  // A family of a vector a thread (group 1, unsplit): `unroll` rows a round or chunks a pass.
  auto add_vectors_a_thread = [&](AxisFamily family, std::uint32_t block, std::uint32_t vec, std::uint32_t unroll) {
    AxisKernelSpec c;
    c.family = family;
    c.block = block;
    c.group = 1;
    c.vec = vec;
    c.unroll = unroll;
    add(c);
  };
  if (shape.layout == AxisLayout::rows) {
    // Contiguous rows of 2 to 8 elements: packed, a thread a chunk of whole rows in whole
    // vectors, one, two or four chunks a pass.
    if (shape.outer_stride == static_cast<std::int64_t>(r) && r >= 2 && r <= kRowsPackedMaxReduced)
      for (std::uint32_t block : {128u, 256u, 512u})
        for (std::uint32_t unroll : {1u, 2u, 4u})
          if (block == 256 || unroll == 2) add_vectors_a_thread(AxisFamily::rows_packed, block, max_vec, unroll);
    for (std::uint32_t block : {128u, 256u, 512u}) {
      // 16-bit rows also load 8 bytes (four elements) at a time: half the peeling of a
      // 16-byte vector where rows start off its grid.
      std::vector<std::uint32_t> vecs{max_vec};
      if (size_of(types.in) == 2) vecs.push_back(4);
      vecs.push_back(1);
      for (std::uint32_t vec : vecs) {
        if (vec > 1 && r < 2ull * vec) continue;
        if (vec == 1 && max_vec > 1 && r >= 64) continue;  // long rows always load vectors
        const std::uint64_t lanes = ceil_div(r, vec);
        const std::uint32_t top = std::min<std::uint32_t>(32, pow2_ceil(lanes));
        // Short rows: groups from an eighth of the lanes a row needs up to a warp, and
        // several rows per pass where a pass is short. Long rows: a warp or the block.
        const std::uint32_t lowest = r >= 4096 ? 32 : std::max<std::uint32_t>(1, top / (r >= 256 ? 4 : 8));
        for (std::uint32_t group = lowest; group <= top; group *= 2)
          for (std::uint32_t rows : {1u, 4u}) {
            if (rows > 1 && (r > 16ull * group * vec || splits_here(AxisFamily::rows, block, group))) continue;
            add_unrolled(AxisFamily::rows, block, group, vec, rows);
          }
        if (r >= 1024) add_unrolled(AxisFamily::rows, block, block, vec, 1);
      }
      // Staged rows: a lane per row, and lanes of about an eighth of the row's elements
      // each (up to 8), four vectors a thread; at 256 threads also eight. (The built-in
      // choice, always a candidate, takes 1 or 4 lanes.)
      std::uint32_t lanes_per_row = 1;
      while (lanes_per_row < 8 && r >= 16ull * lanes_per_row) lanes_per_row *= 2;
      for (std::uint32_t group : {1u, lanes_per_row})
        for (std::uint32_t unroll : {4u, 8u}) {
          if (unroll == 8 && (block != 256 || group == 1)) continue;
          AxisKernelSpec dense;
          dense.family = AxisFamily::rows_dense;
          dense.block = block;
          dense.group = group;
          dense.vec = max_vec;
          dense.unroll = unroll;
          add(dense);
        }
    }
  } else if (shape.layout == AxisLayout::columns) {
    // The short_columns family beside the columns programs: a converting copy (R = 1) at
    // each block, a 16-byte vector or one element a thread; short columns on the vector
    // grid in blocks of 128 and 256, two and four rows a round.
    if (axis_copies(shape)) {
      for (std::uint32_t block : {128u, 256u, 512u, 1024u})
        for (std::uint32_t vec : {max_vec, 1u}) add_vectors_a_thread(AxisFamily::short_columns, block, vec, 1);
    } else if (r <= 16 && short_columns_vectors_fit(shape, max_vec)) {
      for (std::uint32_t block : {128u, 256u})
        for (std::uint32_t unroll : {2u, 4u}) add_vectors_a_thread(AxisFamily::short_columns, block, max_vec, unroll);
    }
    for (std::uint32_t block : {128u, 256u, 512u, 1024u}) {
      for (std::uint32_t by = 1; by <= block / 32 && by <= 32; by *= 2) {
        if (by > 1 && r < 4ull * by) break;
        // Blocks of 1024: 32 threads across a short R, unsplit only (one launch, at most
        // 64 rows a thread). Split, they were slower than blocks of 512 at every shape
        // measured (H100, f32, R = 2049 .. 16385 over 2 .. 4097 outputs).
        if (block == 1024 && (by != 32 || r > 2048)) continue;
        // Short R that a plan splits: the unsplit spec too (see builtin_axis_spec).
        if (r <= 2048 && (block == 1024 || splits_here(AxisFamily::columns, block, by))) {
          AxisKernelSpec s;
          s.family = AxisFamily::columns;
          s.block = block;
          s.group = by;
          add(s);
        }
        if (block == 1024) continue;
        for (std::uint32_t rows : {1u, 4u}) {
          if (rows > 1 && (by > 1 || splits_here(AxisFamily::columns, block, by))) continue;
          add_unrolled(AxisFamily::columns, block, by, 1, rows);
        }
        // Adjacent outputs per thread too: 16-bit elements four (8-byte loads); wider
        // ones a 16-byte vector where R is split across blocks, at four blocks per SM
        // (on an H200, f32 sums: from R = 2^16 over 512 to 769 outputs the fastest
        // configs, 1.1 times faster than a thread per output inside the class; unsplit,
        // R = 2 .. 4096 over 16384 outputs and more, never the fastest).
        AxisKernelSpec s;
        s.family = AxisFamily::columns;
        s.block = block;
        s.group = by;
        if (size_of(types.in) == 2) {
          s.vec = 4;
          add_splits(s);
        } else if (max_vec > 1 && (r <= 128 || splits_here(AxisFamily::columns, block, by, max_vec))) {
          s.vec = max_vec;
          add_splits(s, {4u});
        }
      }
      if (block <= 512) add_unrolled(AxisFamily::columns_dense, block, 1, max_vec, 1);
    }
    // Staged columns (blocks of 256): tiles of 512 columns folded by a thread each, and
    // of 256 by two threads each, both at four blocks per SM; the first also at eight,
    // and tiles of 128 columns by two threads. Where rows are long enough to stage.
    if (r >= 4096 && shape.inner >= 256 && size_of(types.in) <= 4) {
      struct Staged {
        std::uint32_t group, rows, per_sm;
      };
      for (const Staged& c : {Staged{1, 2, 4}, Staged{1, 2, 8}, Staged{2, 2, 4}, Staged{2, 1, 4}}) {
        AxisKernelSpec s = columns_staged_builtin(op, types);
        s.group = c.group;
        s.rows_per_pass = c.rows;
        s.blocks_per_sm = c.per_sm;
        if (plan_axis_launch(s, shape, sm_count).splits <= 1) {
          s.split = AxisSplit::none;
          s.blocks_per_sm = 4;
        }
        add(s);
      }
    }
  }
  // General views of dense rows whose columns fold: a block at least a row wide, 16-byte
  // vectors or elements.
  // The two narrowest such blocks; unsplit where the plan does not split, else each split
  // (the last block folding, in chunks or tiles, or a second kernel) at 4 and 8 blocks of
  // 256 threads an SM.
  if (const std::optional<FoldedColumns> f = axis_folded_columns(shape)) {
    int blocks = 0;
    for (std::uint32_t block : {128u, 256u, 512u, 1024u}) {
      if (f->width() > block || blocks == 2) continue;
      ++blocks;
      for (std::uint32_t vec : {max_vec, 1u})
        for (std::uint32_t unroll : unrolls(block)) {
          AxisKernelSpec c;
          c.family = AxisFamily::columns_folded;
          c.block = block;
          c.group = 1;
          c.vec = vec;
          c.unroll = unroll;
          c.op = op;
          c.types = types;
          c.split = AxisSplit::two_pass;
          if (plan_axis_launch(c, shape, sm_count).splits <= 1) {
            c.split = AxisSplit::none;
            add(c);
            continue;
          }
          for (AxisSplit split : {AxisSplit::two_pass, AxisSplit::ticket, AxisSplit::ticket_tiles})
            for (std::uint32_t per_sm : {4u, 8u}) {
              c.split = split;
              c.blocks_per_sm = per_sm;
              add(c);
            }
        }
    }
  }
  // The batched tail beside each spec where builtin_axis_spec would take it, and the
  // capped registers likewise.
  add_batched_twins(out, {shape});
  add_occupancy_twins(out, {shape});
  return out;
}

namespace {

// Appends to `specs` the twin of each spec whose `field` is `unset`, that field set to
// what `pays` gives it at the first of `shapes` where that is not `unset`, where not
// there already.
void add_twins(std::vector<AxisKernelSpec>& specs, const std::vector<CanonicalAxes>& shapes,
               std::uint32_t AxisKernelSpec::*field,
               std::uint32_t (*pays)(const AxisKernelSpec&, const CanonicalAxes&), std::uint32_t unset = 0) {
  const std::size_t count = specs.size();
  for (std::size_t i = 0; i < count; ++i) {
    if (specs[i].*field != unset) continue;
    for (const CanonicalAxes& shape : shapes) {
      AxisKernelSpec twin = specs[i];
      twin.*field = pays(specs[i], shape);
      if (twin.*field == unset) continue;
      if (std::find(specs.begin(), specs.end(), twin) == specs.end()) specs.push_back(twin);
      break;
    }
  }
}

}  // namespace

void add_occupancy_twins(std::vector<AxisKernelSpec>& specs, const std::vector<CanonicalAxes>& shapes) {
  add_twins(specs, shapes, &AxisKernelSpec::occupancy, occupancy_that_pays);
  // Each capped spec's twin of two vectors a pass, where that pays at its cap.
  add_twins(
      specs, shapes, &AxisKernelSpec::rows_per_pass,
      [](const AxisKernelSpec& s, const CanonicalAxes& shape) {
        return s.occupancy != 0 && occupancy_that_pays(s, shape) == s.occupancy && two_vectors_a_pass_pay(s, shape)
                   ? 2u
                   : 1u;
      },
      1);
}

void add_batched_twins(std::vector<AxisKernelSpec>& specs, const std::vector<CanonicalAxes>& shapes) {
  add_twins(specs, shapes, &AxisKernelSpec::tail, [](const AxisKernelSpec& s, const CanonicalAxes& shape) {
    return batched_tail_pays(s, shape) ? 1u : 0u;
  });
}

namespace {
// A split plan's partials, one per output and split, and, split in two passes, the
// finalize kernel's grid (a warp per output).
void plan_partials(AxisLaunchPlan& plan, const AxisKernelSpec& s, std::uint64_t outputs, int sm_count) {
  if (plan.splits <= 1) return;
  plan.partial_count = outputs * plan.splits;
  if (s.split == AxisSplit::two_pass)
    plan.finalize_grid = static_cast<std::uint32_t>(
        std::clamp<std::uint64_t>(ceil_div(outputs, s.block / 32), 1, 32ull * std::max(sm_count, 1)));
}
}  // namespace

AxisLaunchPlan plan_axis_launch(const AxisKernelSpec& s, const CanonicalAxes& shape, int sm_count) {
  AxisLaunchPlan plan;
  plan.block = s.block;
  if (s.family == AxisFamily::short_columns) {
    // A vector of `vec` outputs a thread, every thread its own (past the grid's limit,
    // grid-stride).
    const std::uint64_t threads = ceil_div(std::max<std::uint64_t>(shape.outputs, 1), s.vec);
    plan.grid = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(ceil_div(threads, s.block), 1, kMaxGridBlocks));
    return plan;
  }
  if (s.family == AxisFamily::columns_folded) {
    // A block reads a chunk of a slice's rows (rt::axis_columns_folded_kernel). Split so
    // that blocks_per_sm x 256 threads an SM take the slices in all, each split at least
    // a round of kUnroll steps of whole rows; the partials are the folded outputs'.
    const std::optional<FoldedColumns> f = axis_folded_columns(shape);
    if (!f) {
      plan.grid = 1;
      return plan;
    }
    const std::uint64_t step_rows = folded_columns_step(s, f->width()) / f->width();
    const std::uint64_t sms = static_cast<std::uint64_t>(std::max(sm_count, 1));
    const std::uint64_t want = std::max<std::uint64_t>(1, sms * s.blocks_per_sm * 256 / s.block);
    std::uint64_t splits = 1;
    if (s.split != AxisSplit::none)
      splits = std::max<std::uint64_t>(
          1, std::min(ceil_div(want, f->slices), f->rows / std::max<std::uint64_t>(1, step_rows * s.unroll)));
    // The last block folds at most kFoldedTicketPartials partials (a second kernel folds
    // more in parallel, a warp an output).
    if ((s.split == AxisSplit::ticket || s.split == AxisSplit::ticket_tiles) &&
        shape.outputs * splits > kFoldedTicketPartials)
      splits = std::max<std::uint64_t>(1, kFoldedTicketPartials / shape.outputs);
    plan.splits = splits;
    plan.grid = static_cast<std::uint32_t>(
        std::clamp<std::uint64_t>(f->slices * splits, 1, std::min<std::uint64_t>(kMaxGridBlocks, 32 * sms)));
    plan_partials(plan, s, shape.outputs, sm_count);
    return plan;
  }
  if (s.family == AxisFamily::rows_packed) {
    // A chunk of whole rows a thread, `unroll` chunks a pass (past the grid's limit,
    // grid-stride).
    const std::uint64_t chunks = ceil_div(std::max<std::uint64_t>(shape.outputs, 1),
                                          rows_packed_rows(shape.reduced, size_of(s.types.in)));
    plan.grid = static_cast<std::uint32_t>(
        std::clamp<std::uint64_t>(ceil_div(chunks, std::uint64_t{s.block} * s.unroll), 1, kMaxGridBlocks));
    return plan;
  }
  if (s.family == AxisFamily::transpose) {
    // Tiles of kAxisTransposeTile x kAxisTransposeTile over the two dimensions it
    // transposes, for each index of the others; blocks take tiles in turn.
    const int a = axis_transpose_dim(shape);
    std::uint64_t tiles = 1;
    if (a >= 0) {
      const auto ea = static_cast<std::uint64_t>(shape.kept_extents[a]);
      const auto eb = static_cast<std::uint64_t>(shape.kept_extents[shape.kept_rank - 1]);
      tiles = shape.outputs / (ea * eb) * ceil_div(ea, kAxisTransposeTile) * ceil_div(eb, kAxisTransposeTile);
    }
    const std::uint64_t blocks = std::min<std::uint64_t>(tiles, 32ull * std::max(sm_count, 1));
    plan.grid = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(blocks, 1, kMaxGridBlocks));
    return plan;
  }
  if (s.family == AxisFamily::columns_staged) {
    // A block for each tile of columns of each slice and each split of R: the splits fill
    // the SMs blocks_per_sm / 4 times over at the 1024 threads an SM the kernel keeps
    // resident (rounded down, so that no last round runs a few blocks alone), each split
    // at least two tiles of rows. Past the grid's limit, blocks take tiles in turn.
    const ColumnsStagedTiles tiles = columns_staged_tiles(s, shape.inner);
    const std::uint64_t outer = ceil_div(std::max<std::uint64_t>(shape.outputs, 1), std::max<std::uint64_t>(shape.inner, 1));
    const std::uint64_t output_blocks = outer * tiles.count;
    const std::uint64_t r = std::max<std::uint64_t>(shape.reduced, 1);
    std::uint64_t splits = 1;
    if (s.split != AxisSplit::none) {
      const std::uint64_t want = kColumnsStagedResidentThreads / s.block * s.blocks_per_sm / 4 *
                                 static_cast<std::uint64_t>(std::max(sm_count, 1));
      splits = std::clamp<std::uint64_t>(want / output_blocks, 1, std::max<std::uint64_t>(1, r / (2 * tiles.rows)));
      splits = ceil_div(r, ceil_div(r, splits));  // as the kernel cuts R: chunks of ceil(R / splits)
    }
    plan.splits = splits;
    plan.grid = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(output_blocks * splits, 1, kMaxGridBlocks));
    if (splits > 1) {
      plan.partial_count = shape.outputs * splits;
      plan.finalize_grid = static_cast<std::uint32_t>(
          std::clamp<std::uint64_t>(ceil_div(shape.outputs, s.block / 32), 1, 32ull * std::max(sm_count, 1)));
    }
    return plan;
  }
  // Outputs one block reduces per pass: one per group (rows, general), one per thread
  // column (columns: block / threads across R), one outer slice (columns_dense).
  const bool dense = s.family == AxisFamily::columns_dense;
  std::uint64_t per_block =
      dense ? std::max<std::uint64_t>(shape.inner, 1) : s.block / s.group * s.rows_per_pass;
  if (s.family == AxisFamily::columns) per_block *= s.vec;  // adjacent outputs per thread
  // General with a kept dimension the densest: a thread per vector of adjacent outputs,
  // `group` of them across R (rt::general_output_vectors; groups within a warp).
  if (s.family == AxisFamily::general && s.group <= 32 && general_kept_densest(shape))
    per_block = static_cast<std::uint64_t>(s.block / s.group) * s.vec;
  if (s.family == AxisFamily::rows_dense)  // a tile of whole rows, as axis_rows_dense_kernel stages it
    per_block = std::max<std::uint64_t>(1, (rows_dense_tile_elements(s) - (s.vec - 1)) /
                                               std::max<std::uint64_t>(shape.reduced, 1));
  const std::uint64_t output_blocks = std::max<std::uint64_t>(1, ceil_div(shape.outputs, per_block));
  if (s.family == AxisFamily::rows_dense) {
    // 1024 threads per SM, each block taking tiles in turn (its next tile in flight
    // while it folds the current one): a wave that stays resident whatever the kernel's
    // registers. 2048 threads per SM read 16 x 2^24 f32 in 410.7 us, 1024 in 389.8
    // (H100, blocks of 256, a lane per row; two runs).
    const std::uint64_t wave = std::max<std::uint64_t>(1, 1024 / s.block) * std::max(sm_count, 1);
    plan.grid = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(std::min(output_blocks, wave), 1, kMaxGridBlocks));
    if (shape.reduced <= rows_dense_max_reduced(s))  // longer rows are refused before any launch
      plan.skew = rows_dense_skew(size_of(s.types.in), s.group, s.vec, shape.reduced);
    return plan;
  }
  std::uint64_t splits = split_count(output_blocks, per_block, shape.reduced, sm_count, s.blocks_per_sm,
                                     s.family == AxisFamily::general);
  if (s.family == AxisFamily::rows && s.split == AxisSplit::ticket_tiles && s.block == 128 && s.blocks_per_sm == 8 &&
      splits > 1) {
    // Rows split in tiles, blocks of 128 at eight per SM: the split count rounded down
    // where rounding up would give the SMs more than 8.5 blocks each. On an H200 (set CC,
    // f32, f16, bf16, i32), rounded down against up: 200 to 257 rows 1.10 to 1.26 times
    // faster (f16 sum 393217 x 256 1.22), 128 rows 0.99 to 1.06; 64 to 160 rows, within
    // 8.5 blocks an SM, 0.96 to 1.03, so rounded up there. At four per SM, where every
    // block is resident either way, rounding down was slower (0.88 to 0.99). These
    // programs hold 51 to 52 registers a thread for sm_90 (f32 and f16, sum and max;
    // ptxas -v), 56 as allocated: nine blocks of 128 an SM stay resident.
    const std::uint64_t sms = static_cast<std::uint64_t>(std::max(sm_count, 1));
    if (2 * splits * output_blocks > 17 * sms)  // more than 8.5 blocks an SM
      splits = std::max<std::uint64_t>(1, 8 * sms / output_blocks);
  }
  if (dense && s.split == AxisSplit::ticket_tiles && splits > 1 && axis_dense_interleaves(s, shape)) {
    // Interleaved steps (axis_columns_dense_kernel): a split for every kUnroll steps of
    // the slice (each thread's loads of a round in flight together), up to blocks_per_sm
    // blocks per SM in all.
    std::uint64_t whole = std::max<std::uint64_t>(shape.inner, 1);
    while (whole % s.vec != 0) whole += shape.inner;
    const std::uint64_t step = std::max<std::uint64_t>(1, s.block * s.vec / whole) * whole;
    const std::uint64_t steps = ceil_div(shape.reduced * shape.inner, step);
    const std::uint64_t want = s.blocks_per_sm * static_cast<std::uint64_t>(std::max(sm_count, 1));
    splits = std::max<std::uint64_t>(1, std::min(ceil_div(want, output_blocks), ceil_div(steps, s.unroll)));
  }
  if (s.split == AxisSplit::none) splits = 1;
  // Grid-stride over outputs beyond 32 blocks per SM of work. Split columns with a
  // ticket take a ticket slot per group of blocks that share tiles of outputs
  // (rt::columns_ticket_finish): at most kAxisTicketSlots groups.
  std::uint64_t cap = std::max<std::uint64_t>(1, kMaxGridBlocks / splits);
  if (s.family == AxisFamily::columns && s.split == AxisSplit::ticket && splits > 1)
    cap = std::min(cap, kAxisTicketSlots);
  const std::uint64_t blocks = std::min(output_blocks, std::min<std::uint64_t>(cap, 32ull * std::max(sm_count, 1)));
  plan.splits = splits;
  plan.grid = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(blocks * splits, 1, kMaxGridBlocks));
  plan_partials(plan, s, shape.outputs, sm_count);
  return plan;
}

std::uint64_t axis_columns_fold_trips(const AxisKernelSpec& s, std::uint64_t splits) {
  // As rt::columns_ticket_finish folds: a tile of the block's outputs (block / by threads,
  // each `rows` or `vec` outputs), kG lanes an output (a power of two up to a warp, as
  // many as the block has per output), each lane four loads in flight a stride of kG
  // apart.
  const std::uint64_t tile =
      static_cast<std::uint64_t>(s.block / std::max<std::uint32_t>(s.group, 1)) * std::max(s.rows_per_pass, s.vec);
  const std::uint64_t lanes = s.block / std::max<std::uint64_t>(tile, 1);
  std::uint64_t g = 1;
  while (g < 32 && 2 * g <= lanes) g *= 2;
  const std::uint64_t per_pass = s.block / g;
  constexpr std::uint64_t loads = 4;
  return ceil_div(tile, per_pass) * ceil_div(std::max<std::uint64_t>(splits, 1), loads * g);
}

const char* axis_params_source() {
#define REDUCE_TUNE_FIELD(type, name) " " #type " " #name ";"
  return "namespace rt {\nstruct AxisParams {" REDUCE_TUNE_AXIS_PARAMS(REDUCE_TUNE_FIELD) " };\n}  // namespace rt\n";
#undef REDUCE_TUNE_FIELD
}

bool axis_has_twin(const AxisKernelSpec& spec) {
  if (spec.family == AxisFamily::rows_dense) return true;  // skewed by 3
  if (spec.family == AxisFamily::columns) return spec.vec > 1;
  // General programs of a thread per vector of outputs (groups within a warp).
  if (spec.family == AxisFamily::general) return spec.vec > 1 && spec.group <= 32;
  if (spec.family != AxisFamily::rows || spec.vec <= 1) return false;
  // The twin holds a head and a tail of up to per_lane elements (3 at most: rt::fold_row)
  // for each row of a pass in registers: at most 8 values (more spilled, for one: 16-bit
  // rows of four lanes, four rows a pass).
  const std::uint32_t per_lane = (spec.vec - 1 + spec.group - 1) / spec.group;
  return per_lane <= 3 && 2 * per_lane * spec.rows_per_pass <= 8;
}

bool axis_launch_takes_twin(const AxisKernelSpec& spec, const CanonicalAxes& shape, const AxisLaunchPlan& plan,
                            const void* in) {
  if (!axis_has_twin(spec)) return false;
  if (spec.family == AxisFamily::rows_dense) return plan.skew == kRowsDenseMaxSkew;
  if (spec.family == AxisFamily::columns) {
    // As the kernel decides that its rows are on the grid (rows_on_grid). Stepped
    // columns read each output by itself in either program.
    if (shape.inner_step != 1) return false;
    const std::uint64_t vec = spec.vec;
    return !(reinterpret_cast<std::uintptr_t>(in) % (vec * size_of(spec.types.in)) == 0 &&
             static_cast<std::uint64_t>(shape.reduced_stride) % vec == 0 &&
             static_cast<std::uint64_t>(shape.outer_stride) % vec == 0);
  }
  if (spec.family == AxisFamily::general) {
    // A kept dimension the densest, off the grid the kernel's vector loads need
    // (rt::general_output_vectors): the innermost kept dimension contiguous, its extent,
    // every other stride and the base multiples of the vector.
    if (!general_kept_densest(shape)) return false;
    return !(general_outputs_on_vector_grid(shape, spec.vec) &&
             reinterpret_cast<std::uintptr_t>(in) % (spec.vec * size_of(spec.types.in)) == 0);
  }
  if (spec.split == AxisSplit::ticket_tiles && plan.splits > 1) return false;
  const std::uint64_t vec = spec.vec;
  const std::uint64_t bytes = vec * size_of(spec.types.in);
  const std::uint64_t chunk = ceil_div(shape.reduced, std::max<std::uint64_t>(plan.splits, 1));
  // Long rows (more than 16 vectors a lane) gain nothing from the twin's one round trip
  // fewer per row, and its body ran up to 1.05 times slower there (H200: 65537 x 1000,
  // 100 rows of 2^20 + 1 in splits).
  if (chunk > 16ull * spec.group * vec) return false;
  const bool on_grid = reinterpret_cast<std::uintptr_t>(in) % bytes == 0 &&
                       static_cast<std::uint64_t>(shape.outer_stride) % vec == 0 && shape.reduced % vec == 0 &&
                       chunk % vec == 0;
  return !on_grid;
}

CompileRequest make_axis_compile_request(const AxisKernelSpec& spec, int arch) {
  const std::string problem = axis_spec_problem(spec);
  if (!problem.empty()) throw InvalidArgument("axis kernel " + to_string(spec) + ": " + problem);
  const std::string type = config_text(spec);
  const std::string main = spec.family == AxisFamily::columns         ? "rt::axis_columns_kernel<"
                           : spec.family == AxisFamily::columns_dense ? "rt::axis_columns_dense_kernel<"
                           : spec.family == AxisFamily::rows_dense    ? "rt::axis_rows_dense_kernel<"
                           : spec.family == AxisFamily::transpose     ? "rt::axis_transpose_kernel<"
                           : spec.family == AxisFamily::short_columns ? "rt::axis_short_columns_kernel<"
                           : spec.family == AxisFamily::columns_staged ? "rt::axis_columns_staged_kernel<"
                           : spec.family == AxisFamily::rows_packed   ? "rt::axis_rows_packed_kernel<"
                           : spec.family == AxisFamily::columns_folded ? "rt::axis_columns_folded_kernel<"
                                                                      : "rt::axis_rows_kernel<";
  std::ostringstream src;
  src << "// Generated by reduce-tune: " << to_string(spec) << "\n"
      << axis_params_source() << "static_assert(sizeof(rt::AxisParams) == " << sizeof(AxisKernelParams)
      << ", \"host and device axis parameters differ\");\n"
      << "#include \"rt/axis.cuh\"\n"
      << "static_assert(rt::axis_" << to_string(spec.family) << " == " << static_cast<int>(spec.family)
      << " && rt::axis_split_" << to_string(spec.split) << " == " << static_cast<int>(spec.split)
      << ", \"host and device numbering of the families differ\");\n"
      << "typedef " << type << " rt_axis_instance;\n";
  CompileRequest request;
  request.program_name = "reduce_tune_axis.cu";
  request.source = src.str();
  request.name_expressions = {main + type + " >"};
  // Only a two-pass plan launches the finalize kernel (plan_axis_launch). Compiling it
  // for the other splits cost 11-12% of their NVRTC time (f32 sums; docs/BENCHMARKS.md, set
  // AD), and axis programs are most of a default run's compiling.
  if (spec.split == AxisSplit::two_pass) request.name_expressions.push_back("rt::axis_finalize_kernel<" + type + " >");
  if (axis_has_twin(spec)) request.name_expressions.push_back(main + type + ", true>");
  request.arch = arch;
  const auto templates = kernel_template_sources();
  request.headers.assign(templates.begin(), templates.end());
  return request;
}

AxisKernelParams make_axis_params(const AxisKernelSpec& spec, const CanonicalAxes& shape, const AxisLaunchPlan& plan,
                                  const void* in, void* out, const WorkspaceView* workspace,
                                  const AxisOutputOrder* order) {
  AxisKernelParams p{};
  p.in = in;
  p.out = out;
  p.partials = workspace ? workspace->partials : nullptr;
  p.ticket = workspace ? workspace->ticket + kWorkspaceAxisTicketsOffset / sizeof(unsigned int) : nullptr;
  p.outputs = shape.outputs;
  p.reduced = shape.reduced;
  p.outer_stride = shape.outer_stride;
  p.reduced_stride = shape.reduced_stride;
  p.inner = shape.inner;
  p.inner_step = shape.inner_step;
  p.splits = plan.splits;
  // A mean's divisor as the kernels' epilogue takes it (rt::MeanDivisor): R as a float
  // and its correctly rounded reciprocal where R is exact in a float, else 0.
  if (shape.reduced >= 1 && shape.reduced <= (std::uint64_t{1} << 24)) {
    p.mean_n = static_cast<float>(shape.reduced);
    p.mean_inv = 1.0f / p.mean_n;
  }
  p.kept_rank = shape.kept_rank;
  p.reduced_rank = shape.reduced_rank;
  for (int i = 0; i < kMaxRank; ++i) {
    p.kept_extents[i] = shape.kept_extents[i];
    p.kept_strides[i] = shape.kept_strides[i];
    p.reduced_extents[i] = shape.reduced_extents[i];
    p.reduced_strides[i] = shape.reduced_strides[i];
  }
  if (spec.family == AxisFamily::columns_folded) {
    // The rows' W columns as columns_dense reads them; R stays the whole reduction's (the
    // mean's divisor), the run folded inside a row in inner_step.
    const std::optional<FoldedColumns> f = axis_folded_columns(shape);
    if (!f) throw Error("a columns_folded kernel needs a view of folded columns: " + shape.to_string());
    {
      p.inner = f->width();
      p.reduced_stride = static_cast<std::int64_t>(f->width());
      p.outer_stride = f->slice_stride;
      p.inner_step = static_cast<std::int64_t>(f->b);
      p.fold_inner = static_cast<unsigned>(f->c);
      p.fold_out[0] = f->out_slice;
      p.fold_out[1] = f->out_a;
      p.fold_out[2] = f->out_c;
    }
  }
  if (spec.ordered != 0) {
    if (order == nullptr || order->rank < 1 || order->rank > kAxisOrderMaxRank || shape.outputs > 0xffffffffull)
      throw Error("an ordered axis kernel needs an output order of 1 to " + std::to_string(kAxisOrderMaxRank) +
                  " dimensions over fewer than 2^32 outputs");
    p.out_rank = order->rank;
    for (int i = 0; i < kAxisOrderMaxRank; ++i) {
      p.out_extents[i] = order->extents[i];
      p.out_strides[i] = order->strides[i];
    }
  }
  return p;
}

void enqueue_axis_reduction(Launcher& launcher, const KernelHandles& kernels, const AxisKernelSpec& spec,
                            const AxisLaunchPlan& plan, const CanonicalAxes& shape, const void* in, void* out,
                            const WorkspaceView* workspace, void* stream, const AxisOutputOrder* output_order) {
  if (plan.splits > 1) {
    const std::size_t needed = plan.partial_count * size_of(spec.types.acc);
    if (workspace == nullptr || workspace->partials_bytes < needed)
      throw Error("a split axis reduction needs a workspace of " + std::to_string(needed) + " bytes of partials");
  }
  AxisKernelParams params = make_axis_params(spec, shape, plan, in, out, workspace, output_order);
  void* args[] = {&params};
  const void* reduce =
      kernels.reduce_twin && axis_launch_takes_twin(spec, shape, plan, in) ? kernels.reduce_twin : kernels.reduce;
  const StreamOrder order = kernels.programmatic ? StreamOrder::programmatic : StreamOrder::serial;
  launcher.launch(reduce, plan.grid, plan.block, stream, args, order);
  if (plan.finalize_grid > 0) launcher.launch(kernels.finalize, plan.finalize_grid, spec.block, stream, args, order);
}

}  // namespace reduce_tune
