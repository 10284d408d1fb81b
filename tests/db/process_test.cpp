// Several processes on one file: concurrent writers wait instead of failing, and a writer
// killed inside a transaction leaves exactly the buckets it had committed.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "database_access.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/error.h"
#include "test_support.h"

namespace reduce_tune::db {
namespace {

using namespace testing;

constexpr int kBucketsPerWriter = 200;
constexpr int kMeasurementsPerBucket = 10;

ProblemClass writer_problem(int writer, int index) {
  const DType dtype = writer == 0 ? DType::f32 : DType::f64;
  return {kAllOps[index % 5], dtype, dtype, Layout{}};
}

// One tuner: many small bucket transactions on the shared device.
int write_buckets(const std::filesystem::path& path, int writer, const int (&start)[2]) {
  ::close(start[1]);  // else this child's own copy of the write end keeps EOF away
  char go = 0;
  if (::read(start[0], &go, 1) < 0) return 20;  // wait for the common start
  auto database = Database::open(path);
  for (int i = 0; i < kBucketsPerWriter; ++i) {
    auto bucket = sample_bucket(sample_device(), writer_problem(writer, i), i / 5, kMeasurementsPerBucket,
                                fixed_time(writer));
    database.store_bucket(bucket);
  }
  return 0;
}

TEST(Concurrency, TwoProcessesWriteWithoutLossOrError) {
  TempDir dir;
  const auto path = dir / "tuning.db";  // created by the writers themselves, racing
  int start[2];
  ASSERT_EQ(::pipe(start), 0);
  const pid_t a = start_child([&] { return write_buckets(path, 0, start); });
  const pid_t b = start_child([&] { return write_buckets(path, 1, start); });
  ::close(start[0]);
  ::close(start[1]);  // EOF releases both at once
  EXPECT_EQ(wait_child(a), 0);
  EXPECT_EQ(wait_child(b), 0);

  auto database = Database::open(path);
  EXPECT_TRUE(database.integrity_problems().empty());
  const auto counts = database.counts();
  EXPECT_EQ(counts.devices, 1);
  EXPECT_EQ(counts.measurements, 2 * kBucketsPerWriter * kMeasurementsPerBucket);
  EXPECT_EQ(counts.winners, 2 * kBucketsPerWriter);
  EXPECT_EQ(counts.tuned_buckets, 2 * kBucketsPerWriter);
  const RowId device = *database.find_device(sample_device().uuid);
  for (int writer = 0; writer < 2; ++writer)
    for (int op = 0; op < 5; ++op)
      EXPECT_EQ(database.tuned_buckets(device, writer_problem(writer, op)).size(), kBucketsPerWriter / 5u);
}

// Called by SQLite just before a transaction commits, in the child. On the commit after
// the committed ones it tells the parent and waits to be killed there, inside the
// transaction, with its pages written to the WAL but no commit record.
struct CrashPoint {
  int commits_before_crash;
  int report_fd;
  int seen = 0;
};
int hold_before_commit(void* data) {
  auto* point = static_cast<CrashPoint*>(data);
  if (++point->seen > point->commits_before_crash) {
    const char byte = 'k';
    if (::write(point->report_fd, &byte, 1) != 1) return 1;
    for (;;) ::pause();
  }
  return 0;  // let the commit proceed
}

TEST(CrashSafety, SigkillInsideTransactionKeepsCommittedBucketsOnly) {
  constexpr int kCommitted = 5;
  TempDir dir;
  const auto path = dir / "tuning.db";
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t child = start_child([&] {
    ::close(report[0]);
    auto database = Database::open(path);
    CrashPoint point{kCommitted, report[1]};
    sqlite3_commit_hook(DatabaseAccess::connection(database).get(), hold_before_commit, &point);
    for (int i = 0; i < kCommitted; ++i) database.store_bucket(sample_bucket(sample_device(), sum_f32(), i, 4));
    // Large enough to spill uncommitted pages into the WAL before the commit point.
    database.store_bucket(sample_bucket(sample_device(), sum_f32(), 20, 20'000));
    return 30;  // never reached: the commit hook holds the process
  });
  ::close(report[1]);
  char byte = 0;
  ASSERT_EQ(::read(report[0], &byte, 1), 1) << "the child ended before reaching the crash point";
  ::close(report[0]);
  ::kill(child, SIGKILL);
  EXPECT_EQ(wait_child(child), 128 + SIGKILL);

  auto database = Database::open(path);
  EXPECT_TRUE(database.integrity_problems().empty());
  const RowId device = *database.find_device(sample_device().uuid);
  EXPECT_EQ(database.tuned_buckets(device, sum_f32()), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(database.counts().measurements, kCommitted * 4);
  EXPECT_EQ(database.counts().winners, kCommitted);
  EXPECT_TRUE(database.measurements(device, sum_f32(), 20).empty());
}

}  // namespace
}  // namespace reduce_tune::db
