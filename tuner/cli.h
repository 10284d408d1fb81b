// The reduce-tune command line: a table of subcommands {name, description, handler}.
// Only this layer prints messages and chooses exit codes; library code throws typed
// errors or returns statuses.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace reduce_tune::tuner {

// Exit codes (also in the README): 0 ok; 1 the command failed (a corrupt database, a
// CUDA error); 2 bad command line; 3 no usable CUDA device; 130 interrupted by Ctrl-C
// after saving what was finished.
inline constexpr int kExitNoDevice = 3;
inline constexpr int kExitInterrupted = 130;

// `args` excludes the program name. `reduce-tune --device 0` is `reduce-tune tune --device 0`.
int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace reduce_tune::tuner
