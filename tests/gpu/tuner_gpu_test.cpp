// A quick real tuning run on the GPU: two sizes, one op, one dtype. It must store
// verified winners and every measurement, and a second run must compile nothing.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "gpu_env.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/tuner/tuner.h"

namespace reduce_tune::tuner {
namespace {

class QuietProgress : public Progress {
 public:
  void device_started(const DeviceKey&, int, int) override {}
  void bucket_finished(const BucketReport& b) override { buckets.push_back(b); }
  void note(std::string_view) override {}
  std::vector<BucketReport> buckets;
};

TEST(TunerOnGpu, QuickRunStoresVerifiedWinnersAndEveryMeasurement) {
  RT_REQUIRE_GPU();
  if (testing::quick_mode()) GTEST_SKIP() << "not in quick mode (sanitizer run)";
  const auto dir = std::filesystem::temp_directory_path() / ("rt_tuner_gpu_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto db_path = dir / "tuning.db";

  TuneOptions o;
  o.ops = {Op::sum};
  o.dtypes = {DType::f32};
  o.sizes = {1u << 12, 1u << 22};
  o.budget = Budget{20, 0};
  std::atomic<bool> interrupt{false};
  QuietProgress progress;
  const DeviceTuneResult first = tune_device(0, o, db_path, progress, interrupt);
  EXPECT_EQ(first.buckets_tuned, 2);
  EXPECT_FALSE(first.interrupted);
  EXPECT_GT(first.compiles.compiles, 0u);
  std::printf("[ tuning   ] first run: %d candidates (%d failed), %zu compiles, %.1f s\n", first.candidates,
              first.failed_candidates, first.compiles.compiles, first.seconds);

  {
    auto database = db::Database::open(db_path);
    const auto device_id = database.find_device(first.device.uuid);
    ASSERT_TRUE(device_id);
    const db::ProblemClass problem{Op::sum, DType::f32, DType::f32, {}};
    const auto measurements = database.measurements(*device_id, problem);
    EXPECT_EQ(static_cast<int>(measurements.size()), first.candidates);
    const auto winners = database.winners_for_device(*device_id);
    int deterministic = 0;
    for (const auto& w : winners) {
      ASSERT_TRUE(w.measurement_id);
      bool found = false;
      for (const auto& m : measurements)
        if (m.id == *w.measurement_id) {
          found = true;
          EXPECT_EQ(m.status, db::MeasurementStatus::ok);  // only verified candidates win
          EXPECT_EQ(m.config, w.config);
          EXPECT_EQ(size_bucket(m.problem.n), w.bucket);
        }
      EXPECT_TRUE(found);
      deterministic += w.determinism == db::Determinism::deterministic;
    }
    EXPECT_EQ(deterministic, 2);
    EXPECT_EQ(database.tuned_buckets(*device_id, problem), (std::vector<int>{12, 22}));
  }

  // Resume: nothing left to do.
  QuietProgress again;
  const DeviceTuneResult resumed = tune_device(0, o, db_path, again, interrupt);
  EXPECT_EQ(resumed.buckets_tuned, 0);
  EXPECT_EQ(resumed.buckets_already_done, 2);

  // Fresh: every bucket again, every binary from the database's cache.
  o.fresh = true;
  const DeviceTuneResult second = tune_device(0, o, db_path, again, interrupt);
  EXPECT_EQ(second.buckets_tuned, 2);
  EXPECT_EQ(second.compiles.compiles, 0u) << "a second run must compile nothing";
  EXPECT_GT(second.compiles.store_hits, 0u);
  std::filesystem::remove_all(dir);
}

TEST(TunerOnGpu, InterruptStopsBeforeStoringTheBucketInFlight) {
  RT_REQUIRE_GPU();
  if (testing::quick_mode()) GTEST_SKIP() << "not in quick mode (sanitizer run)";
  const auto dir = std::filesystem::temp_directory_path() / ("rt_tuner_int_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  TuneOptions o;
  o.ops = {Op::max};
  o.dtypes = {DType::i32};
  o.sizes = {1u << 14};
  std::atomic<bool> interrupt{true};
  QuietProgress progress;
  const DeviceTuneResult r = tune_device(0, o, dir / "t.db", progress, interrupt);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.buckets_tuned, 0);
  auto database = db::Database::open(dir / "t.db");
  EXPECT_EQ(database.counts().tuned_buckets, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace reduce_tune::tuner
