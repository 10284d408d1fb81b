// reduce_tune_bench: the tuned runtime call, the runtime's built-in default,
// cub::DeviceReduce and the best classic kernel (multi_element, the reduce6 lineage),
// side by side in one process with one timing method (tuner/measure.h: CUDA events
// around batches of back-to-back calls, median of samples, inputs past L2 rotated).
// Prints a table and stores the rows in the tuning database. `reduce-tune bench` runs it.
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/engine/kernel_set.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/context.h"
#include "reduce_tune/reduce.h"
#include "reduce_tune/reduce_fp16.h"
#include "reduce_tune/db/database.h"
#include "reduce_tune/db/paths.h"
#include "reduce_tune/error.h"
#include "reduce_tune/engine/search_space.h"
#include "reduce_tune/runtime/selector.h"
#include "reduce_tune/tuner/measure.h"
#include "cli/tune_options.h"
#include "reduce_tune/tuner/tuner.h"

#include "empty_launch.cuh"

namespace rt = reduce_tune;
using rt::DType;
using rt::Op;

namespace {

struct Options {
  int device = 0;
  std::optional<std::string> db;
  std::vector<Op> ops = {Op::sum, Op::min, Op::max, Op::prod};
  std::vector<DType> dtypes = {DType::f32, DType::f64, DType::i32, DType::i64, DType::u32, DType::f16, DType::bf16};
  std::vector<std::uint64_t> sizes;
  bool store = true;
  bool check = false;  // exit 4 when a size breaks the guarantee
};

// How every implementation is timed: a caller's view by default (back-to-back calls at
// the host's pace); `--timing held` times the device's view, as the tuner ranks
// candidates (tuner/measure.h), to tell a host-side difference from a device-side one.
rt::tuner::TimingPolicy g_policy = rt::tuner::bench_policy();

bool is_prime(std::uint64_t n) {
  if (n < 2) return false;
  for (std::uint64_t p : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull})
    if (n % p == 0) return n == p;
  // Deterministic Miller-Rabin for 64-bit n with these bases.
  auto mul = [n](std::uint64_t a, std::uint64_t b) {
    return static_cast<std::uint64_t>(static_cast<unsigned __int128>(a) * b % n);
  };
  auto pow = [&](std::uint64_t a, std::uint64_t e) {
    std::uint64_t r = 1;
    for (a %= n; e; e >>= 1, a = mul(a, a))
      if (e & 1) r = mul(r, a);
    return r;
  };
  std::uint64_t d = n - 1;
  int s = 0;
  while (d % 2 == 0) d /= 2, ++s;
  for (std::uint64_t a : {2ull, 3ull, 5ull, 7ull, 11ull, 13ull, 17ull, 19ull, 23ull, 29ull, 31ull, 37ull}) {
    std::uint64_t x = pow(a, d);
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int r = 1; r < s && composite; ++r) {
      x = mul(x, x);
      if (x == n - 1) composite = false;
    }
    if (composite) return false;
  }
  return true;
}

// Per bucket 2^k (k = 10, 12, ..., 30): 2^k itself, 1.5 * 2^k + 1 and a prime near
// 1.3 * 2^k, sizes that are multiples of no tile, where users' sizes fall.
std::vector<std::uint64_t> default_bench_sizes() {
  std::vector<std::uint64_t> s;
  for (int b = 10; b <= 30; b += 2) {
    const std::uint64_t n = 1ull << b;
    s.push_back(n);
    s.push_back(n + n / 2 + 1);
    std::uint64_t p = n + n * 3 / 10;
    while (!is_prime(p)) --p;
    s.push_back(p);
  }
  std::sort(s.begin(), s.end());
  return s;
}

using reduce_tune_bench::empty_kernel;

// The host-side floor of any reduction, timed like the reductions (bench/empty_launch.cuh).
double empty_launch_us(cudaStream_t stream) { return reduce_tune_bench::empty_launch_us(stream, g_policy); }

