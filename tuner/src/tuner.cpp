#include "reduce_tune/tuner/tuner.h"

#include "axis_run.h"
#include "device_state.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "reduce_tune/db/database.h"
#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/engine/kernel_set.h"
#include "reduce_tune/engine/kernel_sources.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/engine/search_space.h"
#include "reduce_tune/error.h"
#include "reduce_tune/runtime/database_binary_store.h"
#include "reduce_tune/runtime/selector.h"
#include "reduce_tune/tuner/axis_tuner.h"
#include "reduce_tune/tuner/measure.h"
#include "reduce_tune/tuner/reference.h"
#include "reduce_tune/tuner/search.h"
#include "reduce_tune/tuner/thread_pool.h"
#include "reduce_tune/tuner/tuner_kernels.h"

#ifndef REDUCE_TUNE_VERSION
#define REDUCE_TUNE_VERSION "0.0.0"
#endif

namespace reduce_tune::tuner {

const std::string& tool_version_string() {
  static const std::string version = "reduce-tune " REDUCE_TUNE_VERSION " kernels " + kernel_templates_digest() +
                                     " winners " + std::to_string(kFlatRuleRevision);
  return version;
}

std::vector<std::uint64_t> interior_sizes(std::uint64_t n, std::uint64_t capacity) {
  std::vector<std::uint64_t> sizes;
  if (n < 8) return sizes;
  const std::uint64_t lo = std::uint64_t{1} << size_bucket(n);  // the bucket of n, wherever n lies in it
  const std::uint64_t top = 2 * lo - 1, middle = lo + lo / 2 + 1, low = lo + 1;
  const std::vector<std::uint64_t> wanted =
      lo >= (std::uint64_t{1} << 24) ? std::vector<std::uint64_t>{middle} : std::vector<std::uint64_t>{low, middle, top};
  for (auto s : wanted)
    if (s <= capacity && s != n) sizes.push_back(s);
  return sizes;
}

namespace {

// The exact data set, and the second one (rounding for float sums, the exact sum data
// of the coverage twins otherwise), each from its own seed.
constexpr std::uint64_t kExactSeed = 0x5eed;
constexpr std::uint64_t kSecondSeed = 0x5eed2;
constexpr std::uint64_t kPoison = 0xa5a5a5a5a5a5a5a5ull;
// Finalists per determinism class: the fastest few within this factor of the best.
constexpr std::size_t kFinalists = 4;
constexpr double kFinalistBand = 1.15;

using namespace detail;

// Host references, computed on a background thread (which itself uses every core) so
// that they overlap the GPU work; the same reference is computed once per run, and kept
// for the run (a few thousand small results).
class References {
 public:
  std::shared_future<verify::Expected> get(Op op, const TypeRule& types, verify::FillKind kind, std::uint64_t seed,
                                           std::uint64_t offset, std::uint64_t n) {
    // mean shares nothing with sum here: its expected value is divided by n.
    const auto key = std::make_tuple(op, types.in, types.out, kind, seed, offset, n);
    std::lock_guard lock(mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    auto future = worker_.submit(
        [=] { return verify::reference_hashed(op, types, kind, seed, offset, n, threads); });
    cache_.emplace(key, future);
    return future;
  }
  // Starts the references of several ranges of one data set, computed in one pass.
  void prepare(Op op, const TypeRule& types, verify::FillKind kind, std::uint64_t seed,
               const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> missing;
    std::vector<std::shared_ptr<std::promise<verify::Expected>>> promises;
    {
      std::lock_guard lock(mutex_);
      for (const auto& [offset, n] : ranges) {
        const auto key = std::make_tuple(op, types.in, types.out, kind, seed, offset, n);
        if (cache_.count(key)) continue;
        auto promise = std::make_shared<std::promise<verify::Expected>>();
        cache_.emplace(key, promise->get_future().share());
        missing.emplace_back(offset, n);
        promises.push_back(std::move(promise));
      }
    }
    if (missing.empty()) return;
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    worker_.submit([=] {
      try {
        const auto results = verify::reference_hashed(op, types, kind, seed, missing, threads);
        for (std::size_t i = 0; i < results.size(); ++i) promises[i]->set_value(results[i]);
      } catch (...) {
        for (const auto& p : promises) p->set_exception(std::current_exception());
      }
      return 0;
    });
  }

 private:
  std::mutex mutex_;
  std::map<std::tuple<Op, DType, DType, verify::FillKind, std::uint64_t, std::uint64_t, std::uint64_t>,
           std::shared_future<verify::Expected>>
      cache_;
  ThreadPool worker_{1, true};
};

// One run of a candidate on a slice of a data set, to compare with its reference.
struct Check {
  const unsigned char* base;
  std::uint64_t offset;
  std::uint64_t count;
  std::shared_future<verify::Expected> expected;
};

// A check that ran: its result waits for the reference (compared in settle()).
struct RanCheck {
  std::size_t measurement;  // the measurement it decides
  KernelSpec spec;          // what ran (the coverage twin is a sum)
  std::uint64_t count;
  std::uint64_t offset;
  std::uint64_t chain;
  std::uint64_t got;
  std::shared_future<verify::Expected> expected;
};

// Compiles, verifies and times the candidates of one bucket, and its finalists at the
// bucket's interior sizes, recording every outcome.
class BucketRunner final : public Evaluator {
 public:
  BucketRunner(DeviceState& device, References& references, PhaseSeconds& phases, Op op, const TypeRule& types,
               std::uint64_t n, DataBuffer& exact, DataBuffer& second, std::uint64_t l2_bytes,
               Clock::time_point deadline, const std::atomic<bool>& interrupt,
               std::function<void(const db::Measurement&)> on_result, std::vector<std::string> options = {})
      : device_(device), references_(references), phases_(phases), op_(op), types_(types), n_(n), exact_(exact),
        second_(second), l2_bytes_(l2_bytes), deadline_(deadline), interrupt_(interrupt),
        on_result_(std::move(on_result)), options_(std::move(options)) {}

