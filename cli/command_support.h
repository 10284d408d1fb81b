// What the subcommands share: the usage-error type (exit code 2), exit codes, finding a
// device of the database by --device, and the database path a command uses.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>

#include "reduce_tune/db/database.h"
#include "reduce_tune/error.h"

namespace reduce_tune::cli {

// Exit codes a script can rely on (also in the README).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the command ran and failed (corrupt file, CUDA error, ...)
inline constexpr int kExitUsage = 2;    // bad command line
inline constexpr int kExitNoDevice = 3;  // no usable CUDA device
inline constexpr int kExitInterrupted = 130;  // Ctrl-C, after saving what was finished

// A wrong command line: reported with exit code 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

// --device takes a UUID or the index `reduce-tune db info` lists. Throws UsageError,
// naming the database and how many devices it holds, when nothing matches.
db::RowId resolve_device(const db::Database& database, const std::string& text);

// --db PATH when given, else the default location ($REDUCE_TUNE_DB, XDG, home).
std::filesystem::path database_path(const std::optional<std::string>& option);

// Text for one line of an error message: line breaks become spaces.
std::string one_line(std::string text);

// Reports a bad command line of `reduce-tune COMMAND` as one line on `err`, pointing to
// its --help, and returns kExitUsage.
int report_usage_error(std::ostream& err, const char* command, const std::string& message);

}  // namespace reduce_tune::cli
