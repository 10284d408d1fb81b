// `reduce-tune report`: reads the tuning database (read-only; no GPU needed) and writes
// what was tuned as Markdown, CSV, JSON or HTML. Only this layer prints and chooses exit
// codes; the model, loader and renderers are in tuner/report*.h.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>

#include "reduce_tune/db/database.h"
#include "reduce_tune/db/paths.h"
#include "reduce_tune/error.h"
#include "cli/command_support.h"
#include "cli/commands.h"
#include "cli/db_commands.h"
#include "reduce_tune/report/report_loader.h"
#include "reduce_tune/report/report_render.h"

namespace reduce_tune::cli {
using namespace reduce_tune::report;
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;

// The parsed flags, as given.
struct ReportOptions {
  std::optional<std::string> db;      // --db PATH; else the default location
  std::optional<std::string> format;  // --format; else from -o's extension; else md
  std::optional<std::string> output;  // -o FILE; else stdout
  std::optional<std::string> device;  // --device UUID|INDEX
  std::vector<std::string> ops;       // --op, comma-separated and repeatable
  std::vector<std::string> dtypes;    // --dtype, likewise
  bool help = false;
};

std::vector<std::string> split_commas(const std::vector<std::string>& values) {
  std::vector<std::string> words;
  for (const auto& value : values) {
    std::size_t start = 0;
    while (start <= value.size()) {
      const auto comma = std::min(value.find(',', start), value.size());
      words.push_back(value.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return words;
}

template <typename Value, std::size_t N, typename Parse>
std::vector<Value> parse_list(const std::vector<std::string>& values, const char* option, const Value (&all)[N],
                              Parse parse) {
  std::vector<Value> parsed;
  for (const auto& word : split_commas(values)) {
    const auto value = parse(word);
    if (!value) {
      std::string allowed;
      for (std::size_t i = 0; i < N; ++i) allowed += (i ? ", " : "") + std::string(to_string(all[i]));
      throw UsageError(std::string(option) + " '" + word + "': expected one of " + allowed +
                       " (a comma-separated list)");
    }
    if (std::find(parsed.begin(), parsed.end(), *value) == parsed.end()) parsed.push_back(*value);
  }
  return parsed;
}

ReportFormat choose_format(const ReportOptions& options) {
  if (options.format) {
    if (const auto format = parse_report_format(*options.format)) return *format;
    throw UsageError("--format '" + *options.format + "': expected one of md, csv, json, html");
  }
  if (options.output)
    if (const auto format = report_format_for_file(*options.output)) return *format;
  return ReportFormat::markdown;
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw Error("cannot write " + path.string() + ": cannot open the file");
  file << text;
  file.close();
  if (!file) throw Error("cannot write " + path.string() + ": write failed");
}

int run_report(const ReportOptions& options, std::ostream& out) {
  // Check the whole command line before touching the database.
  const ReportFormat format = choose_format(options);
  ReportFilter filter;
  filter.ops = parse_list(options.ops, "--op", kAllOps, [](const std::string& w) { return parse_op(w); });
  filter.dtypes = parse_list(options.dtypes, "--dtype", kAllDTypes, [](const std::string& w) { return parse_dtype(w); });

  const fs::path path = options.db ? fs::path(*options.db) : db::default_database_path();
  const auto database = db::Database::open_read_only(path);
  if (!database) throw Error("no tuning database at " + path.string() + ": run reduce-tune --device 0 first");
  if (options.device) filter.device = resolve_device(*database, *options.device);

  const std::string text = render_report(load_report_data(*database, filter), format);
  if (options.output) write_file(*options.output, text);
  else out << text;
  return kExitOk;
}

void print_usage(std::ostream& out, const po::options_description& desc) {
  out << "usage: reduce-tune report [--format md|csv|json|html] [-o FILE] [--device UUID|INDEX] [--op OPS]\n"
         "                          [--dtype DTYPES] [--db PATH]\n\n"
         "Writes what the tuning database holds: per device, op and dtype the winner of each size\n"
         "bucket, the candidates tried and why some failed, and each strategy's best time; then the\n"
         "axis winners (rows and columns) as heat maps of GB/s over (R bucket, outputs bucket).\n"
         "Needs no GPU. docs/REPORTS.md describes the formats.\n\n"
      << desc << '\n';
}

}  // namespace

int run_report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto usage_error = [&](const std::string& message) { return report_usage_error(err, "report", message); };
  ReportOptions options;
  auto optional_string = [](std::optional<std::string>& target) {
    return po::value<std::string>()->notifier([&target](const std::string& v) { target = v; });
  };
  po::options_description desc("options");
  desc.add_options()                                                                                   //
      ("format", optional_string(options.format), "md, csv, json or html (default: from -o's extension, else md)")  //
      ("output,o", optional_string(options.output), "the file to write (default: standard output)")               //
      ("device", optional_string(options.device), "only this device: its UUID, or its index in `reduce-tune db info`")
      ("op", po::value(&options.ops)->composing(), "only these ops: sum, prod, min, max, mean (comma-separated)")   //
      ("dtype", po::value(&options.dtypes)->composing(),
       "only these input types: i32, i64, u32, f32, f64, f16, bf16 (comma-separated)")  //
      ("db", optional_string(options.db),
       "the database (default: $REDUCE_TUNE_DB, else $XDG_DATA_HOME/reduce-tune/tuning.db, else "
       "~/.local/share/reduce-tune/tuning.db)")  //
      ("help,h", po::bool_switch(&options.help), "show this help");
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    if (vm["help"].as<bool>()) {
      print_usage(out, desc);
      return kExitOk;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(e.what());
  }

  try {
    return run_report(options, out);
  } catch (const UsageError& e) {
    return usage_error(e.what());
  } catch (const Error& e) {
    err << "reduce-tune report: " << one_line(e.what()) << '\n';
    return kExitFailure;
  } catch (const std::exception& e) {
    // File system errors and the like, which carry no reduce-tune type.
    err << "reduce-tune report: " << one_line(e.what()) << '\n';
    return kExitFailure;
  }
}

}  // namespace reduce_tune::cli
