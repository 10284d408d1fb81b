#include "reduce_tune/tuner/tuner.h"
#include "reduce_tune/tuner/tuner_kernels.h"
#include "reduce_tune/engine/kernel_sources.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/engine/kernel_set.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/runtime/database_binary_store.h"
#include "reduce_tune/error.h"
#include "reduce_tune/engine/search_space.h"
#include "reduce_tune/tuner/measure.h"
#include "reduce_tune/tuner/reference.h"
#include "reduce_tune/tuner/search.h"
#include "reduce_tune/tuner/thread_pool.h"

#ifndef REDUCE_TUNE_VERSION
#define REDUCE_TUNE_VERSION "0.0.0"
#endif

namespace reduce_tune::tuner {

std::string tool_version_string() { return "reduce-tune " REDUCE_TUNE_VERSION; }

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kDataSeed = 0x5eed;
constexpr std::uint64_t kPoison = 0xa5a5a5a5a5a5a5a5ull;

// Errors after which the context is unusable: the device run must end.
bool is_sticky(int code) {
  switch (static_cast<cudaError_t>(code)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

std::string first_lines(const std::string& text, int lines = 3) {
  std::istringstream is(text);
  std::string line, out;
  for (int i = 0; i < lines && std::getline(is, line);)
    if (!line.empty()) {
      out += (out.empty() ? "" : " | ") + line;
      ++i;
    }
  return out.substr(0, 400);
}

std::uint64_t longest_chain(const KernelSpec& spec, const LaunchPlan& plan, std::uint64_t n) {
  const std::uint64_t threads = static_cast<std::uint64_t>(plan.grid) * plan.block;
  const std::uint64_t per_thread = (n + threads - 1) / threads + 2;
  const std::uint64_t across = spec.config.passes == Passes::single_pass_atomic
                                   ? plan.grid
                                   : (plan.grid + plan.block - 1) / plan.block;
  return per_thread + across + 2 * 11 + 16;
}

// Per-device state shared by the buckets: compiler, caches, buffers, stream.
class DeviceState {
 public:
  DeviceState(const DeviceKey& key, const std::filesystem::path& db_path)
      : key_(key),
        store_database_(db::Database::open(db_path)),
        store_(&store_database_),
        cache_(compiler_, &store_),
        pool_(std::max(2u, std::thread::hardware_concurrency())) {
    limits_.arch = key.arch();
    limits_.sm_count = key.sm_count;
    int max_threads = 0;
    RT_CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerBlock, 0));
    limits_.max_threads_per_block = max_threads;
    out_ = DeviceBuffer(8);
  }

  const DeviceKey& key() const { return key_; }
  const DeviceLimits& limits() const { return limits_; }
  BinaryCache& cache() { return cache_; }
  Stream& stream() { return stream_; }
  void* out() { return out_.get(); }

  void compile_async(const KernelSpec& spec) {
    std::lock_guard lock(mutex_);
    const std::string k = to_string(spec);
    if (kernels_.count(k)) return;
    const int arch = key_.arch();
    kernels_[k].compiled = pool_.submit([this, spec, arch] {
      const std::vector<KernelSpec> one = {spec};
      return cache_.get(make_compile_request(one, arch));
    });
  }

  // Compiled and loaded kernels of a spec; throws NvrtcError or CudaError.
  const KernelHandles& kernels(const KernelSpec& spec) {
    compile_async(spec);
    Entry* entry;
    {
      std::lock_guard lock(mutex_);
      entry = &kernels_[to_string(spec)];
    }
    if (!entry->loaded) entry->loaded = std::make_unique<KernelSet>(entry->compiled.get(), 1);
    return entry->loaded->handles(0);
  }

  // A workspace holding at least `partial_bytes` of partials, header initialised.
  WorkspaceView workspace(std::size_t partial_bytes) {
    if (!workspace_.get() || workspace_.size() < kWorkspaceHeaderBytes + partial_bytes) {
      RT_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
      workspace_ = DeviceBuffer(kWorkspaceHeaderBytes + std::max<std::size_t>(partial_bytes, 1 << 20));
      unsigned char header[kWorkspaceHeaderBytes];
      make_workspace_header_image(header);
      RT_CUDA_CHECK(cudaMemcpy(workspace_.get(), header, sizeof(header), cudaMemcpyHostToDevice));
    }
    return workspace_view(workspace_.get(), workspace_.size());
  }

  // Fills `elements` of `buffer` with hashed data of the given kind.
  void fill(void* buffer, DType dtype, verify::FillKind kind, std::uint64_t elements) {
    if (!fill_program_) {
      CompileRequest request;
      request.source = "#include \"tuner/fill.cuh\"\n";
      const auto templates = kernel_template_sources();
      const auto tuner_files = tuner_kernel_sources();
      request.headers.assign(templates.begin(), templates.end());
      request.headers.insert(request.headers.end(), tuner_files.begin(), tuner_files.end());
      for (DType d : kAllDTypes)
        for (int k = 0; k < 3; ++k)
          request.name_expressions.push_back("rt::fill_kernel<" + std::string(cuda_type_name(d)) + ", " +
                                             std::to_string(k) + ">");
      request.arch = key_.arch();
      fill_program_ = cache_.get(request);
      fill_library_ = std::make_unique<LoadedLibrary>(fill_program_->cubin);
    }
    const std::size_t index = static_cast<std::size_t>(dtype) * 3 + static_cast<std::size_t>(kind);
    const cudaKernel_t kernel = fill_library_->kernel(fill_program_->lowered_names.at(index));
    std::uint64_t n = elements, seed = kDataSeed;
    void* args[] = {&buffer, &n, &seed};
    CudaLauncher().launch(reinterpret_cast<const void*>(kernel), static_cast<std::uint32_t>(key_.sm_count * 8), 256,
                          stream_.get(), args);
    RT_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

 private:
  struct Entry {
    std::shared_future<std::shared_ptr<const CompiledProgram>> compiled;
    std::unique_ptr<KernelSet> loaded;
  };
  DeviceKey key_;
  DeviceLimits limits_;
  NvrtcCompiler compiler_;
  // The binary store's own connection: compile threads store binaries while the tuning
  // flow holds a bucket's transaction on the main connection.
  db::Database store_database_;
  DatabaseBinaryStore store_;
  BinaryCache cache_;
  Stream stream_;
  DeviceBuffer out_;
  DeviceBuffer workspace_;
  std::shared_ptr<const CompiledProgram> fill_program_;
  std::unique_ptr<LoadedLibrary> fill_library_;
  std::mutex mutex_;
  std::map<std::string, Entry> kernels_;
  ThreadPool pool_;  // last: joined first, while the members its jobs use still exist
};

struct Check {
  std::uint64_t offset;
  std::uint64_t n;
  verify::Expected expected;
};

// Compiles, verifies and times candidates of one bucket, recording every outcome.
class GpuEvaluator final : public Evaluator {
 public:
  GpuEvaluator(DeviceState& device, Op op, const TypeRule& types, std::uint64_t n, const unsigned char* input,
               std::uint64_t slice_stride, int rotations, std::vector<Check> checks, Clock::time_point deadline,
               const std::atomic<bool>& interrupt, std::function<void(const db::Measurement&)> on_result)
      : device_(device), op_(op), types_(types), n_(n), input_(input), slice_stride_(slice_stride),
        rotations_(rotations), checks_(std::move(checks)), deadline_(deadline), interrupt_(interrupt),
        on_result_(std::move(on_result)) {}

  void prefetch(std::span<const ReduceConfig> configs) override {
    for (const auto& c : configs) device_.compile_async(KernelSpec{op_, types_, c});
  }
  bool should_stop() override { return interrupt_.load() || Clock::now() >= deadline_; }

  std::optional<double> evaluate(const ReduceConfig& config) override {
    const KernelSpec spec{op_, types_, config};
    db::Measurement m;
    m.problem = ProblemKey{op_, types_.in, types_.out, {}, n_};
    m.config = config;
    m.tool_version = tool_version_string();
    m.created_at = db::now_timestamp();
    m.median_ms = m.spread = m.gbps = std::numeric_limits<double>::quiet_NaN();
    auto fail = [&](db::MeasurementStatus status, std::string detail) -> std::optional<double> {
      m.status = status;
      m.detail = std::move(detail);
      measurements_.push_back(m);
      on_result_(m);
      return std::nullopt;
    };
    const KernelHandles* kernels = nullptr;
    try {
      kernels = &device_.kernels(spec);
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

    const LaunchPlan plan = plan_launch(spec, n_, device_.key().sm_count);
    const WorkspaceView workspace = device_.workspace(plan.partial_count * size_of(types_.acc));
    CudaLauncher launcher;
    cudaStream_t stream = device_.stream().get();
    try {
      for (const Check& check : checks_) {
        const std::uint64_t poison = check.expected.bits == kPoison ? ~kPoison : kPoison;
        RT_CUDA_CHECK(cudaMemcpyAsync(device_.out(), &poison, 8, cudaMemcpyHostToDevice, stream));
        const LaunchPlan check_plan = plan_launch(spec, check.n, device_.key().sm_count);
        enqueue_reduction(launcher, *kernels, spec, check_plan, workspace,
                          input_ + check.offset * size_of(types_.in), check.n, device_.out(), stream);
        std::uint64_t got = 0;
        RT_CUDA_CHECK(cudaMemcpyAsync(&got, device_.out(), size_of(types_.out), cudaMemcpyDeviceToHost, stream));
        RT_CUDA_CHECK(cudaStreamSynchronize(stream));
        const std::string diff =
            verify::compare_result(types_, got, check.expected, longest_chain(spec, check_plan, check.n));
        if (!diff.empty())
          return fail(db::MeasurementStatus::wrong_result, "n=" + std::to_string(check.n) + " offset=" +
                                                               std::to_string(check.offset) + ": " + diff);
      }
      const TimingResult t = time_reduction(
          [&](int slice) {
            enqueue_reduction(launcher, *kernels, spec, plan, workspace,
                              input_ + static_cast<std::uint64_t>(slice) * slice_stride_ * size_of(types_.in), n_,
                              device_.out(), stream);
          },
          rotations_, stream);
      m.status = db::MeasurementStatus::ok;
      m.median_ms = t.median_ms;
      m.spread = t.spread;
      m.repetitions = t.repetitions;
      m.gbps = static_cast<double>(n_ * size_of(types_.in)) / (t.median_ms * 1e6);
      measurements_.push_back(m);
      on_result_(m);
      return t.median_ms;
    } catch (const CudaError& e) {
      if (is_sticky(e.code())) throw;
      cudaGetLastError();
      return fail(db::MeasurementStatus::launch_failed, e.what());
    }
  }

  const std::vector<db::Measurement>& measurements() const { return measurements_; }

 private:
  DeviceState& device_;
  Op op_;
  TypeRule types_;
  std::uint64_t n_;
  const unsigned char* input_;
  std::uint64_t slice_stride_;
  int rotations_;
  std::vector<Check> checks_;
  Clock::time_point deadline_;
  const std::atomic<bool>& interrupt_;
  std::function<void(const db::Measurement&)> on_result_;
  std::vector<db::Measurement> measurements_;
};


}  // namespace

WorkPlan plan_tuning_work(const TuneOptions& options, const db::Database& database, db::RowId device_id,
                          std::uint64_t input_capacity, Progress& progress) {
  WorkPlan plan;
  // Largest first: large sizes have clear, stable optima, whose winners then seed the
  // smaller buckets (neighbouring winners are local search's first starting points).
  std::vector<std::uint64_t> sizes = options.sizes.empty() ? default_sizes() : options.sizes;
  std::sort(sizes.rbegin(), sizes.rend());
  for (Op op : options.ops)
    for (DType dtype : options.dtypes) {
      const TypeRule types = *resolve_types(op, dtype, default_out_dtype(op, dtype)).rule;
      const db::ProblemClass problem{op, types.in, types.out, {}};
      const auto done = database.tuned_buckets(device_id, problem);
      for (std::uint64_t n : sizes) {
        if (!options.fresh && std::find(done.begin(), done.end(), size_bucket(n)) != done.end()) {
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
      }
    }
  return plan;
}

double noise_band(double median_ms, double spread) {
  // Below ~10 us a call is bounded by the launch rate and run-to-run variation exceeds
  // the within-run spread; elsewhere 1% (or twice the measured spread).
  const double floor = median_ms < 0.010 ? 0.03 : 0.01;
  return std::max(floor, 2 * spread);
}

std::vector<db::BucketWinner> choose_winners(const std::vector<db::Measurement>& ms, Op op, const TypeRule& types,
                                             const std::vector<ReduceConfig>& previous, int sm_count) {
  // Simpler first: fewer launches, no cross-block hand-off, fewer blocks, then the
  // canonical text (a stable total order).
  auto simplicity = [&](const db::Measurement& m) {
    const KernelSpec spec{op, types, m.config};
    const LaunchPlan plan = plan_launch(spec, m.problem.n, sm_count);
    return std::make_tuple(plan.finalize ? 2 : 1, plan.uses_ticket ? 1 : 0, plan.grid, to_string(m.config));
  };
  std::vector<db::BucketWinner> winners;
  for (auto cls : {db::Determinism::deterministic, db::Determinism::nondeterministic}) {
    auto in_class = [&](const db::Measurement& m) {
      return m.status == db::MeasurementStatus::ok &&
             is_deterministic(KernelSpec{op, types, m.config}) == (cls == db::Determinism::deterministic);
    };
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < ms.size(); ++i)
      if (in_class(ms[i]) && (!best || ms[i].median_ms < ms[*best].median_ms)) best = i;
    if (!best) continue;
    const double limit = ms[*best].median_ms * (1.0 + noise_band(ms[*best].median_ms, ms[*best].spread));
    std::optional<std::size_t> chosen_previous, chosen_simplest;
    for (std::size_t i = 0; i < ms.size(); ++i) {
      if (!in_class(ms[i]) || ms[i].median_ms > limit) continue;
      if (!chosen_previous && std::find(previous.begin(), previous.end(), ms[i].config) != previous.end())
        chosen_previous = i;
      if (!chosen_simplest || simplicity(ms[i]) < simplicity(ms[*chosen_simplest])) chosen_simplest = i;
    }
    winners.push_back({cls, chosen_previous ? *chosen_previous : *chosen_simplest});
  }
  return winners;
}


DeviceTuneResult tune_device(int ordinal, const TuneOptions& options, const std::filesystem::path& db_path,
                             Progress& progress, const std::atomic<bool>& interrupt) {
  const auto started = Clock::now();
  DeviceTuneResult result;
  result.device = query_device(ordinal);
  RT_CUDA_CHECK(cudaSetDevice(ordinal));
  db::Database database = db::Database::open(db_path);
  const db::RowId device_id = database.upsert_device(result.device);
  DeviceState device(result.device, db_path);

  std::size_t free_bytes = 0, total_bytes = 0;
  RT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  // Keep room for workspaces, kernels and other processes.
  const std::uint64_t input_capacity =
      free_bytes > (3ull << 30) ? static_cast<std::uint64_t>(free_bytes * 0.8) - (2ull << 30) : free_bytes / 2;

  WorkPlan plan = plan_tuning_work(options, database, device_id, input_capacity, progress);
  result.buckets_already_done = plan.already_done;
  result.buckets_skipped = plan.skipped;
  const std::vector<WorkItem>& work = plan.items;
  progress.device_started(result.device, static_cast<int>(work.size()), result.buckets_already_done);
  if (work.empty()) {
    result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    return result;
  }

  std::uint64_t buffer_bytes = 0;
  for (const auto& w : work) buffer_bytes = std::max(buffer_bytes, w.n * size_of(w.types.in));
  // Room for rotating slices of mid-size inputs (see measure.h).
  buffer_bytes = std::min<std::uint64_t>(std::max<std::uint64_t>(buffer_bytes, 8 * static_cast<std::uint64_t>(
                                                                                     std::max<std::int64_t>(result.device.l2_bytes, 1 << 20))),
                                         input_capacity);
  DeviceBuffer input(buffer_bytes + 64);
  std::optional<std::pair<DType, verify::FillKind>> filled;

  std::map<std::pair<Op, DType>, std::unique_ptr<SearchSpace>> spaces;
  std::map<std::tuple<Op, DType, int>, std::vector<ReduceConfig>> run_winners;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  double tuned_seconds = 0;

  for (std::size_t index = 0; index < work.size(); ++index) {
    if (interrupt.load()) {
      result.interrupted = true;
      break;
    }
    const auto bucket_started = Clock::now();
    const WorkItem& w = work[index];
    const DType dtype = w.types.in;
    const verify::FillKind kind = verify::fill_kind(w.op);
    const std::uint64_t elements = buffer_bytes / size_of(dtype);
    if (!filled || filled->first != dtype || filled->second != kind) {
      device.fill(input.get(), dtype, kind, elements);
      filled = {dtype, kind};
    }
    const int bucket = size_bucket(w.n);
    const db::ProblemClass problem{w.op, w.types.in, w.types.out, {}};

    std::vector<Check> checks;
    checks.push_back({0, w.n, verify::reference_reduce_hashed(w.op, w.types, kDataSeed, 0, w.n, threads)});
    if (w.n >= 2 && w.n <= (1u << 24))
      checks.push_back({1, w.n - 1, verify::reference_reduce_hashed(w.op, w.types, kDataSeed, 1, w.n - 1, threads)});
    const std::uint64_t stride = (w.n + 31) / 32 * 32;
    const int rotations = rotation_count(stride * size_of(dtype), result.device.l2_bytes, elements * size_of(dtype));

    auto& space = spaces[{w.op, dtype}];
    if (!space) space = std::make_unique<SearchSpace>(w.op, w.types, device.limits());

    SearchRequest request;
    request.kind = options.search;
    request.max_evaluations = options.budget.evaluations_per_bucket;
    request.rng_seed = std::hash<std::string>{}(result.device.uuid + to_string(problem)) + static_cast<std::uint64_t>(bucket);
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
    for (const auto& c : portfolio_seeds(w.op, w.types, result.device.arch())) request.seeds.push_back(c);
    for (Strategy s : kAllStrategies) request.seeds.push_back(default_config_for(s, w.op, w.types, result.device.arch()));

    Clock::time_point deadline = Clock::time_point::max();
    if (options.budget.seconds > 0) {
      const double left = options.budget.seconds - std::chrono::duration<double>(Clock::now() - started).count();
      deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(std::max(left, 0.0) / static_cast<double>(work.size() - index)));
    }

    BucketReport report;
    report.device_name = result.device.name;
    report.problem = problem;
    report.n = w.n;
    report.index = static_cast<int>(index) + 1;
    report.total = static_cast<int>(work.size());
    GpuEvaluator evaluator(device, w.op, w.types, w.n, static_cast<const unsigned char*>(input.get()), stride, rotations,
                           std::move(checks), deadline, interrupt, [&](const db::Measurement& m) {
                             ++report.candidates;
                             if (m.status != db::MeasurementStatus::ok) ++report.failed;
                             else if (!report.winner || m.median_ms < report.winner_ms) {
                               report.winner = m.config;
                               report.winner_ms = m.median_ms;
                               report.winner_gbps = m.gbps;
                             }
                             progress.candidate_finished(report);
                           });
    const SearchResult search = run_search(*space, request, evaluator);
    if (search.stopped && interrupt.load()) {
      result.interrupted = true;
      break;  // the bucket in flight is not stored
    }

    db::BucketResult stored;
    stored.device = result.device;
    stored.problem = problem;
    stored.bucket = bucket;
    stored.measurements = evaluator.measurements();
    stored.winners = choose_winners(stored.measurements, w.op, w.types, previous, result.device.sm_count);
    stored.tool_version = tool_version_string();
    stored.created_at = db::now_timestamp();
    database.store_bucket(stored);

    ++result.buckets_tuned;
    result.candidates += report.candidates;
    result.failed_candidates += report.failed;
    auto& mine = run_winners[{w.op, dtype, bucket}];
    for (const auto& winner : stored.winners) mine.push_back(stored.measurements[winner.measurement_index].config);
    for (const auto& winner : stored.winners)
      if (winner.determinism == db::Determinism::deterministic) {
        const auto& m = stored.measurements[winner.measurement_index];
        report.winner = m.config;
        report.winner_ms = m.median_ms;
        report.winner_gbps = m.gbps;
      }
    report.seconds = std::chrono::duration<double>(Clock::now() - bucket_started).count();
    tuned_seconds += report.seconds;
    report.eta_seconds = tuned_seconds / static_cast<double>(index + 1) * static_cast<double>(work.size() - index - 1);
    progress.bucket_finished(report);
  }
  result.compiles = device.cache().stats();
  result.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return result;
}

}  // namespace reduce_tune::tuner
