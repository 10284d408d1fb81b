// The tuning flow of design section 2, for one device: for each (op, dtype, size
// bucket), search the space (compiling in the background, verifying every candidate
// before timing it), store every measurement and the winner of each determinism class
// in one transaction per bucket. Ctrl-C (the interrupt flag) loses at most the bucket
// in flight; a rerun skips the buckets already stored.
#pragma once

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "reduce_tune/engine/binary_cache.h"
#include "reduce_tune/config.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/db/records.h"
#include "reduce_tune/device_key.h"
#include "reduce_tune/tuner/tune_options.h"

namespace reduce_tune::tuner {

struct BucketReport {
  std::string device_name;
  db::ProblemClass problem;
  std::uint64_t n = 0;
  int index = 0;  // 1-based position in this run
  int total = 0;
  int candidates = 0;
  int failed = 0;
  std::optional<ReduceConfig> winner;  // deterministic class
  double winner_ms = 0;
  double winner_gbps = 0;
  double seconds = 0;      // spent on this bucket
  double eta_seconds = 0;  // estimate for the rest of the run on this device
};

// Where the tuner reports progress; the command line draws it (bar or plain lines).
class Progress {
 public:
  virtual ~Progress() = default;
  virtual void device_started(const DeviceKey& device, int buckets_to_tune, int buckets_done_before) = 0;
  virtual void candidate_finished(const BucketReport& bucket_so_far) { (void)bucket_so_far; }
  virtual void bucket_finished(const BucketReport& bucket) = 0;
  virtual void note(std::string_view message) = 0;
};

struct DeviceTuneResult {
  DeviceKey device;
  int buckets_tuned = 0;
  int buckets_already_done = 0;
  int buckets_skipped = 0;  // did not fit in device memory
  int candidates = 0;
  int failed_candidates = 0;
  CacheStats compiles;
  double seconds = 0;
  bool interrupted = false;
};

std::string tool_version_string();

// One (op, types, n) to tune.
struct WorkItem {
  Op op;
  TypeRule types;
  std::uint64_t n;
};

// The buckets a run must tune: options' ops x dtypes x sizes, minus buckets the database
// already holds for the device (unless options.fresh) and sizes whose input would not fit
// in `input_capacity` bytes (each reported through `progress`).
struct WorkPlan {
  std::vector<WorkItem> items;
  int already_done = 0;
  int skipped = 0;
};
WorkPlan plan_tuning_work(const TuneOptions& options, const db::Database& database, db::RowId device_id,
                          std::uint64_t input_capacity, Progress& progress);

// The winner of each determinism class among a bucket's measurements: the fastest
// verified candidate; among those within noise of it (noise_band) the previous winner if
// it is one of them, else the simplest (fewest launches, no cross-block hand-off, fewest
// blocks, then canonical text), so that reruns on the same GPU agree.
std::vector<db::BucketWinner> choose_winners(const std::vector<db::Measurement>& measurements, Op op,
                                             const TypeRule& types, const std::vector<ReduceConfig>& previous,
                                             int sm_count);
// The relative difference below which two times count as equal.
double noise_band(double median_ms, double spread);

// Throws NoDeviceError for a missing device and DbError/CudaError for failures that end
// the run; candidate failures are stored, never thrown.
DeviceTuneResult tune_device(int ordinal, const TuneOptions& options, const std::filesystem::path& db_path,
                             Progress& progress, const std::atomic<bool>& interrupt);

}  // namespace reduce_tune::tuner
