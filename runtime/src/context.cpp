#include "reduce_tune/context.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>

#include "binary_cache.h"
#include "cuda_api.h"
#include "kernel_set.h"
#include "launch.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/db/paths.h"
#include "reduce_tune/error.h"
#include "selector.h"

namespace reduce_tune {

std::string Explanation::to_string() const {
  std::ostringstream os;
  os << reduce_tune::to_string(problem) << " on " << device << ": " << reduce_tune::to_string(config) << "\n  match: "
     << reduce_tune::to_string(match) << (deterministic ? ", deterministic" : ", not deterministic") << "\n  why: "
     << reason;
  if (measured)
    os << "\n  measured: " << measured->median_ms << " ms (" << measured->gbps << " GB/s) at 2^" << measured->bucket
       << " elements on " << measured->device << " by " << measured->tool_version;
  return os.str();
}

namespace {

// Loads binaries the tuner stored; the runtime never writes to the database.
class ReadOnlyBinaryStore final : public BinaryStore {
 public:
  explicit ReadOnlyBinaryStore(db::Database* database) : database_(database) {}
  std::optional<std::vector<char>> load(const std::string& key) override {
    if (!database_) return std::nullopt;
    std::lock_guard lock(mutex_);
    auto b = database_->find_binary(key);
    if (!b) return std::nullopt;
    std::vector<char> out(b->cubin.size());
    std::memcpy(out.data(), b->cubin.data(), out.size());
    return out;
  }
  void store(const std::string&, int, const std::string&, const std::vector<char>&) override {}

 private:
  db::Database* database_;
  std::mutex mutex_;
};

// The key of a resolved call: everything that decides the kernel and its selection.
struct CallKey {
  Op op;
  DType in, out;
  int bucket;
  bool allow_nondeterministic;
  friend auto operator<=>(const CallKey&, const CallKey&) = default;
};

struct Resolved {
  KernelSpec spec;
  Selection selection;
  KernelHandles handles;
};

}  // namespace

// Everything of one device: its winners, kernels and per-stream workspaces. The mutex
// guards the maps; entries never move once inserted, so a call holds the lock only for
// lookups and the launch itself.
struct DeviceRuntime {
  int ordinal = 0;
  DeviceKey key;
  std::unique_ptr<Selector> selector;
  std::unique_ptr<ReadOnlyBinaryStore> store;
  NvrtcCompiler compiler;
  std::unique_ptr<BinaryCache> cache;
  std::mutex mutex;
  std::map<CallKey, std::unique_ptr<Resolved>> resolved;
  std::map<std::string, std::unique_ptr<KernelSet>> kernel_sets;
  std::map<cudaStream_t, DeviceBuffer> workspaces;
  std::set<std::pair<db::ProblemClass, MatchKind>> logged;
};

struct Context::Impl {
  ContextOptions options;
  std::mutex mutex;  // guards devices and the database handle
  std::optional<db::Database> database;
  bool database_opened = false;
  std::map<int, std::unique_ptr<DeviceRuntime>> devices;

  // Opens the database once; a missing file means defaults, an unusable one is reported
  // once and then also means defaults.
  db::Database* open_database() {
    if (database_opened) return database ? &*database : nullptr;
    database_opened = true;
    std::filesystem::path path;
    try {
      path = options.database ? *options.database : db::default_database_path();
    } catch (const Error& e) {
      log_message(LogLevel::info, std::string("no tuning database location: ") + e.what() + "; using built-in defaults");
      return nullptr;
    }
    try {
      database = db::Database::open_read_only(path);
      if (!database)
        log_message(LogLevel::info, "no tuning database at " + path.string() + "; using built-in defaults");
    } catch (const DbError& e) {
      log_message(LogLevel::error, std::string("tuning database unusable, using built-in defaults: ") + e.what());
      database.reset();
    }
    return database ? &*database : nullptr;
  }

  DeviceRuntime& device(int ordinal) {
    std::lock_guard lock(mutex);
    auto& slot = devices[ordinal];
    if (slot) return *slot;
    auto d = std::make_unique<DeviceRuntime>();
    d->ordinal = ordinal;
    d->key = query_device(ordinal);
    db::Database* database = open_database();
    std::vector<db::Winner> own, same_arch;
    std::map<db::RowId, std::string> names;
    if (database) {
      try {
        if (auto id = database->find_device(d->key.uuid)) own = database->winners_for_device(*id);
        same_arch = database->winners_for_same_arch(d->key);
        for (const auto& rec : database->list_devices()) names[rec.id] = rec.key.name;
      } catch (const DbError& e) {
        log_message(LogLevel::error, std::string("could not read the tuning database, using built-in defaults: ") +
                                         e.what());
        own.clear();
        same_arch.clear();
      }
    }
    d->selector = std::make_unique<Selector>(d->key, std::move(own), std::move(same_arch), std::move(names));
    d->store = std::make_unique<ReadOnlyBinaryStore>(database);
    d->cache = std::make_unique<BinaryCache>(d->compiler, d->store.get());
    slot = std::move(d);
    return *slot;
  }

  // Called with d.mutex held.
  Resolved& resolve(DeviceRuntime& d, Op op, const TypeRule& types, std::uint64_t n) {
    const CallKey key{op, types.in, types.out, size_bucket(n), options.allow_nondeterministic};
    auto it = d.resolved.find(key);
    if (it != d.resolved.end()) return *it->second;
    auto r = std::make_unique<Resolved>();
    r->selection = d.selector->select(op, types, n, options.allow_nondeterministic);
    r->spec = KernelSpec{op, types, r->selection.config};
    if (r->selection.match != MatchKind::exact &&
        d.logged.insert({tuning_problem(op, types), r->selection.match}).second)
      log_message(LogLevel::info, d.key.name + ": " + r->selection.reason);
    const std::string spec_text = to_string(r->spec);
    auto& set = d.kernel_sets[spec_text];
    if (!set) {
      const std::vector<KernelSpec> one = {r->spec};
      set = std::make_unique<KernelSet>(d.cache->get(make_compile_request(one, d.key.arch())), 1);
    }
    r->handles = set->handles(0);
    return *d.resolved.emplace(key, std::move(r)).first->second;
  }

