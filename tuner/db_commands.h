// `reduce-tune db info|export|import|merge`: the command-line layer over the tuning
// database. It alone prints and chooses exit codes; the work is in reduce_tune::db.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace reduce_tune::tuner {

// Exit codes a script can rely on.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the command ran and failed (corrupt file, ...)
inline constexpr int kExitUsage = 2;    // bad command line

// `args` are the words after `db`, e.g. {"info", "--db", "x.db"}. Results go to `out`;
// errors go to `err` as one line "reduce-tune db: <message>".
int run_db_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace reduce_tune::tuner
