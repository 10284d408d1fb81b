// Parsing the options of `reduce-tune tune` into tuner::TuneOptions. Parsing never
// prints: it returns the struct or a message naming the option and its allowed values.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reduce_tune/tuner/tune_options.h"

namespace reduce_tune::cli {

struct TuneParseResult {
  std::optional<tuner::TuneOptions> options;
  std::string error;  // "--ops: unknown op 'avg' (allowed: sum, prod, min, max, mean, all)"
};
TuneParseResult parse_tune_options(const std::vector<std::string>& args);

// "2^10..2^30", "1000,4096,1e8", "2^20" -> sizes, ascending, unique. Empty optional and
// a message on a bad list.
std::optional<std::vector<std::uint64_t>> parse_sizes(const std::string& text, std::string* error);
std::optional<tuner::Budget> parse_budget(const std::string& text, std::string* error);

std::string tune_usage();

}  // namespace reduce_tune::cli
