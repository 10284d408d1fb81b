// ReduceConfig: one kernel instantiation's tuning values, as a plain runtime struct
// (a type cannot be read from a database). It has one canonical text form, stored in
// the database, shown in reports and accepted on the command line, and a stable hash
// of that text. New fields go at the end, with a default, so older text still parses.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <tuple>

namespace reduce_tune {

// The kernel family; see kernel_templates/ for the lineage of each.
enum class Strategy : std::uint8_t {
  neighbored,
  neighbored_less,
  interleaved,
  first_add,
  unroll_blocks,
  unroll_last_warp,
  complete_unroll,
  multi_element,
  warp_shuffle,
  vectorized,
};
inline constexpr Strategy kAllStrategies[] = {
    Strategy::neighbored,     Strategy::neighbored_less, Strategy::interleaved,
    Strategy::first_add,      Strategy::unroll_blocks,   Strategy::unroll_last_warp,
    Strategy::complete_unroll, Strategy::multi_element,  Strategy::warp_shuffle,
    Strategy::vectorized,
};

// How a warp combines its 32 values: register shuffles, shared memory with __syncwarp
// between steps, or the redux.sync instruction (32-bit integers, sm_80+). `none` for the
// strategies whose shared-memory tree runs down to one value and has no warp step.
enum class WarpReduce : std::uint8_t { shuffle, smem, redux, none };

// two_pass: partials per block, then a one-block launch. single_pass_ticket: the last
// block to finish (atomic ticket) reduces the partials in a fixed order; deterministic.
// single_pass_atomic: blocks fold their partial into one accumulator with atomics; the
// order varies, so float results are not bit-reproducible.
enum class Passes : std::uint8_t { two_pass, single_pass_ticket, single_pass_atomic };

// Cache behaviour of the input loads: plain ld, ld.global.nc (__ldg), streaming
// evict-first (__ldcs), cache-global bypassing L1 (__ldcg).
enum class LoadHint : std::uint8_t { plain, ldg, ldcs, ldcg };

enum class GridKind : std::uint8_t {
  tiles,   // one block per tile of block_threads * items_per_thread * vec_width elements
  per_sm,  // value blocks per multiprocessor, never more than there are tiles
  fixed,   // value blocks, never more than there are tiles
};
struct GridPolicy {
  GridKind kind = GridKind::per_sm;
  std::uint32_t value = 4;
  auto tie() const { return std::tie(kind, value); }
};
inline bool operator==(const GridPolicy& a, const GridPolicy& b) { return a.tie() == b.tie(); }
inline bool operator!=(const GridPolicy& a, const GridPolicy& b) { return !(a == b); }
inline bool operator<(const GridPolicy& a, const GridPolicy& b) { return a.tie() < b.tie(); }

struct ReduceConfig {
  Strategy strategy = Strategy::vectorized;
  std::uint32_t block_threads = 256;
  std::uint32_t items_per_thread = 4;  // loads per thread per tile
  std::uint32_t vec_width = 4;         // elements per load (16 bytes at most)
  GridPolicy grid;
  WarpReduce warp_reduce = WarpReduce::shuffle;
  Passes passes = Passes::single_pass_ticket;
  LoadHint load = LoadHint::ldg;
  std::uint32_t unroll = 2;  // independent accumulators per thread
  auto tie() const {
    return std::tie(strategy, block_threads, items_per_thread, vec_width, grid, warp_reduce, passes, load, unroll);
  }
};
inline bool operator==(const ReduceConfig& a, const ReduceConfig& b) { return a.tie() == b.tie(); }
inline bool operator!=(const ReduceConfig& a, const ReduceConfig& b) { return !(a == b); }
inline bool operator<(const ReduceConfig& a, const ReduceConfig& b) { return a.tie() < b.tie(); }

std::string_view to_string(Strategy s);
std::string_view to_string(WarpReduce w);
std::string_view to_string(Passes p);
std::string_view to_string(LoadHint l);
std::string to_string(const GridPolicy& g);
std::optional<Strategy> parse_strategy(std::string_view text);
std::optional<WarpReduce> parse_warp_reduce(std::string_view text);
std::optional<Passes> parse_passes(std::string_view text);
std::optional<LoadHint> parse_load_hint(std::string_view text);
std::optional<GridPolicy> parse_grid_policy(std::string_view text);

// Canonical text: "vectorized:block=256,items=4,vec=4,grid=sm*4,warp=shuffle,
// passes=single_pass_ticket,load=ldg,unroll=2" (one line, every field, this order).
std::string to_string(const ReduceConfig& config);
std::ostream& operator<<(std::ostream& os, const ReduceConfig& config);

// Accepts the canonical text and shorter forms: fields in any order, missing fields
// take the strategy's defaults. Unknown keys, bad values and duplicates are errors.
struct ConfigParseResult {
  std::optional<ReduceConfig> config;
  std::string error;
};
ConfigParseResult parse_config(std::string_view text);

// Stable 64-bit hash (XXH64 of the canonical text, seed 0).
std::uint64_t config_hash(const ReduceConfig& config);

// The defaults a strategy starts from (its classic shape).
ReduceConfig default_config(Strategy strategy);

// Whether a strategy ends its block reduction with a warp reduction (the `warp` field).
// The pure shared-memory trees (neighbored, neighbored_less, interleaved, first_add,
// unroll_blocks) do not; their configs say warp=none.
bool uses_warp_reduce(Strategy strategy);

}  // namespace reduce_tune
