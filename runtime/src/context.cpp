#include "reduce_tune/context.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>

#include "reduce_tune/engine/axis.h"
#include "reduce_tune/engine/binary_cache.h"
#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/engine/directory_binary_store.h"
#include "reduce_tune/engine/kernel_set.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/engine/pointer_check.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/db/paths.h"
#include "reduce_tune/error.h"
#include "reduce_tune/runtime/database_binary_store.h"
#include "reduce_tune/runtime/selector.h"

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

// What decides a call's kernel on one device of one context. Trivial, so that the
// thread-local caches below need no constructor.
struct CallKey {
  Op op;
  DType in, out;
  int bucket;
};
bool operator==(const CallKey& a, const CallKey& b) {
  return a.op == b.op && a.in == b.in && a.out == b.out && a.bucket == b.bucket;
}
bool operator<(const CallKey& a, const CallKey& b) {
  return std::tie(a.op, a.in, a.out, a.bucket) < std::tie(b.op, b.in, b.out, b.bucket);
}

struct Resolved {
  KernelSpec spec;
  Selection selection;
  KernelHandles handles;
};

// The slow path of a call (loading a module, allocating and initialising a workspace)
// runs in relaxed capture mode, so a first call works while this thread or another one
// captures a CUDA graph in global mode; the previous mode is restored on the way out.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { RT_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode_)); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

constexpr int kMaxDevices = 64;
// Smallest workspace: room for the partials of the built-in default on a 132-SM GPU.
constexpr std::size_t kMinPartialBytes = 16 * 1024;
// Result slots of the synchronous calls: 8 bytes each, one pinned page per block.
constexpr std::size_t kSlotBlockBytes = 4096;

std::atomic<std::uint64_t> next_context_id{1};

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

}  // namespace

// An 8-byte slot of mapped pinned memory that a kernel writes a synchronous call's
// result into: its address for the kernel and for the host.
struct ResultSlot {
  void* device = nullptr;
  const void* host = nullptr;
};

// Everything of one device: its winners, kernels, per-stream workspaces and result
// slots. Created once per (context, device), never moved or destroyed before the context.
struct DeviceRuntime {
  int ordinal = 0;
  DeviceKey key;
  bool pageable_access = false;  // HMM/ATS: the device reads pageable host memory
  std::unique_ptr<Selector> selector;
  std::unique_ptr<AxisSelector> axis_selector;
  std::unique_ptr<DatabaseBinaryStore> store;
  std::unique_ptr<DirectoryBinaryStore> kept;  // the kernel cache folder, if any
  std::unique_ptr<LayeredBinaryStore> stores;  // the database's binaries, then the folder's
  NvrtcCompiler compiler;
  std::unique_ptr<BinaryCache> cache;
  std::optional<Stream> setup_stream;  // workspace headers are initialised here, never on a caller's stream

  // Guards everything below. Held only for lookups and insertions: never across a
  // launch, a copy, a wait or a compile, so one thread's slow call never stalls another's.
  std::mutex mutex;
  std::map<CallKey, std::unique_ptr<Resolved>> resolved;
  std::map<std::string, std::unique_ptr<KernelSet>> kernel_sets;
  std::map<std::uint64_t, std::unique_ptr<KernelSet>> axis_kernel_sets;  // by axis_spec_key()
  std::map<std::uint64_t, std::unique_ptr<AxisSelection>> axis_selections;  // by axis_class_key()
  // The current workspace of each stream, by stream_key().
  std::map<std::uint64_t, Workspace*> workspaces;
  // Every workspace made, those outgrown included: a CUDA graph captured earlier still
  // uses the old one, so none is freed before the context.
  std::vector<std::unique_ptr<Workspace>> all_workspaces;
  std::vector<PinnedBuffer> slot_blocks;
  std::vector<ResultSlot> free_slots;
  std::set<std::pair<db::ProblemClass, MatchKind>> logged;
  std::set<std::pair<db::AxisProblemClass, MatchKind>> logged_axes;
};

