// The reduce-tune command line: a table of subcommands {name, description, handler}.
// Only this layer prints messages and chooses exit codes; library code throws typed
// errors or returns statuses.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace reduce_tune::cli {

// `args` excludes the program name. `reduce-tune --device 0` is `reduce-tune tune --device 0`.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace reduce_tune::cli
