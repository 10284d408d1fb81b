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

KernelCacheLocationEnv KernelCacheLocationEnv::from_process() {
  return {non_empty_env("REDUCE_TUNE_KERNEL_CACHE"), non_empty_env("XDG_CACHE_HOME"), non_empty_env("HOME")};
}

std::optional<std::filesystem::path> resolve_kernel_cache_path(const std::optional<std::filesystem::path>& chosen,
                                                               const KernelCacheLocationEnv& env) {
  auto unless_off = [](const std::filesystem::path& p) -> std::optional<std::filesystem::path> {
    if (p.empty() || p == "off") return std::nullopt;
    return p;
  };
  if (chosen) return unless_off(*chosen);
  if (set(env.reduce_tune_kernel_cache)) return unless_off(*env.reduce_tune_kernel_cache);
  if (set(env.xdg_cache_home) && std::filesystem::path(*env.xdg_cache_home).is_absolute())
    return std::filesystem::path(*env.xdg_cache_home) / "reduce-tune" / "kernels";
  if (set(env.home)) return std::filesystem::path(*env.home) / ".cache" / "reduce-tune" / "kernels";
  return std::nullopt;
}

}  // namespace reduce_tune::db
