// `reduce-tune cache [info|clear]`: the kernel cache folder the runtime keeps its
// first-call compiles in (README, "First calls"): where it is, its limit and what it holds;
// clearing it.
#include <boost/program_options.hpp>
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "reduce_tune/db/paths.h"
#include "reduce_tune/engine/directory_binary_store.h"
#include "reduce_tune/error.h"
#include "reduce_tune/report/report_text.h"

namespace reduce_tune::cli {
namespace {

namespace po = boost::program_options;

std::string label(std::uint64_t bytes) { return report::bytes_label(static_cast<std::int64_t>(bytes)); }

void print_usage(std::ostream& out) {
  out << "usage: reduce-tune cache [info|clear] [--dir PATH]\n\n"
         "  info   (the default) where the kernel cache is, its size limit and what it holds\n"
         "  clear  delete the kernels kept there; later first calls compile them again\n\n"
         "The runtime keeps each kernel it compiles at a first call in this folder, for later\n"
         "processes: --dir PATH, else $REDUCE_TUNE_KERNEL_CACHE (\"off\": none), else\n"
         "$XDG_CACHE_HOME/reduce-tune/kernels, else ~/.cache/reduce-tune/kernels. Its limit:\n"
         "$REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE (512M, 2G, bytes; 0 for none), else 256 MiB.\n";
}

}  // namespace

int run_cache_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto usage_error = [&](const std::string& message) { return report_usage_error(err, "cache", message); };
  std::string action = "info";
  std::optional<std::string> dir;
  bool help = false;
  po::options_description desc("options");
  desc.add_options()("dir", po::value<std::string>()->notifier([&dir](const std::string& v) { dir = v; }),
                     "the folder (default: where the runtime keeps it)")(
      "help,h", po::bool_switch(&help), "show this help")("action", po::value(&action), "info or clear");
  po::positional_options_description positional;
  positional.add("action", 1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(desc).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(e.what());
  }
  if (help) {
    print_usage(out);
    return kExitOk;
  }
  if (action != "info" && action != "clear") return usage_error("unknown command '" + action + "'");
  if (dir && dir->empty()) return usage_error("--dir: give a folder");

  const std::optional<std::filesystem::path> folder = db::resolve_kernel_cache_path(
      dir ? std::optional<std::filesystem::path>(*dir) : std::nullopt, db::KernelCacheLocationEnv::from_process());
  if (!folder) {
    out << "kernel cache: off (REDUCE_TUNE_KERNEL_CACHE=off, or no HOME to place it under)\n";
    return kExitOk;
  }
  // A path that names something other than a folder (a file, say): neither "nothing yet" nor
  // "nothing to delete", and nothing there is touched.
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(*folder, ec);
  if (std::filesystem::exists(status) && !std::filesystem::is_directory(status)) {
    err << "reduce-tune cache: " << one_line(folder->string()) << " is not a folder\n";
    return kExitFailure;
  }
  const db::KernelCacheLimit limit = db::resolve_kernel_cache_limit(std::nullopt, db::kernel_cache_max_size_env());
  DirectoryBinaryStore store(*folder, limit.max_bytes);
  try {
    if (action == "clear") {
      const DirectoryBinaryStore::Contents deleted = store.clear();
      if (!deleted.exists) {
        out << "kernel cache: " << folder->string() << " does not exist; nothing to delete\n";
        return kExitOk;
      }
      out << "deleted " << deleted.kernels << " kernels (" << label(deleted.bytes) << ")";
      if (deleted.temporaries > 0) out << " and " << deleted.temporaries << " stale temporary files";
      out << " from " << folder->string() << '\n';
      return kExitOk;
    }
    out << "kernel cache: " << folder->string() << '\n';
    out << "limit: ";
    if (limit.max_bytes == 0) out << "none";
    else out << limit.max_bytes << " bytes (" << label(limit.max_bytes) << ")";
    out << '\n';
    if (limit.problem) err << "reduce-tune cache: " << one_line(*limit.problem) << '\n';
    const DirectoryBinaryStore::Contents c = store.contents();
    if (!c.exists) {
      out << "kept: nothing yet (the folder does not exist)\n";
      return kExitOk;
    }
    out << "kept: " << c.kernels << " kernels, " << c.bytes << " bytes (" << label(c.bytes) << ")\n";
    if (c.temporaries > 0) out << "temporary files: " << c.temporaries << '\n';
    return kExitOk;
  } catch (const std::exception& e) {
    err << "reduce-tune cache: " << one_line(e.what()) << '\n';
    return kExitFailure;
  }
}

}  // namespace reduce_tune::cli