  void prefetch(std::span<const ReduceConfig> configs, bool speculative) override {
    std::vector<KernelSpec> specs;
    for (const auto& c : configs) specs.push_back(KernelSpec{op_, types_, c});
    device_.compile_all(specs, speculative ? DeviceState::Urgency::speculative : DeviceState::Urgency::soon, options_);
  }
  // The coverage twins of `configs` (what check_coverage will compile), queued first.
  void prefetch_coverage(std::span<const ReduceConfig> configs) {
    const auto twin_types = verify::coverage_twin(op_, types_);
    if (!twin_types) return;
    std::vector<KernelSpec> specs;
    for (const auto& c : configs) {
      const KernelSpec twin{Op::sum, *twin_types, c};
      if (!check_config(twin, device_.limits())) specs.push_back(twin);
    }
    device_.compile_all(specs, DeviceState::Urgency::soon, options_);
  }
  bool should_stop() override { return interrupt_.load() || Clock::now() >= deadline_; }

  std::optional<double> evaluate(const ReduceConfig& config) override { return run(config, n_, true); }

  // Runs `config` at `size` (the checks of the exact set there, then timing); with
  // `all_checks`, also at offset 3 (a one-element head and tail for every vector width)
  // and, for float sums, on the rounding set. The result is provisional until settle().
  std::optional<double> run(const ReduceConfig& config, std::uint64_t size, bool all_checks, bool timed = true) {
    const KernelSpec spec{op_, types_, config};
    db::Measurement m;
    m.problem = ProblemKey{op_, types_.in, types_.out, {}, size};
    m.config = config;
    m.tool_version = tool_version_string();
    m.created_at = db::now_timestamp();
    m.median_ms = m.spread = m.gbps = std::numeric_limits<double>::quiet_NaN();
    auto fail = [&](db::MeasurementStatus status, std::string detail) -> std::optional<double> {
      m.status = status;
      m.detail = std::move(detail);
      record(m);
      return std::nullopt;
    };
    const KernelHandles* kernels = nullptr;
    ran_.push_back(spec);
    try {
      PhaseTimer timer(phases_.compile_wait);
      kernels = &device_.kernels(spec, options_);
    } catch (const NvrtcError& e) {
      return fail(db::MeasurementStatus::compile_failed, first_lines(e.what()));
    } catch (const CudaError& e) {
      if (is_sticky(e.code())) throw;
      return fail(db::MeasurementStatus::launch_failed, e.what());
    }
    int resident = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernels->reduce,
                                                      static_cast<int>(config.block_threads), 0) != cudaSuccess) {
      cudaGetLastError();
      resident = 0;
    }
    if (resident == 0) return fail(db::MeasurementStatus::skipped, "no block of this kernel fits on a multiprocessor");