namespace {

// Per-thread caches of the warm path: a hit takes no lock. Entries name their context
// by an id that is never reused, so a destroyed context's entries never match again.
struct ThreadCache {
  struct ResolvedEntry {
    std::uint64_t context;
    int device;
    CallKey key;
    const Resolved* value;
  };
  struct WorkspaceEntry {
    std::uint64_t context;
    int device;
    std::uint64_t stream;
    Workspace* value;
  };
  struct AxisEntry {
    std::uint64_t context;
    int device;
    std::uint64_t key;
    const KernelHandles* value;
  };
  struct AxisSelectionEntry {
    std::uint64_t context;
    int device;
    std::uint64_t key;
    const AxisSelection* value;
  };
  ResolvedEntry resolved[64];
  WorkspaceEntry workspaces[16];
  AxisEntry axis[32];
  AxisSelectionEntry axis_selection[32];
};
thread_local ThreadCache thread_cache;

// Which stream a handle means, as a key for workspaces. The legacy default stream
// (nullptr or cudaStreamLegacy) is one stream per device; cudaStreamPerThread is one
// handle for a different stream in every thread, so it is keyed by the thread; any
// other handle is its own stream. (cudaStreamGetId would tell streams apart too, but
// it is refused on a stream that is being captured.) cudaStreamDestroy releases a
// stream's resources only once its pending work is done, so a new stream at a recycled
// address does not run beside work of the old one on the same workspace.
constexpr std::uint64_t kLegacyStreamKey = 1;
std::atomic<std::uint64_t> next_thread_serial{1};
std::uint64_t stream_key(cudaStream_t stream) {
  if (stream == nullptr || stream == cudaStreamLegacy) return kLegacyStreamKey;
  if (stream == cudaStreamPerThread) {
    // Odd handles do not occur (CUstream_st is aligned), so odd keys are free for threads.
    thread_local const std::uint64_t serial = next_thread_serial.fetch_add(1);
    return (serial << 1) | 1;
  }
  return reinterpret_cast<std::uintptr_t>(stream);
}

// What decides the axis selection of a call, in 64 bits: the tuning class (op, types,
// layout, R and output buckets) and the shape traits a stored config's fit depends on.
std::uint64_t axis_class_key(Op op, const TypeRule& types, const CanonicalAxes& shape) {
  std::uint64_t k = static_cast<std::uint64_t>(op);
  k = k << 4 | static_cast<std::uint64_t>(types.in);
  k = k << 4 | static_cast<std::uint64_t>(types.out);
  k = k << 4 | static_cast<std::uint64_t>(types.acc);
  k = k << 2 | static_cast<std::uint64_t>(shape.layout);
  k = k << 7 | static_cast<std::uint64_t>(size_bucket(shape.reduced));
  k = k << 7 | static_cast<std::uint64_t>(size_bucket(shape.outputs));
  k = k << 1 | (shape.outer_stride == static_cast<std::int64_t>(shape.reduced) ? 1u : 0u);
  k = k << 1 | (shape.reduced_stride == static_cast<std::int64_t>(shape.inner) ? 1u : 0u);
  k = k << 11 | std::min<std::uint64_t>(shape.inner, 1024);
  k = k << 8 | std::min<std::uint64_t>(shape.reduced, 255);
  return k;
}

TypeRule checked_types(Op op, DType in, DType out) {
  TypeRuleResult r = resolve_types(op, in, out);
  if (!r.rule) throw InvalidArgument(r.error);
  return *r.rule;
}

int current_device() { return current_device_ordinal(); }

void check_size(std::uint64_t n, DType in) {
  if (n > (std::uint64_t{1} << 62) / size_of(in))
    throw InvalidArgument("n = " + std::to_string(n) + " elements of " + std::string(to_string(in)) +
                          " is larger than any device allocation");
}

}  // namespace

struct CheckedCall;

struct Context::Impl {
  const std::uint64_t id = next_context_id.fetch_add(1);
  ContextOptions options;
  std::mutex mutex;  // guards device creation and the database handle
  std::optional<db::Database> database;
  bool database_opened = false;
  std::array<std::atomic<DeviceRuntime*>, kMaxDevices> devices{};
  std::vector<std::unique_ptr<DeviceRuntime>> owned_devices;

  // Opens the database once; a missing file means defaults, an unusable one is reported
  // once and then also means defaults. Called with `mutex` held.
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

  // The kernel cache folder (ContextOptions::kernel_cache and the environment), resolved
  // when the context is made; none for "off".
  std::optional<std::filesystem::path> kernel_cache_folder;
  std::uint64_t kernel_cache_max_bytes = db::kDefaultKernelCacheMaxBytes;

  DeviceRuntime& device(int ordinal) {
    if (ordinal >= 0 && ordinal < kMaxDevices)
      if (DeviceRuntime* d = devices[static_cast<std::size_t>(ordinal)].load(std::memory_order_acquire)) return *d;
    return create_device(ordinal);
  }

