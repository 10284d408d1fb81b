// Where the tuning database lives when the caller names no file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace reduce_tune::db {

// The environment the default location depends on; empty values count as unset, as the
// XDG base directory specification says.
struct DatabaseLocationEnv {
  std::optional<std::string> reduce_tune_db;  // $REDUCE_TUNE_DB
  std::optional<std::string> xdg_data_home;   // $XDG_DATA_HOME (ignored unless absolute)
  std::optional<std::string> home;            // $HOME

  static DatabaseLocationEnv from_process();
};

// $REDUCE_TUNE_DB, else $XDG_DATA_HOME/reduce-tune/tuning.db, else
// $HOME/.local/share/reduce-tune/tuning.db; empty when none of them is set.
std::optional<std::filesystem::path> resolve_database_path(const DatabaseLocationEnv& env);

// resolve_database_path(from_process()); throws reduce_tune::Error when no location can
// be found (no variable set), naming the variables to set.
std::filesystem::path default_database_path();

// Where the runtime keeps the kernels it compiles at first calls, for later processes.
struct KernelCacheLocationEnv {
  std::optional<std::string> reduce_tune_kernel_cache;  // $REDUCE_TUNE_KERNEL_CACHE
  std::optional<std::string> xdg_cache_home;            // $XDG_CACHE_HOME (ignored unless absolute)
  std::optional<std::string> home;                      // $HOME

  static KernelCacheLocationEnv from_process();
};

// `chosen` (a Context's option) if given, else $REDUCE_TUNE_KERNEL_CACHE, else
// $XDG_CACHE_HOME/reduce-tune/kernels, else $HOME/.cache/reduce-tune/kernels; empty when
// the one that decides is "off", or when none is set (no cache).
std::optional<std::filesystem::path> resolve_kernel_cache_path(const std::optional<std::filesystem::path>& chosen,
                                                               const KernelCacheLocationEnv& env);

// The most the kernel cache folder holds when nothing says otherwise.
inline constexpr std::uint64_t kDefaultKernelCacheMaxBytes = std::uint64_t{256} << 20;

// A size in bytes as a person writes it: digits, then optionally K, M, G or T (1024-based,
// either case, an optional "B" or "iB" after it: "512M", "1GiB", "300000"). Empty for
// anything else (a sign, a fraction, spaces inside, an unknown suffix, past 2^64 - 1).
std::optional<std::uint64_t> parse_byte_size(const std::string& text);

// The kernel cache folder's size limit: `chosen` (a Context's option) if given, else
// `variable` ($REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE, parsed by parse_byte_size), else
// kDefaultKernelCacheMaxBytes. 0 means no limit. A variable that does not parse leaves
// the default, and `problem` says why (the caller reports it).
struct KernelCacheLimit {
  std::uint64_t max_bytes = kDefaultKernelCacheMaxBytes;
  std::optional<std::string> problem;
};
KernelCacheLimit resolve_kernel_cache_limit(const std::optional<std::uint64_t>& chosen,
                                            const std::optional<std::string>& variable);
// $REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE, empty where unset or empty.
std::optional<std::string> kernel_cache_max_size_env();

}  // namespace reduce_tune::db