int usage(const std::string& error) {
  std::cerr << "reduce-tune bench: " << error << "\n"
            << "usage: reduce-tune bench [--device N] [--db PATH] [--ops LIST] [--dtypes LIST] [--sizes LIST] [--no-store] "
               "[--check] [--timing paced|held]\n";
  return 2;
}

template <typename T>
__global__ void fill_values(T* out, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    std::uint64_t z = i * 0x9E3779B97F4A7C15ull;
    z ^= z >> 29;
    out[i] = static_cast<T>(static_cast<int>(z % 7) - 3);  // small values: products stay finite-ish
  }
}

struct Prod {
  template <typename T>
  __host__ __device__ T operator()(const T& a, const T& b) const { return a * b; }
};
// + and * in Out (CUB's accumulator type follows the operator's result): for a 16-bit
// input with a float output, the values are widened to float before the operator.
template <typename Out>
struct AddIn {
  __host__ __device__ Out operator()(Out a, Out b) const { return a + b; }
};
template <typename Out>
struct MulIn {
  __host__ __device__ Out operator()(Out a, Out b) const { return a * b; }
};

// cub::DeviceReduce for (op, T -> Out): temp storage is sized once for the largest n and
// reused, so the timed call is what a CUB user pays per reduction. CUB accumulates in the
// output type: __half into __half in half precision, __half into float in float.
template <typename T, typename Out = T>
class CubReducer {
 public:
  CubReducer(Op op, std::uint64_t max_n) : op_(op) {
    std::size_t bytes = 0;
    run(nullptr, bytes, static_cast<const T*>(nullptr), static_cast<Out*>(nullptr), max_n, nullptr);
    temp_ = rt::DeviceBuffer(std::max<std::size_t>(bytes, 16));
    temp_bytes_ = temp_.size();
  }
  void operator()(const T* in, std::uint64_t n, Out* out, cudaStream_t stream) {
    std::size_t bytes = temp_bytes_;
    RT_CUDA_CHECK(run(temp_.get(), bytes, in, out, n, stream));
  }
  std::string name() const {
    switch (op_) {
      case Op::sum:
        return std::is_same_v<T, Out> ? "cub::DeviceReduce::Sum" : "cub::DeviceReduce::Reduce(plus in the output type)";
      case Op::min: return "cub::DeviceReduce::Min";
      case Op::max: return "cub::DeviceReduce::Max";
      default: return "cub::DeviceReduce::Reduce(multiplies)";
    }
  }

 private:
  cudaError_t run(void* temp, std::size_t& bytes, const T* in, Out* out, std::uint64_t n, cudaStream_t stream) {
    const auto items = static_cast<std::int64_t>(n);
    switch (op_) {
      case Op::sum:
        if constexpr (std::is_same_v<T, Out>)
          return cub::DeviceReduce::Sum(temp, bytes, in, out, items, stream);
        else
          return cub::DeviceReduce::Reduce(temp, bytes, in, out, items, AddIn<Out>{}, Out(0), stream);
      case Op::min: return cub::DeviceReduce::Min(temp, bytes, in, out, items, stream);
      case Op::max: return cub::DeviceReduce::Max(temp, bytes, in, out, items, stream);
      default:
        if constexpr (std::is_same_v<T, Out>)
          return cub::DeviceReduce::Reduce(temp, bytes, in, out, items, Prod{}, Out(1), stream);
        else
          return cub::DeviceReduce::Reduce(temp, bytes, in, out, items, MulIn<Out>{}, Out(1), stream);
    }
  }
  Op op_;
  rt::DeviceBuffer temp_;
  std::size_t temp_bytes_ = 0;
};

struct Row {
  rt::db::BenchResult result;
  std::string label;
};

// What the guarantee asks, per size: tuned >= 0.97x the built-in default and >= 1.00x
// CUB, beyond the noise floor of a measurement (3% below 10 us, else 1%), seen in the table
// and confirmed by a second, alternating timing.
// Rounds of the second timing that a break must survive to count.
constexpr int kConfirmRounds = 9;