  DeviceRuntime& create_device(int ordinal) {
    if (ordinal < 0 || ordinal >= kMaxDevices)
      throw NoDeviceError("device " + std::to_string(ordinal) + ": reduce-tune supports devices 0 to " +
                          std::to_string(kMaxDevices - 1));
    std::lock_guard lock(mutex);
    auto& slot = devices[static_cast<std::size_t>(ordinal)];
    if (DeviceRuntime* existing = slot.load(std::memory_order_acquire)) return *existing;
    RelaxedCaptureMode relaxed;
    auto d = std::make_unique<DeviceRuntime>();
    d->ordinal = ordinal;
    d->key = query_device(ordinal);
    int pageable = 0;
    if (cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess, ordinal) != cudaSuccess) {
      cudaGetLastError();
      pageable = 0;
    }
    d->pageable_access = pageable != 0;
    d->setup_stream.emplace();
    db::Database* database = open_database();
    std::vector<db::Winner> own, same_arch;
    std::vector<db::AxisWinner> own_axes, same_arch_axes;
    std::vector<db::AxisProblemClass> own_tuned_axes;
    std::map<db::RowId, std::string> names;
    if (database) {
      try {
        if (auto id = database->find_device(d->key.uuid)) {
          own = database->winners_for_device(*id);
          own_axes = database->axis_winners_for_device(*id);
          own_tuned_axes = database->axis_tuned_buckets(*id);
        }
        same_arch = database->winners_for_same_arch(d->key);
        same_arch_axes = database->axis_winners_for_same_arch(d->key);
        for (const auto& rec : database->list_devices()) names[rec.id] = rec.key.name;
      } catch (const DbError& e) {
        log_message(LogLevel::error, std::string("could not read the tuning database, using built-in defaults: ") +
                                         e.what());
        own.clear();
        same_arch.clear();
        own_axes.clear();
        own_tuned_axes.clear();
        same_arch_axes.clear();
      }
    }
    d->selector = std::make_unique<Selector>(d->key, std::move(own), std::move(same_arch), names);
    d->axis_selector =
        std::make_unique<AxisSelector>(d->key, std::move(own_axes), std::move(same_arch_axes), std::move(names),
                                       own_tuned_axes);
    d->store = std::make_unique<DatabaseBinaryStore>(database);
    if (kernel_cache_folder)
      d->kept = std::make_unique<DirectoryBinaryStore>(*kernel_cache_folder, kernel_cache_max_bytes);
    d->stores = std::make_unique<LayeredBinaryStore>(d->store.get(), d->kept.get());
    d->cache = std::make_unique<BinaryCache>(d->compiler, d->stores.get());
    DeviceRuntime* raw = d.get();
    owned_devices.push_back(std::move(d));
    slot.store(raw, std::memory_order_release);
    return *raw;
  }

  // The kernels of `spec`, compiled (or loaded from the database) and loaded outside the
  // device lock; one KernelSet per spec is kept.
  KernelHandles load_kernels(DeviceRuntime& d, const KernelSpec& spec) {
    const std::string spec_text = to_string(spec);
    {
      std::lock_guard lock(d.mutex);
      auto it = d.kernel_sets.find(spec_text);
      if (it != d.kernel_sets.end()) return it->second->handles(0);
    }
    const std::vector<KernelSpec> one = {spec};
    auto set = std::make_unique<KernelSet>(d.cache->get(make_compile_request(one, d.key.arch())), 1, d.key.arch());
    std::lock_guard lock(d.mutex);
    auto& stored = d.kernel_sets[spec_text];
    if (!stored) stored = std::move(set);  // else another thread loaded it first: ours is dropped
    return stored->handles(0);
  }

  const Resolved& resolve_slow(DeviceRuntime& d, Op op, const TypeRule& types, std::uint64_t n, const CallKey& key) {
    {
      std::lock_guard lock(d.mutex);
      auto it = d.resolved.find(key);
      if (it != d.resolved.end()) return *it->second;
    }
    RelaxedCaptureMode relaxed;
    auto r = std::make_unique<Resolved>();
    r->selection = d.selector->select(op, types, n, options.allow_nondeterministic);
    r->spec = KernelSpec{op, types, r->selection.config};
    try {
      r->handles = load_kernels(d, r->spec);
    } catch (const NvrtcError& e) {
      if (r->selection.match == MatchKind::default_config) throw;
      // A stored winner that no longer compiles (another NVRTC, a damaged file): the
      // built-in default serves instead, and the failure is reported once.
      log_message(LogLevel::error, d.key.name + ": the tuned config " + to_string(r->selection.config) +
                                       " does not compile here; using the built-in default (" + e.what() + ")");
      r->selection.config = builtin_default_config(op, types, d.key.arch());
      r->selection.match = MatchKind::default_config;
      r->selection.winner.reset();
      r->selection.reason += "; the tuned config failed to compile, so the built-in default is used";
      r->spec = KernelSpec{op, types, r->selection.config};
      r->handles = load_kernels(d, r->spec);
    }
    std::lock_guard lock(d.mutex);
    auto [it, inserted] = d.resolved.emplace(key, std::move(r));
    const Resolved& stored = *it->second;
    if (inserted && stored.selection.match != MatchKind::exact &&
        d.logged.insert({tuning_problem(op, types), stored.selection.match}).second)
      log_message(LogLevel::info, d.key.name + ": " + stored.selection.reason);
    return stored;
  }

  const Resolved& resolve(DeviceRuntime& d, Op op, const TypeRule& types, std::uint64_t n) {
    const CallKey key{op, types.in, types.out, size_bucket(n)};
    const std::uint64_t h =
        mix(mix(mix(id, static_cast<std::uint64_t>(d.ordinal)), static_cast<std::uint64_t>(key.op) << 16 |
                                                                      static_cast<std::uint64_t>(key.in) << 8 |
                                                                      static_cast<std::uint64_t>(key.out)),
            static_cast<std::uint64_t>(key.bucket));
    auto& entry = thread_cache.resolved[h % std::size(thread_cache.resolved)];
    if (entry.context == id && entry.device == d.ordinal && entry.key == key) return *entry.value;
    const Resolved& r = resolve_slow(d, op, types, n, key);
    entry = {id, d.ordinal, key, &r};
    return r;
  }

  Workspace& workspace_slow(DeviceRuntime& d, std::uint64_t stream_id, std::size_t partial_bytes) {
    std::size_t outgrown = 0;
    {
      std::lock_guard lock(d.mutex);
      auto it = d.workspaces.find(stream_id);
      if (it != d.workspaces.end()) {
        if (it->second->holds(partial_bytes)) return *it->second;
        outgrown = it->second->partial_capacity();
      }
    }
    RelaxedCaptureMode relaxed;
    // Doubling keeps the outgrown workspaces (kept for graphs) under the current size.
    auto fresh = std::make_unique<Workspace>(std::max({partial_bytes, 2 * outgrown, kMinPartialBytes}),
                                             d.setup_stream->get());
    std::lock_guard lock(d.mutex);
    auto& current = d.workspaces[stream_id];
    if (current && current->holds(partial_bytes)) return *current;  // another thread grew it meanwhile
    current = fresh.get();
    d.all_workspaces.push_back(std::move(fresh));
    return *current;
  }

  // The stream's workspace, holding at least `partial_bytes` of partials.
  WorkspaceView workspace(DeviceRuntime& d, cudaStream_t stream, std::size_t partial_bytes) {
    const std::uint64_t stream_id = stream_key(stream);
    const std::uint64_t h = mix(mix(id, static_cast<std::uint64_t>(d.ordinal)), stream_id);
    auto& entry = thread_cache.workspaces[h % std::size(thread_cache.workspaces)];
    if (entry.context == id && entry.device == d.ordinal && entry.stream == stream_id &&
        entry.value->holds(partial_bytes))
      return entry.value->view();
    Workspace& ws = workspace_slow(d, stream_id, partial_bytes);
    entry = {id, d.ordinal, stream_id, &ws};
    return ws.view();
  }

  // `device_out`: the output in device memory, or nullptr for calls that return the
  // value to the host.
  CheckedCall check_call(Op op, DType in_type, DType out_type, const void* in, std::uint64_t n,
                         const void* const* device_out);

  // Enqueues the call and returns what it launched.
  PreparedReduction launch(DeviceRuntime& d, Op op, const TypeRule& types, const void* in, std::uint64_t n,
                           void* out, cudaStream_t stream) {
    const Resolved& r = resolve(d, op, types, n);
    const LaunchPlan plan = plan_launch(r.spec, n, d.key.sm_count);
    const WorkspaceView ws = workspace(d, stream, plan.partial_count * size_of(types.acc));
    const PreparedReduction prepared = prepare_reduction(r.handles, r.spec, plan, ws, in, n, out);
    CudaLauncher launcher;
    enqueue_prepared(launcher, prepared, stream);
    return prepared;
  }

  // The kernels of an axis spec: a thread-local hit takes no lock; otherwise compiled
  // (or loaded from the database) and loaded outside the device lock.
  const KernelHandles& axis_kernels(DeviceRuntime& d, const AxisKernelSpec& spec) {
    const std::uint64_t key = axis_spec_key(spec);
    const std::uint64_t h = mix(mix(id, static_cast<std::uint64_t>(d.ordinal)), key);
    auto& entry = thread_cache.axis[h % std::size(thread_cache.axis)];
    if (entry.context == id && entry.device == d.ordinal && entry.key == key) return *entry.value;
    const KernelHandles* handles = nullptr;
    {
      std::lock_guard lock(d.mutex);
      auto it = d.axis_kernel_sets.find(key);
      if (it != d.axis_kernel_sets.end()) handles = &it->second->handles(0);
    }
    if (handles == nullptr) {
      RelaxedCaptureMode relaxed;
      auto set =
          std::make_unique<KernelSet>(d.cache->get(make_axis_compile_request(spec, d.key.arch())), 1, d.key.arch());
      std::lock_guard lock(d.mutex);
      auto& stored = d.axis_kernel_sets[key];
      if (!stored) stored = std::move(set);  // else another thread loaded it first
      handles = &stored->handles(0);
    }
    entry = {id, d.ordinal, key, handles};
    return *handles;
  }

  // The axis kernel for a rows or columns call: the selector's choice for the shape's
  // class, from this thread's cache without a lock when it was made before. A stored
  // config that cannot reduce this very shape gives way to the built-in choice, which
  // sees the view's base (`base`: offset 0 of the canonical form).
  AxisKernelSpec axis_spec(DeviceRuntime& d, Op op, const TypeRule& types, const CanonicalAxes& shape,
                           const void* base, AxisLaunchPlan* plan) {
    if (d.axis_selector->empty() || !axis_tuning_problem(op, types, shape))
      return builtin_axis_spec(op, types, shape, d.key.sm_count, plan, base);
    const std::uint64_t key = axis_class_key(op, types, shape);
    const std::uint64_t h = mix(mix(id, static_cast<std::uint64_t>(d.ordinal)), key);
    auto& entry = thread_cache.axis_selection[h % std::size(thread_cache.axis_selection)];
    const AxisSelection* selection = nullptr;
    if (entry.context == id && entry.device == d.ordinal && entry.key == key) {
      selection = entry.value;
    } else {
      {
        std::lock_guard lock(d.mutex);
        auto it = d.axis_selections.find(key);
        if (it != d.axis_selections.end()) selection = it->second.get();
      }
      if (selection == nullptr) {
        auto made = std::make_unique<AxisSelection>(d.axis_selector->select(op, types, shape));
        std::lock_guard lock(d.mutex);
        auto& stored = d.axis_selections[key];
        if (!stored) stored = std::move(made);
        selection = stored.get();
        const auto problem = axis_tuning_problem(op, types, shape);
        if (problem && selection->match != MatchKind::exact &&
            d.logged_axes.insert({*problem, selection->match}).second)
          log_message(LogLevel::info, d.key.name + ": " + selection->reason);
      }
      entry = {id, d.ordinal, key, selection};
    }
    // A class with no winner takes the built-in choice for this very shape, as a call
    // without a database does: the choice for the class's first shape can be a slow one
    // for the next (columns on the vector grid and off it, narrow slices and wide).
    return axis_spec_for(*selection, op, types, shape, d.key.sm_count, plan, base);
  }

  ResultSlot take_slot(DeviceRuntime& d) {
    {
      std::lock_guard lock(d.mutex);
      if (!d.free_slots.empty()) {
        const ResultSlot slot = d.free_slots.back();
        d.free_slots.pop_back();
        return slot;
      }
    }
    RelaxedCaptureMode relaxed;
    PinnedBuffer block(kSlotBlockBytes);
    auto* device_base = static_cast<unsigned char*>(block.device());
    const auto* host_base = static_cast<const unsigned char*>(block.host());
    std::lock_guard lock(d.mutex);
    for (std::size_t offset = 8; offset < kSlotBlockBytes; offset += 8)
      d.free_slots.push_back({device_base + offset, host_base + offset});
    d.slot_blocks.push_back(std::move(block));
    return {device_base, host_base};
  }
  void give_back_slot(DeviceRuntime& d, const ResultSlot& slot) {
    std::lock_guard lock(d.mutex);
    d.free_slots.push_back(slot);
  }
};