    const verify::FillKind kind = verify::exact_fill(op_);
    const unsigned char* exact = exact_.get(device_, types_.in, kind, kExactSeed, phases_.fill);
    // The whole exact set first; the head and tail (offset 3) and the rounding set after
    // timing, unless racing stopped the candidate as clearly slower than the best so far
    // (its measurement says so; should it be a finalist all the same, as the built-in
    // default and the previous winners always are, complete_checks runs the rest).
    const std::vector<Check> whole = {{exact, 0, size, references_.get(op_, types_, kind, kExactSeed, 0, size)}};
    const std::size_t index = measurements_.size();
    try {
      const std::vector<Check> more = all_checks ? more_checks(size) : std::vector<Check>{};
      auto run_checks = [&](const std::vector<Check>& checks) {
        PhaseTimer timer(phases_.verify);
        for (const auto& check : checks) run_check(spec, *kernels, check, index);
      };
      run_checks(whole);
      if (!timed) {
        run_checks(more);
        m.status = db::MeasurementStatus::ok;
        record(m);
        return 0.0;
      }
      const LaunchPlan plan = plan_launch(spec, size, device_.key().sm_count);
      const WorkspaceView workspace = device_.workspace(plan.partial_count * size_of(types_.acc));
      const std::uint64_t stride = (size + 31) / 32 * 32;
      const int rotations =
          rotation_count(stride * size_of(types_.in), l2_bytes_, exact_.bytes - 64 * size_of(types_.in));
      CudaLauncher launcher;
      TimingResult t;
      TimingPolicy policy;
      if (size == n_) policy.best_ms = best_ms_;  // candidates race; finalists' interior sizes do not
      policy.abandon_factor = kFinalistBand + 0.1;  // no candidate stopped early is a finalist
      {
        PhaseTimer timer(size == n_ ? phases_.timing : phases_.finalists);
        t = time_reduction(
            [&](int slice) {
              enqueue_reduction(launcher, *kernels, spec, plan, workspace,
                                exact + static_cast<std::uint64_t>(slice) * stride * size_of(types_.in), size,
                                device_.out(), device_.stream());
            },
            rotations, device_.stream(), policy);
      }
      if (t.abandoned && !more.empty()) {
        std::ostringstream detail;
        detail << std::fixed << std::setprecision(2) << "stopped early at " << t.median_ms / best_ms_
               << "x the best so far: checked on the whole exact set only";
        m.detail = detail.str();
        unchecked_[index] = spec;
      } else {
        run_checks(more);
      }
      if (size == n_ && !t.abandoned && (best_ms_ == 0 || t.median_ms < best_ms_)) best_ms_ = t.median_ms;
      m.status = db::MeasurementStatus::ok;
      m.median_ms = t.median_ms;
      m.spread = t.spread;
      m.repetitions = t.repetitions;
      m.gbps = static_cast<double>(size * size_of(types_.in)) / (t.median_ms * 1e6);
      record(m);
      return t.median_ms;
    } catch (const CudaError& e) {
      if (is_sticky(e.code())) throw;
      cudaGetLastError();
      // Checks recorded for this measurement have nothing left to decide.
      pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                    [&](const RanCheck& c) { return c.measurement == index; }),
                     pending_.end());
      return fail(db::MeasurementStatus::launch_failed, e.what());
    }
  }

  // A finalist that racing stopped early (the built-in default and the previous winners
  // are finalists whatever their time; another only when a faster candidate failed its
  // checks) gets the checks it skipped.
  void complete_checks(const ReduceConfig& config) {
    const auto at_n = measurement_at(config, n_);
    if (!at_n) return;
    const auto it = unchecked_.find(*at_n);
    if (it == unchecked_.end()) return;
    const KernelSpec spec = it->second;
    unchecked_.erase(it);
    PhaseTimer timer(phases_.verify);
    try {
      const KernelHandles& kernels = device_.kernels(spec, options_);
      for (const auto& check : more_checks(n_)) run_check(spec, kernels, check, *at_n);
      measurements_[*at_n].detail.clear();
    } catch (const CudaError& e) {
      if (is_sticky(e.code())) throw;
      cudaGetLastError();
      fail_measurement(*at_n, std::string("the checks after timing failed: ") + e.what());
    }
  }

  // Checks that `config` reads every element exactly once, as a sum of the same dtype on
  // the exact sum data (verify::coverage_twin): min, max and products cannot see a
  // dropped tile themselves, nor can a 16-bit result. A failure (or a config the sum
  // cannot take) fails the config's measurement at n.
  void check_coverage(const ReduceConfig& config) {
    const auto twin_types = verify::coverage_twin(op_, types_);
    if (!twin_types) return;
    const auto at_n = measurement_at(config, n_);
    if (!at_n) return;
    const TypeRule sum_types = *twin_types;
    const KernelSpec twin{Op::sum, sum_types, config};
    if (const auto why = check_config(twin, device_.limits())) {
      fail_measurement(*at_n, "coverage: the sum twin of this config is invalid (" + *why + ")");
      return;
    }
    ran_.push_back(twin);
    PhaseTimer timer(phases_.finalists);
    try {
      const KernelHandles& kernels = device_.kernels(twin, options_);
      const unsigned char* data = second_.get(device_, types_.in, verify::FillKind::sum, kSecondSeed, phases_.fill);
      run_check(twin, kernels, {data, 0, n_, references_.get(Op::sum, sum_types, verify::FillKind::sum, kSecondSeed, 0, n_)},
                *at_n);
      if (n_ > 8)
        run_check(twin, kernels,
                  {data, 3, n_ - 2, references_.get(Op::sum, sum_types, verify::FillKind::sum, kSecondSeed, 3, n_ - 2)},
                  *at_n);
    } catch (const NvrtcError& e) {
      fail_measurement(*at_n, "coverage: the sum twin does not compile: " + first_lines(e.what()));
    } catch (const CudaError& e) {
      if (is_sticky(e.code())) throw;
      cudaGetLastError();
      fail_measurement(*at_n, std::string("coverage: the sum twin failed: ") + e.what());
    }
  }

  // Compares every check that ran with its reference; a mismatch fails its measurement.
  void settle() {
    PhaseTimer timer(phases_.references);
    for (const auto& c : pending_) {
      const verify::Expected& expected = c.expected.get();
      const std::string diff = verify::compare_result(c.spec.types, c.got, expected, c.chain);
      if (!diff.empty())
        fail_measurement(c.measurement, std::string(c.spec.op == op_ ? "" : "coverage (sum twin): ") + "n=" +
                                            std::to_string(c.count) + " offset=" + std::to_string(c.offset) + ": " +
                                            diff);
    }
    pending_.clear();
  }

  std::optional<std::size_t> measurement_at(const ReduceConfig& config, std::uint64_t size) const {
    for (std::size_t i = 0; i < measurements_.size(); ++i)
      if (measurements_[i].config == config && measurements_[i].problem.n == size) return i;
    return std::nullopt;
  }
  const std::vector<db::Measurement>& measurements() const { return measurements_; }
  // Every kernel this bucket ran (candidates, finalists, coverage twins).
  const std::vector<KernelSpec>& ran() const { return ran_; }

 private:
  // The checks after the whole exact set: the head and tail (offset 3) and, for float
  // sums, the rounding set.
  std::vector<Check> more_checks(std::uint64_t size) {
    std::vector<Check> more;
    const verify::FillKind kind = verify::exact_fill(op_);
    const unsigned char* exact = exact_.get(device_, types_.in, kind, kExactSeed, phases_.fill);
    if (size > 8) more.push_back({exact, 3, size - 2, references_.get(op_, types_, kind, kExactSeed, 3, size - 2)});
    if (verify::has_rounding_set(op_, types_)) {
      // A buffer of its own: the exact set stays filled.
      const unsigned char* rounding =
          second_.get(device_, types_.in, verify::FillKind::rounding, kSecondSeed, phases_.fill);
      more.push_back(
          {rounding, 0, size, references_.get(op_, types_, verify::FillKind::rounding, kSecondSeed, 0, size)});
    }
    return more;
  }

  void record(const db::Measurement& m) {
    measurements_.push_back(m);
    on_result_(m);
  }

  void fail_measurement(std::size_t index, std::string detail) {
    auto& m = measurements_[index];
    if (m.status != db::MeasurementStatus::ok) return;
    m.status = db::MeasurementStatus::wrong_result;
    m.detail = std::move(detail);
    m.median_ms = m.spread = m.gbps = std::numeric_limits<double>::quiet_NaN();
  }

  // Runs `spec` on one check's slice with the output poisoned, and keeps the result.
  void run_check(const KernelSpec& spec, const KernelHandles& kernels, const Check& check, std::size_t measurement) {
    cudaStream_t stream = device_.stream();
    const LaunchPlan plan = plan_launch(spec, check.count, device_.key().sm_count);
    const WorkspaceView workspace = device_.workspace(plan.partial_count * size_of(spec.types.acc));
    RT_CUDA_CHECK(cudaMemcpyAsync(device_.out(), &kPoison, 8, cudaMemcpyHostToDevice, stream));
    CudaLauncher launcher;
    enqueue_reduction(launcher, kernels, spec, plan, workspace, check.base + check.offset * size_of(spec.types.in),
                      check.count, device_.out(), stream);
    std::uint64_t got = 0;
    RT_CUDA_CHECK(cudaMemcpyAsync(&got, device_.out(), size_of(spec.types.out), cudaMemcpyDeviceToHost, stream));
    RT_CUDA_CHECK(cudaStreamSynchronize(stream));
    // A result equal to the poison is an output never written (unless that is the
    // answer; the comparison decides).
    pending_.push_back({measurement, spec, check.count, check.offset, verify::longest_chain(spec, plan, check.count),
                        got, check.expected});
  }

  DeviceState& device_;
  References& references_;
  PhaseSeconds& phases_;
  Op op_;
  TypeRule types_;
  std::uint64_t n_;
  DataBuffer& exact_;
  DataBuffer& second_;
  std::int64_t l2_bytes_;
  Clock::time_point deadline_;
  const std::atomic<bool>& interrupt_;
  std::function<void(const db::Measurement&)> on_result_;
  std::vector<db::Measurement> measurements_;
  std::vector<RanCheck> pending_;
  std::vector<std::string> options_;
  double best_ms_ = 0;  // the best median at n so far (racing: candidates well above it stop early)
  std::map<std::size_t, KernelSpec> unchecked_;  // measurements racing stopped before their last checks
  std::vector<KernelSpec> ran_;
};

