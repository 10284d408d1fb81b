#include "cli/tune_options.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace reduce_tune::cli {

namespace po = boost::program_options;
using tuner::Budget;
using tuner::SearchKind;
using tuner::TuneOptions;

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream is(text);
  while (std::getline(is, part, sep))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

// "4096", "1e8", "2^20", "64k"/"16M"/"1G" (binary multiples).
std::optional<std::uint64_t> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  const auto caret = text.find('^');
  if (caret != std::string::npos) {
    if (text.substr(0, caret) != "2") return std::nullopt;
    const std::string e = text.substr(caret + 1);
    if (e.empty() || e.size() > 2 || !std::all_of(e.begin(), e.end(), ::isdigit)) return std::nullopt;
    const int exponent = std::stoi(e);
    if (exponent > 40) return std::nullopt;
    return 1ull << exponent;
  }
  std::uint64_t multiplier = 1;
  std::string digits = text;
  switch (text.back()) {
    case 'k': case 'K': multiplier = 1ull << 10; digits.pop_back(); break;
    case 'M': multiplier = 1ull << 20; digits.pop_back(); break;
    case 'G': multiplier = 1ull << 30; digits.pop_back(); break;
    default: break;
  }
  if (digits.empty()) return std::nullopt;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(digits, &used);
  } catch (...) {
    return std::nullopt;
  }
  if (used != digits.size() || !(value >= 0) || value != std::floor(value) || value * multiplier > 1e13)
    return std::nullopt;
  return static_cast<std::uint64_t>(value) * multiplier;
}

template <typename T, typename Parse>
std::optional<std::vector<T>> parse_list(const std::string& text, const std::vector<T>& all, Parse parse,
                                         std::string_view option, std::string_view allowed,
                                         std::string* error) {
  if (text == "all") return all;
  std::vector<T> out;
  for (const auto& word : split(text, ',')) {
    auto v = parse(word);
    if (!v) {
      *error = std::string(option) + ": unknown value '" + word + "' (allowed: " + std::string(allowed) + ", all)";
      return std::nullopt;
    }
    if (std::find(out.begin(), out.end(), *v) == out.end()) out.push_back(*v);
  }
  if (out.empty()) {
    *error = std::string(option) + ": empty list (allowed: " + std::string(allowed) + ", all)";
    return std::nullopt;
  }
  return out;
}

}  // namespace

std::optional<std::vector<std::uint64_t>> parse_sizes(const std::string& text, std::string* error) {
  std::set<std::uint64_t> sizes;
  for (const auto& item : split(text, ',')) {
    const auto dots = item.find("..");
    if (dots != std::string::npos) {
      const auto lo = parse_size(item.substr(0, dots));
      const auto hi = parse_size(item.substr(dots + 2));
      if (!lo || !hi || *lo == 0 || *lo > *hi || (*lo & (*lo - 1)) != 0) {
        *error = "--sizes: bad range '" + item + "' (a range runs between powers of two, e.g. 2^10..2^30)";
        return std::nullopt;
      }
      for (std::uint64_t s = *lo; s <= *hi; s *= 2) sizes.insert(s);
      continue;
    }
    const auto n = parse_size(item);
    if (!n || *n == 0) {
      *error = "--sizes: bad size '" + item + "' (sizes are positive integers: 4096, 1e8, 2^20, 64k, 16M)";
      return std::nullopt;
    }
    sizes.insert(*n);
  }
  if (sizes.empty()) {
    *error = "--sizes: no sizes given";
    return std::nullopt;
  }
  return std::vector<std::uint64_t>(sizes.begin(), sizes.end());
}

std::optional<Budget> parse_budget(const std::string& text, std::string* error) {
  Budget b;
  try {
    std::size_t used = 0;
    if (!text.empty() && text.back() == 's') {
      b.seconds = std::stod(text.substr(0, text.size() - 1), &used);
      if (used == text.size() - 1 && b.seconds > 0) return Budget{0, b.seconds};
    } else {
      const int n = std::stoi(text, &used);
      if (used == text.size() && n > 0) return Budget{n, 0};
    }
  } catch (...) {
  }
  *error = "--budget: bad value '" + text + "' (evaluations per bucket, e.g. 40, or seconds for the run, e.g. 300s)";
  return std::nullopt;
}

std::string tune_usage() {
  return "usage: reduce-tune tune [--device N|all] [--ops LIST] [--dtypes LIST] [--sizes LIST]\n"
         "                        [--strategy exhaustive|random|local] [--budget N|SECONDSs]\n"
         "                        [--layouts flat,rows,columns] [--axis-shapes RxOUTPUTS,...]\n"
         "                        [--db PATH] [--fresh] [--no-fill] [--keep-binaries all|winners]\n"
         "                        [--dry-run [--arch SM]] [--quiet|--verbose]\n";
}