Context::Context(ContextOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->kernel_cache_folder =
      db::resolve_kernel_cache_path(impl_->options.kernel_cache, db::KernelCacheLocationEnv::from_process());
  if (impl_->kernel_cache_folder) {
    const db::KernelCacheLimit limit =
        db::resolve_kernel_cache_limit(impl_->options.kernel_cache_max_bytes, db::kernel_cache_max_size_env());
    if (limit.problem) log_message(LogLevel::warning, *limit.problem);
    impl_->kernel_cache_max_bytes = limit.max_bytes;
  }
}
Context::~Context() = default;
const ContextOptions& Context::options() const { return impl_->options; }

// What every call checks before it launches: the types, the size, the pointers (null,
// alignment; `out` only when it is a device output), then the device and whether it
// can read the input. Argument errors come before any device access.
struct CheckedCall {
  TypeRule types;
  DeviceRuntime& device;
  PointerInfo input;  // the input's allocation as the driver or this thread's memory of it says (nothing for n = 0)
};

namespace {
// Allocations this thread saw pass the pointer check (see VerifiedRanges).
thread_local VerifiedRanges verified_ranges;

// Throws unless the device can use [pointer, pointer + bytes). A buffer this thread saw
// pass costs one buffer-id query instead of the full description (see VerifiedRanges).
PointerInfo checked_pointer(const ContextOptions& options, const DeviceRuntime& d, const void* pointer,
                            std::size_t bytes, const char* what) {
  if (options.check_pointers_every_call)
    return check_device_accessible(pointer, bytes, d.ordinal, d.pageable_access, what);
  return check_device_accessible(verified_ranges, pointer, bytes, d.ordinal, d.pageable_access, what);
}
}  // namespace

