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

// Sizes as a person writes them, 1024-based; anything else refused.
TEST(KernelCacheLimit, ParsesSizesAsPeopleWriteThem) {
  EXPECT_EQ(parse_byte_size("0"), 0u);
  EXPECT_EQ(parse_byte_size("300000"), 300000u);
  EXPECT_EQ(parse_byte_size("300000B"), 300000u);
  EXPECT_EQ(parse_byte_size("4k"), 4096u);
  EXPECT_EQ(parse_byte_size("512M"), 512ull << 20);
  EXPECT_EQ(parse_byte_size("512MB"), 512ull << 20);
  EXPECT_EQ(parse_byte_size("2GiB"), 2ull << 30);
  EXPECT_EQ(parse_byte_size("1t"), 1ull << 40);
  EXPECT_EQ(parse_byte_size("18446744073709551615"), ~0ull);
  for (const char* bad : {"", "M", "-1", "+5", "1.5G", " 5", "5 ", "5X", "5MM", "5Mi", "5KBB",
                          "18446744073709551616", "16777216T"})
    EXPECT_EQ(parse_byte_size(bad), std::nullopt) << bad;
}

TEST(KernelCacheLimit, TheOptionThenTheVariableThenTheDefault) {
  EXPECT_EQ(resolve_kernel_cache_limit(std::nullopt, std::nullopt).max_bytes, kDefaultKernelCacheMaxBytes);
  EXPECT_EQ(kDefaultKernelCacheMaxBytes, 256ull << 20);
  EXPECT_EQ(resolve_kernel_cache_limit(std::nullopt, std::string("1G")).max_bytes, 1ull << 30);
  EXPECT_EQ(resolve_kernel_cache_limit(std::uint64_t{12345}, std::string("1G")).max_bytes, 12345u);
  EXPECT_EQ(resolve_kernel_cache_limit(std::uint64_t{0}, std::nullopt).max_bytes, 0u);  // no limit
  EXPECT_EQ(resolve_kernel_cache_limit(std::nullopt, std::string("0")).max_bytes, 0u);
  EXPECT_EQ(resolve_kernel_cache_limit(std::nullopt, std::string("")).max_bytes, kDefaultKernelCacheMaxBytes);
  // A variable that is not a size: the default, and a message naming it.
  const KernelCacheLimit bad = resolve_kernel_cache_limit(std::nullopt, std::string("lots"));
  EXPECT_EQ(bad.max_bytes, kDefaultKernelCacheMaxBytes);
  ASSERT_TRUE(bad.problem.has_value());
  EXPECT_NE(bad.problem->find("REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE=\"lots\""), std::string::npos) << *bad.problem;
  EXPECT_FALSE(resolve_kernel_cache_limit(std::nullopt, std::string("2G")).problem.has_value());
  // The option decides even where the variable is bad.
  EXPECT_FALSE(resolve_kernel_cache_limit(std::uint64_t{1}, std::string("lots")).problem.has_value());
}

}  // namespace
}  // namespace reduce_tune::db
