// Handlers of the subcommands in tuner/cli.cpp's table. Each takes the words after its
// name and returns an exit code; each prints only to the streams it is given.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace reduce_tune::cli {

std::string tool_version();

int run_tune_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_show_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_bench_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int run_cache_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace reduce_tune::cli
