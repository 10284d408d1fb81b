#include "cli/cli.h"
#include "cli/command_support.h"

#include <functional>
#include <ostream>

#include "reduce_tune/error.h"
#include "cli/commands.h"
#include "cli/db_commands.h"

namespace reduce_tune::cli {

namespace {

struct Subcommand {
  const char* name;
  const char* description;
  std::function<int(const std::vector<std::string>&, std::ostream&, std::ostream&)> run;
};

const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> table = {
      {"tune", "measure kernel configs on a GPU and store the winners (the default)", run_tune_command},
      {"show", "print the stored winners of a device as a table", run_show_command},
      {"report", "export what was tuned as Markdown, CSV, JSON or HTML", run_report_command},
      {"bench", "compare tuned kernels with cub::DeviceReduce", run_bench_command},
      {"db", "database info, export, import and merge", run_db_command},
      {"cache", "the kernel cache folder: where it is, what it holds; clear it", run_cache_command},
  };
  return table;
}

void print_usage(std::ostream& out) {
  out << "reduce-tune: autotuned CUDA reductions\n\n"
         "usage: reduce-tune [COMMAND] [OPTIONS]     (no command: tune)\n"
         "       reduce-tune --device 0               tune the first GPU\n\n"
         "commands:\n";
  for (const auto& c : subcommands()) {
    out << "  " << c.name;
    for (std::size_t i = std::string(c.name).size(); i < 8; ++i) out << ' ';
    out << c.description << '\n';
  }
  out << "\n'reduce-tune COMMAND --help' describes a command's options.\n"
         "exit codes: 0 ok, 1 failed, 2 bad command line, 3 no CUDA device, 130 interrupted\n";
}

}  // namespace

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(args.empty() ? err : out);
    return args.empty() ? kExitUsage : kExitOk;
  }
  if (args[0] == "--version") {
    out << "reduce-tune " << tool_version() << '\n';
    return kExitOk;
  }
  std::string name = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (!name.empty() && name[0] == '-') {  // options only: the tune command
    name = "tune";
    rest = args;
  }
  for (const auto& c : subcommands())
    if (name == c.name) {
      try {
        return c.run(rest, out, err);
      } catch (const NoDeviceError& e) {
        err << "reduce-tune " << name << ": " << e.what() << '\n';
        return kExitNoDevice;
      } catch (const Error& e) {
        err << "reduce-tune " << name << ": " << e.what() << '\n';
        return kExitFailure;
      }
    }
  // The commands named from the table that runs them, so the list cannot go stale.
  err << "reduce-tune: unknown command '" << name << "' (commands: ";
  const char* separator = "";
  for (const auto& c : subcommands()) {
    err << separator << c.name;
    separator = ", ";
  }
  err << "; see --help)\n";
  return kExitUsage;
}

}  // namespace reduce_tune::cli
