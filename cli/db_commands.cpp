#include "cli/db_commands.h"

#include <algorithm>
#include <cctype>
#include <boost/program_options.hpp>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <span>

#include "reduce_tune/db/database.h"
#include "reduce_tune/db/paths.h"
#include "reduce_tune/db/transfer.h"
#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/tuner/tuner.h"
#include "reduce_tune/error.h"
#include "cli/command_support.h"

namespace reduce_tune::cli {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;

// The parsed flags of every db subcommand; each uses the ones it declares.
struct DbOptions {
  std::optional<std::string> db;      // --db PATH; else the default location
  std::optional<std::string> device;  // export --device UUID|INDEX
  std::string output;                 // export -o FILE
  std::string format;                 // export --format sqlite|json (else from the name)
  std::string file;                   // import/merge FILE
  bool help = false;
};

struct Command {
  const char* name;
  const char* synopsis;
  const char* description;
  // Declares the command's options (beyond --db and --help) and positional arguments.
  std::function<void(po::options_description&, po::positional_options_description&, DbOptions&)> declare;
  std::function<int(const DbOptions&, std::ostream&)> run;
};

void print_device(std::ostream& out, std::size_t index, const db::DeviceRecord& d) {
  out << "  [" << index << "] " << d.key.name << " (sm_" << d.key.arch() << ", " << d.key.sm_count << " SMs) "
      << d.key.uuid << '\n';
}

int run_info(const DbOptions& options, std::ostream& out) {
  const fs::path path = database_path(options.db);
  out << "database: " << path.string() << '\n';
  auto database = db::Database::open_read_only(path);
  if (!database) {
    out << "no tuning yet (the file does not exist)\n";
    return kExitOk;
  }
  out << "schema version: " << database->file_schema_version();
  if (database->file_schema_version() < db::kSchemaVersion)
    out << " (upgraded to " << db::kSchemaVersion << " when next written)";
  out << '\n';
  const auto counts = database->counts();
  const auto devices = database->list_devices();
  out << "devices: " << counts.devices << '\n';
  for (std::size_t i = 0; i < devices.size(); ++i) print_device(out, i, devices[i]);
  out << "configs: " << counts.configs << '\n'
      << "measurements: " << counts.measurements << '\n'
      << "winners: " << counts.winners << '\n'
      << "tuned buckets: " << counts.tuned_buckets << '\n'
      << "binaries: " << counts.binaries << " (" << counts.binary_bytes << " bytes)\n"
      << "bench results: " << counts.bench_results << '\n'
      << "axis measurements: " << counts.axis_measurements << '\n'
      << "axis winners: " << counts.axis_winners << '\n'
      << "axis tuned buckets: " << counts.axis_tuned_buckets << '\n';
  return kExitOk;
}

int run_export(const DbOptions& options, std::ostream& out) {
  db::ExportFormat format = db::export_format_for(options.output);
  if (options.format == "json") format = db::ExportFormat::json;
  else if (options.format == "sqlite") format = db::ExportFormat::sqlite;
  else if (!options.format.empty())
    throw UsageError("--format " + options.format + ": expected sqlite or json");
  const fs::path path = database_path(options.db);
  auto database = db::Database::open_read_only(path);
  if (!database) throw Error(path.string() + ": no database to export (nothing tuned yet)");
  std::optional<db::RowId> device;
  if (options.device) device = resolve_device(*database, *options.device);
  const auto snapshot = db::read_snapshot(*database, device);
  db::write_export(snapshot, options.output, format);
  out << "exported " << snapshot.devices.size() << " devices, " << snapshot.measurements.size()
      << " measurements, " << snapshot.winners.size() << " winners, " << snapshot.tuned_buckets.size()
      << " tuned buckets, " << snapshot.binaries.size() << " binaries, " << snapshot.bench_results.size()
      << " bench results, " << snapshot.axis_measurements.size() << " axis measurements, "
      << snapshot.axis_winners.size() << " axis winners, " << snapshot.axis_tuned_buckets.size()
      << " axis tuned buckets to " << options.output << " ("
      << (format == db::ExportFormat::json ? "json" : "sqlite") << ")\n";
  return kExitOk;
}

void print_stats(std::ostream& out, const char* verb, const std::string& file, const db::TransferStats& s) {
  out << verb << " " << file << ": devices +" << s.devices_added << ", measurements +" << s.measurements_added
      << " (" << s.measurements_duplicate << " already present), winners +" << s.winners_added << " replaced "
      << s.winners_replaced;
  if (s.winners_kept > 0 || s.winners_unverified > 0)
    out << " kept " << s.winners_kept << " unverified " << s.winners_unverified;
  out << ", tuned buckets +" << s.tuned_buckets_added << ", binaries +" << s.binaries_added;
  if (s.binaries_replaced > 0) out << " replaced " << s.binaries_replaced;
  out << ", bench results +" << s.bench_results_added << " (" << s.bench_results_duplicate << " already present)";
  out << ", axis measurements +" << s.axis_measurements_added << " (" << s.axis_measurements_duplicate
      << " already present), axis winners +" << s.axis_winners_added << " replaced " << s.axis_winners_replaced;
  if (s.axis_winners_kept > 0 || s.axis_winners_unverified > 0)
    out << " kept " << s.axis_winners_kept << " unverified " << s.axis_winners_unverified;
  out << ", axis tuned buckets +" << s.axis_tuned_buckets_added << '\n';
}

int run_transfer(const DbOptions& options, std::ostream& out, bool merge) {
  // Read the incoming file first: a bad file must not create or touch the database.
  const auto snapshot = db::load_snapshot(options.file);
  auto database = db::Database::open(database_path(options.db));
  const auto stats = merge ? db::merge_snapshot(database, snapshot) : db::import_snapshot(database, snapshot);
  print_stats(out, merge ? "merged" : "imported", options.file, stats);
  return kExitOk;
}

// Removes the binaries no winner's runtime kernels use. Binaries another NVRTC built
// (merged from another machine) are kept: their keys cannot be recomputed here.
int run_gc(const DbOptions& options, std::ostream& out) {
  const auto path = database_path(options.db);
  if (!std::filesystem::exists(path)) throw Error("no tuning database at " + path.string());
  auto database = db::Database::open(path);
  NvrtcCompiler compiler;
  const auto keep = tuner::winner_binary_keys(database, compiler);
  const std::string version = compiler.version();
  std::vector<std::string> remove;
  std::int64_t freed = 0, kept_other = 0;
  for (const auto& b : database.list_binaries()) {
    if (b.nvrtc_version != version) {
      ++kept_other;
      continue;
    }
    if (keep.count(b.key)) continue;
    remove.push_back(b.key);
    freed += b.bytes;
  }
  const int removed = database.remove_binaries(remove);
  database.compact();
  out << "removed " << removed << " binaries no winner uses (" << (freed >> 10) << " KiB); kept "
      << database.counts().binaries << " (" << kept_other << " built by another NVRTC than " << version << ")\n";
  return kExitOk;
}

void declare_file(po::options_description& desc, po::positional_options_description& positional,
                  DbOptions& options) {
  desc.add_options()("file", po::value(&options.file)->required(), "the SQLite or JSON file to read");
  positional.add("file", 1);
}

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"info", "info [--db PATH]", "show the database's path, schema version, devices and row counts",
       [](auto&, auto&, auto&) {}, run_info},
      {"export", "export [--db PATH] [--device UUID|INDEX] [--format sqlite|json] -o FILE",
       "write the database (or one device's rows) to a new SQLite file, or JSON for *.json",
       [](po::options_description& desc, po::positional_options_description&, DbOptions& options) {
         desc.add_options()("output,o", po::value(&options.output)->required(), "the file to write")(
             "device", po::value<std::string>()->notifier([&options](const std::string& v) { options.device = v; }),
             "only this device: its UUID, or its index in `db info`")(
             "format", po::value(&options.format), "sqlite or json (default: json for *.json)");
       },
       run_export},
      {"import", "import [--db PATH] FILE",
       "copy every row of an export into the database; imported rows replace existing ones",
       declare_file, [](const DbOptions& o, std::ostream& out) { return run_transfer(o, out, false); }},
      {"merge", "merge [--db PATH] FILE",
       "combine an export with the database: all measurements kept, the faster verified winner wins",
       declare_file, [](const DbOptions& o, std::ostream& out) { return run_transfer(o, out, true); }},
      {"gc", "gc [--db PATH]",
       "remove the compiled binaries no winner uses (every measurement stays) and shrink the file",
       [](auto&, auto&, auto&) {}, run_gc},
  };
  return table;
}

