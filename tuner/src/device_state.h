// The tuning run's per-device machinery, shared by the flat buckets (tuner.cpp) and
// the axis classes (axis_tuner.cpp): the compiler pool and binary caches, the stream,
// the workspace and the hashed test data. Internal to the tuner library.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "reduce_tune/db/database.h"
#include "reduce_tune/engine/binary_cache.h"
#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/engine/kernel_set.h"
#include "reduce_tune/engine/kernel_sources.h"
#include "reduce_tune/engine/kernel_spec.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/engine/search_space.h"
#include "reduce_tune/runtime/database_binary_store.h"
#include "reduce_tune/tuner/reference.h"
#include "reduce_tune/tuner/thread_pool.h"
#include "reduce_tune/tuner/tuner_kernels.h"

namespace reduce_tune::tuner::detail {

using Clock = std::chrono::steady_clock;

// Errors after which the context is unusable: the device run must end.
inline bool is_sticky(int code) {
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

inline std::string first_lines(const std::string& text, int lines = 3) {
  std::istringstream is(text);
  std::string line, out;
  for (int i = 0; i < lines && std::getline(is, line);)
    if (!line.empty()) {
      out += (out.empty() ? "" : " | ") + line;
      ++i;
    }
  return out.substr(0, 400);
}

// Adds the wall time of its scope to a phase counter.

class PhaseTimer {
 public:
  explicit PhaseTimer(double& total) : total_(total), start_(Clock::now()) {}
  ~PhaseTimer() { total_ += std::chrono::duration<double>(Clock::now() - start_).count(); }
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;

 private:
  double& total_;
  Clock::time_point start_;
};

// Binaries compiled in this run wait in memory until their bucket is stored; then the
// database gets all of them (compressed, so that a --fresh rerun compiles nothing), or
// with keep_all_binaries off those of the winners and finalists only. Reading goes to
// memory first, then to the database.
class DeferredBinaryStore final : public BinaryStore {
 public:
  explicit DeferredBinaryStore(DatabaseBinaryStore& database) : database_(database) {}
  std::optional<std::vector<char>> load(const std::string& key) override {
    {
      std::lock_guard lock(mutex_);
      auto it = pending_.find(key);
      if (it != pending_.end()) return it->second.blob;
    }
    return database_.load(key);  // a store over no database loads nothing
  }
  void store(const std::string& key, int arch, const std::string& compiler_version,
             const std::vector<char>& blob) override {
    std::lock_guard lock(mutex_);
    pending_[key] = Pending{arch, compiler_version, blob};
  }
  // Writes every binary compiled in this run and not yet written (speculative compiles
  // included: a rerun prefetches the same configs); returns how many.
  int keep_all() {
    std::set<std::string> keys;
    {
      std::lock_guard lock(mutex_);
      for (const auto& entry : pending_) keys.insert(entry.first);
    }
    return keep(keys);
  }
  // Writes the binaries of `keys` compiled in this run (each once, all in one
  // transaction); returns how many.
  int keep(const std::set<std::string>& keys) {
    std::vector<DatabaseBinaryStore::Entry> entries;
    std::lock_guard lock(mutex_);
    for (const auto& key : keys) {
      auto it = pending_.find(key);
      if (it == pending_.end() || kept_.count(key)) continue;
      entries.push_back({key, it->second.arch, it->second.version, &it->second.blob});
    }
    database_.store_many(entries);  // pending_ entries never move or go away
    for (const auto& e : entries) kept_.insert(e.key);
    return static_cast<int>(entries.size());
  }

 private:
  struct Pending {
    int arch = 0;
    std::string version;
    std::vector<char> blob;
  };
  DatabaseBinaryStore& database_;
  std::mutex mutex_;
  std::map<std::string, Pending> pending_;
  std::set<std::string> kept_;
};

// Per-device state shared by the buckets: compiler, caches, workspace, stream, the
// test-data generator.
class DeviceState {
 public:
  // Without a database path, binaries live in this process only.
  DeviceState(const DeviceKey& key, const std::optional<std::filesystem::path>& db_path)
      : key_(key),
        store_database_(db_path ? std::optional<db::Database>(db::Database::open(*db_path)) : std::nullopt),
        database_store_(store_database_ ? &*store_database_ : nullptr),
        store_(database_store_),
        cache_(compiler_, &store_),
        compile_threads_(std::max(2u, std::thread::hardware_concurrency())),
        pool_(compile_threads_, true) {
    limits_.arch = key.arch();
    limits_.sm_count = key.sm_count;
    int max_threads = 0;
    RT_CUDA_CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerBlock, 0));
    limits_.max_threads_per_block = max_threads;
    out_ = DeviceBuffer(8);
  }