// The medians of `a` and `b` timed again: kConfirmRounds rounds, each timing both, which
// of them goes first alternating from round to round.
std::pair<double, double> alternating_medians(const std::function<void(int)>& a, int a_rotations,
                                              const std::function<void(int)>& b, int b_rotations,
                                              cudaStream_t stream) {
  std::vector<double> as, bs;
  for (int round = 0; round < kConfirmRounds; ++round)
    for (int k = 0; k < 2; ++k)
      if ((k == 0) == (round % 2 == 0))
        as.push_back(rt::tuner::time_reduction(a, a_rotations, stream, g_policy).median_ms);
      else
        bs.push_back(rt::tuner::time_reduction(b, b_rotations, stream, g_policy).median_ms);
  std::sort(as.begin(), as.end());
  std::sort(bs.begin(), bs.end());
  return {as[as.size() / 2], bs[bs.size() / 2]};
}

struct Verdicts {
  int sizes = 0;
  std::vector<std::string> broken;
  std::vector<std::string> unconfirmed;  // seen once, gone when timed again
  // Against the default, where the tuned call runs the very kernel the default does (the
  // tuner kept the built-in default): a difference there is the measurement's, not the
  // tuning's, and is listed apart rather than counted.
  std::vector<std::string> same_kernel;
  int small_sizes = 0, small_within = 0;  // n <= 2^16: within 1.15x an empty launch
  double worst_small = 0;                  // after timing again
  std::vector<std::string> small_retimed;  // over 1.15x in the table, then timed again
};

