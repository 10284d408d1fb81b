// `reduce-tune bench`: runs the side-by-side benchmark.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>

#include "cli/command_support.h"
#include "cli/commands.h"

namespace reduce_tune::cli {

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

}  // namespace reduce_tune::cli