  // The stream's workspace, holding at least `partial_bytes` of partials. Called with
  // d.mutex held. Creating or growing one synchronises the stream (first use only).
  WorkspaceView workspace(DeviceRuntime& d, cudaStream_t stream, std::size_t partial_bytes) {
    auto& buffer = d.workspaces[stream];
    if (buffer.get() && buffer.size() >= kWorkspaceHeaderBytes + partial_bytes)
      return workspace_view(buffer.get(), buffer.size());
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    RT_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
    if (capture != cudaStreamCaptureStatusNone)
      throw InvalidArgument("this stream has no reduce-tune workspace yet: make one reduce_tune call on it (of the "
                            "same or a larger size) before capturing it into a graph");
    if (buffer.get()) RT_CUDA_CHECK(cudaStreamSynchronize(stream));
    buffer = DeviceBuffer(kWorkspaceHeaderBytes + std::max<std::size_t>(partial_bytes, 64 * 1024));
    unsigned char header[kWorkspaceHeaderBytes];
    make_workspace_header_image(header);
    RT_CUDA_CHECK(cudaMemcpyAsync(buffer.get(), header, sizeof(header), cudaMemcpyHostToDevice, stream));
    RT_CUDA_CHECK(cudaStreamSynchronize(stream));  // `header` lives on this stack frame
    return workspace_view(buffer.get(), buffer.size());
  }
};

Context::Context(ContextOptions options) : impl_(std::make_unique<Impl>()) { impl_->options = std::move(options); }
Context::~Context() = default;
const ContextOptions& Context::options() const { return impl_->options; }

namespace {
TypeRule checked_types(Op op, DType in, DType out) {
  TypeRuleResult r = resolve_types(op, in, out);
  if (!r.rule) throw InvalidArgument(r.error);
  return *r.rule;
}
int current_device() {
  int ordinal = 0;
  const cudaError_t e = cudaGetDevice(&ordinal);
  if (e != cudaSuccess) {
    cudaGetLastError();
    cuda_device_count();  // throws NoDeviceError with the reason when there is no device
    check_cuda(e, "cudaGetDevice");
  }
  return ordinal;
}
}  // namespace

void Context::reduce(Op op, DType in_type, DType out_type, const void* in, std::uint64_t n, void* out,
                     cudaStream_t stream) {
  const TypeRule types = checked_types(op, in_type, out_type);
  KernelSpec probe{op, types, {}};
  validate_arguments(probe, in, n, out);
  DeviceRuntime& d = impl_->device(current_device());
  std::lock_guard lock(d.mutex);
  Resolved& r = impl_->resolve(d, op, types, n);
  const LaunchPlan plan = plan_launch(r.spec, n, d.key.sm_count);
  const WorkspaceView ws = impl_->workspace(d, stream, plan.partial_count * size_of(types.acc));
  CudaLauncher launcher;
  enqueue_reduction(launcher, r.handles, r.spec, plan, ws, in, n, out, stream);
}

void Context::reduce_to_host(Op op, DType in_type, DType out_type, const void* in, std::uint64_t n, void* host_out,
                             cudaStream_t stream) {
  if (host_out == nullptr) throw InvalidArgument("host output pointer is null");
  const TypeRule types = checked_types(op, in_type, out_type);
  validate_arguments(KernelSpec{op, types, {}}, in, n, host_out);
  DeviceRuntime& d = impl_->device(current_device());
  std::unique_lock lock(d.mutex);
  Resolved& r = impl_->resolve(d, op, types, n);
  const LaunchPlan plan = plan_launch(r.spec, n, d.key.sm_count);
  const WorkspaceView ws = impl_->workspace(d, stream, plan.partial_count * size_of(types.acc));
  CudaLauncher launcher;
  enqueue_reduction(launcher, r.handles, r.spec, plan, ws, in, n, ws.result, stream);
  RT_CUDA_CHECK(cudaMemcpyAsync(host_out, ws.result, size_of(types.out), cudaMemcpyDeviceToHost, stream));
  lock.unlock();
  RT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

Explanation Context::explain(Op op, DType in_type, DType out_type, std::uint64_t n) {
  const TypeRule types = checked_types(op, in_type, out_type);
  DeviceRuntime& d = impl_->device(current_device());
  const Selection s = d.selector->select(op, types, n, impl_->options.allow_nondeterministic);
  Explanation e;
  e.problem = ProblemKey{op, in_type, out_type, {}, n};
  e.config = s.config;
  e.match = s.match;
  e.deterministic = is_deterministic(KernelSpec{op, types, s.config});
  e.device = d.key.name;
  e.reason = s.reason;
  if (s.winner) {
    Explanation::Measured m;
    m.device = s.source_device;
    m.bucket = s.winner->bucket;
    m.median_ms = s.winner->median_ms;
    m.gbps = static_cast<double>((1ull << s.winner->bucket) * size_of(in_type)) / (s.winner->median_ms * 1e6);
    m.tool_version = s.winner->tool_version;
    e.measured = m;
  }
  return e;
}

Context& default_context() {
  static Context* context = new Context();  // never destroyed: see context.h
  return *context;
}

}  // namespace reduce_tune
