#include "reduce_tune/db/paths.h"

#include <cstdlib>

#include "reduce_tune/error.h"

namespace reduce_tune::db {
namespace {

std::optional<std::string> non_empty_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

bool set(const std::optional<std::string>& value) { return value && !value->empty(); }

}  // namespace

DatabaseLocationEnv DatabaseLocationEnv::from_process() {
  return {non_empty_env("REDUCE_TUNE_DB"), non_empty_env("XDG_DATA_HOME"), non_empty_env("HOME")};
}

std::optional<std::filesystem::path> resolve_database_path(const DatabaseLocationEnv& env) {
  if (set(env.reduce_tune_db)) return std::filesystem::path(*env.reduce_tune_db);
  // The XDG specification says a relative $XDG_DATA_HOME is invalid and to be ignored.
  if (set(env.xdg_data_home) && std::filesystem::path(*env.xdg_data_home).is_absolute())
    return std::filesystem::path(*env.xdg_data_home) / "reduce-tune" / "tuning.db";
  if (set(env.home))
    return std::filesystem::path(*env.home) / ".local" / "share" / "reduce-tune" / "tuning.db";
  return std::nullopt;
}

std::filesystem::path default_database_path() {
  if (auto path = resolve_database_path(DatabaseLocationEnv::from_process())) return *path;
  throw Error(
      "cannot place the tuning database: set REDUCE_TUNE_DB, XDG_DATA_HOME or HOME, or pass "
      "--db PATH");
}

}  // namespace reduce_tune::db