// The finalists of one determinism class: the fastest verified configs at n within
// kFinalistBand of the best (at most kFinalists), the previous winners, and for the
// deterministic class the built-in default.
std::vector<ReduceConfig> pick_finalists(const std::vector<db::Measurement>& ms, Op op, const TypeRule& types,
                                         std::uint64_t n, bool deterministic,
                                         const std::vector<ReduceConfig>& previous, const ReduceConfig& builtin) {
  std::vector<const db::Measurement*> in_class;
  for (const auto& m : ms)
    if (m.status == db::MeasurementStatus::ok && m.problem.n == n &&
        is_deterministic(KernelSpec{op, types, m.config}) == deterministic)
      in_class.push_back(&m);
  std::sort(in_class.begin(), in_class.end(),
            [](const db::Measurement* a, const db::Measurement* b) { return a->median_ms < b->median_ms; });
  std::vector<ReduceConfig> finalists;
  auto add = [&](const ReduceConfig& c) {
    if (std::find(finalists.begin(), finalists.end(), c) == finalists.end()) finalists.push_back(c);
  };
  for (const auto* m : in_class)
    if (finalists.size() < kFinalists && m->median_ms <= in_class.front()->median_ms * kFinalistBand) add(m->config);
  for (const auto& p : previous)
    for (const auto* m : in_class)
      if (m->config == p) add(p);
  if (deterministic && is_deterministic(KernelSpec{op, types, builtin})) add(builtin);
  return finalists;
}

}  // namespace

