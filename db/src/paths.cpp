#include "reduce_tune/db/paths.h"

#include <cctype>
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

std::optional<std::uint64_t> parse_byte_size(const std::string& text) {
  std::size_t i = 0;
  std::uint64_t value = 0;
  constexpr std::uint64_t kMax = ~std::uint64_t{0};
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    const std::uint64_t digit = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (kMax - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) return std::nullopt;  // no digits (a sign, a space, nothing)
  std::string suffix;
  for (; i < text.size(); ++i) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  int shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else {
    const char unit = suffix[0];
    const std::string rest = suffix.substr(1);
    if (rest != "" && rest != "B" && rest != "IB") return std::nullopt;
    switch (unit) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: return std::nullopt;
    }
  }
  if (shift > 0 && value > (kMax >> shift)) return std::nullopt;
  return value << shift;
}

KernelCacheLimit resolve_kernel_cache_limit(const std::optional<std::uint64_t>& chosen,
                                            const std::optional<std::string>& variable) {
  KernelCacheLimit limit;
  if (chosen) {
    limit.max_bytes = *chosen;
  } else if (set(variable)) {
    if (auto bytes = parse_byte_size(*variable)) {
      limit.max_bytes = *bytes;
    } else {
      limit.problem = "REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE=\"" + *variable +
                      "\" is not a size (such as 268435456, 512M or 2G; 0 for no limit); the kernel cache keeps "
                      "at most " + std::to_string(kDefaultKernelCacheMaxBytes >> 20) + " MiB";
    }
  }
  return limit;
}

std::optional<std::string> kernel_cache_max_size_env() { return non_empty_env("REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE"); }

}  // namespace reduce_tune::db
