// `reduce-tune show`: the stored winners of a device as a table, then its axis winners.
#include <boost/program_options.hpp>

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <set>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "reduce_tune/db/database.h"

namespace reduce_tune::cli {

namespace po = boost::program_options;

int run_show_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::string db_path, device;
  bool help = false;
  po::options_description desc;
  desc.add_options()("db", po::value(&db_path))("device", po::value(&device))("help,h", po::bool_switch(&help));
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    err << "reduce-tune show: " << e.what() << "\nusage: reduce-tune show [--device UUID|INDEX] [--db PATH]\n";
    return kExitUsage;
  }
  if (help) {
    out << "usage: reduce-tune show [--device UUID|INDEX] [--db PATH]\n"
           "Prints the stored winners of a device (default: every device in the database), then its\n"
           "axis winners (rows and columns reductions) when it has any.\n";
    return kExitOk;
  }
  const std::filesystem::path path = database_path(db_path);
  auto database = db::Database::open_read_only(path);
  if (!database) {
    err << "reduce-tune show: no tuning database at " << path.string() << ": run reduce-tune --device 0 first\n";
    return kExitFailure;
  }
  const auto devices = database->list_devices();
  std::optional<db::RowId> only;
  if (!device.empty()) {
    try {
      only = resolve_device(*database, device);
    } catch (const UsageError& e) {
      err << "reduce-tune show: " << one_line(e.what()) << '\n';
      return kExitFailure;
    }
  }
  bool shown = false;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& d = devices[i];
    if (only && d.id != *only) continue;
    shown = true;
    out << "[" << i << "] " << d.key << "\n";
    const auto winners = database->winners_for_device(d.id);
    auto axis = database->axis_winners_for_device(d.id);
    // A device with axis winners only skips the empty flat table.
    if (!winners.empty() || axis.empty())
      out << std::left << std::setw(20) << "  problem" << std::setw(7) << "size" << std::setw(9) << "class"
          << std::right << std::setw(11) << "time ms" << std::setw(10) << "GB/s" << "  config\n";
    for (const auto& w : winners) {
      const std::uint64_t n = 1ull << w.bucket;
      const double gbps = static_cast<double>(n * size_of(w.problem.dtype)) / (w.median_ms * 1e6);
      out << "  " << std::left << std::setw(18) << to_string(w.problem) << std::setw(7)
          << ("2^" + std::to_string(w.bucket)) << std::setw(9)
          << (w.determinism == db::Determinism::deterministic ? "det" : "nondet") << std::right << std::fixed
          << std::setprecision(4) << std::setw(11) << w.median_ms << std::setprecision(1) << std::setw(10) << gbps
          << "  " << to_string(w.config) << '\n';
    }
    // Axis winners (issue 12): printed only when the device has some, so the listing of a
    // database without them is unchanged. GB/s is the stored input bytes / time.
    std::stable_sort(axis.begin(), axis.end(),
                     [](const db::AxisWinner& a, const db::AxisWinner& b) { return a.problem < b.problem; });
    // A class filled in between tuned ones (its neighbours' winners and the built-in
    // choice timed there, no search) says so.
    if (!axis.empty()) {
      const auto tuned_list = database->axis_tuned_buckets(d.id);
      const std::set<db::AxisProblemClass> tuned(tuned_list.begin(), tuned_list.end());
      out << std::left << std::setw(42) << "  axis class" << std::right << std::setw(11) << "time ms" << std::setw(10)
          << "GB/s" << "  config\n";
      for (const auto& w : axis) {
        out << "  " << std::left << std::setw(40) << db::to_string(w.problem) << std::right << std::fixed
            << std::setprecision(4) << std::setw(11) << w.median_ms << std::setprecision(1) << std::setw(10) << w.gbps
            << "  " << w.config;
        if (!w.grid_config.empty()) out << "  on the 16-byte grid: " << w.grid_config;
        if (!tuned.count(w.problem)) out << "  (filled)";
        out << '\n';
      }
    }
  }
  if (!shown) {
    err << "reduce-tune show: no device in " << path.string() << '\n';
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace reduce_tune::cli