std::vector<KernelSpec> runtime_specs(const db::ProblemClass& problem, const ReduceConfig& config) {
  std::vector<KernelSpec> specs;
  const auto types = resolve_types(problem.op, problem.dtype, problem.out_dtype);
  if (!types.rule) return specs;
  specs.push_back(KernelSpec{problem.op, *types.rule, config});
  if (problem.op == Op::sum && is_floating(problem.dtype) && problem.dtype == problem.out_dtype) {
    const auto mean = resolve_types(Op::mean, problem.dtype, default_out_dtype(Op::mean, problem.dtype));
    if (mean.rule && mean.rule->acc == types.rule->acc) specs.push_back(KernelSpec{Op::mean, *mean.rule, config});
  }
  return specs;
}

std::set<std::string> winner_binary_keys(const db::Database& database, const Compiler& compiler) {
  std::set<std::string> keys;
  const std::string version = compiler.version();
  for (const auto& device : database.list_devices())
    for (const auto& winner : database.winners_for_device(device.id))
      for (const auto& spec : runtime_specs(winner.problem, winner.config)) {
        const std::vector<KernelSpec> one = {spec};
        keys.insert(binary_cache_key(make_compile_request(one, device.key.arch()), version));
      }
  for (const auto& device : database.list_devices())
    for (const auto& winner : database.axis_winners_for_device(device.id))
      for (const auto& config : {winner.config, winner.grid_config})  // the grid's winner too, where kept
        for (const auto& spec : axis_runtime_specs(winner.problem, config, device.key.sm_count))
          keys.insert(binary_cache_key(make_axis_compile_request(spec, device.key.arch()), version));
  return keys;
}

bool in_flat_scope(const TuneOptions& options, Op op, DType dtype) {
  return !(options.default_scope && op == Op::prod && is_16bit_float(dtype));
}

bool in_axis_scope(const TuneOptions& options, DType dtype) {
  return is_floating(dtype) && !(options.default_scope && is_16bit_float(dtype));
}

PhaseSeconds operator-(const PhaseSeconds& a, const PhaseSeconds& b) {
  return {a.compile_wait - b.compile_wait, a.verify - b.verify, a.timing - b.timing, a.finalists - b.finalists,
          a.references - b.references, a.fill - b.fill, a.store - b.store};
}

WorkPlan plan_tuning_work(const TuneOptions& options, const db::Database& database, db::RowId device_id,
                          std::uint64_t input_capacity, Progress& progress) {
  WorkPlan plan;
  // Largest first: large sizes have clear, stable optima, whose winners then seed the
  // smaller buckets (neighbouring winners are local search's first starting points).
  std::vector<std::uint64_t> dropped;
  const std::vector<std::uint64_t> sizes = one_size_per_bucket(options.sizes.empty() ? default_sizes() : options.sizes, &dropped);
  for (std::uint64_t n : dropped)
    progress.note("n=" + std::to_string(n) + ": its size bucket [2^" + std::to_string(size_bucket(n)) + ", 2^" +
                  std::to_string(size_bucket(n) + 1) + ") is tuned at another of the sizes given, and checked "
                  "across the bucket");
  for (Op op : options.ops)
    for (DType dtype : options.dtypes) {
      if (!in_flat_scope(options, op, dtype)) continue;
      const TypeRule types = *resolve_types(op, dtype, default_out_dtype(op, dtype)).rule;
      const db::ProblemClass problem{op, types.in, types.out, {}};
      const auto done = database.tuned_bucket_records(device_id, problem);
      for (std::uint64_t n : sizes) {
        const int bucket = size_bucket(n);
        const auto mark =
            std::find_if(done.begin(), done.end(), [&](const db::TunedBucket& b) { return b.bucket == bucket; });
        const bool stale = mark != done.end() && mark->tool_version != tool_version_string();
        if (!options.fresh && mark != done.end() && !stale) {
          ++plan.already_done;
          continue;
        }
        if (n * size_of(dtype) > input_capacity) {
          ++plan.skipped;
          progress.note(to_string(problem) + " n=" + std::to_string(n) + ": skipped, needs " +
                        std::to_string((n * size_of(dtype)) >> 20) + " MiB of device memory");
          continue;
        }
        plan.items.push_back({op, types, n});
        if (stale && !options.fresh) ++plan.retuned;
      }
    }
  return plan;
}

