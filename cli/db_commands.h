// `reduce-tune db info|export|import|merge`: the command-line layer over the tuning
// database. It alone prints and chooses exit codes; the work is in reduce_tune::db.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace reduce_tune::cli {

// `args` are the words after `db`, e.g. {"info", "--db", "x.db"}. Results go to `out`;
// errors go to `err` as one line "reduce-tune db: <message>".
int run_db_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace reduce_tune::cli
