// The runtime's way in: read-only opens that never write, work from a read-only file and
// folder, and take a missing file as "no tuning yet".
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reduce_tune/db/database.h"
#include "reduce_tune/error.h"
#include "test_support.h"

namespace reduce_tune::db {
namespace {

using namespace testing;
namespace fs = std::filesystem;

TEST(ReadOnly, MissingFileMeansNoTuningAndCreatesNothing) {
  TempDir dir;
  const auto path = dir / "not/there/tuning.db";
  EXPECT_FALSE(Database::open_read_only(path).has_value());
  EXPECT_FALSE(fs::exists(dir / "not"));
  EXPECT_FALSE(Database::open_read_only(dir / "tuning.db").has_value());
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(ReadOnly, FolderIsAnError) {
  TempDir dir;
  EXPECT_THROW(Database::open_read_only(dir.path()), DbError);
}

TEST(ReadOnly, SeesCommitsOfAWriterThatIsStillOpen) {
  TempDir dir;
  const auto path = dir / "tuning.db";
  auto writer = Database::open(path);
  writer.store_bucket(sample_bucket(sample_device(), sum_f32(), 10));
  auto reader = Database::open_read_only(path);
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->counts().winners, 1);
  writer.store_bucket(sample_bucket(sample_device(), sum_f32(), 11));
  EXPECT_EQ(reader->counts().winners, 2);  // WAL: a new read sees the new commit
}

// Runs `body` where the file system refuses writes: as a non-root user chmod does that;
// root ignores modes, so a root test process drops to "nobody" in a child first.
int run_without_write_permission(const std::function<int()>& body) {
  if (::geteuid() != 0) return body();
  return run_in_child([&] {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) return 90;
    return body();
  });
}

TEST(ReadOnly, WorksFromReadOnlyFileInReadOnlyFolder) {
  TempDir dir;
  const auto folder = dir / "shipped";
  const auto path = folder / "tuning.db";
  {
    auto database = Database::open(path);  // WAL mode, as a tuner leaves it
    database.store_bucket(sample_bucket(sample_device(), sum_f32(), 10));
    database.store_bucket(sample_bucket(sample_device(), sum_f32(), 12));
    database.put_binary({"k", 90, "12.4", {std::byte{1}, std::byte{2}}, fixed_time()});
  }
  ASSERT_FALSE(fs::exists(folder / "tuning.db-wal"));  // a clean close checkpoints
  const auto before = file_bytes(path);
  fs::permissions(dir.path(), fs::perms(0755));
  fs::permissions(folder, fs::perms(0555));
  fs::permissions(path, fs::perms(0444));

  const int status = run_without_write_permission([&]() -> int {
    // Prove the setting is real: nothing can be created in the folder.
    if (::access(folder.c_str(), W_OK) == 0) return 91;
    auto database = Database::open_read_only(path);
    if (!database) return 10;
    const auto device = database->find_device(sample_device().uuid);
    if (!device) return 11;
    if (database->winners_for_device(*device).size() != 2) return 12;
    if (!database->find_binary("k")) return 13;
    if (database->counts().measurements != 6) return 14;
    try {
      Database::open(path);
      return 15;  // a writer must fail here
    } catch (const DbError&) {
    }
    return 0;
  });
  if (status == 90) GTEST_SKIP() << "cannot drop root privileges to test a read-only folder";
  EXPECT_EQ(status, 0) << "child failed at step " << status;
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_FALSE(fs::exists(folder / "tuning.db-wal"));
  EXPECT_FALSE(fs::exists(folder / "tuning.db-shm"));
}

TEST(ReadOnly, RefusesToReadAroundAWalThatHoldsCommits) {
  // A writer killed mid-run leaves commits in the -wal file. Where the -shm index
  // cannot be created (a read-only folder), reading the main file alone would miss them:
  // the open must say so instead of returning stale winners.
  TempDir dir;
  const auto folder = dir / "shipped";
  const auto path = folder / "tuning.db";
  Database::open(path).store_bucket(sample_bucket(sample_device(), sum_f32(), 10));  // checkpointed
  ASSERT_EQ(run_in_child([&] {
              auto writer = Database::open(path);
              writer.store_bucket(sample_bucket(sample_device(), sum_f32(), 11));
              std::_Exit(0);  // killed: no close, no checkpoint
              return 1;
            }),
            0);
  auto wal = path;
  wal += "-wal";
  ASSERT_TRUE(fs::exists(wal));
  ASSERT_GT(fs::file_size(wal), 0u);
  auto shm = path;
  shm += "-shm";
  fs::remove(shm);
  fs::permissions(dir.path(), fs::perms(0755));
  fs::permissions(folder, fs::perms(0555));
  const int status = run_without_write_permission([&]() -> int {
    if (::access(folder.c_str(), W_OK) == 0) return 91;
    try {
      auto database = Database::open_read_only(path);
      return 20;  // opened: it would have read one winner where the file holds two
    } catch (const DbError& e) {
      return std::string(e.what()).find("tuning.db-wal") != std::string::npos ? 0 : 21;
    }
  });
  fs::permissions(folder, fs::perms(0755));
  if (status == 90) GTEST_SKIP() << "cannot drop root privileges to test a read-only folder";
  EXPECT_EQ(status, 0) << "child failed at step " << status;
  // With write access the -shm is rebuilt and both commits are there.
  auto database = Database::open_read_only(path);
  ASSERT_TRUE(database);
  EXPECT_EQ(database->counts().winners, 2);
}

TEST(ReadOnly, ReadOnlyFileInWritableFolderOpens) {
  TempDir dir;
  const auto path = dir / "tuning.db";
  Database::open(path).store_bucket(sample_bucket(sample_device(), sum_f32(), 10));
  const auto before = file_bytes(path);
  fs::permissions(dir.path(), fs::perms(0777));
  fs::permissions(path, fs::perms(0444));
  const int status = run_without_write_permission([&]() -> int {
    auto database = Database::open_read_only(path);
    if (!database) return 10;
    return database->counts().winners == 1 ? 0 : 11;
  });
  if (status == 90) GTEST_SKIP() << "cannot drop root privileges to test a read-only file";
  EXPECT_EQ(status, 0) << "child failed at step " << status;
  EXPECT_EQ(file_bytes(path), before);
}

}  // namespace
}  // namespace reduce_tune::db