DeviceTuneResult tune_device(int ordinal, const TuneOptions& options, const std::filesystem::path& db_path,
                             Progress& progress, const std::atomic<bool>& interrupt) {
  const auto started = Clock::now();
  DeviceTuneResult result;
  result.device = query_device(ordinal);
  RT_CUDA_CHECK(cudaSetDevice(ordinal));
  db::Database database = db::Database::open(db_path);
  const db::RowId device_id = database.upsert_device(result.device);
  DeviceState device(result.device, std::optional<std::filesystem::path>(db_path));

  std::size_t free_bytes = 0, total_bytes = 0;
  RT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Two data buffers, with room for workspaces, kernels and other processes.
  const std::uint64_t memory = free_bytes > (3ull << 30) ? static_cast<std::uint64_t>(free_bytes * 0.8) - (2ull << 30)
                                                         : free_bytes / 2;
  const std::uint64_t input_capacity = memory / 2;

  const bool flat = std::find(options.layouts.begin(), options.layouts.end(), AxisLayout::flat) != options.layouts.end();
  WorkPlan plan = flat ? plan_tuning_work(options, database, device_id, input_capacity, progress) : WorkPlan{};
  result.buckets_already_done = plan.already_done;
  result.buckets_skipped = plan.skipped;
  const AxisWorkPlan axis_plan = plan_axis_work(options, database, device_id, input_capacity, progress);
  result.axis_classes_already_done = axis_plan.already_done;
  result.axis_classes_skipped = axis_plan.skipped;
  if (plan.retuned + axis_plan.retuned > 0)
    progress.note(std::to_string(plan.retuned) + " size buckets and " + std::to_string(axis_plan.retuned) +
                  " axis classes were tuned by another version of reduce-tune or of its kernels: tuned again "
                  "(their measurements stay in the database)");
  const std::vector<WorkItem>& work = plan.items;
  const int total = static_cast<int>(work.size() + axis_plan.items.size());
  progress.device_started(result.device, total, result.buckets_already_done + result.axis_classes_already_done);
  auto fill_plan = [&] {
    return plan_axis_fill(options, database, device_id, input_capacity, result.device.sm_count);
  };
  if (total == 0 && fill_plan().items.empty()) {
    result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return result;
  }
  if (!work.empty()) {

    // Each buffer holds the largest interior size of any bucket (plus the offset checks),
    // and at least 8x L2 so that mid-size inputs rotate through disjoint slices.
    std::uint64_t buffer_bytes = 0;
    for (const auto& w : work) {
      const auto capacity = input_capacity / size_of(w.types.in);
      std::uint64_t largest = w.n;
      for (auto s : interior_sizes(w.n, capacity - 64)) largest = std::max(largest, s);
      buffer_bytes = std::max(buffer_bytes, (largest + 64) * size_of(w.types.in));
    }
    buffer_bytes = std::min<std::uint64_t>(
        std::max<std::uint64_t>(buffer_bytes, 8 * static_cast<std::uint64_t>(std::max<std::int64_t>(result.device.l2_bytes, 1 << 20))),
        input_capacity);
    DataBuffer exact{DeviceBuffer(buffer_bytes), buffer_bytes, {}};
    DataBuffer second{DeviceBuffer(buffer_bytes), buffer_bytes, {}};
    References references;

    std::map<std::pair<Op, DType>, std::unique_ptr<SearchSpace>> spaces;
    std::map<std::tuple<Op, DType, int>, std::vector<ReduceConfig>> run_winners;
    // Deterministic winners of this run by (element size, bucket): a problem whose sibling
    // (another op or dtype of the same element size) won this bucket starts from that
    // winner with half the budget; memory-bound reductions of one element size behave alike.
    std::map<std::pair<std::size_t, int>, std::vector<ReduceConfig>> sibling_winners;
    double tuned_seconds = 0;

    // The part of a bucket's search request known before the run: the budget, one random
    // seed per problem (the random starting points are the same configs in every bucket,
    // compiled once), and the seeds every bucket of the problem starts from.
    auto base_request = [&](const WorkItem& w) {
      SearchRequest request;
      request.kind = options.search;
      request.max_evaluations = options.budget.evaluations_per_bucket;
      request.rng_seed =
          std::hash<std::string>{}(result.device.uuid + to_string(db::ProblemClass{w.op, w.types.in, w.types.out, {}}));
      request.seeds.push_back(builtin_default_config(w.op, w.types, result.device.arch()));
      for (const auto& c : portfolio_seeds(w.op, w.types, result.device.arch())) request.seeds.push_back(c);
      for (Strategy s : kAllStrategies)
        request.seeds.push_back(default_config_for(s, w.op, w.types, result.device.arch()));
      return request;
    };
    // Every problem's starting points compile in the background from the start, in the
    // order the problems come: a problem's first (largest) bucket then finds them compiled
    // instead of waiting for NVRTC while the GPU idles.
    if (options.search == SearchKind::local) {
      std::set<std::pair<Op, DType>> queued;
      for (const auto& w : work) {
        if (!queued.insert({w.op, w.types.in}).second) continue;
        auto& space = spaces[{w.op, w.types.in}];
        if (!space) space = std::make_unique<SearchSpace>(w.op, w.types, device.limits());
        for (const auto& c : starting_points(*space, base_request(w))) device.compile_async(KernelSpec{w.op, w.types, c});
      }
    }

    auto prepare_references = [&](const WorkItem& w) {
      const std::vector<std::uint64_t> interior = interior_sizes(w.n, buffer_bytes / size_of(w.types.in) - 64);
      const verify::FillKind kind = verify::exact_fill(w.op);
      std::vector<std::pair<std::uint64_t, std::uint64_t>> exact_ranges = {{0, w.n}}, second_ranges = {{0, w.n}};
      if (w.n > 8) exact_ranges.emplace_back(3, w.n - 2);
      if (w.n > 8) second_ranges.emplace_back(3, w.n - 2);
      for (auto s : interior) exact_ranges.emplace_back(0, s);
      references.prepare(w.op, w.types, kind, kExactSeed, exact_ranges);
      if (verify::has_rounding_set(w.op, w.types))
        references.prepare(w.op, w.types, verify::FillKind::rounding, kSecondSeed, {{0, w.n}});
      if (const auto twin = verify::coverage_twin(w.op, w.types))  // the coverage twins' sums
        references.prepare(Op::sum, *twin, verify::FillKind::sum, kSecondSeed, second_ranges);
    };

    for (std::size_t index = 0; index < work.size(); ++index) {
      if (interrupt.load()) {
        result.interrupted = true;
        break;
      }
      const auto bucket_started = Clock::now();
      const PhaseSeconds phases_before = result.phases;
      const WorkItem& w = work[index];
      const DType dtype = w.types.in;
      const int bucket = size_bucket(w.n);
      const db::ProblemClass problem{w.op, w.types.in, w.types.out, {}};
      const ReduceConfig builtin = builtin_default_config(w.op, w.types, result.device.arch());
      const std::vector<std::uint64_t> interior = interior_sizes(w.n, buffer_bytes / size_of(dtype) - 64);

      // References of every check this bucket and the next will run, started now: the
      // host computes them while the GPU works (a bucket's own were started by the one
      // before it, so the largest wait least).
      prepare_references(w);
      if (index + 1 < work.size()) prepare_references(work[index + 1]);

      auto& space = spaces[{w.op, dtype}];
      if (!space) space = std::make_unique<SearchSpace>(w.op, w.types, device.limits());

      SearchRequest request = base_request(w);
      // From 2^26 up every good config is bound by memory bandwidth and they differ by a
      // percent or two: half the budget finds the best of them.
      if (w.n >= (std::uint64_t{1} << 26) && request.max_evaluations > 0)
        request.max_evaluations = std::max(16, request.max_evaluations / 2);
      std::vector<ReduceConfig> previous;
      for (const auto& winner : database.winners_for_device(device_id))
        if (winner.problem == problem && std::abs(winner.bucket - bucket) <= 1) {
          request.seeds.push_back(winner.config);
          if (winner.bucket == bucket) previous.push_back(winner.config);
        }
      for (int b : {bucket - 1, bucket + 1}) {
        auto it = run_winners.find({w.op, dtype, b});
        if (it != run_winners.end()) request.seeds.insert(request.seeds.end(), it->second.begin(), it->second.end());
      }
      const auto siblings = sibling_winners.find({size_of(dtype), bucket});
      if (siblings != sibling_winners.end() && request.max_evaluations > 0) {
        request.seeds.insert(request.seeds.begin(), siblings->second.begin(), siblings->second.end());
        request.max_evaluations = std::max(16, request.max_evaluations / 2);
      }
      const std::vector<ReduceConfig> static_seeds = base_request(w).seeds;
      request.seeds.insert(request.seeds.end(), static_seeds.begin(), static_seeds.end());

      Clock::time_point deadline = Clock::time_point::max();
      if (options.budget.seconds > 0) {
        const double left = options.budget.seconds - std::chrono::duration<double>(Clock::now() - started).count();
        deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                      std::max(left, 0.0) / static_cast<double>(work.size() - index)));
      }

      BucketReport report;
      report.device_name = result.device.name;
      report.problem = problem;
      report.n = w.n;
      report.index = static_cast<int>(index) + 1;
      report.total = static_cast<int>(work.size());
      BucketRunner runner(device, references, result.phases, w.op, w.types, w.n, exact, second, result.device.l2_bytes,
                          deadline, interrupt, [&](const db::Measurement& m) {
                            if (m.problem.n != w.n) return;
                            ++report.candidates;
                            if (m.status != db::MeasurementStatus::ok) ++report.failed;
                            else if (!report.winner || m.median_ms < report.winner_ms) {
                              report.winner = m.config;
                              report.winner_ms = m.median_ms;
                              report.winner_gbps = m.gbps;
                            }
                            progress.candidate_finished(report);
                          });
      const SearchResult search = run_search(*space, request, runner);
      if (search.stopped && interrupt.load()) {
        result.interrupted = true;
        break;  // the bucket in flight is not stored
      }
      if (!runner.measurement_at(builtin, w.n) && !check_config(KernelSpec{w.op, w.types, builtin}, device.limits()))
        runner.run(builtin, w.n, true);
      runner.settle();

      // The finalists of each class hold across the bucket: their coverage twins, then
      // every interior size.
      std::vector<ReduceConfig> finalists;
      for (bool deterministic : {true, false})
        for (const auto& c : pick_finalists(runner.measurements(), w.op, w.types, w.n, deterministic, previous, builtin))
          finalists.push_back(c);
      // The finalists' coverage twins compile first, then the runtime's variants of
      // whichever finalist wins (the mean a float sum serves), meanwhile.
      runner.prefetch_coverage(finalists);
      {
        std::vector<KernelSpec> variants;
        for (const auto& c : finalists)
          for (const auto& spec : runtime_specs(problem, c)) variants.push_back(spec);
        device.compile_all(variants, DeviceState::Urgency::soon);
      }
      for (const auto& c : finalists) {
        if (interrupt.load()) break;
        runner.complete_checks(c);
        runner.check_coverage(c);
        for (auto s : interior) runner.run(c, s, false);
      }
      runner.settle();
      if (interrupt.load()) {
        result.interrupted = true;
        break;
      }

      db::BucketResult stored;
      stored.device = result.device;
      stored.problem = problem;
      stored.bucket = bucket;
      stored.measurements = runner.measurements();
      stored.winners = choose_winners(stored.measurements, w.op, w.types, w.n, previous, builtin, result.device.sm_count);
      stored.tool_version = tool_version_string();
      stored.created_at = db::now_timestamp();
      {
        PhaseTimer timer(result.phases.store);
        // With keep_all_binaries everything compiled so far (a --fresh rerun then
        // compiles nothing); otherwise the finalists' and the winners' runtime kernels.
        std::set<std::string> keep = {device.fill_key()};
        for (const auto& c : finalists) keep.insert(device.binary_key(KernelSpec{w.op, w.types, c}));
        // What the runtime will load for the winners, and would for any other finalist
        // that wins a rerun (the mean served by a float sum's winner is compiled here, so
        // that no call compiles).
        std::vector<ReduceConfig> servers = finalists;
        for (const auto& winner : stored.winners) servers.push_back(stored.measurements[winner.measurement_index].config);
        for (const auto& config : servers)
          for (const auto& spec : runtime_specs(problem, config)) {
            try {
              device.kernels(spec);
              keep.insert(device.binary_key(spec));
            } catch (const NvrtcError&) {
              // The winner's own kernel compiled; a variant that does not leaves the runtime
              // to report it at its first call.
            }
          }
        result.binaries_stored += options.keep_all_binaries ? device.store().keep_all() : device.store().keep(keep);
        database.store_bucket(stored);
      }

      ++result.buckets_tuned;
      result.candidates += report.candidates;
      result.failed_candidates += report.failed;
      auto& mine = run_winners[{w.op, dtype, bucket}];
      for (const auto& winner : stored.winners) mine.push_back(stored.measurements[winner.measurement_index].config);
      for (const auto& winner : stored.winners)
        if (winner.determinism == db::Determinism::deterministic) {
          const auto& m = stored.measurements[winner.measurement_index];
          auto& siblings_here = sibling_winners[{size_of(dtype), bucket}];
          if (std::find(siblings_here.begin(), siblings_here.end(), m.config) == siblings_here.end())
            siblings_here.push_back(m.config);
          report.winner = m.config;
          report.winner_ms = m.median_ms;
          report.winner_gbps = m.gbps;
        }
      report.seconds = std::chrono::duration<double>(Clock::now() - bucket_started).count();
      report.phases = result.phases - phases_before;
      tuned_seconds += report.seconds;
      report.eta_seconds = tuned_seconds / static_cast<double>(index + 1) * static_cast<double>(work.size() - index - 1);
      progress.bucket_finished(report);
    }
  }  // flat buckets
  if (!result.interrupted)
    tune_axis_classes(device, database, device_id, axis_plan, options, progress, interrupt, result,
                      static_cast<int>(work.size()), total);
  if (!result.interrupted) {
    // The classes between tuned ones, planned from what the database holds now.
    const AxisWorkPlan fill = fill_plan();
    if (!fill.items.empty()) {
      const int count = static_cast<int>(fill.items.size());
      progress.note(axis_fill_note(fill));
      tune_axis_classes(device, database, device_id, fill, options, progress, interrupt, result, 0, count);
    }
  }
  if (options.keep_all_binaries && result.buckets_tuned + result.axis_classes_tuned + result.axis_classes_filled > 0) {
    PhaseTimer timer(result.phases.store);
    device.finish_compiles();
    result.binaries_stored += device.store().keep_all();
  }
  result.compiles = device.cache().stats();
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return result;
}

