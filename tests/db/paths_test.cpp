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

}  // namespace
}  // namespace reduce_tune::db