CheckedCall Context::Impl::check_call(Op op, DType in_type, DType out_type, const void* in, std::uint64_t n,
                                      const void* const* device_out) {
  const TypeRule types = checked_types(op, in_type, out_type);
  check_size(n, in_type);
  validate_input(KernelSpec{op, types, {}}, in, n);
  if (device_out) validate_output(KernelSpec{op, types, {}}, *device_out);
  const int ordinal = current_device();
  DeviceRuntime& d = device(ordinal);
  // One driver query per pointer: the full description (about 0.05 us), or the buffer id
  // alone for a buffer this thread saw pass (about 0.03 us).
  PointerInfo input;
  if (n > 0) input = checked_pointer(options, d, in, n * size_of(in_type), "input");
  return CheckedCall{types, d, input};
}

namespace {

// The warm path's memory of this thread's recent calls: a call that repeats one of them
// exactly (context, device, op, types, pointers, n, stream) on the same allocations (the
// buffer ids the driver gives them now) passed every check before and resolves to the
// same kernels, grid and arguments, so it launches those again. Constant-initialised
// (no TLS constructor); context ids start at 1, so an empty slot never matches.
struct RecentCall {
  std::uint64_t context = 0;
  int device = -1;
  Op op{};
  DType in_type{}, out_type{};
  const void* in = nullptr;
  std::uint64_t n = 0;
  void* out = nullptr;
  cudaStream_t stream = nullptr;
  std::uint64_t in_buffer = 0;
  std::uint64_t out_buffer = 0;  // 0: the output lies inside the input's allocation
  PreparedReduction launch;
};
constexpr std::size_t kRecentCalls = 8;
thread_local RecentCall recent_calls[kRecentCalls];

RecentCall& recent_call_slot(const void* in, std::uint64_t n, const void* out) {
  const std::uint64_t h = mix(mix(reinterpret_cast<std::uintptr_t>(in), n), reinterpret_cast<std::uintptr_t>(out));
  return recent_calls[h % kRecentCalls];
}

}  // namespace