struct CandidateChecker::Impl {
  explicit Impl(int device_ordinal) : ordinal(device_ordinal), key(select(ordinal)), device(key, std::nullopt) {}
  static DeviceKey select(int ordinal) {
    DeviceKey key = query_device(ordinal);
    RT_CUDA_CHECK(cudaSetDevice(ordinal));
    return key;
  }
  int ordinal;
  DeviceKey key;
  DeviceState device;
  References references;
  PhaseSeconds phases;
  DataBuffer exact, second;

  // Buffers for n elements of `dtype` and the offset checks.
  void reserve(std::uint64_t bytes) {
    for (DataBuffer* b : {&exact, &second})
      if (b->bytes < bytes) *b = DataBuffer{DeviceBuffer(bytes), bytes, {}};
  }
};

CandidateChecker::CandidateChecker(int ordinal) : impl_(std::make_unique<Impl>(ordinal)) {}
CandidateChecker::~CandidateChecker() = default;

std::string CandidateChecker::check(const KernelSpec& spec, std::uint64_t n, const std::vector<std::string>& options) {
  Impl& d = *impl_;
  RT_CUDA_CHECK(cudaSetDevice(d.ordinal));
  d.reserve((n + 64) * size_of(spec.types.in));
  std::atomic<bool> never{false};
  BucketRunner runner(d.device, d.references, d.phases, spec.op, spec.types, n, d.exact, d.second, d.key.l2_bytes,
                      Clock::time_point::max(), never, [](const db::Measurement&) {}, options);
  runner.run(spec.config, n, true, /*timed=*/false);
  runner.check_coverage(spec.config);
  runner.settle();
  for (const auto& m : runner.measurements())
    if (m.status != db::MeasurementStatus::ok)
      return std::string(db::to_string(m.status)) + ": " + (m.detail.empty() ? "(no detail)" : m.detail);
  return {};
}

}  // namespace reduce_tune::tuner
