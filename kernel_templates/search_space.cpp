#include "search_space.h"

#include <algorithm>
#include <bit>
#include <sstream>

namespace reduce_tune {

namespace {

bool pure_tree(Strategy s) {
  return s == Strategy::neighbored || s == Strategy::neighbored_less ||
         s == Strategy::interleaved || s == Strategy::first_add || s == Strategy::unroll_blocks;
}

// Items per thread that define a classic strategy (empty: any from the declared list).
std::vector<std::uint32_t> classic_items(Strategy s) {
  switch (s) {
    case Strategy::neighbored:
    case Strategy::neighbored_less:
    case Strategy::interleaved: return {1};
    case Strategy::first_add: return {2};
    case Strategy::unroll_blocks: return {4, 8};
    case Strategy::unroll_last_warp:
    case Strategy::complete_unroll: return {2, 4, 8};
    default: return {};
  }
}

template <typename T>
bool contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

}  // namespace

bool is_classic(Strategy s) { return pure_tree(s) || s == Strategy::unroll_last_warp ||
                                     s == Strategy::complete_unroll; }

std::size_t static_shared_bytes(const KernelSpec& spec) {
  return (spec.config.block_threads + 64) * size_of(spec.types.acc) + 16;
}

std::optional<std::string> check_config(const KernelSpec& spec, const DeviceLimits& limits) {
  const ReduceConfig& c = spec.config;
  const Strategy s = c.strategy;
  std::ostringstream why;
  const bool warp_based = s == Strategy::warp_shuffle || s == Strategy::vectorized;

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

  if (c.vec_width != 1 && c.vec_width != 2 && c.vec_width != 4) return "vec must be 1, 2 or 4";
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
  const auto fixed_items = classic_items(s);
  if (!fixed_items.empty() && !contains(fixed_items, c.items_per_thread)) {
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

  if (pure_tree(s) && c.warp_reduce != WarpReduce::smem)
    return std::string(to_string(s)) +
           " reduces in shared memory down to one value: warp must be smem";
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

// Values chosen so that exhaustive search stays feasible per bucket (minutes): the warp
// step and the cache hint matter little once loads dominate, so the modern strategies
// keep two of each; the classic ones keep their shared-memory warp for the lineage.
ParameterValues declared_values(Strategy s) {
  ParameterValues v;
  v.block_threads = {64, 128, 256, 512, 1024};
  v.vec_width = {1};
  v.unroll = {1};
  v.warp_reduce = {WarpReduce::smem};
  v.passes = {Passes::two_pass, Passes::single_pass_ticket, Passes::single_pass_atomic};
  v.load = {LoadHint::plain, LoadHint::ldg};
  v.grid = {GridPolicy{GridKind::tiles, 0}};
  v.items_per_thread = classic_items(s);
  const std::vector<GridPolicy> machine_grids = {
      {GridKind::per_sm, 1}, {GridKind::per_sm, 2}, {GridKind::per_sm, 4}, {GridKind::per_sm, 8}};
  switch (s) {
    case Strategy::unroll_last_warp:
    case Strategy::complete_unroll:
      v.warp_reduce = {WarpReduce::smem, WarpReduce::shuffle, WarpReduce::redux};
      break;
    case Strategy::multi_element:
      v.items_per_thread = {2, 4, 8, 16};
      v.unroll = {1, 2, 4};
      v.grid = machine_grids;
      v.warp_reduce = {WarpReduce::smem, WarpReduce::shuffle};
      break;
    case Strategy::warp_shuffle:
      v.items_per_thread = {2, 4, 8, 16};
      v.unroll = {1, 2, 4};
      v.grid = machine_grids;
      v.warp_reduce = {WarpReduce::shuffle, WarpReduce::redux};
      break;
    case Strategy::vectorized:
      v.items_per_thread = {1, 2, 4, 8};
      v.vec_width = {2, 4};
      v.unroll = {1, 2, 4};
      v.grid = machine_grids;
      v.warp_reduce = {WarpReduce::shuffle, WarpReduce::redux};
      v.load = {LoadHint::ldg, LoadHint::ldcs};
      break;
    default: break;
  }
  return v;
}

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
  const char* texts[] = {
      "vectorized:block=512,items=8,vec=4,grid=sm*2,warp=shuffle,passes=single_pass_ticket,load=ldcs,unroll=1",
      "vectorized:block=1024,items=4,vec=4,grid=sm*2,warp=shuffle,passes=single_pass_ticket,load=ldcs,unroll=1",
      "vectorized:block=256,items=8,vec=4,grid=sm*8,warp=shuffle,passes=single_pass_ticket,load=ldcs,unroll=1",
      "multi_element:block=1024,items=4,vec=1,grid=sm*4,warp=shuffle,passes=single_pass_ticket,load=ldg,unroll=1",
  };
  std::vector<ReduceConfig> seeds;
  DeviceLimits limits;
  limits.arch = arch;
  for (const char* text : texts) {
    ReduceConfig c = *parse_config(text).config;
    while (c.vec_width > 2 && c.vec_width * size_of(types.in) > 16) c.vec_width /= 2;
    if (!check_config(KernelSpec{op, types, c}, limits)) seeds.push_back(c);
  }
  return seeds;
}

ReduceConfig default_config_for(Strategy s, Op op, const TypeRule& types, int arch) {
  ReduceConfig c = default_config(s);
  while (c.vec_width > 1 && c.vec_width * size_of(types.in) > 16) c.vec_width /= 2;
  if (s == Strategy::vectorized && c.vec_width == 1) c.vec_width = 2;
  DeviceLimits limits;
  limits.arch = arch;
  if (c.warp_reduce == WarpReduce::redux && check_config(KernelSpec{op, types, c}, limits))
    c.warp_reduce = WarpReduce::shuffle;
  return c;
}

}  // namespace reduce_tune