void Context::enqueue(Op op, DType in_type, DType out_type, const void* in, std::uint64_t n, void* out,
                      cudaStream_t stream) {
  RecentCall& recent = recent_call_slot(in, n, out);
  // The same arguments as a call that passed: no argument can fail now, so the device
  // may be asked before anything else.
  if (recent.context == impl_->id && recent.in == in && recent.n == n && recent.out == out &&
      recent.stream == stream && recent.op == op && recent.in_type == in_type && recent.out_type == out_type &&
      recent.device == current_device() && query_buffer_id(in) == recent.in_buffer &&
      (recent.out_buffer == 0 || query_buffer_id(out) == recent.out_buffer)) {
    CudaLauncher launcher;
    enqueue_prepared(launcher, recent.launch, stream);
    return;
  }
  const void* device_out = out;
  const CheckedCall call = impl_->check_call(op, in_type, out_type, in, n, &device_out);
  // An output inside the input's allocation needs no query of its own.
  const bool out_inside = n > 0 && inside_allocation(call.input, out, size_of(out_type));
  if (!out_inside) checked_pointer(impl_->options, call.device, out, size_of(out_type), "output");
  const PreparedReduction launched = impl_->launch(call.device, op, call.types, in, n, out, stream);
  // Remembered only where a later call can tell the same allocations by their buffer
  // ids (device or managed memory this thread's check trusts), never with n = 0 or
  // with every pointer asked afresh.
  if (n == 0 || impl_->options.check_pointers_every_call) return;
  const int ordinal = call.device.ordinal;
  const std::uint64_t in_buffer = verified_ranges.find(ordinal, in, n * size_of(in_type)).buffer_id;
  const std::uint64_t out_buffer = out_inside ? 0 : verified_ranges.find(ordinal, out, size_of(out_type)).buffer_id;
  if (in_buffer == 0 || (!out_inside && out_buffer == 0)) return;
  recent = RecentCall{impl_->id, ordinal, op, in_type, out_type, in, n, out, stream, in_buffer, out_buffer, launched};
}

void Context::enqueue_and_wait(Op op, DType in_type, DType out_type, const void* in, std::uint64_t n, void* host_out,
                               cudaStream_t stream) {
  if (host_out == nullptr) throw InvalidArgument("host output pointer is null");
  const CheckedCall call = impl_->check_call(op, in_type, out_type, in, n, nullptr);
  const TypeRule& types = call.types;
  DeviceRuntime& d = call.device;
  // The kernel writes the result straight into a mapped pinned slot of this call's own:
  // no copy to enqueue, and no slot shared with another thread's call on the same stream.
  const ResultSlot slot = impl_->take_slot(d);
  struct SlotGuard {
    Impl& impl;
    DeviceRuntime& d;
    ResultSlot slot;
    ~SlotGuard() { impl.give_back_slot(d, slot); }
  } guard{*impl_, d, slot};
  (void)impl_->launch(d, op, types, in, n, slot.device, stream);
  RT_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::memcpy(host_out, slot.host, size_of(types.out));
}

namespace {

CanonicalAxes checked_canonical(const TensorDesc& tensor, const AxisList& axes) {
  CanonicalResult r = canonicalize(tensor, axes);
  if (!r.ok) throw InvalidArgument("tensor reduction: " + r.error);
  return r.axes;
}

// axis_reorder where it pays (axis_reorder_pays) and its staged result fits the
// workspace's cap: the workspace keeps the size it grows to, so outputs past 256 MiB take
// the general kernels as they are.
// A thread's recent reorders: a warm call of the same permuted view takes no sort. The
// answer points into this thread's cache, valid until its next staged_reorder.
constexpr std::uint64_t kReorderMaxStagedBytes = std::uint64_t{256} << 20;
thread_local AxisReorderCache reorder_cache;
const AxisReorder* staged_reorder(const TensorDesc& tensor, const AxisList& axes, const CanonicalAxes& shape,
                                  DType in_type, DType out_type) {
  if (shape.outputs > kReorderMaxStagedBytes / size_of(out_type) || !axis_reorder_may_pay(shape)) return nullptr;
  const std::optional<AxisReorder>& reorder = reorder_cache.get(tensor, axes, shape);
  if (!reorder || !axis_reorder_pays(*reorder, shape, size_of(in_type))) return nullptr;
  return &*reorder;
}

bool overlaps(std::uintptr_t a, std::size_t a_bytes, std::uintptr_t b, std::size_t b_bytes) {
  return a_bytes > 0 && b_bytes > 0 && a < b + b_bytes && b < a + a_bytes;
}

}  // namespace

