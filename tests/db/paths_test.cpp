#include "reduce_tune/db/paths.h"

#include <gtest/gtest.h>

namespace reduce_tune::db {
namespace {

TEST(DatabasePath, PrefersReduceTuneDb) {
  EXPECT_EQ(resolve_database_path({"/x/my.db", "/xdg", "/home/u"}), std::filesystem::path("/x/my.db"));
}

TEST(DatabasePath, FallsBackToXdgDataHome) {
  EXPECT_EQ(resolve_database_path({std::nullopt, "/xdg", "/home/u"}),
            std::filesystem::path("/xdg/reduce-tune/tuning.db"));
}

TEST(DatabasePath, IgnoresRelativeXdgDataHome) {
  EXPECT_EQ(resolve_database_path({std::nullopt, "rel/xdg", "/home/u"}),
            std::filesystem::path("/home/u/.local/share/reduce-tune/tuning.db"));
}

TEST(DatabasePath, FallsBackToHome) {
  EXPECT_EQ(resolve_database_path({std::nullopt, std::nullopt, "/home/u"}),
            std::filesystem::path("/home/u/.local/share/reduce-tune/tuning.db"));
}

TEST(DatabasePath, EmptyValuesCountAsUnset) {
  EXPECT_EQ(resolve_database_path({"", "", "/home/u"}),
            std::filesystem::path("/home/u/.local/share/reduce-tune/tuning.db"));
  EXPECT_EQ(resolve_database_path({"", "", ""}), std::nullopt);
  EXPECT_EQ(resolve_database_path({}), std::nullopt);
}

// The kernel cache: a Context's option, else $REDUCE_TUNE_KERNEL_CACHE, else
// $XDG_CACHE_HOME (absolute only), else ~/.cache; "off" where it decides keeps none.
TEST(KernelCachePath, TheOptionThenTheVariableThenXdgThenHome) {
  const KernelCacheLocationEnv all{"/k", "/xdg", "/home/u"};
  EXPECT_EQ(resolve_kernel_cache_path(std::filesystem::path("/mine"), all), std::filesystem::path("/mine"));
  EXPECT_EQ(resolve_kernel_cache_path(std::nullopt, all), std::filesystem::path("/k"));
  EXPECT_EQ(resolve_kernel_cache_path(std::nullopt, {std::nullopt, "/xdg", "/home/u"}),
            std::filesystem::path("/xdg/reduce-tune/kernels"));
  EXPECT_EQ(resolve_kernel_cache_path(std::nullopt, {std::nullopt, "rel/xdg", "/home/u"}),
            std::filesystem::path("/home/u/.cache/reduce-tune/kernels"));
  EXPECT_EQ(resolve_kernel_cache_path(std::nullopt, {"", "", "/home/u"}),
            std::filesystem::path("/home/u/.cache/reduce-tune/kernels"));
  EXPECT_EQ(resolve_kernel_cache_path(std::nullopt, {}), std::nullopt);
}

TEST(KernelCachePath, OffWhereItDecidesKeepsNone) {
  const KernelCacheLocationEnv all{"/k", "/xdg", "/home/u"};
  EXPECT_EQ(resolve_kernel_cache_path(std::filesystem::path("off"), all), std::nullopt);
  EXPECT_EQ(resolve_kernel_cache_path(std::nullopt, {"off", "/xdg", "/home/u"}), std::nullopt);
  // The option decides before the variable, both ways.
  EXPECT_EQ(resolve_kernel_cache_path(std::filesystem::path("/mine"), {"off", "/xdg", "/home/u"}),
            std::filesystem::path("/mine"));
  EXPECT_EQ(resolve_kernel_cache_path(std::filesystem::path("off"), {"/k", "/xdg", "/home/u"}), std::nullopt);
  EXPECT_EQ(resolve_kernel_cache_path(std::filesystem::path(""), all), std::nullopt);
}

}  // namespace
}  // namespace reduce_tune::db
