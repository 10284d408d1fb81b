// Every strategy x op x dtype of the coverage set against a CPU reference, on the GPU:
// awkward sizes, element offsets 0..3, inputs with NaN and +-Inf, integer sums that
// overflow, and the output poisoned before every run. One workspace per strategy is
// reused throughout, so a single-pass kernel that fails to reset it breaks later runs.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include "coverage.h"
#include "gpu_env.h"
#include "reduce_tune/engine/kernel_set.h"
#include "host_reference.h"

namespace reduce_tune {
namespace {

using testing::Expectation;
using testing::HostArray;
using testing::Pattern;

const std::vector<std::uint64_t>& test_sizes() {
  static const std::vector<std::uint64_t> full = {0,    1,    2,    31,          32,      33,
                                                  1000, 4095, 4096, 4097, 1048576 + 3, 10000019};
  static const std::vector<std::uint64_t> quick = {0, 1, 33, 4097, 70001};
  return testing::quick_mode() ? quick : full;
}
const std::vector<std::size_t>& test_offsets() {
  static const std::vector<std::size_t> full = {0, 1, 2, 3};
  static const std::vector<std::size_t> quick = {0, 3};
  return testing::quick_mode() ? quick : full;
}

std::vector<Pattern> patterns_for(Op op, const TypeRule& types) {
  if (!is_floating(types.in) || testing::quick_mode()) return {Pattern::exact};
  std::vector<Pattern> p = {Pattern::exact, Pattern::nan, Pattern::inf, Pattern::mixed_inf};
  if (op == Op::sum || op == Op::mean) p.push_back(Pattern::real);
  return p;
}

// Inputs live on the device once per (op, dtype, pattern); references are cached.
class Inputs {
 public:
  struct Entry {
    HostArray host;
    DeviceBuffer device;
  };
  const Entry& get(Op op, DType dtype, Pattern pattern) {
    std::lock_guard lock(mutex_);
    const auto key = std::make_tuple(op == Op::mean ? Op::sum : op, dtype, pattern);
    auto it = entries_.find(key);
    if (it != entries_.end()) return *it->second;
    auto e = std::make_unique<Entry>();
    const std::size_t count = test_sizes().back() + 4;
    e->host = testing::make_input(std::get<0>(key), dtype, pattern, count, 42);
    e->device = DeviceBuffer(e->host.bytes.size());
    RT_CUDA_CHECK(cudaMemcpy(e->device.get(), e->host.bytes.data(), e->host.bytes.size(),
                             cudaMemcpyHostToDevice));
    return *entries_.emplace(key, std::move(e)).first->second;
  }
  // Computes the references of every (op, types, pattern) x size x offset of `specs` on
  // all cores (single-threaded, the references of a full run take minutes).
  void prefetch(const std::vector<KernelSpec>& specs) {
    std::vector<std::tuple<Op, TypeRule, Pattern, std::size_t, std::uint64_t>> work;
    std::set<std::tuple<Op, DType, DType, Pattern, std::size_t, std::uint64_t>> seen;
    for (const auto& spec : specs)
      for (Pattern p : patterns_for(spec.op, spec.types)) {
        get(spec.op, spec.types.in, p);
        for (auto n : test_sizes())
          for (auto offset : test_offsets())
            if (seen.emplace(spec.op, spec.types.in, spec.types.out, p, offset, n).second)
              work.emplace_back(spec.op, spec.types, p, offset, n);
      }
    std::stable_sort(work.begin(), work.end(), [](const auto& a, const auto& b) {
      return std::get<4>(a) > std::get<4>(b);  // largest first
    });
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t)
      threads.emplace_back([&] {
        for (std::size_t i; (i = next++) < work.size();) {
          const auto& [op, types, p, offset, n] = work[i];
          expected(op, types, p, offset, n);
        }
      });
    for (auto& t : threads) t.join();
  }

  const Expectation& expected(Op op, const TypeRule& types, Pattern pattern, std::size_t offset,
                           std::uint64_t n) {
    const auto key = std::make_tuple(op, types.in, types.out, pattern, offset, n);
    {
      std::lock_guard lock(mutex_);
      auto it = references_.find(key);
      if (it != references_.end()) return it->second;
    }
    const Entry& e = get(op, types.in, pattern);
    Expectation x = testing::expect(op, types, e.host, offset, n);
    std::lock_guard lock(mutex_);
    return references_.emplace(key, x).first->second;
  }