TuneParseResult parse_tune_options(const std::vector<std::string>& args) {
  TuneOptions o;
  std::string device = "0", ops, dtypes, sizes, strategy = "local", budget, db, keep = "winners", layouts, axis_shapes;
  bool no_fill = false;
  po::options_description desc;
  desc.add_options()
      ("help,h", po::bool_switch(&o.help), "")
      ("device", po::value(&device), "")
      ("ops", po::value(&ops), "")
      ("dtypes", po::value(&dtypes), "")
      ("sizes", po::value(&sizes), "")
      ("layouts", po::value(&layouts), "")
      ("axis-shapes", po::value(&axis_shapes), "")
      ("strategy", po::value(&strategy), "")
      ("budget", po::value(&budget), "")
      ("db", po::value(&db), "")
      ("dry-run", po::bool_switch(&o.dry_run), "")
      ("arch", po::value(&o.dry_run_arch), "")
      ("fresh", po::bool_switch(&o.fresh), "")
      ("no-fill", po::bool_switch(&no_fill), "")
      ("keep-binaries", po::value(&keep), "")
      ("quiet,q", po::bool_switch(&o.quiet), "")
      ("verbose,v", po::bool_switch(&o.verbose), "");
  auto fail = [](std::string message) { return TuneParseResult{std::nullopt, std::move(message)}; };
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return fail(e.what());
  }
  if (o.quiet && o.verbose) return fail("--quiet and --verbose exclude each other");
  o.fill_axis_neighbours = !no_fill;
  std::string error;
  if (device == "all") {
    o.all_devices = true;
    o.devices.clear();
  } else {
    o.devices.clear();
    for (const auto& word : split(device, ',')) {
      if (word.empty() || !std::all_of(word.begin(), word.end(), ::isdigit) || word.size() > 4)
        return fail("--device: bad value '" + device + "' (a device index such as 0, a list 0,1, or all)");
      o.devices.push_back(std::stoi(word));
    }
    if (o.devices.empty()) return fail("--device: bad value '' (a device index such as 0, a list 0,1, or all)");
  }
  o.default_scope = ops.empty() && dtypes.empty();
  if (!ops.empty()) {
    auto v = parse_list<Op>(ops, {kAllOps, kAllOps + std::size(kAllOps)}, parse_op, "--ops",
                            "sum, prod, min, max, mean", &error);
    if (!v) return fail(error);
    o.ops = *v;
  }
  if (!dtypes.empty()) {
    auto v = parse_list<DType>(dtypes, {kAllDTypes, kAllDTypes + std::size(kAllDTypes)}, parse_dtype,
                               "--dtypes", "i32, i64, u32, f32, f64, f16, bf16", &error);
    if (!v) return fail(error);
    o.dtypes = *v;
  }
  if (!sizes.empty()) {
    auto v = parse_sizes(sizes, &error);
    if (!v) return fail(error);
    o.sizes = *v;
  }
  if (!layouts.empty()) {
    const std::vector<AxisLayout> all = {AxisLayout::flat, AxisLayout::rows, AxisLayout::columns};
    auto v = parse_list<AxisLayout>(
        layouts, all,
        [&](const std::string& word) -> std::optional<AxisLayout> {
          for (AxisLayout l : all)
            if (word == to_string(l)) return l;
          return std::nullopt;
        },
        "--layouts", "flat, rows, columns", &error);
    if (!v) return fail(error);
    o.layouts = *v;
  }
  if (!axis_shapes.empty()) {
    for (const auto& item : split(axis_shapes, ',')) {
      const auto x = item.find('x');
      const auto r = x == std::string::npos ? std::nullopt : parse_size(item.substr(0, x));
      const auto outputs = x == std::string::npos ? std::nullopt : parse_size(item.substr(x + 1));
      if (!r || !outputs || *r < 2 || *outputs < 2 || *r > (1ull << 31) || *outputs > (1ull << 31))
        return fail("--axis-shapes: bad shape '" + item +
                    "' (R x outputs, each 2 to 2^31, such as 1000x4096 or 2^10x2^14)");
      o.axis_shapes.emplace_back(*r, *outputs);
    }
    if (o.axis_shapes.empty()) return fail("--axis-shapes: no shapes given");
  }
  if (keep == "all" || keep == "winners") o.keep_all_binaries = keep == "all";
  else return fail("--keep-binaries: unknown value '" + keep + "' (allowed: all, winners)");
  if (strategy == "exhaustive") o.search = SearchKind::exhaustive;
  else if (strategy == "random") o.search = SearchKind::random;
  else if (strategy == "local") o.search = SearchKind::local;
  else return fail("--strategy: unknown value '" + strategy + "' (allowed: exhaustive, random, local)");
  if (!budget.empty()) {
    auto v = parse_budget(budget, &error);
    if (!v) return fail(error);
    o.budget = *v;
  } else if (o.search == SearchKind::exhaustive) {
    o.budget = Budget{0, 0};
  }
  if (!db.empty()) o.db = db;
  if (o.dry_run_arch < 50 || o.dry_run_arch > 130) return fail("--arch: bad value (a compute capability such as 80 or 90)");
  return {o, {}};
}

}  // namespace reduce_tune::cli