template <typename T, typename Out = T>
void bench_dtype(const Options& o, const rt::DeviceKey& device, rt::Context& tuned, rt::Context& fallback,
                 rt::db::Database* database, std::optional<rt::db::RowId> device_id, const std::string& run_id,
                 double empty_us, Verdicts& verdicts, std::vector<Row>& rows) {
  const DType dtype = rt::dtype_of<T>, out_dtype = rt::dtype_of<Out>;
  const std::string type_label =
      std::string(rt::to_string(dtype)) + (out_dtype == dtype ? "" : ">" + std::string(rt::to_string(out_dtype)));
  const std::uint64_t max_n = *std::max_element(o.sizes.begin(), o.sizes.end());
  const std::uint64_t l2 = static_cast<std::uint64_t>(device.l2_bytes);
  const std::uint64_t elements = std::max<std::uint64_t>(max_n, 8 * l2 / sizeof(T)) + 64;
  rt::DeviceBuffer input(elements * sizeof(T));
  fill_values<<<device.sm_count * 8, 256>>>(input.as<T>(), elements);
  RT_CUDA_CHECK(cudaDeviceSynchronize());
  rt::DeviceBuffer out(16);
  rt::Stream stream;
  const double peak = device.peak_bandwidth_gbps();

  for (Op op : o.ops) {
    CubReducer<T, Out> cub(op, max_n);
    const rt::TypeRule types = *rt::resolve_types(op, dtype, out_dtype).rule;
    const rt::db::ProblemClass problem{op, dtype, out_dtype, {}};
    std::vector<rt::db::Measurement> measured;
    if (database && device_id) measured = database->measurements(*device_id, problem);
    rt::NvrtcCompiler compiler;
    std::map<std::string, std::unique_ptr<rt::KernelSet>> classic_sets;
    for (std::uint64_t n : o.sizes) {
      const std::uint64_t stride = (n + 31) / 32 * 32;
      const int rotations = rt::tuner::rotation_count(stride * sizeof(T), device.l2_bytes, elements * sizeof(T));
      auto slice = [&](int s) { return input.as<T>() + static_cast<std::uint64_t>(s) * stride; };

      // The best measured multi_element config of this bucket, else its default.
      rt::ReduceConfig classic = rt::default_config_for(rt::Strategy::multi_element, op, types, device.arch());
      double best = 1e300;
      for (const auto& m : measured)
        if (m.status == rt::db::MeasurementStatus::ok && m.config.strategy == rt::Strategy::multi_element &&
            rt::size_bucket(m.problem.n) == rt::size_bucket(n) && m.median_ms < best) {
          best = m.median_ms;
          classic = m.config;
        }
      const rt::KernelSpec classic_spec{op, types, classic};
      auto& set = classic_sets[rt::to_string(classic_spec)];
      if (!set) {
        const std::vector<rt::KernelSpec> one = {classic_spec};
        set = std::make_unique<rt::KernelSet>(
            std::make_shared<const rt::CompiledProgram>(compiler.compile(rt::make_compile_request(one, device.arch()))), 1,
            device.arch());
      }
      const rt::LaunchPlan plan = rt::plan_launch(classic_spec, n, device.sm_count);
      rt::Workspace ws(plan.partial_count * 8 + 64, stream.get());
      const auto view = ws.view();
      rt::CudaLauncher launcher;

      struct Impl {
        std::string name, config;
        std::function<void(int)> enqueue;
      };
      const std::vector<Impl> impls = {
          {"tuned", rt::to_string(tuned.explain(op, dtype, out_dtype, n).config),
           [&](int s) { tuned.reduce(op, dtype, out_dtype, slice(s), n, out.get(), stream.get()); }},
          {"default", rt::to_string(fallback.explain(op, dtype, out_dtype, n).config),
           [&](int s) { fallback.reduce(op, dtype, out_dtype, slice(s), n, out.get(), stream.get()); }},
          {"cub", cub.name(), [&](int s) { cub(slice(s), n, out.as<Out>(), stream.get()); }},
          {"classic_best", rt::to_string(classic),
           [&](int s) {
             rt::enqueue_reduction(launcher, set->handles(0), classic_spec, plan, view, slice(s), n, out.get(),
                                   stream.get());
           }},
      };
      // Results must agree before timings mean anything.
      std::vector<double> results;
      for (const auto& impl : impls) {
        impl.enqueue(0);
        Out value{};
        RT_CUDA_CHECK(cudaMemcpyAsync(&value, out.get(), sizeof(Out), cudaMemcpyDeviceToHost, stream.get()));
        RT_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        if constexpr (std::is_arithmetic_v<Out>)
          results.push_back(static_cast<double>(value));
        else
          results.push_back(static_cast<double>(static_cast<float>(value)));
      }
      for (std::size_t i = 1; i < results.size(); ++i) {
        const double a = results[0], b = results[i];
        const bool same = (std::isnan(a) && std::isnan(b)) || a == b ||
                          std::fabs(a - b) <= 1e-3 * std::max(std::fabs(a), 1.0);
        if (!same)
          std::fprintf(stderr, "warning: %s<%s> n=%llu: %s gives %.17g, tuned gives %.17g\n",
                       std::string(rt::to_string(op)).c_str(), type_label.c_str(),
                       static_cast<unsigned long long>(n), impls[i].name.c_str(), b, a);
      }
      // Three rounds, the order rotated each round, so no implementation always runs
      // first (clocks and caches drift between measurements); the median of the rounds.
      constexpr int kRounds = 3;
      std::vector<std::vector<rt::tuner::TimingResult>> timings(impls.size());
      for (int round = 0; round < kRounds; ++round)
        for (std::size_t k = 0; k < impls.size(); ++k) {
          const std::size_t i = (k + static_cast<std::size_t>(round)) % impls.size();
          timings[i].push_back(
              rt::tuner::time_reduction(impls[i].enqueue, rotations, stream.get(), g_policy));
        }
      for (std::size_t i = 0; i < impls.size(); ++i) {
        std::vector<double> medians;
        rt::tuner::TimingResult t;
        for (const auto& r : timings[i]) {
          medians.push_back(r.median_ms);
          t.spread = std::max(t.spread, r.spread);
          t.repetitions += r.repetitions;
        }
        std::sort(medians.begin(), medians.end());
        t.median_ms = medians[medians.size() / 2];
        const Impl& impl = impls[i];
        Row row;
        auto& r = row.result;
        r.problem = rt::ProblemKey{op, dtype, out_dtype, {}, n};
        r.implementation = impl.name;
        r.config = impl.config;
        r.median_ms = t.median_ms;
        r.spread = t.spread;
        r.repetitions = t.repetitions;
        r.gbps = static_cast<double>(n * sizeof(T)) / (t.median_ms * 1e6);
        r.peak_gbps = peak;
        r.peak_fraction = r.gbps / peak;
        r.run_id = run_id;
        r.tool_version = rt::tuner::tool_version_string();
        r.created_at = rt::db::now_timestamp();
        rows.push_back(row);
      }
      // Print this size's line: time (us), GB/s and % of peak for each, ratio to CUB.
      const auto* last = &rows[rows.size() - 4];
      const double cub_ms = last[2].result.median_ms;
      std::printf("%-5s %-8s %11llu", std::string(rt::to_string(op)).c_str(), type_label.c_str(),
                  static_cast<unsigned long long>(n));
      for (int i = 0; i < 4; ++i)
        std::printf(" | %9.2f %7.1f %5.1f%%", last[i].result.median_ms * 1e3, last[i].result.gbps,
                    100 * last[i].result.peak_fraction);
      const double tuned_ms = last[0].result.median_ms, default_ms = last[1].result.median_ms;
      std::printf(" | %6.2fx %6.2fx %6.2fx", cub_ms / tuned_ms, cub_ms / default_ms, default_ms / tuned_ms);
      if (n <= (1u << 16)) std::printf(" | %5.2fx empty", tuned_ms * 1e3 / empty_us);
      std::printf("\n");
      std::fflush(stdout);
      ++verdicts.sizes;
      const std::string where = std::string(rt::to_string(op)) + "<" + type_label + "> n=" +
                                std::to_string(n);
      // A break seen in the table (beyond the noise floor, whatever the spreads) is timed
      // again before it counts: the tuned call and the other one alternate for
      // kConfirmRounds rounds and the medians are compared. Below 10 us the run-to-run
      // variation of one measurement (launch-rate drift) is wider than its own spread
      // says, either way; a real break (a second launch, a slower kernel) persists.
      auto confirmed = [&](std::size_t other, double floor_ratio, double* ratio) {
        const auto [m, t] =
            alternating_medians(impls[0].enqueue, rotations, impls[other].enqueue, rotations, stream.get());
        *ratio = t / m;
        return rt::tuner::guarantee_broken(m, t, floor_ratio);
      };
      auto judge = [&](std::size_t other, double other_ms, double floor_ratio, const char* name) {
        if (!rt::tuner::guarantee_broken(tuned_ms, other_ms, floor_ratio)) return;
        double again = 0;
        if (impls[other].config == impls[0].config) {
          confirmed(other, floor_ratio, &again);
          verdicts.same_kernel.push_back(where + ": tuned " + std::to_string(other_ms / tuned_ms) + "x " + name +
                                         ", " + std::to_string(again) + "x when timed again; both run " +
                                         impls[0].config);
        } else if (confirmed(other, floor_ratio, &again)) {
          verdicts.broken.push_back(where + ": tuned " + std::to_string(other_ms / tuned_ms) + "x " + name +
                                    ", " + std::to_string(again) + "x when timed again");
        } else {
          verdicts.unconfirmed.push_back(where + ": tuned " + std::to_string(other_ms / tuned_ms) + "x " + name +
                                         ", " + std::to_string(again) + "x when timed again");
        }
      };
      judge(1, default_ms, 0.97, "the default");
      judge(2, cub_ms, 1.0, "CUB");
      if (n <= (1u << 16)) {
        ++verdicts.small_sizes;
        double ratio = tuned_ms * 1e3 / empty_us;
        if (ratio > 1.15) {
          // Timed again as the guarantee's breaks are: the tuned call and the empty
          // kernel alternate for kConfirmRounds rounds, and their medians decide.
          const std::function<void(int)> launch_empty = [&](int) { empty_kernel<<<1, 32, 0, stream.get()>>>(); };
          const auto [mine, empty] = alternating_medians(impls[0].enqueue, rotations, launch_empty, 1, stream.get());
          const double again = mine / empty;
          verdicts.small_retimed.push_back(where + ": " + std::to_string(ratio) + "x an empty launch, " +
                                           std::to_string(again) + "x when timed again");
          ratio = again;
        }
        verdicts.worst_small = std::max(verdicts.worst_small, ratio);
        if (ratio <= 1.15) ++verdicts.small_within;
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string error;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    const std::string& a = args[i];
    if (a == "--no-store") {
      o.store = false;
    } else if (a == "--check") {
      o.check = true;
    } else if (a == "--help" || a == "-h") {
      std::cout << "usage: reduce-tune bench [--device N] [--db PATH] [--ops LIST] [--dtypes LIST] [--sizes LIST] "
                   "[--no-store] [--check] [--timing paced|held]\n"
                   "  --check   exit with 4 when, at some size, the tuned call is slower than 0.97x the built-in\n"
                   "            default or than CUB, beyond the noise of the measurement\n"
                   "  --timing  paced (default): back-to-back calls at the host's pace, as a caller sees them;\n"
                   "            held: the launch queue held until a sample's calls are enqueued, so the device\n"
                   "            runs them back to back (the tuner's view)\n";
      return 0;
    } else if (a == "--timing") {
      auto v = value();
      if (!v || (*v != "paced" && *v != "held")) return usage("--timing: paced or held");
      g_policy.hold_queue = *v == "held";
    } else if (a == "--device" || a == "--db" || a == "--ops" || a == "--dtypes" || a == "--sizes") {
      auto v = value();
      if (!v) return usage(a + ": needs a value");
      if (a == "--db") {
        o.db = *v;
      } else if (a == "--device") {
        try {
          o.device = std::stoi(*v);
        } catch (...) {
          return usage("--device: bad value '" + *v + "' (a device index such as 0)");
        }
      } else {
        // Reuse the tune command's parser for lists, sizes and their messages.
        const std::string key = a == "--sizes" ? "--sizes" : a;
        auto parsed = rt::cli::parse_tune_options({key, *v});
        if (!parsed.options) return usage(parsed.error);
        if (a == "--ops") o.ops = parsed.options->ops;
        if (a == "--dtypes") o.dtypes = parsed.options->dtypes;
        if (a == "--sizes") o.sizes = parsed.options->sizes;
      }
    } else {
      return usage("unknown option '" + a + "'");
    }
  }
  if (o.sizes.empty()) o.sizes = default_bench_sizes();
  try {
    const rt::DeviceKey device = rt::query_device(o.device);
    RT_CUDA_CHECK(cudaSetDevice(o.device));
    const std::filesystem::path db_path = o.db ? std::filesystem::path(*o.db) : rt::db::default_database_path();
    std::optional<rt::db::Database> database = rt::db::Database::open_read_only(db_path);
    std::optional<rt::db::RowId> device_id;
    if (database) device_id = database->find_device(device.uuid);
    if (!device_id)
      std::fprintf(stderr, "note: %s holds no tuning for this device: 'tuned' runs the built-in defaults\n",
                   db_path.c_str());
    rt::ContextOptions tuned_options;
    tuned_options.database = db_path;
    rt::Context tuned(tuned_options);
    rt::ContextOptions default_options;
    default_options.database = std::filesystem::path("/nonexistent/reduce-tune/none.db");
    rt::Context fallback(default_options);

    std::printf("device: %s, %d SMs, L2 %lld MiB, peak %.0f GB/s (memory bus %d bits x %lld MHz x 2)\n",
                device.name.c_str(), device.sm_count, static_cast<long long>(device.l2_bytes >> 20),
                device.peak_bandwidth_gbps(), device.memory_bus_bits,
                static_cast<long long>(device.memory_clock_khz / 1000));
    rt::Stream launch_stream;
    const double empty_us = empty_launch_us(launch_stream.get());
    std::printf("empty kernel launch, back to back: %.2f us (timing: %s)\n", empty_us,
                g_policy.hold_queue ? "held, the device's view" : "paced, a caller's view");
    std::printf("%-5s %-8s %11s | %-23s | %-23s | %-23s | %-23s | %s\n", "op", "type", "n", "tuned us GB/s %peak",
                "default us GB/s %peak", "cub us GB/s %peak", "multi_element us GB/s",
                "cub/tuned cub/default default/tuned | tuned/empty");
    std::vector<Row> rows;
    Verdicts verdicts;
    const std::string run_id = std::to_string(rt::db::now_timestamp().time_since_epoch().count());
    rt::db::Database* db_ptr = database ? &*database : nullptr;
    for (DType d : o.dtypes) {
      switch (d) {
        case DType::f32: bench_dtype<float>(o, device, tuned, fallback, db_ptr, device_id, run_id, empty_us, verdicts, rows); break;
        case DType::f64: bench_dtype<double>(o, device, tuned, fallback, db_ptr, device_id, run_id, empty_us, verdicts, rows); break;
        case DType::i32: bench_dtype<std::int32_t>(o, device, tuned, fallback, db_ptr, device_id, run_id, empty_us, verdicts, rows); break;
        case DType::i64: bench_dtype<std::int64_t>(o, device, tuned, fallback, db_ptr, device_id, run_id, empty_us, verdicts, rows); break;
        case DType::u32: bench_dtype<std::uint32_t>(o, device, tuned, fallback, db_ptr, device_id, run_id, empty_us, verdicts, rows); break;
        case DType::f16:
        case DType::bf16: {
          // Into the 16-bit type (CUB then accumulates in it), then the sum into f32 (CUB
          // accumulates in f32 too).
          if (d == DType::f16)
            bench_dtype<__half>(o, device, tuned, fallback, db_ptr, device_id, run_id, empty_us, verdicts, rows);
          else
            bench_dtype<__nv_bfloat16>(o, device, tuned, fallback, db_ptr, device_id, run_id, empty_us, verdicts, rows);
          if (std::find(o.ops.begin(), o.ops.end(), Op::sum) == o.ops.end()) break;
          Options sums = o;
          sums.ops = {Op::sum};
          if (d == DType::f16)
            bench_dtype<__half, float>(sums, device, tuned, fallback, db_ptr, device_id, run_id, empty_us, verdicts, rows);
          else
            bench_dtype<__nv_bfloat16, float>(sums, device, tuned, fallback, db_ptr, device_id, run_id, empty_us, verdicts, rows);
          break;
        }
      }
    }
    std::printf("guarantee: %zu of %d sizes break it (tuned >= 0.97x default and >= 1.00x CUB, beyond noise)\n",
                verdicts.broken.size(), verdicts.sizes);
    for (const auto& b : verdicts.broken) std::printf("  %s\n", b.c_str());
    if (!verdicts.unconfirmed.empty()) {
      std::printf("  not counted: %zu seen in the table but not when timed again (%d alternating rounds each)\n",
                  verdicts.unconfirmed.size(), kConfirmRounds);
      for (const auto& b : verdicts.unconfirmed) std::printf("    %s\n", b.c_str());
    }
    if (!verdicts.same_kernel.empty()) {
      std::printf("  not counted: %zu where the tuned call and the default run the same kernel (the difference "
                  "is the measurement's)\n",
                  verdicts.same_kernel.size());
      for (const auto& b : verdicts.same_kernel) std::printf("    %s\n", b.c_str());
    }
    if (verdicts.small_sizes > 0) {
      std::printf("small sizes (n <= 2^16): %d of %d within 1.15x an empty launch (%.2f us; a size over it in the "
                  "table is timed again, %d rounds alternating with the empty kernel); worst %.2fx\n",
                  verdicts.small_within, verdicts.small_sizes, empty_us, kConfirmRounds, verdicts.worst_small);
      for (const auto& b : verdicts.small_retimed) std::printf("  %s\n", b.c_str());
    }
    if (o.store) {
      database.reset();
      auto writable = rt::db::Database::open(db_path);
      std::vector<rt::db::BenchResult> results;
      for (const auto& r : rows) results.push_back(r.result);
      writable.store_bench_results(device, results);
      std::printf("stored %zu rows in %s\n", results.size(), db_path.c_str());
    }
    if (o.check && !verdicts.broken.empty()) return 4;
  } catch (const rt::NoDeviceError& e) {
    std::fprintf(stderr, "reduce-tune bench: %s\n", e.what());
    return 3;
  } catch (const rt::Error& e) {
    std::fprintf(stderr, "reduce-tune bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
