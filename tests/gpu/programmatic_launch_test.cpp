// Every kernel a call launches goes programmatically on sm_90 and later (the engine's
// StreamOrder, rt::begin_after_previous_grid): it may start while the kernel before it
// still runs, and must wait for it before it touches memory.
//   - Two-kernel plans: each test reduces two inputs in turn through one workspace, so a
//     second kernel that read early would find the other input's partials; the same
//     program compiled with mutation 6 (its second kernel does not wait) shows that it
//     would.
//   - A call's first kernel: a kernel that lets the next one launch at its start writes
//     the call's input late, so a first kernel that read early would find the round
//     before's value; mutation 7 (the first kernel does not wait) shows that it would.
// The mutated programs run until their race shows, up to kControlRounds rounds: on a GPU
// that other processes share it may take more than a few. Under a tool that runs kernels
// one at a time the mutated programs' races cannot show.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpu_env.h"
#include "reduce_tune/engine/axis.h"
#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/engine/kernel_set.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/tensor.h"

namespace reduce_tune {
namespace {

// `count` floats of `value`, on the device.
DeviceBuffer filled(std::size_t count, float value) {
  const std::vector<float> host(count, value);
  DeviceBuffer buffer(count * sizeof(float));
  RT_CUDA_CHECK(cudaMemcpy(buffer.get(), host.data(), count * sizeof(float), cudaMemcpyHostToDevice));
  return buffer;
}

// Rounds each unmutated program runs, and the most each mutated one runs until it
// reads too early.
constexpr int kRounds = 20;
constexpr int kControlRounds = 2000;

// What running a program's rounds found: how many rounds ran, how many of them had a
// wrong output.
struct Rounds {
  int run = 0;
  int wrong = 0;
};

// Runs `reduce(in, out)` `rounds` times (`until_wrong`: or until a round is wrong), its
// input alternating between ones and twos, each result read back and compared with
// `outputs` values of `reduced` times the input's value.
Rounds wrong_rounds(const std::function<void(const void*, void*, cudaStream_t)>& reduce, std::size_t count,
                    std::size_t outputs, std::uint64_t reduced, cudaStream_t stream, int rounds, bool until_wrong) {
  const DeviceBuffer ones = filled(count, 1.0f), twos = filled(count, 2.0f);
  DeviceBuffer out(outputs * sizeof(float));
  std::vector<float> got(outputs);
  Rounds result;
  for (int round = 0; round < rounds && !(until_wrong && result.wrong > 0); ++round) {
    ++result.run;
    const bool two = round % 2 == 1;
    reduce(two ? twos.get() : ones.get(), out.get(), stream);
    RT_CUDA_CHECK(cudaMemcpyAsync(got.data(), out.get(), outputs * sizeof(float), cudaMemcpyDeviceToHost, stream));
    RT_CUDA_CHECK(cudaStreamSynchronize(stream));
    const float want = static_cast<float>(reduced) * (two ? 2.0f : 1.0f);  // exact: below 2^24
    for (float v : got)
      if (v != want) {
        ++result.wrong;
        break;
      }
  }
  return result;
}

// A tool injected into CUDA may run kernels one after another (compute-sanitizer, which
// sets NVTX_INJECTION64_PATH; CUDA_INJECTION64_PATH names a tool CUDA loads): there a
// second kernel that does not wait finds the partials written.
bool kernels_serialized_by_a_tool() {
  for (const char* name : {"NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return true;
  }
  return false;
}

// `request` compiled with `mutation` (0: as it is) and loaded; its kernels launch
// programmatically exactly where the GPU can.
std::unique_ptr<KernelSet> program_with_mutation(NvrtcCompiler& compiler, CompileRequest request, int mutation,
                                                 const DeviceKey& device) {
  request.extra_options.clear();
  if (mutation) request.extra_options.push_back("-DRT_MUTATION=" + std::to_string(mutation));
  auto set = std::make_unique<KernelSet>(std::make_shared<const CompiledProgram>(compiler.compile(request)), 1,
                                         device.arch());
  EXPECT_EQ(set->handles(0).programmatic, device.arch() >= kProgrammaticLaunchArch);
  return set;
}

// Where the GPU launches programmatically, a mutated program's kernel that does not wait
// (`what`) must have read too early in one of the rounds it ran; under a tool that
// serializes kernels, a note instead.
void expect_the_race_shows(const DeviceKey& device, const Rounds& control, const std::string& label,
                           const char* what) {
  if (device.arch() < kProgrammaticLaunchArch) return;
  if (kernels_serialized_by_a_tool()) {
    std::printf("[ note     ] %s: a tool injected into CUDA serializes kernels; the mutated program's race is "
                "not expected to show\n",
                label.c_str());
    return;
  }
  EXPECT_GT(control.wrong, 0) << label << ": " << what << " read in time in all " << control.run << " rounds";
}

// Compiles `request` as it is and with mutation 6, reduces with each program's kernels
// (`enqueue`) as wrong_rounds does, and expects no wrong round from the first and, where
// the GPU launches programmatically, some from the second.
void expect_second_kernel_waits(
    const DeviceKey& device, CompileRequest request,
    const std::function<void(const KernelHandles&, const void*, void*, cudaStream_t)>& enqueue, std::size_t count,
    std::size_t outputs, std::uint64_t reduced, const std::string& label) {
  NvrtcCompiler compiler;
  Stream stream;
  Rounds rounds[2];
  for (int mutated : {0, 1}) {
    const auto set = program_with_mutation(compiler, request, mutated ? 6 : 0, device);
    rounds[mutated] = wrong_rounds(
        [&](const void* in, void* out, cudaStream_t s) { enqueue(set->handles(0), in, out, s); }, count, outputs,
        reduced, stream.get(), mutated ? kControlRounds : kRounds, mutated == 1);
  }
  EXPECT_EQ(rounds[0].wrong, 0) << label << ": of " << rounds[0].run << " rounds";
  expect_the_race_shows(device, rounds[1], label, "a second kernel that does not wait read the partials");
  std::printf("[ counts   ] %s, sm_%d: %d of %d rounds wrong; a second kernel that does not wait: %d wrong in %d\n",
              label.c_str(), device.arch(), rounds[0].wrong, rounds[0].run, rounds[1].wrong, rounds[1].run);
}

TEST(ProgrammaticLaunch, FlatFinalizeWaitsForTheReduceKernel) {
  RT_REQUIRE_GPU();
  const DeviceKey device = *testing::test_device();
  const KernelSpec spec =
      make_spec(Op::sum, DType::f32, DType::f32,
                *parse_config("vectorized:block=256,items=4,vec=4,grid=sm*4,passes=two_pass").config);
  const std::uint64_t n = 1 << 23;  // 2^23 ones or twos: sums exact in f32
  const LaunchPlan plan = plan_launch(spec, n, device.sm_count);
  ASSERT_TRUE(plan.finalize);
  Stream stream;
  Workspace workspace(plan.partial_count * sizeof(float), stream.get());
  const WorkspaceView view = workspace.view();
  CudaLauncher launcher;
  const std::vector<KernelSpec> one = {spec};
  expect_second_kernel_waits(
      device, make_compile_request(one, device.arch()),
      [&](const KernelHandles& k, const void* in, void* out, cudaStream_t s) {
        enqueue_reduction(launcher, k, spec, plan, view, in, n, out, s);
      },
      n, 1, n, "flat two-pass " + to_string(spec));
}

TEST(ProgrammaticLaunch, AxisFinalizeWaitsForTheMainKernel) {
  RT_REQUIRE_GPU();
  const DeviceKey device = *testing::test_device();
  const TypeRule f32{DType::f32, DType::f32, DType::f32};
  // Dense columns: 40 outputs of 60000, split across blocks in two kernels (split
  // columns of a thread per output fold in one launch).
  const CanonicalAxes shape = canonicalize(TensorDesc::contiguous({60000, 40}), {0}).axes;
  const AxisKernelSpec spec = builtin_axis_spec(Op::sum, f32, shape, device.sm_count);
  ASSERT_EQ(spec.split, AxisSplit::two_pass) << to_string(spec);
  const AxisLaunchPlan plan = plan_axis_launch(spec, shape, device.sm_count);
  ASSERT_GT(plan.finalize_grid, 0u);
  Stream stream;
  Workspace workspace(plan.partial_count * sizeof(float), stream.get());
  const WorkspaceView view = workspace.view();
  CudaLauncher launcher;
  expect_second_kernel_waits(
      device, make_axis_compile_request(spec, device.arch()),
      [&](const KernelHandles& k, const void* in, void* out, cudaStream_t s) {
        enqueue_axis_reduction(launcher, k, spec, plan, shape, in, out, &view, s);
      },
      shape.outputs * shape.reduced, shape.outputs, shape.reduced, "axis two-pass " + to_string(spec));
}

// The producer of the chain tests stands for a caller's kernel that lets the next one
// launch at its start (griddepcontrol.launch_dependents, as this library's finalize
// kernels do) and writes that next call's input late: one warp spins for about 50
// microseconds, then writes `value` times kChainScale into the first of the
// kChainOutputs floats that the next call reads (the others stay 0).
constexpr std::uint64_t kChainOutputs = 1024;
constexpr float kChainScale = 1024.0f;

const char* const kChainProducerSource = R"(
__global__ void chain_producer(const float* value, float* middle, float scale, long long spin) {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  const long long start = clock64();
  while (clock64() - start < spin) {
  }
  if (threadIdx.x == 0) middle[0] = *value * scale;
}
)";

struct ChainProducer {
  std::shared_ptr<const CompiledProgram> program;
  std::unique_ptr<LoadedLibrary> library;
  const void* kernel = nullptr;

