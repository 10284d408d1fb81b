// The tuning flow of design section 2, for one device: for each (op, dtype, size
// bucket), search the space (compiling in the background, verifying every candidate
// before timing it), store every measurement and the winner of each determinism class
// in one transaction per bucket. Ctrl-C (the interrupt flag) loses at most the bucket
// in flight; a rerun skips the buckets already stored.
#pragma once

#include <atomic>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "reduce_tune/engine/binary_cache.h"
#include "reduce_tune/engine/kernel_spec.h"
#include "reduce_tune/config.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/db/records.h"
#include "reduce_tune/device_key.h"
#include "reduce_tune/tuner/tune_options.h"

namespace reduce_tune::tuner {

// Where a run's time went, in seconds of wall time on the tuning thread.
struct PhaseSeconds {
  double compile_wait = 0;  // waiting for NVRTC (compiles run on a pool, ahead of use)
  double verify = 0;        // running the checks of candidates and finalists
  double timing = 0;        // timing candidates at the bucket's size
  double finalists = 0;     // coverage twins and the bucket-interior sizes
  double references = 0;    // waiting for host references
  double fill = 0;          // generating test data on the device
  double store = 0;         // database writes
};
PhaseSeconds operator-(const PhaseSeconds& a, const PhaseSeconds& b);

struct BucketReport {
  std::string device_name;
  db::ProblemClass problem;
  std::uint64_t n = 0;
  // An axis class instead of a flat bucket (then `problem`, `n` and `winner` are unset
  // and axis_winner names the winner's config).
  std::optional<db::AxisProblemClass> axis;
  std::string axis_winner;
  bool fill = false;  // an axis class filled in between tuned ones (plan_axis_fill)
  int index = 0;  // 1-based position in this run
  int total = 0;
  int candidates = 0;
  int failed = 0;
  std::optional<ReduceConfig> winner;  // deterministic class
  double winner_ms = 0;
  double winner_gbps = 0;
  double seconds = 0;      // spent on this bucket
  double eta_seconds = 0;  // estimate for the rest of the run on this device
  PhaseSeconds phases;     // where this bucket's time went (flat buckets)
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
  int axis_classes_tuned = 0;
  int axis_classes_already_done = 0;
  int axis_classes_skipped = 0;
  int axis_classes_filled = 0;  // untuned classes next to tuned ones (plan_axis_fill)
  int candidates = 0;
  int failed_candidates = 0;
  int binaries_stored = 0;  // winners' and finalists' binaries written to the database
  CacheStats compiles;
  PhaseSeconds phases;
  double seconds = 0;
  bool interrupted = false;
};

// What every stored measurement and "done" mark records: the tool's version, the digest
// of its kernel templates and the revision of the flat winner rule ("reduce-tune 0.1.0
// kernels 0123456789abcdef winners 2"). A run tunes again the buckets and axis classes
// another version marked done.
const std::string& tool_version_string();

// The flat winner rule's revision. 2: a launch the built-in default does not make counts
// kExtraLaunchHostMs against it (set BG: a two-pass max<f32> winner at 2^20 ran 0.55 to
// 0.59 times the default in a call; nine winners of that run at 2^17 to 2^20 launched
// twice where the default launches once).
inline constexpr int kFlatRuleRevision = 2;

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
  int retuned = 0;  // among items: marked done by another tool version
};
WorkPlan plan_tuning_work(const TuneOptions& options, const db::Database& database, db::RowId device_id,
                          std::uint64_t input_capacity, Progress& progress);

