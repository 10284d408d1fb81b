// `reduce-tune show`: the stored winners of a device as a table.
#include <boost/program_options.hpp>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <ostream>

#include "reduce_tune/db/database.h"
#include "reduce_tune/db/paths.h"
#include "tuner/commands.h"
#include "tuner/db_commands.h"

namespace reduce_tune::tuner {

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
           "Prints the stored winners of a device (default: every device in the database).\n";
    return kExitOk;
  }
  const std::filesystem::path path = db_path.empty() ? db::default_database_path() : std::filesystem::path(db_path);
  auto database = db::Database::open_read_only(path);
  if (!database) {
    err << "reduce-tune show: no tuning database at " << path.string() << ": run reduce-tune --device 0 first\n";
    return kExitFailure;
  }
  const auto devices = database->list_devices();
  bool shown = false;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& d = devices[i];
    if (!device.empty() && device != d.key.uuid && device != std::to_string(i)) continue;
    shown = true;
    out << "[" << i << "] " << d.key << "\n";
    out << std::left << std::setw(20) << "  problem" << std::setw(7) << "size" << std::setw(9) << "class" << std::right
        << std::setw(11) << "time ms" << std::setw(10) << "GB/s" << "  config\n";
    for (const auto& w : database->winners_for_device(d.id)) {
      const std::uint64_t n = 1ull << w.bucket;
      const double gbps = static_cast<double>(n * size_of(w.problem.dtype)) / (w.median_ms * 1e6);
      out << "  " << std::left << std::setw(18) << to_string(w.problem) << std::setw(7)
          << ("2^" + std::to_string(w.bucket)) << std::setw(9)
          << (w.determinism == db::Determinism::deterministic ? "det" : "nondet") << std::right << std::fixed
          << std::setprecision(4) << std::setw(11) << w.median_ms << std::setprecision(1) << std::setw(10) << gbps
          << "  " << to_string(w.config) << '\n';
    }
  }
  if (!shown) {
    err << "reduce-tune show: " << (device.empty() ? "no device in " + path.string() : "no device '" + device + "' in " + path.string()) << '\n';
    return kExitFailure;
  }
  return kExitOk;
}

// The benchmark links CUB and is built by nvcc, so it is its own executable:
// reduce_tune_bench beside this program (installed) or in the build tree's bench/.
int run_bench_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::filesystem::path> candidates;
  if (!ec) {
    candidates.push_back(self.parent_path() / "reduce_tune_bench");
    candidates.push_back(self.parent_path().parent_path() / "bench" / "reduce_tune_bench");
  }
  for (const auto& path : candidates) {
    if (!std::filesystem::exists(path)) continue;
    out.flush();
    std::vector<std::string> words = {path.string()};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    ::execv(path.c_str(), argv.data());
    err << "reduce-tune bench: could not run " << path.string() << ": " << std::strerror(errno) << '\n';
    return kExitFailure;
  }
  err << "reduce-tune bench: the benchmark (reduce_tune_bench, built when nvcc is found) is not installed next to "
         "reduce-tune\n";
  return kExitFailure;
}

}  // namespace reduce_tune::tuner