 private:
  std::mutex mutex_;
  std::map<std::tuple<Op, DType, Pattern>, std::unique_ptr<Entry>> entries_;
  std::map<std::tuple<Op, DType, DType, Pattern, std::size_t, std::uint64_t>, Expectation> references_;
};

Inputs& inputs() {
  static Inputs instance;
  return instance;
}

// The coverage programs of every strategy, compiled in parallel once.
struct CompiledStrategy {
  std::vector<KernelSpec> specs;
  std::shared_ptr<const CompiledProgram> program;
  double compile_ms = 0;
};
const std::map<Strategy, CompiledStrategy>& compiled_strategies() {
  static const std::map<Strategy, CompiledStrategy> all = [] {
    const int arch = testing::test_device()->arch();
    std::vector<std::future<std::pair<Strategy, CompiledStrategy>>> jobs;
    for (Strategy s : kAllStrategies)
      jobs.push_back(std::async(std::launch::async, [s, arch] {
        CompiledStrategy c;
        c.specs = testing::coverage_specs(s, arch);
        if (testing::quick_mode()) {
          // The variants (every parameter value) and two base problems.
          const auto problems = testing::all_problem_types().size();
          std::vector<KernelSpec> some(c.specs.begin() + static_cast<long>(problems), c.specs.end());
          some.push_back(c.specs[0]);
          some.push_back(c.specs[problems / 2]);
          c.specs = some;
        }
        NvrtcCompiler compiler;
        const auto start = std::chrono::steady_clock::now();
        c.program = std::make_shared<const CompiledProgram>(
            compiler.compile(make_compile_request(c.specs, arch)));
        c.compile_ms = std::chrono::duration<double, std::milli>(
                           std::chrono::steady_clock::now() - start).count();
        return std::make_pair(s, std::move(c));
      }));
    std::map<Strategy, CompiledStrategy> out;
    for (auto& j : jobs) out.emplace(j.get());
    return out;
  }();
  return all;
}

class KernelFamily : public ::testing::TestWithParam<Strategy> {};

TEST_P(KernelFamily, MatchesCpuReference) {
  RT_REQUIRE_GPU();
  const DeviceKey& device = *testing::test_device();
  const CompiledStrategy& compiled = compiled_strategies().at(GetParam());
  KernelSet kernels(compiled.program, compiled.specs.size(), device.arch());

  std::uint64_t max_partials = 0;
  for (const auto& spec : compiled.specs)
    max_partials = std::max(max_partials, plan_launch(spec, test_sizes().back(), device.sm_count).partial_count);
  Workspace workspace_memory(max_partials * 8, nullptr);
  const WorkspaceView workspace = workspace_memory.view();
  DeviceBuffer out(8);
  CudaLauncher launcher;

  inputs().prefetch(compiled.specs);
  int runs = 0, failures = 0;
  for (std::size_t i = 0; i < compiled.specs.size(); ++i) {
    const KernelSpec& spec = compiled.specs[i];
    for (Pattern pattern : patterns_for(spec.op, spec.types)) {
      const auto& input = inputs().get(spec.op, spec.types.in, pattern);
      for (std::uint64_t n : test_sizes())
        for (std::size_t offset : test_offsets()) {
          const Expectation& expected = inputs().expected(spec.op, spec.types, pattern, offset, n);
          // Poison the output with a value the expected result does not have.
          const std::uint64_t poison = expected.bits == 0xa5a5a5a5a5a5a5a5ull ? 0x5a5a5a5a5a5a5a5aull
                                                                                : 0xa5a5a5a5a5a5a5a5ull;
          RT_CUDA_CHECK(cudaMemcpy(out.get(), &poison, 8, cudaMemcpyHostToDevice));
          const auto plan = plan_launch(spec, n, device.sm_count);
          const unsigned char* in =
              static_cast<const unsigned char*>(input.device.get()) + offset * size_of(spec.types.in);
          enqueue_reduction(launcher, kernels.handles(i), spec, plan, workspace, in, n, out.get(),
                            nullptr);
          RT_CUDA_CHECK(cudaDeviceSynchronize());
          std::uint64_t got = 0;
          RT_CUDA_CHECK(cudaMemcpy(&got, out.get(), size_of(spec.types.out), cudaMemcpyDeviceToHost));
          ++runs;
          const std::string diff =
              testing::mismatch(spec.types, got, expected, testing::addition_depth(spec, plan, n));
          if (!diff.empty() && ++failures <= 20)
            ADD_FAILURE() << to_string(spec) << " pattern=" << testing::pattern_name(pattern) << " n=" << n
                          << " offset=" << offset << " grid=" << plan.grid << ": " << diff;
        }
    }
  }
  std::printf("[ counts   ] %s: %zu instantiations, %d runs, %d failures, compiled in %.0f ms\n",
              std::string(to_string(GetParam())).c_str(), compiled.specs.size(), runs, failures,
              compiled.compile_ms);
  EXPECT_EQ(failures, 0);
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, KernelFamily, ::testing::ValuesIn(kAllStrategies),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// n = 2^31 + 7 int32 elements (8 GiB): 64-bit indexing in the tile loop, the vector
// peeling and the grid. The sum wraps; every element matters.
TEST(KernelFamily, SumsPast2To31Elements) {
  RT_REQUIRE_GPU();
  if (testing::quick_mode()) GTEST_SKIP() << "not in quick mode (sanitizer run)";
  const DeviceKey& device = *testing::test_device();
  const std::uint64_t n = (1ull << 31) + 7;
  const std::size_t offset = 1;
  std::size_t free_bytes = 0, total_bytes = 0;
  RT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < (n + 8) * 4 + (1ull << 30))
    GTEST_SKIP() << "needs " << ((n + 8) * 4 >> 20) << " MiB of device memory, "
                 << (free_bytes >> 20) << " MiB free";

  std::vector<std::int32_t> host(n + offset);
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::uint32_t> partial(workers);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      std::uint32_t sum = 0;
      for (std::uint64_t i = w; i < host.size(); i += workers) {
        std::uint64_t z = i + 0x9E3779B97F4A7C15ull;  // splitmix64
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        host[i] = static_cast<std::int32_t>(z ^ (z >> 31));
        if (i >= offset) sum += static_cast<std::uint32_t>(host[i]);
      }
      partial[w] = sum;
    });
  for (auto& t : threads) t.join();
  std::uint32_t expected = 0;
  for (auto p : partial) expected += p;

  DeviceBuffer input(host.size() * 4);
  RT_CUDA_CHECK(cudaMemcpy(input.get(), host.data(), host.size() * 4, cudaMemcpyHostToDevice));
  host.clear();
  host.shrink_to_fit();

  const TypeRule types = *resolve_types(Op::sum, DType::i32, DType::i32).rule;
  std::vector<KernelSpec> specs;
  for (Strategy s : {Strategy::vectorized, Strategy::multi_element, Strategy::neighbored,
                     Strategy::complete_unroll}) {
    KernelSpec spec{Op::sum, types, default_config_for(s, Op::sum, types, device.arch())};
    specs.push_back(spec);
  }
  specs[0].config.passes = Passes::single_pass_ticket;
  specs[1].config.passes = Passes::single_pass_atomic;
  NvrtcCompiler compiler;
  KernelSet kernels(std::make_shared<const CompiledProgram>(
                        compiler.compile(make_compile_request(specs, device.arch()))),
                    specs.size(), device.arch());
  CudaLauncher launcher;
  DeviceBuffer out(8);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto plan = plan_launch(specs[i], n, device.sm_count);
    Workspace ws(plan.partial_count * 8, nullptr);
    RT_CUDA_CHECK(cudaMemset(out.get(), 0xa5, 8));
    enqueue_reduction(launcher, kernels.handles(i), specs[i], plan, ws.view(),
                      static_cast<const std::int32_t*>(input.get()) + offset, n, out.get(), nullptr);
    RT_CUDA_CHECK(cudaDeviceSynchronize());
    std::int32_t got = 0;
    RT_CUDA_CHECK(cudaMemcpy(&got, out.get(), 4, cudaMemcpyDeviceToHost));
    EXPECT_EQ(static_cast<std::uint32_t>(got), expected)
        << to_string(specs[i]) << " grid=" << plan.grid;
  }
}

}  // namespace
}  // namespace reduce_tune