  const DeviceKey& key() const { return key_; }
  const DeviceLimits& limits() const { return limits_; }
  unsigned compile_threads() const { return compile_threads_; }
  BinaryCache& cache() { return cache_; }
  DeferredBinaryStore& store() { return store_; }
  cudaStream_t stream() const { return stream_.get(); }
  void* out() { return out_.get(); }

  // Compiles in the background; `options` are extra NVRTC options (the mutation test's
  // -DRT_MUTATION), part of the program's identity.
  // Compile priorities: what the bucket in hand runs next, before a guess at what it may
  // run after that, before the background (other problems' starting points, variants).
  enum class Urgency : int { background = 0, speculative = 1, soon = 2 };
  void compile_async(const KernelSpec& spec, const std::vector<std::string>& options = {},
                     Urgency urgency = Urgency::background) {
    const int arch = key_.arch();
    enqueue(entry_key(spec, options), urgency, [this, spec, arch, options] {
      const std::vector<KernelSpec> one = {spec};
      CompileRequest request = make_compile_request(one, arch);
      request.extra_options = options;
      return cache_.get(request);
    });
  }
  void compile_all(std::span<const KernelSpec> specs, Urgency urgency, const std::vector<std::string>& options = {}) {
    for (const auto& spec : specs) compile_async(spec, options, urgency);
  }

  // Compiled and loaded kernels of a spec; throws NvrtcError or CudaError.
  const KernelHandles& kernels(const KernelSpec& spec, const std::vector<std::string>& options = {}) {
    compile_async(spec, options);
    return loaded(entry_key(spec, options));
  }

  // Any other program (the axis kernels): compiled in the background under `key`
  // (which must name the request and its options uniquely), loaded on first use as
  // KernelSet loads one spec's program (its main kernel, a finalize kernel where it has
  // one, a twin where it has one).
  void compile_request_async(const std::string& key, const CompileRequest& request,
                             Urgency urgency = Urgency::background) {
    enqueue("request " + key, urgency, [this, request] { return cache_.get(request); });
  }
  const KernelHandles& request_kernels(const std::string& key, const CompileRequest& request) {
    compile_request_async(key, request);
    return loaded("request " + key);
  }
  std::string request_binary_key(const CompileRequest& request) const {
    return binary_cache_key(request, compiler_.version());
  }
  // A one-off program compiled now (and cached), loaded by the caller.
  std::shared_ptr<const CompiledProgram> compile_now(const CompileRequest& request) { return cache_.get(request); }

  // Waits for every compile in flight (a speculative one finishing after the last bucket
  // would otherwise be compiled again by a rerun).
  void finish_compiles() {
    std::vector<std::shared_future<std::shared_ptr<const CompiledProgram>>> futures;
    {
      std::lock_guard lock(mutex_);
      for (const auto& entry : kernels_) futures.push_back(entry.second.job->compiled);
    }
    for (auto& f : futures) {
      try {
        f.wait();
      } catch (...) {
      }
    }
  }

  // The test-data generator's binary-cache key (empty until it was first used).
  const std::string& fill_key() const { return fill_key_; }

  // The binary-cache key of a spec's program.
  std::string binary_key(const KernelSpec& spec) const {
    const std::vector<KernelSpec> one = {spec};
    return binary_cache_key(make_compile_request(one, key_.arch()), compiler_.version());
  }

  // A workspace holding at least `partial_bytes` of partials.
  WorkspaceView workspace(std::size_t partial_bytes) {
    if (!workspace_.holds(partial_bytes)) {
      RT_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
      workspace_ = Workspace(std::max<std::size_t>(partial_bytes, 1 << 20), stream_.get());
    }
    return workspace_.view();
  }

  // Fills `elements` of `buffer` with the hashed data set `kind` of `seed`.
  void fill(void* buffer, DType dtype, verify::FillKind kind, std::uint64_t seed, std::uint64_t elements) {
    constexpr int kKinds = 4;
    if (!fill_program_) {
      CompileRequest request;
      request.source = "#include \"tuner/fill.cuh\"\n";
      const auto templates = kernel_template_sources();
      const auto tuner_files = tuner_kernel_sources();
      request.headers.assign(templates.begin(), templates.end());
      request.headers.insert(request.headers.end(), tuner_files.begin(), tuner_files.end());
      for (DType d : kAllDTypes)
        for (int k = 0; k < kKinds; ++k)
          request.name_expressions.push_back("rt::fill_kernel<" + std::string(cuda_type_name(d)) + ", " +
                                             std::to_string(k) + ">");
      request.arch = key_.arch();
      fill_key_ = binary_cache_key(request, compiler_.version());
      fill_program_ = cache_.get(request);
      fill_library_ = std::make_unique<LoadedLibrary>(fill_program_->cubin);
    }
    const std::size_t index = static_cast<std::size_t>(dtype) * kKinds + static_cast<std::size_t>(kind);
    const cudaKernel_t kernel = fill_library_->kernel(fill_program_->lowered_names.at(index));
    std::uint64_t n = elements;
    void* args[] = {&buffer, &n, &seed};
    CudaLauncher().launch(reinterpret_cast<const void*>(kernel), static_cast<std::uint32_t>(key_.sm_count * 8), 256,
                          stream_.get(), args, StreamOrder::serial);
    RT_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  }

