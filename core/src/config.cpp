#include "reduce_tune/config.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <charconv>
#include <sstream>
#include <vector>

namespace reduce_tune {

std::string_view to_string(Strategy s) {
  switch (s) {
    case Strategy::neighbored: return "neighbored";
    case Strategy::neighbored_less: return "neighbored_less";
    case Strategy::interleaved: return "interleaved";
    case Strategy::first_add: return "first_add";
    case Strategy::unroll_blocks: return "unroll_blocks";
    case Strategy::unroll_last_warp: return "unroll_last_warp";
    case Strategy::complete_unroll: return "complete_unroll";
    case Strategy::multi_element: return "multi_element";
    case Strategy::warp_shuffle: return "warp_shuffle";
    case Strategy::vectorized: return "vectorized";
  }
  return "?";
}

std::string_view to_string(WarpReduce w) {
  switch (w) {
    case WarpReduce::shuffle: return "shuffle";
    case WarpReduce::smem: return "smem";
    case WarpReduce::redux: return "redux";
    case WarpReduce::none: return "none";
  }
  return "?";
}

std::string_view to_string(Passes p) {
  switch (p) {
    case Passes::two_pass: return "two_pass";
    case Passes::single_pass_ticket: return "single_pass_ticket";
    case Passes::single_pass_atomic: return "single_pass_atomic";
  }
  return "?";
}

std::string_view to_string(LoadHint l) {
  switch (l) {
    case LoadHint::plain: return "plain";
    case LoadHint::ldg: return "ldg";
    case LoadHint::ldcs: return "ldcs";
    case LoadHint::ldcg: return "ldcg";
  }
  return "?";
}

std::string to_string(const GridPolicy& g) {
  switch (g.kind) {
    case GridKind::tiles: return "tiles";
    case GridKind::per_sm: return "sm*" + std::to_string(g.value);
    case GridKind::fixed: return std::to_string(g.value);
  }
  return "?";
}

namespace {

template <typename Enum, std::size_t N>
std::optional<Enum> parse_enum(std::string_view text, const Enum (&values)[N]) {
  for (Enum v : values)
    if (to_string(v) == text) return v;
  return std::nullopt;
}

constexpr WarpReduce kAllWarpReduces[] = {WarpReduce::shuffle, WarpReduce::smem, WarpReduce::redux,
                                          WarpReduce::none};
constexpr Passes kAllPasses[] = {Passes::two_pass, Passes::single_pass_ticket,
                                 Passes::single_pass_atomic};
constexpr LoadHint kAllLoadHints[] = {LoadHint::plain, LoadHint::ldg, LoadHint::ldcs,
                                      LoadHint::ldcg};

std::optional<std::uint32_t> parse_u32(std::string_view text) {
  std::uint32_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<Strategy> parse_strategy(std::string_view text) {
  return parse_enum(text, kAllStrategies);
}
std::optional<WarpReduce> parse_warp_reduce(std::string_view text) {
  return parse_enum(text, kAllWarpReduces);
}
std::optional<Passes> parse_passes(std::string_view text) { return parse_enum(text, kAllPasses); }
std::optional<LoadHint> parse_load_hint(std::string_view text) {
  return parse_enum(text, kAllLoadHints);
}

std::optional<GridPolicy> parse_grid_policy(std::string_view text) {
  if (text == "tiles") return GridPolicy{GridKind::tiles, 0};
  if (text.starts_with("sm*")) {
    auto v = parse_u32(text.substr(3));
    if (!v || *v == 0) return std::nullopt;
    return GridPolicy{GridKind::per_sm, *v};
  }
  auto v = parse_u32(text);
  if (!v || *v == 0) return std::nullopt;
  return GridPolicy{GridKind::fixed, *v};
}

std::string to_string(const ReduceConfig& c) {
  std::ostringstream os;
  os << to_string(c.strategy) << ":block=" << c.block_threads << ",items=" << c.items_per_thread
     << ",vec=" << c.vec_width << ",grid=" << to_string(c.grid)
     << ",warp=" << to_string(c.warp_reduce) << ",passes=" << to_string(c.passes)
     << ",load=" << to_string(c.load) << ",unroll=" << c.unroll;
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const ReduceConfig& config) {
  return os << to_string(config);
}

ConfigParseResult parse_config(std::string_view text) {
  auto fail = [](std::string why) { return ConfigParseResult{std::nullopt, std::move(why)}; };
  const auto colon = text.find(':');
  const std::string_view strategy_text = text.substr(0, colon);
  const auto strategy = parse_strategy(strategy_text);
  if (!strategy) return fail("unknown strategy '" + std::string(strategy_text) + "'");
  ReduceConfig c = default_config(*strategy);
  if (colon == std::string_view::npos) return {c, {}};

  std::vector<std::string_view> seen;
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view field = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto eq = field.find('=');
    if (eq == std::string_view::npos) return fail("field '" + std::string(field) + "' has no '='");
    const std::string_view key = field.substr(0, eq);
    const std::string_view value = field.substr(eq + 1);
    for (auto s : seen)
      if (s == key) return fail("field '" + std::string(key) + "' given twice");
    seen.push_back(key);
    auto bad = [&] {
      return fail("bad value '" + std::string(value) + "' for '" + std::string(key) + "'");
    };
    if (key == "block" || key == "items" || key == "vec" || key == "unroll") {
      auto v = parse_u32(value);
      if (!v) return bad();
      (key == "block" ? c.block_threads
       : key == "items" ? c.items_per_thread
       : key == "vec" ? c.vec_width
                      : c.unroll) = *v;
    } else if (key == "grid") {
      auto g = parse_grid_policy(value);
      if (!g) return bad();
      c.grid = *g;
    } else if (key == "warp") {
      auto w = parse_warp_reduce(value);
      if (!w) return bad();
      if (!uses_warp_reduce(*strategy)) {
        // Text stored before `none` existed says smem for these strategies; it means the
        // same kernel.
        if (*w != WarpReduce::none && *w != WarpReduce::smem)
          return fail(std::string(to_string(*strategy)) + " has no warp step: warp must be none");
        w = WarpReduce::none;
      }
      c.warp_reduce = *w;
    } else if (key == "passes") {
      auto p = parse_passes(value);
      if (!p) return bad();
      c.passes = *p;
    } else if (key == "load") {
      auto l = parse_load_hint(value);
      if (!l) return bad();
      c.load = *l;
    } else {
      return fail("unknown field '" + std::string(key) + "'");
    }
  }
  return {c, {}};
}

std::uint64_t config_hash(const ReduceConfig& config) {
  const std::string text = to_string(config);
  return XXH64(text.data(), text.size(), 0);
}

bool uses_warp_reduce(Strategy strategy) {
  switch (strategy) {
    case Strategy::neighbored:
    case Strategy::neighbored_less:
    case Strategy::interleaved:
    case Strategy::first_add:
    case Strategy::unroll_blocks: return false;
    default: return true;
  }
}

ReduceConfig default_config(Strategy strategy) {
  ReduceConfig c;
  c.strategy = strategy;
  c.block_threads = 256;
  c.vec_width = 1;
  c.unroll = 1;
  c.load = LoadHint::plain;
  c.warp_reduce = uses_warp_reduce(strategy) ? WarpReduce::smem : WarpReduce::none;
  c.passes = Passes::two_pass;
  c.grid = GridPolicy{GridKind::tiles, 0};
  switch (strategy) {
    case Strategy::neighbored:
    case Strategy::neighbored_less:
    case Strategy::interleaved: c.items_per_thread = 1; break;
    case Strategy::first_add: c.items_per_thread = 2; break;
    case Strategy::unroll_blocks: c.items_per_thread = 4; break;
    case Strategy::unroll_last_warp:
    case Strategy::complete_unroll: c.items_per_thread = 8; break;
    case Strategy::multi_element:
      c.items_per_thread = 4;
      c.grid = GridPolicy{GridKind::per_sm, 4};
      break;
    case Strategy::warp_shuffle:
      c.items_per_thread = 4;
      c.warp_reduce = WarpReduce::shuffle;
      c.grid = GridPolicy{GridKind::per_sm, 4};
      break;
    case Strategy::vectorized:
      c.items_per_thread = 4;
      c.vec_width = 4;
      c.unroll = 2;
      c.warp_reduce = WarpReduce::shuffle;
      c.passes = Passes::single_pass_ticket;
      c.load = LoadHint::ldg;
      c.grid = GridPolicy{GridKind::per_sm, 4};
      break;
  }
  return c;
}

}  // namespace reduce_tune
