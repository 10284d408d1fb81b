// A quick real tuning run on the GPU: two sizes, one op, one dtype. It must store
// verified winners, measured across their bucket, and every measurement, and a second
// run must compile nothing it ran before.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <set>

#include "gpu_env.h"
#include "reduce_tune/context.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/engine/binary_cache.h"
#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/engine/kernel_set.h"
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
  o.layouts = {AxisLayout::flat};
  o.ops = {Op::sum};
  o.dtypes = {DType::f32};
  o.sizes = {1u << 12, 1u << 22};
  o.budget = Budget{20, 0};
  o.keep_all_binaries = true;  // --keep-binaries all: a fresh rerun compiles nothing
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
    int at_bucket_size = 0;
    for (const auto& m : measurements) at_bucket_size += m.problem.n == (std::uint64_t{1} << size_bucket(m.problem.n));
    EXPECT_EQ(at_bucket_size, first.candidates);  // the interior sizes come on top
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
      // The winner was measured across its bucket: at 2^k and its interior sizes.
      std::set<std::uint64_t> sizes;
      for (const auto& m : measurements)
        if (m.config == w.config && m.status == db::MeasurementStatus::ok && size_bucket(m.problem.n) == w.bucket)
          sizes.insert(m.problem.n);
      EXPECT_EQ(sizes.size(), 1 + interior_sizes(std::uint64_t{1} << w.bucket, ~std::uint64_t{0}).size())
          << to_string(w.config);
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

  // Fresh: every bucket again, every binary it compiled before from the database's
  // cache. Timings differ between runs, so the climb (or the background compiles ahead
  // of it) may reach a config the first run did not; every compile is stored, so a
  // second run compiled nothing the first stored exactly when its compiles are the keys
  // new to the database.
  auto binary_keys = [&](const std::filesystem::path& path) {
    auto database = db::Database::open(path);
    std::set<std::string> keys;
    for (const auto& b : database.list_binaries()) keys.insert(b.key);
    return keys;
  };
  const auto before = binary_keys(db_path);
  o.fresh = true;
  const DeviceTuneResult second = tune_device(0, o, db_path, again, interrupt);
  EXPECT_EQ(second.buckets_tuned, 2);
  std::size_t new_keys = 0;
  for (const auto& k : binary_keys(db_path)) new_keys += before.count(k) == 0;
  EXPECT_EQ(second.compiles.compiles, new_keys) << "a second run compiled what the first stored";
  EXPECT_GT(second.compiles.store_hits, 0u);
  std::printf("[ tuning   ] second run: %zu compiles (%zu binaries new to the database), %zu from the database\n",
              second.compiles.compiles, new_keys, second.compiles.store_hits);

  // The default keeps the binaries of winners and finalists only: fewer, and a context
  // over that database serves the tuned sizes from them without compiling.
  TuneOptions lean = o;
  lean.keep_all_binaries = false;
  QuietProgress third;
  const auto lean_path = dir / "lean.db";
  const DeviceTuneResult lean_run = tune_device(0, lean, lean_path, third, interrupt);
  EXPECT_EQ(lean_run.buckets_tuned, 2);
  const auto keys = binary_keys(lean_path);
  const std::size_t lean_binaries = keys.size(), all_binaries = binary_keys(db_path).size();
  {
    auto database = db::Database::open(lean_path);
    // Each winner's runtime kernel is among them.
    const auto device_id = database.find_device(lean_run.device.uuid);
    ASSERT_TRUE(device_id);
    const TypeRule t = *resolve_types(Op::sum, DType::f32, DType::f32).rule;
    NvrtcCompiler compiler;
    // Every bucket has its deterministic winner, and a non-deterministic one where an
    // atomic finish measured faster.
    int deterministic = 0, winners = 0;
    for (const auto& w : database.winners_for_device(*device_id)) {
      const std::vector<KernelSpec> one = {KernelSpec{Op::sum, t, w.config}};
      EXPECT_EQ(keys.count(binary_cache_key(make_compile_request(one, lean_run.device.arch()), compiler.version())), 1u)
          << to_string(w.config);
      ++winners;
      if (w.determinism == db::Determinism::deterministic) ++deterministic;
    }
    EXPECT_EQ(deterministic, 2);
    EXPECT_LE(winners, 4);
  }
  EXPECT_GT(lean_binaries, 0u);
  EXPECT_LT(lean_binaries, all_binaries);
  {
    ContextOptions co;
    co.database = lean_path;
    Context ctx(co);
    const std::uint64_t n = (1u << 22) + 4097;
    DeviceBuffer in(n * sizeof(float));
    RT_CUDA_CHECK(cudaMemset(in.get(), 0, n * sizeof(float)));
    float result = -1;
    ctx.reduce_to_host(Op::sum, DType::f32, DType::f32, in.get(), n, &result, nullptr);
    EXPECT_EQ(result, 0.0f);
    EXPECT_EQ(ctx.explain(Op::sum, DType::f32, DType::f32, n).match, MatchKind::exact);
  }
  std::printf("[ tuning   ] binaries kept: %zu of the winners and finalists, %zu with --keep-binaries all\n",
              lean_binaries, all_binaries);
  std::filesystem::remove_all(dir);
}

TEST(TunerOnGpu, InterruptStopsBeforeStoringTheBucketInFlight) {
  RT_REQUIRE_GPU();
  if (testing::quick_mode()) GTEST_SKIP() << "not in quick mode (sanitizer run)";
  const auto dir = std::filesystem::temp_directory_path() / ("rt_tuner_int_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  TuneOptions o;
  o.layouts = {AxisLayout::flat};
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