void Context::enqueue_axes(Op op, DType in_type, DType out_type, const void* in, const TensorDesc& tensor,
                           const AxisList& axes, void* out, cudaStream_t stream) {
  const TypeRule types = checked_types(op, in_type, out_type);
  const CanonicalAxes shape = checked_canonical(tensor, axes);
  if (shape.outputs == 0) return;  // nothing to write
  const std::size_t in_size = size_of(in_type), out_size = size_of(out_type);
  // Byte sizes before any pointer arithmetic over them (canonicalize bounds the view's
  // span to 2^62 elements; in bytes it must fit too).
  const std::uint64_t span = shape.reads_nothing()
                                 ? 0
                                 : static_cast<std::uint64_t>(shape.highest_offset - shape.lowest_offset) + 1;
  if (span > (std::uint64_t{1} << 62) / in_size)
    throw InvalidArgument("tensor reduction: the view spans " + std::to_string(span) + " elements of " +
                          std::string(to_string(in_type)) + ", more bytes than any device allocation");
  if (shape.outputs > (std::uint64_t{1} << 62) / out_size)
    throw InvalidArgument(std::to_string(shape.outputs) + " outputs is larger than any device allocation");
  const auto* base = static_cast<const unsigned char*>(in) + shape.base_offset * static_cast<std::int64_t>(in_size);
  if (shape.layout == AxisLayout::flat) {
    // One output from one contiguous run: the tuned flat path, its checks included.
    enqueue(op, in_type, out_type, shape.reduced == 0 ? in : base, shape.reduced, out, stream);
    return;
  }
  const KernelSpec checks{op, types, {}};
  validate_input(checks, in, shape.reads_nothing() ? 0 : 1);
  validate_output(checks, out);
  const int ordinal = current_device();
  DeviceRuntime& d = impl_->device(ordinal);
  // The elements the view reaches, and the output: both must be device memory, and
  // they must not overlap (outputs are written while other outputs still read).
  const auto* first = static_cast<const unsigned char*>(in) + shape.lowest_offset * static_cast<std::int64_t>(in_size);
  const std::size_t in_bytes = static_cast<std::size_t>(span) * in_size;
  const std::size_t out_bytes = static_cast<std::size_t>(shape.outputs) * out_size;
  if (in_bytes > 0) checked_pointer(impl_->options, d, first, in_bytes, "input");
  checked_pointer(impl_->options, d, out, out_bytes, "output");
  if (overlaps(reinterpret_cast<std::uintptr_t>(first), in_bytes, reinterpret_cast<std::uintptr_t>(out), out_bytes))
    throw InvalidArgument("the output (" + std::to_string(shape.outputs) +
                          " elements) overlaps the input view; an axis reduction writes outputs while others are "
                          "still being read, so give it memory of its own");
  CudaLauncher launcher;
  if (const AxisReorder* reorder = staged_reorder(tensor, axes, shape, in_type, out_type)) {
    // Reduced in the order of the strides into the workspace, after the partials of that
    // reduction, then copied into the caller's order (axis_reorder): a max of one element
    // each, which keeps every value's bits.
    const CanonicalAxes& first_shape = reorder->stage1_shape;
    const auto* first_base =
        static_cast<const unsigned char*>(in) + first_shape.base_offset * static_cast<std::int64_t>(in_size);
    AxisLaunchPlan plan;
    AxisKernelSpec spec = impl_->axis_spec(d, op, types, first_shape, first_base, &plan);
    // Few outputs: the same kernel's ordered form writes each one at its place in the
    // caller's order, where its family has one (a tuned winner may be of a family that
    // writes outputs only at their index: short_columns; those take the copy below).
    if (axis_reorder_writes_directly(*reorder, in_size) && axis_spec_has_ordered_form(spec)) {
      spec.ordered = 1;
      const KernelHandles& kernels = impl_->axis_kernels(d, spec);
      WorkspaceView ws;
      if (plan.partial_count > 0) ws = impl_->workspace(d, stream, plan.partial_count * size_of(types.acc));
      enqueue_axis_reduction(launcher, kernels, spec, plan, first_shape, first_base, out,
                             plan.partial_count > 0 ? &ws : nullptr, stream, &reorder->order);
      return;
    }
    const KernelHandles& kernels = impl_->axis_kernels(d, spec);
    const TypeRule copy_types = checked_types(Op::max, out_type, out_type);
    AxisLaunchPlan copy_plan;
    const AxisKernelSpec copy_spec = impl_->axis_spec(d, Op::max, copy_types, reorder->copy_shape, nullptr, &copy_plan);
    const KernelHandles& copy_kernels = impl_->axis_kernels(d, copy_spec);
    // The copy reduces nothing, so it never splits (no partials of its own), and its
    // strides are positive (its base is the staged result's start).
    const std::size_t partial_bytes = (plan.partial_count * size_of(types.acc) + 255) / 256 * 256;
    WorkspaceView ws = impl_->workspace(d, stream, partial_bytes + out_bytes);
    void* staged = static_cast<unsigned char*>(ws.partials) + partial_bytes;
    enqueue_axis_reduction(launcher, kernels, spec, plan, first_shape, first_base, staged,
                           plan.partial_count > 0 ? &ws : nullptr, stream);
    enqueue_axis_reduction(launcher, copy_kernels, copy_spec, copy_plan, reorder->copy_shape, staged, out, nullptr,
                           stream);
    return;
  }
  AxisLaunchPlan plan;
  const AxisKernelSpec spec = impl_->axis_spec(d, op, types, shape, base, &plan);
  const KernelHandles& kernels = impl_->axis_kernels(d, spec);
  WorkspaceView ws;
  if (plan.partial_count > 0) ws = impl_->workspace(d, stream, plan.partial_count * size_of(types.acc));
  enqueue_axis_reduction(launcher, kernels, spec, plan, shape, base, out, plan.partial_count > 0 ? &ws : nullptr,
                         stream);
}