// The winner of each determinism class among a bucket's measurements. The finalists
// are the verified configs measured at every size of the bucket (n = 2^k and the
// interior sizes; a config that failed any check never wins); each is scored by its
// worst ratio to the fastest finalist at any size. Among finalists within noise of the
// best score (tie_band) the previous winner wins if it is one of them, else the
// built-in default if it is one, else the simplest (fewest launches, no cross-block
// hand-off, fewest blocks, then canonical text), so that reruns on the same GPU agree. A
// winner more than 2% slower than the built-in default at any measured size gives way
// to the default, each launch it makes beyond the default's counted at
// kExtraLaunchHostMs. Without interior
// measurements the fastest at n wins by the same rules.
//
// kExtraLaunchHostMs: the host time of a launch, which the held-queue timing
// (TimingPolicy::hold_queue) does not see and a caller pays: a two-pass config timed at
// 3.3 us there (max<f32>, 2^20) took 6.10-6.37 us a call at n = 2^20 + 1 against the
// one-launch default's 3.53-3.69 (an H200, docs/BENCHMARKS.md, set BG), where an empty
// launch took 3.79 us at the host's pace. 2 us is below what an extra launch cost there.
inline constexpr double kExtraLaunchHostMs = 0.002;
std::vector<db::BucketWinner> choose_winners(const std::vector<db::Measurement>& measurements, Op op,
                                             const TypeRule& types, std::uint64_t n,
                                             const std::vector<ReduceConfig>& previous,
                                             const ReduceConfig& builtin_default, int sm_count);

// The sizes a bucket's finalists are measured at besides n, tuned in [2^k, 2^(k+1))
// (2^k by default): odd sizes (a multiple of no tile) just above 2^k, in the middle and
// at the top of the bucket; one, in the middle, from 2^24 up, where every config is
// bound by memory bandwidth and launch structure no longer matters. None equal to n,
// none above `capacity` elements.
std::vector<std::uint64_t> interior_sizes(std::uint64_t n, std::uint64_t capacity);
// The relative difference below which two times count as equal.
double noise_band(double median_ms, double spread);
// The band within which choose_winners counts finalists as tied: noise_band, but for
// calls of 0.1 ms or more twice the measured spread with a 0.3% floor.
double tie_band(double median_ms, double spread);

// The bench's guarantee (issue 11): the tuned call is at least `floor_ratio` times as fast
// as another implementation (0.97 for the built-in default, 1.0 for CUB). True when the
// tuned call is slower than other / floor_ratio beyond the noise floor (3% below 10 us,
// else 1%), whatever either measurement's spread. The bench applies it twice: a break
// seen in its table is timed again (the two alternating) and counts only when the
// medians of that second timing still cross the line.
bool guarantee_broken(double tuned_ms, double other_ms, double floor_ratio);

// The kernels the runtime compiles for a stored winner: its own, and for a float sum
// also the mean that is served by the sum's winners. The database keeps their binaries,
// so that no call compiles.
std::vector<KernelSpec> runtime_specs(const db::ProblemClass& problem, const ReduceConfig& config);

// The binary-cache keys of every winner's runtime kernels in `database`, as `compiler`
// (its NVRTC version) would key them; `reduce-tune db gc` keeps exactly these.
std::set<std::string> winner_binary_keys(const db::Database& database, const Compiler& compiler);

// The tuner's checks of single candidates, outside a tuning run: exactly what a
// candidate of a bucket goes through (the exact set at offset 0 and 3, the rounding set
// for float sums, the coverage twin for min, max and products), on the device `ordinal`.
// The mutation test feeds it deliberately broken kernels.
class CandidateChecker {
 public:
  explicit CandidateChecker(int ordinal);
  ~CandidateChecker();
  CandidateChecker(const CandidateChecker&) = delete;
  CandidateChecker& operator=(const CandidateChecker&) = delete;
  // "" when `spec` passes every check at n, else why not. `nvrtc_options` are extra
  // compile options (the mutation test's -DRT_MUTATION=k).
  std::string check(const KernelSpec& spec, std::uint64_t n, const std::vector<std::string>& nvrtc_options = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Throws NoDeviceError for a missing device and DbError/CudaError for failures that end
// the run; candidate failures are stored, never thrown.
DeviceTuneResult tune_device(int ordinal, const TuneOptions& options, const std::filesystem::path& db_path,
                             Progress& progress, const std::atomic<bool>& interrupt);

}  // namespace reduce_tune::tuner