 private:
  // One program's compile. It may be queued more than once (in the background, then
  // sooner; or run by the thread that waits for it); whichever copy runs first compiles.
  struct CompileJob {
    std::function<std::shared_ptr<const CompiledProgram>()> work;
    std::atomic<bool> started{false};
    int priority = 0;  // the highest it was queued at (under the state's mutex)
    std::promise<std::shared_ptr<const CompiledProgram>> promise;
    std::shared_future<std::shared_ptr<const CompiledProgram>> compiled = promise.get_future().share();
    void run() {
      if (started.exchange(true)) return;
      try {
        promise.set_value(work());
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
    }
  };
  struct Entry {
    std::shared_ptr<CompileJob> job;
    std::unique_ptr<KernelSet> loaded;
  };
  void enqueue(const std::string& key, Urgency urgency, std::function<std::shared_ptr<const CompiledProgram>()> work) {
    std::lock_guard lock(mutex_);
    Entry& entry = kernels_[key];
    const int priority = static_cast<int>(urgency);
    if (entry.job) {
      // Already queued lower and no worker has it yet: queued again at this priority.
      if (priority > entry.job->priority && !entry.job->started.load()) {
        entry.job->priority = priority;
        pool_.post([job = entry.job] { job->run(); }, priority);
      }
      return;
    }
    entry.job = std::make_shared<CompileJob>();
    entry.job->work = std::move(work);
    entry.job->priority = priority;
    pool_.post([job = entry.job] { job->run(); }, priority);
  }
  // Waits for the compile of `key` (compiling it on this thread if no worker has it
  // yet: the workers may all be busy with speculative compiles) and loads it on first use.
  const KernelHandles& loaded(const std::string& key) {
    Entry* entry;
    std::shared_ptr<CompileJob> job;
    {
      std::lock_guard lock(mutex_);
      entry = &kernels_[key];
      job = entry->job;
    }
    job->run();  // returns at once if a worker started it
    if (!entry->loaded) entry->loaded = std::make_unique<KernelSet>(job->compiled.get(), 1, key_.arch());
    return entry->loaded->handles(0);
  }
  static std::string entry_key(const KernelSpec& spec, const std::vector<std::string>& options) {
    std::string key = to_string(spec);
    for (const auto& o : options) key.append(" ").append(o);
    return key;
  }
  DeviceKey key_;
  DeviceLimits limits_;
  NvrtcCompiler compiler_;
  // The binary store's own connection: compile threads read binaries while the tuning
  // flow holds a bucket's transaction on the main connection.
  std::optional<db::Database> store_database_;
  DatabaseBinaryStore database_store_;
  DeferredBinaryStore store_;
  BinaryCache cache_;
  Stream stream_;
  DeviceBuffer out_;
  Workspace workspace_;
  std::shared_ptr<const CompiledProgram> fill_program_;
  std::string fill_key_;
  std::unique_ptr<LoadedLibrary> fill_library_;
  std::mutex mutex_;
  std::map<std::string, Entry> kernels_;
  unsigned compile_threads_;
  ThreadPool pool_;  // last: joined first, while the members its jobs use still exist
};

// A device buffer holding one hashed data set at a time, refilled only when another is
// asked for.
struct DataBuffer {
  DeviceBuffer memory;
  std::uint64_t bytes = 0;
  std::optional<std::tuple<DType, verify::FillKind, std::uint64_t>> holds;

  const unsigned char* get(DeviceState& device, DType dtype, verify::FillKind kind, std::uint64_t seed,
                           double& fill_seconds) {
    if (!holds || *holds != std::make_tuple(dtype, kind, seed)) {
      PhaseTimer timer(fill_seconds);
      device.fill(memory.get(), dtype, kind, seed, bytes / size_of(dtype));
      holds = std::make_tuple(dtype, kind, seed);
    }
    return static_cast<const unsigned char*>(memory.get());
  }
};

}  // namespace reduce_tune::tuner::detail