std::string AxisExplanation::to_string() const {
  return shape.to_string() + " on " + device + ": " + kernel + "\n  why: " + reason;
}

AxisExplanation Context::explain_axes(Op op, DType in_type, DType out_type, const TensorDesc& tensor,
                                      const AxisList& axes, const void* in) {
  const TypeRule types = checked_types(op, in_type, out_type);
  AxisExplanation e;
  e.shape = checked_canonical(tensor, axes);
  DeviceRuntime& d = impl_->device(current_device());
  e.device = d.key.name;
  if (e.shape.layout == AxisLayout::flat) {
    const Explanation flat = explain(op, in_type, out_type, e.shape.reduced);
    e.kernel = "flat " + reduce_tune::to_string(flat.config);
    e.reason = "everything is reduced from one contiguous run, so the flat path serves it: " + flat.reason;
    e.match = flat.match;
    return e;
  }
  // The kernel a canonical shape gets, as enqueue_axes chooses it.
  AxisKernelSpec chosen;
  const auto choose = [&](Op kernel_op, const TypeRule& kernel_types, const CanonicalAxes& shape, const void* base) {
    const AxisSelection s = d.axis_selector->select(kernel_op, kernel_types, shape);
    chosen = axis_spec_for(s, kernel_op, kernel_types, shape, d.key.sm_count, nullptr, base);
    const bool grid_side = axis_grid_side(s, kernel_types, shape, base);
    const bool builtin = grid_side ? s.grid_builtin : s.builtin;  // the winner is the built-in choice
    const bool on_grid = s.winner && grid_side && (builtin || chosen == *s.grid_spec);
    const bool fits = s.winner && (builtin || chosen == s.spec || on_grid);
    e.kernel += reduce_tune::to_string(chosen);
    const char* held = ": the built-in choice made for each shape, which no config beat at every sample shape";
    std::string reason = s.reason;
    if (on_grid) reason += std::string(" (its winner for shapes on the 16-byte grid") + (builtin ? held : "") + ")";
    else if (fits && builtin) reason += held;
    return std::make_pair(fits ? s.match : MatchKind::default_config, reason);
  };
  const auto at = [&](const CanonicalAxes& shape) -> const void* {
    return in == nullptr ? nullptr
                         : static_cast<const unsigned char*>(in) +
                               shape.base_offset * static_cast<std::int64_t>(size_of(in_type));
  };
  if (const AxisReorder* reorder = staged_reorder(tensor, axes, e.shape, in_type, out_type)) {
    const auto [match, reason] = choose(op, types, reorder->stage1_shape, at(reorder->stage1_shape));
    const bool direct = axis_reorder_writes_directly(*reorder, size_of(in_type)) && axis_spec_has_ordered_form(chosen);
    if (direct) e.kernel += ",ordered=1";  // the same spec's ordered form
    e.kernel += " over " + reorder->stage1_shape.to_string();
    if (direct) {
      e.kernel += ", each output written at its place in the output's order";
    } else {
      e.kernel += ", then a copy into the output's order: ";
      choose(Op::max, checked_types(Op::max, out_type, out_type), reorder->copy_shape, nullptr);
    }
    e.match = match;
    e.reason = std::string(reorder->reduces_densest()
                               ? "the rows are the densest dimension but the outputs are not in the order of their "
                                 "strides, so the view is reduced as rows with its dimensions in the order of their "
                                 "strides, "
                               : "the densest dimension is kept but not the outputs' innermost, so the view is reduced "
                                 "with its dimensions in the order of their strides, ") +
               (direct ? "in one launch; " : "then copied; ") + reason;
  } else {
    const auto [match, reason] = choose(op, types, e.shape, at(e.shape));
    e.match = match;
    e.reason = reason;
  }
  return e;
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