void print_usage(std::ostream& out) {
  out << "usage: reduce-tune db <command> [options]\n\ncommands:\n";
  for (const auto& c : commands()) out << "  " << c.synopsis << "\n      " << c.description << '\n';
  out << "\n--db PATH defaults to $REDUCE_TUNE_DB, else $XDG_DATA_HOME/reduce-tune/tuning.db, else\n"
         "~/.local/share/reduce-tune/tuning.db.\n";
}

// Messages are one line, so scripts can grep them.
}  // namespace

int run_db_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto usage_error = [&](const std::string& message) { return report_usage_error(err, "db", message); };
  if (args.empty()) {
    print_usage(err);
    return kExitUsage;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(out);
    return kExitOk;
  }
  const auto& table = commands();
  const auto command = std::find_if(table.begin(), table.end(), [&](const Command& c) { return args[0] == c.name; });
  if (command == table.end()) return usage_error("unknown command '" + args[0] + "'");

  DbOptions options;
  po::options_description desc(std::string("reduce-tune db ") + command->synopsis);
  desc.add_options()("db", po::value<std::string>()->notifier([&options](const std::string& v) { options.db = v; }),
                     "the database file")("help,h", po::bool_switch(&options.help), "show this help");
  po::positional_options_description positional;
  command->declare(desc, positional, options);
  try {
    po::variables_map vm;
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    po::store(po::command_line_parser(rest).options(desc).positional(positional).run(), vm);
    if (vm.count("help") && vm["help"].as<bool>()) {
      out << desc << '\n' << command->description << '\n';
      return kExitOk;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(std::string(command->name) + ": " + e.what());
  }

  try {
    return command->run(options, out);
  } catch (const UsageError& e) {
    return usage_error(std::string(command->name) + ": " + e.what());
  } catch (const Error& e) {
    err << "reduce-tune db: " << one_line(e.what()) << '\n';
    return kExitFailure;
  } catch (const std::exception& e) {
    // File system errors and the like, which carry no reduce-tune type.
    err << "reduce-tune db: " << command->name << ": " << one_line(e.what()) << '\n';
    return kExitFailure;
  }
}

}  // namespace reduce_tune::cli
