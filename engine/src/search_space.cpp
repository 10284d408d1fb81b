#include "reduce_tune/engine/search_space.h"

#include <algorithm>
#include <bit>
#include <sstream>

#include "reduce_tune/error.h"

namespace reduce_tune {

namespace {

template <typename T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

const std::vector<GridPolicy> kMachineGrids = {
    {GridKind::per_sm, 1}, {GridKind::per_sm, 2}, {GridKind::per_sm, 4}, {GridKind::per_sm, 8}};

std::vector<GridPolicy> with_single_block(std::vector<GridPolicy> grids) {
  grids.insert(grids.begin(), GridPolicy{GridKind::fixed, 1});
  return grids;
}

// The kernel family as data, one row per strategy the reports name. Seven code paths
// exist on the device (kernel_templates/rt/strategies/<path>.cuh, each naming its
// lineage); three classic names are parameter ranges of a shared path and live only here:
//   first_add      Harris reduce3 ("first add during global load", reduceUnrolling2):
//                  `interleaved` with two loads per thread, so half the blocks cover the input.
//   unroll_blocks  reduceUnrolling4/8 (Professional CUDA C): `interleaved` with 4 or 8 data
//                  blocks per thread block, all loads issued before the first add.
//   multi_element  Harris reduce6 (algorithm cascading): `complete_unroll` with a grid sized
//                  to the machine, many elements per thread in a grid-stride loop, and
//                  several independent accumulators.
// The declared values keep exhaustive search feasible per bucket (minutes): the warp
// step and the cache hint matter little once loads dominate, so the modern strategies
// keep two of each; the classic ones keep their original shape (one tile per block,
// one accumulator, their own items per thread).
struct StrategyRow {
  Strategy strategy;
  Strategy code_path;   // the device strategy that runs it
  bool classic;         // one tile per block, one accumulator per thread
  ParameterValues values;
};

const std::vector<StrategyRow>& strategy_table() {
  static const std::vector<StrategyRow> rows = [] {
    const std::vector<std::uint32_t> blocks = {64, 128, 256, 512, 1024};
    const std::vector<Passes> passes = {Passes::two_pass, Passes::single_pass_ticket, Passes::single_pass_atomic};
    const std::vector<LoadHint> plain_or_ldg = {LoadHint::plain, LoadHint::ldg};
    const std::vector<GridPolicy> tiles = {GridPolicy{GridKind::tiles, 0}};
    auto tree = [&](std::vector<std::uint32_t> items) {
      return ParameterValues{blocks, std::move(items), {1}, tiles, {WarpReduce::none}, passes, plain_or_ldg, {1}};
    };
    auto tree_with_warp = [&] {
      return ParameterValues{blocks, {2, 4, 8}, {1}, tiles,
                             {WarpReduce::smem, WarpReduce::shuffle, WarpReduce::redux}, passes, plain_or_ldg, {1}};
    };
    return std::vector<StrategyRow>{
        {Strategy::neighbored, Strategy::neighbored, true, tree({1})},
        {Strategy::neighbored_less, Strategy::neighbored_less, true, tree({1})},
        {Strategy::interleaved, Strategy::interleaved, true, tree({1})},
        {Strategy::first_add, Strategy::interleaved, true, tree({2})},
        {Strategy::unroll_blocks, Strategy::interleaved, true, tree({4, 8})},
        {Strategy::unroll_last_warp, Strategy::unroll_last_warp, true, tree_with_warp()},
        {Strategy::complete_unroll, Strategy::complete_unroll, true, tree_with_warp()},
        {Strategy::multi_element, Strategy::complete_unroll, false,
         ParameterValues{blocks, {2, 4, 8, 16}, {1}, kMachineGrids, {WarpReduce::smem, WarpReduce::shuffle}, passes,
                         plain_or_ldg, {1, 2, 4}}},
        {Strategy::warp_shuffle, Strategy::warp_shuffle, false,
         ParameterValues{blocks, {2, 4, 8, 16}, {1}, kMachineGrids, {WarpReduce::shuffle, WarpReduce::redux}, passes,
                         plain_or_ldg, {1, 2, 4}}},
        // One block (grid 1) and 16 loads per thread: a small input read by one block in
        // one round of loads needs no second launch and no hand-off between blocks.
        {Strategy::vectorized, Strategy::vectorized, false,
         ParameterValues{blocks, {1, 2, 4, 8, 16}, {2, 4, 8}, with_single_block(kMachineGrids),
                         {WarpReduce::shuffle, WarpReduce::redux}, passes, {LoadHint::ldg, LoadHint::ldcs}, {1, 2, 4}}},
    };
  }();
  return rows;
}

const StrategyRow& row_of(Strategy s) {
  for (const auto& row : strategy_table())
    if (row.strategy == s) return row;
  throw InvalidArgument("no strategy " + std::to_string(static_cast<int>(s)));
}

}  // namespace

Strategy code_path(Strategy s) { return row_of(s).code_path; }

bool is_classic(Strategy s) { return row_of(s).classic; }

std::size_t static_shared_bytes(const KernelSpec& spec) {
  return (spec.config.block_threads + 64) * size_of(spec.types.acc) + 16;
}

std::optional<std::string> check_config(const KernelSpec& spec, const DeviceLimits& limits) {
  const ReduceConfig& c = spec.config;
  const Strategy s = c.strategy;
  const StrategyRow& row = row_of(s);
  std::ostringstream why;
  const bool warp_based = row.code_path == Strategy::warp_shuffle || row.code_path == Strategy::vectorized;

  if (c.block_threads < 32 || c.block_threads > 1024)
    return "block must be between 32 and 1024 threads";
  if (warp_based ? c.block_threads % 32 != 0 : !std::has_single_bit(c.block_threads))
    return warp_based ? "block must be a multiple of 32"
                      : "block must be a power of two for the shared-memory tree";
  if (static_cast<int>(c.block_threads) > limits.max_threads_per_block) {
    why << "block " << c.block_threads << " exceeds the device limit of "
        << limits.max_threads_per_block << " threads";
    return why.str();
  }
  if (static_shared_bytes(spec) > limits.max_static_shared_bytes)
    return "shared memory exceeds the device limit";

  if (c.vec_width != 1 && c.vec_width != 2 && c.vec_width != 4 && c.vec_width != 8) return "vec must be 1, 2, 4 or 8";
  if (c.vec_width * size_of(spec.types.in) > 16) {
    why << "vec=" << c.vec_width << " of " << to_string(spec.types.in)
        << " is wider than a 16-byte load";
    return why.str();
  }
  if (s == Strategy::vectorized && c.vec_width == 1)
    return "vectorized needs vec >= 2 (vec=1 is warp_shuffle)";
  if (s != Strategy::vectorized && c.vec_width != 1)
    return std::string(to_string(s)) + " loads scalars: vec must be 1";

  if (c.items_per_thread < 1 || c.items_per_thread > 32) return "items must be between 1 and 32";
  const auto& fixed_items = row.values.items_per_thread;
  if (row.classic && !contains(fixed_items, c.items_per_thread)) {
    why << to_string(s) << " takes items in {";
    for (std::size_t i = 0; i < fixed_items.size(); ++i) why << (i ? "," : "") << fixed_items[i];
    why << "}";
    return why.str();
  }

  if (c.unroll != 1 && c.unroll != 2 && c.unroll != 4 && c.unroll != 8)
    return "unroll must be 1, 2, 4 or 8";
  if (is_classic(s) && c.unroll != 1)
    return std::string(to_string(s)) + " has one accumulator per thread: unroll must be 1";
  if (c.unroll > c.items_per_thread * c.vec_width)
    return "unroll exceeds the values a thread loads per tile (items * vec)";

  if (!uses_warp_reduce(s) && c.warp_reduce != WarpReduce::none)
    return std::string(to_string(s)) + " reduces in shared memory down to one value: warp must be none";
  if (uses_warp_reduce(s) && c.warp_reduce == WarpReduce::none)
    return std::string(to_string(s)) + " ends with a warp reduction: warp must be shuffle, smem or redux";
  if (c.warp_reduce == WarpReduce::redux) {
    if (limits.arch < 80) return "redux.sync needs sm_80 or newer";
    if (spec.types.acc != DType::i32 && spec.types.acc != DType::u32)
      return "redux.sync reduces 32-bit integers only";
    if (spec.op != Op::sum && spec.op != Op::min && spec.op != Op::max)
      return "redux.sync does add, min and max only";
  }

  if (is_classic(s) && c.grid.kind != GridKind::tiles)
    return std::string(to_string(s)) + " uses one tile per block: grid must be tiles";
  if (c.grid.kind == GridKind::per_sm && (c.grid.value < 1 || c.grid.value > 64))
    return "grid sm*K needs K between 1 and 64";
  if (c.grid.kind == GridKind::fixed && (c.grid.value < 1 || c.grid.value > 0x7fffffffu))
    return "grid must be between 1 and 2^31-1 blocks";
  return std::nullopt;
}

ParameterValues declared_values(Strategy s) { return row_of(s).values; }

std::size_t declared_space_size(Strategy s) {
  const ParameterValues v = declared_values(s);
  return v.block_threads.size() * v.items_per_thread.size() * v.vec_width.size() * v.grid.size() *
         v.warp_reduce.size() * v.passes.size() * v.load.size() * v.unroll.size();
}

std::vector<ReduceConfig> enumerate_space(Strategy s, Op op, const TypeRule& types,
                                          const DeviceLimits& limits) {
  const ParameterValues v = declared_values(s);
  std::vector<ReduceConfig> out;
  ReduceConfig c;
  c.strategy = s;
  for (auto block : v.block_threads)
    for (auto items : v.items_per_thread)
      for (auto vec : v.vec_width)
        for (auto grid : v.grid)
          for (auto warp : v.warp_reduce)
            for (auto passes : v.passes)
              for (auto load : v.load)
                for (auto unroll : v.unroll) {
                  c.block_threads = block;
                  c.items_per_thread = items;
                  c.vec_width = vec;
                  c.grid = grid;
                  c.warp_reduce = warp;
                  c.passes = passes;
                  c.load = load;
                  c.unroll = unroll;
                  if (!check_config(KernelSpec{op, types, c}, limits)) out.push_back(c);
                }
  return out;
}

std::vector<ReduceConfig> portfolio_seeds(Op op, const TypeRule& types, int arch) {
  // From `reduce-tune tune --strategy exhaustive` over 7260 configs per bucket (sum<f32>
  // at 2^12, 2^20, 2^26, NVIDIA H200, 2026-11-21): the winners, and the large-grid shape.
  // Then over 8850 (sum<f32> at 2^16, 2^18 .. 2^26, NVIDIA H200, 2026-11-22,
  // scripts/gpu-search-gap.sh): the winners the local search had not found, at 2^20
  // (10% faster than the local search's winner there) and 2^26.
  const char* texts[] = {
      "warp_shuffle:block=512,items=16,vec=1,grid=sm*4,warp=shuffle,passes=single_pass_ticket,load=plain,unroll=2",
      "vectorized:block=1024,items=4,vec=4,grid=sm*4,warp=shuffle,passes=single_pass_ticket,load=ldcs,unroll=4",
      "vectorized:block=512,items=8,vec=4,grid=sm*2,warp=shuffle,passes=single_pass_ticket,load=ldcs,unroll=1",
      "vectorized:block=1024,items=4,vec=4,grid=sm*2,warp=shuffle,passes=single_pass_ticket,load=ldcs,unroll=1",
      "vectorized:block=256,items=8,vec=4,grid=sm*8,warp=shuffle,passes=single_pass_ticket,load=ldcs,unroll=1",
      "multi_element:block=1024,items=4,vec=1,grid=sm*4,warp=shuffle,passes=single_pass_ticket,load=ldg,unroll=1",
      // Small inputs: one block reads everything in one round of loads.
      "vectorized:block=512,items=16,vec=4,grid=1,warp=shuffle,passes=single_pass_ticket,load=ldg,unroll=4",
      "vectorized:block=256,items=8,vec=4,grid=1,warp=shuffle,passes=single_pass_ticket,load=ldg,unroll=4",
  };
  std::vector<ReduceConfig> seeds;
  DeviceLimits limits;
  limits.arch = arch;
  for (const char* text : texts) {
    ReduceConfig c = *parse_config(text).config;
    // The same bytes per load as for f32: 16-byte loads stay 16 bytes for every type
    // (the other strategies load one element at a time).
    if (c.strategy == Strategy::vectorized)
      c.vec_width = std::max<std::uint32_t>(2, c.vec_width * 4 / static_cast<std::uint32_t>(size_of(types.in)));
    if (!check_config(KernelSpec{op, types, c}, limits)) seeds.push_back(c);
  }
  return seeds;
}

ReduceConfig default_config_for(Strategy s, Op op, const TypeRule& types, int arch) {
  ReduceConfig c = default_config(s);
  // The default's bytes per load for f32, for every type (16-bit floats load 8 at a time).
  if (c.vec_width > 1) c.vec_width = std::max<std::uint32_t>(1, c.vec_width * 4 / static_cast<std::uint32_t>(size_of(types.in)));
  if (s == Strategy::vectorized && c.vec_width == 1) c.vec_width = 2;
  DeviceLimits limits;
  limits.arch = arch;
  if (c.warp_reduce == WarpReduce::redux && check_config(KernelSpec{op, types, c}, limits))
    c.warp_reduce = WarpReduce::shuffle;
  return c;
}

}  // namespace reduce_tune