  ChainProducer(const DeviceKey& device, NvrtcCompiler& compiler) {
    CompileRequest request;
    request.program_name = "chain_producer.cu";
    request.source = kChainProducerSource;
    request.name_expressions = {"chain_producer"};
    request.arch = device.arch();
    program = std::make_shared<const CompiledProgram>(compiler.compile(request));
    library = std::make_unique<LoadedLibrary>(program->cubin);
    kernel = library->kernel(program->lowered_names.at(0));
  }
  void enqueue(const void* value, void* middle, cudaStream_t stream) const {
    float scale = kChainScale;
    long long spin = 100000;  // clock cycles: about 50 us at 2 GHz
    void* args[] = {&value, &middle, &scale, &spin};
    CudaLauncher().launch(kernel, 1, 32, stream, args, StreamOrder::serial);
  }
};

// Runs the producer into `middle` and then `consume(middle, out)` `rounds` times
// (`until_wrong`: or until a round is wrong), the producer's value alternating between 1
// and 2; `graph`: both captured once into a CUDA graph and replayed. A round is wrong
// whose output is other than `want` (for 1; twice it for 2).
Rounds wrong_chained_rounds(const ChainProducer& producer,
                            const std::function<void(const void*, void*, cudaStream_t)>& consume,
                            const std::vector<float>& want, cudaStream_t stream, int rounds, bool graph,
                            bool until_wrong) {
  const DeviceBuffer one = filled(1, 1.0f), two = filled(1, 2.0f), middle = filled(kChainOutputs, 0.0f);
  DeviceBuffer value(sizeof(float)), out(want.size() * sizeof(float));
  auto chain = [&](cudaStream_t s) {
    producer.enqueue(value.get(), middle.get(), s);
    consume(middle.get(), out.get(), s);
  };
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    RT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    chain(stream);
    cudaGraph_t captured = nullptr;
    RT_CUDA_CHECK(cudaStreamEndCapture(stream, &captured));
    RT_CUDA_CHECK(cudaGraphInstantiate(&exec, captured, 0));
    RT_CUDA_CHECK(cudaGraphDestroy(captured));
  }
  std::vector<float> got(want.size());
  Rounds result;
  for (int round = 0; round < rounds && !(until_wrong && result.wrong > 0); ++round) {
    ++result.run;
    const bool twice = round % 2 == 1;
    RT_CUDA_CHECK(cudaMemcpyAsync(value.get(), twice ? two.get() : one.get(), sizeof(float),
                                  cudaMemcpyDeviceToDevice, stream));
    if (graph)
      RT_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    else
      chain(stream);
    RT_CUDA_CHECK(cudaMemcpyAsync(got.data(), out.get(), got.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
    RT_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i] * (twice ? 2.0f : 1.0f)) {
        ++result.wrong;
        break;
      }
  }
  if (exec) RT_CUDA_CHECK(cudaGraphExecDestroy(exec));
  return result;
}

// Compiles the consumer's `request` as it is and with mutation 7, chains it after the
// producer (on a stream, and as is in a graph), and expects no wrong round but from the
// mutated program, and some from it where the GPU launches programmatically.
void expect_first_kernel_waits(
    const DeviceKey& device, CompileRequest request,
    const std::function<void(const KernelHandles&, const void*, void*, cudaStream_t)>& enqueue,
    const std::vector<float>& want, const std::string& label) {
  NvrtcCompiler compiler;
  Stream stream;
  const ChainProducer producer(device, compiler);
  Rounds rounds[2], in_graph;
  for (int mutated : {0, 1}) {
    const auto set = program_with_mutation(compiler, request, mutated ? 7 : 0, device);
    const auto consume = [&](const void* in, void* out, cudaStream_t s) { enqueue(set->handles(0), in, out, s); };
    rounds[mutated] = wrong_chained_rounds(producer, consume, want, stream.get(), mutated ? kControlRounds : kRounds,
                                           false, mutated == 1);
    if (!mutated) in_graph = wrong_chained_rounds(producer, consume, want, stream.get(), kRounds, true, false);
  }
  EXPECT_EQ(rounds[0].wrong, 0) << label << ": of " << rounds[0].run << " rounds";
  EXPECT_EQ(in_graph.wrong, 0) << label << ": of " << in_graph.run << " graph replays";
  expect_the_race_shows(device, rounds[1], label, "a first kernel that does not wait read its input");
  std::printf("[ counts   ] %s, sm_%d: %d of %d rounds wrong (%d of %d graph replays); a first kernel that does "
              "not wait: %d wrong in %d\n",
              label.c_str(), device.arch(), rounds[0].wrong, rounds[0].run, in_graph.wrong, in_graph.run,
              rounds[1].wrong, rounds[1].run);
}

TEST(ProgrammaticLaunch, FlatCallWaitsForTheKernelBeforeIt) {
  RT_REQUIRE_GPU();
  const DeviceKey device = *testing::test_device();
  // One block over the 1024 floats: one kernel, the call's first and last.
  const KernelSpec spec = make_spec(Op::sum, DType::f32, DType::f32,
                                    *parse_config("warp_shuffle:block=256,items=1,vec=1,grid=1,passes=single_pass_ticket")
                                         .config);
  const LaunchPlan plan = plan_launch(spec, kChainOutputs, device.sm_count);
  Stream stream;
  Workspace workspace(std::max<std::size_t>(plan.partial_count, 1) * sizeof(float), stream.get());
  const WorkspaceView view = workspace.view();
  CudaLauncher launcher;
  const std::vector<KernelSpec> one = {spec};
  expect_first_kernel_waits(
      device, make_compile_request(one, device.arch()),
      [&](const KernelHandles& k, const void* in, void* out, cudaStream_t s) {
        enqueue_reduction(launcher, k, spec, plan, view, in, kChainOutputs, out, s);
      },
      {kChainScale}, "flat " + to_string(spec));
}

TEST(ProgrammaticLaunch, AxisCallWaitsForTheKernelBeforeIt) {
  RT_REQUIRE_GPU();
  const DeviceKey device = *testing::test_device();
  // The 1024 floats as 32 rows of 32, each row reduced: the first row's sum is the
  // producer's value, the others 0.
  const CanonicalAxes shape = canonicalize(TensorDesc::contiguous({32, 32}), {1}).axes;
  const AxisKernelSpec spec =
      builtin_axis_spec(Op::sum, TypeRule{DType::f32, DType::f32, DType::f32}, shape, device.sm_count);
  const AxisLaunchPlan plan = plan_axis_launch(spec, shape, device.sm_count);
  Stream stream;
  Workspace workspace(std::max<std::size_t>(plan.partial_count, 1) * sizeof(float), stream.get());
  const WorkspaceView view = workspace.view();
  CudaLauncher launcher;
  expect_first_kernel_waits(
      device, make_axis_compile_request(spec, device.arch()),
      [&](const KernelHandles& k, const void* in, void* out, cudaStream_t s) {
        enqueue_axis_reduction(launcher, k, spec, plan, shape, in, out, &view, s);
      },
      [] {
        std::vector<float> want(32, 0.0f);
        want[0] = kChainScale;
        return want;
      }(),
      "axis " + to_string(spec));
}

}  // namespace
}  // namespace reduce_tune
