#include "reduce_tune/engine/compiler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "reduce_tune/engine/binary_cache.h"
#include "fake_compiler.h"
#include "reduce_tune/engine/kernel_set.h"
#include "reduce_tune/log.h"
#include "reduce_tune/error.h"
#include "reduce_tune/engine/source_gen.h"
#include "reduce_tune/engine/kernel_sources.h"

namespace reduce_tune {
namespace {

KernelSpec f32_sum(const std::string& text) {
  return make_spec(Op::sum, DType::f32, DType::f32, *parse_config(text).config);
}

TEST(SourceGen, WritesTheConfigAndAssertsHostDeviceAgreement) {
  const std::vector<KernelSpec> specs = {f32_sum("vectorized"), f32_sum("neighbored")};
  const GeneratedProgram p = generate_program(specs);
  EXPECT_NE(p.source.find("#include \"rt/kernels.cuh\""), std::string::npos);
  EXPECT_NE(p.source.find("rt::Config<rt::SumOp, float, float, float, rt::strategy_vectorized, 256, 4, 4, 2, "
                          "rt::warp_shuffle, rt::passes_single_pass_ticket, rt::load_ldg>"),
            std::string::npos)
      << p.source;
  EXPECT_NE(p.source.find("kTileElements == 4096ull"), std::string::npos);
  EXPECT_NE(p.source.find("rt::strategy_vectorized == 9"), std::string::npos);
  ASSERT_EQ(p.names.size(), 2u);
  EXPECT_EQ(p.name_expressions().size(), 4u);
  EXPECT_EQ(p.names[1].reduce.rfind("rt::reduce_kernel<rt::Config<rt::SumOp", 0), 0u);
}

TEST(CompileRequest, RuntimeProgramsDependOnTheKernelTemplatesAlone) {
  // The tuner's own device code (its test-data generator) is never part of a runtime
  // program: editing it must not invalidate users' cached kernels.
  const KernelSpec spec{Op::sum, {DType::f32, DType::f32, DType::f32}, ReduceConfig{}};
  const std::vector<KernelSpec> one = {spec};
  const CompileRequest request = make_compile_request(one, 90);
  ASSERT_FALSE(request.headers.empty());
  for (const auto& header : request.headers) EXPECT_EQ(header.name.rfind("rt/", 0), 0u) << header.name;
  EXPECT_EQ(request.headers.size(), kernel_template_sources().size());
  // And the headers are part of the key: another header set, another key.
  CompileRequest other = request;
  other.headers.pop_back();
  EXPECT_NE(binary_cache_key(request, "nvrtc 13.0"), binary_cache_key(other, "nvrtc 13.0"));
}

TEST(NvrtcCompiler, CompileErrorCarriesTheBuildLog) {
  NvrtcCompiler compiler;
  CompileRequest request;
  request.source = "#include \"rt/common.cuh\"\nstatic_assert(sizeof(int) == 3, \"sizes are off\");\n";
  const auto templates = kernel_template_sources();
  request.headers.assign(templates.begin(), templates.end());
  request.arch = 90;
  try {
    compiler.compile(request);
    FAIL() << "expected NvrtcError";
  } catch (const NvrtcError& e) {
    EXPECT_NE(e.log().find("sizes are off"), std::string::npos) << e.log();
    EXPECT_NE(std::string(e.what()).find("nvrtcCompileProgram"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("sizes are off"), std::string::npos);
  }
}

TEST(NvrtcCompiler, DeviceSideRejectsASourceThatDisagreesWithTheHost) {
  const std::vector<KernelSpec> specs = {f32_sum("vectorized")};
  CompileRequest request = make_compile_request(specs, 90);
  const auto at = request.source.find("kTileElements == 4096ull");
  ASSERT_NE(at, std::string::npos);
  request.source.replace(at, 25, "kTileElements == 4095ull");
  NvrtcCompiler compiler;
  try {
    compiler.compile(request);
    FAIL() << "expected NvrtcError";
  } catch (const NvrtcError& e) {
    EXPECT_NE(e.log().find("host and device tile sizes differ"), std::string::npos) << e.log();
  }
}

TEST(NvrtcCompiler, ReportsItsVersionAndOptions) {
  NvrtcCompiler compiler;
  EXPECT_EQ(compiler.version().rfind("nvrtc 1", 0), 0u) << compiler.version();
  CompileRequest r;
  r.arch = 80;
  r.extra_options = {"--maxrregcount=64"};
  const auto options = nvrtc_options(r);
  EXPECT_EQ(options.front(), "--gpu-architecture=sm_80");
  EXPECT_EQ(options.back(), "--maxrregcount=64");
}

TEST(NvrtcCompiler, LooksForItsBuiltinsBesideLibnvrtc) {
  EXPECT_EQ(nvrtc_builtins_path("/opt/cuda/lib64/libnvrtc.so.13", 13, 0),
            "/opt/cuda/lib64/libnvrtc-builtins.so.13.0");
  EXPECT_EQ(nvrtc_builtins_path("libnvrtc.so.12", 12, 4), "./libnvrtc-builtins.so.12.4");
}

// Run by CTest under `ld.so --inhibit-cache` as well (NvrtcBuiltinsWithoutLoaderCache):
// there NVRTC cannot find its builtins by name, and only the preload beside libnvrtc
// lets a compile succeed, as on a machine whose toolkit is not in ld.so.conf.
TEST(NvrtcCompiler, CompilesAKernel) {
  CompileRequest r;
  r.arch = 90;
  r.program_name = "tiny.cu";
  r.source = "extern \"C\" __global__ void tiny(float* p) { p[threadIdx.x] += 1.0f; }\n";
  NvrtcCompiler compiler;
  const CompiledProgram program = compiler.compile(r);
  EXPECT_GT(program.cubin.size(), 0u);
}

using testing::FakeCompiler;

class MemoryStore : public BinaryStore {
 public:
  std::optional<std::vector<char>> load(const std::string& key) override {
    auto it = blobs.find(key);
    if (it == blobs.end()) return std::nullopt;
    return it->second;
  }
  void store(const std::string& key, int, const std::string&, const std::vector<char>& blob) override {
    blobs[key] = blob;
  }
  std::map<std::string, std::vector<char>> blobs;
};

TEST(BinaryCache, CompilesEachRequestOnceEvenUnderConcurrency) {
  FakeCompiler compiler;
  BinaryCache cache(compiler);
  const std::vector<KernelSpec> specs = {f32_sum("vectorized")};
  const CompileRequest request = make_compile_request(specs, 90);
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<const CompiledProgram>> results(8);
  for (int t = 0; t < 8; ++t) threads.emplace_back([&, t] { results[t] = cache.get(request); });
  for (auto& t : threads) t.join();
  EXPECT_EQ(compiler.compiles.load(), 1);
  for (const auto& r : results) EXPECT_EQ(r, results[0]);
  EXPECT_EQ(cache.stats().compiles, 1u);
  EXPECT_EQ(cache.stats().hits, 7u);
}

TEST(BinaryCache, KeyDependsOnArchSourceAndCompilerVersion) {
  const std::vector<KernelSpec> specs = {f32_sum("vectorized")};
  const CompileRequest a = make_compile_request(specs, 90);
  CompileRequest b = a;
  b.arch = 80;
  CompileRequest c = a;
  c.source += "\n";
  const std::string key = binary_cache_key(a, "nvrtc 13.0");
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(key, binary_cache_key(a, "nvrtc 13.0"));
  EXPECT_NE(key, binary_cache_key(b, "nvrtc 13.0"));
  EXPECT_NE(key, binary_cache_key(c, "nvrtc 13.0"));
  EXPECT_NE(key, binary_cache_key(a, "nvrtc 13.1"));
}

TEST(BinaryCache, FailuresAreNotCached) {
  FakeCompiler compiler;
  compiler.fail = true;
  BinaryCache cache(compiler);
  const std::vector<KernelSpec> specs = {f32_sum("vectorized")};
  const CompileRequest request = make_compile_request(specs, 90);
  EXPECT_THROW(cache.get(request), NvrtcError);
  EXPECT_THROW(cache.get(request), NvrtcError);
  EXPECT_EQ(compiler.compiles.load(), 2);
  compiler.fail = false;
  EXPECT_NE(cache.get(request), nullptr);
}

TEST(BinaryCache, PersistentStoreServesASecondProcessWithoutCompiling) {
  MemoryStore store;
  const std::vector<KernelSpec> specs = {f32_sum("vectorized")};
  const CompileRequest request = make_compile_request(specs, 90);
  std::shared_ptr<const CompiledProgram> first;
  {
    FakeCompiler compiler;
    BinaryCache cache(compiler, &store);
    first = cache.get(request);
    EXPECT_EQ(compiler.compiles.load(), 1);
  }
  testing::expect_served_by_the_store(store, request, *first);
}

TEST(BinaryCache, CorruptStoredBlobIsRecompiledWithAWarning) {
  MemoryStore store;
  const std::vector<KernelSpec> specs = {f32_sum("vectorized")};
  const CompileRequest request = make_compile_request(specs, 90);
  store.blobs[binary_cache_key(request, "fake 1.0")] = {'j', 'u', 'n', 'k'};
  std::vector<std::string> warnings;
  auto previous = set_log_sink([&](LogLevel level, std::string_view m) {
    if (level == LogLevel::warning) warnings.emplace_back(m);
  });
  FakeCompiler compiler;
  BinaryCache cache(compiler, &store);
  EXPECT_NE(cache.get(request), nullptr);
  set_log_sink(previous);
  EXPECT_EQ(compiler.compiles.load(), 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cannot be read"), std::string::npos);
  EXPECT_NE(store.blobs[binary_cache_key(request, "fake 1.0")].size(), 4u);  // replaced
}

TEST(BinaryCache, AStoreThatFailsToLoadIsAMiss) {
  // A damaged compressed blob or a locked database: the store throws; the cache compiles.
  struct ThrowingStore final : BinaryStore {
    std::optional<std::vector<char>> load(const std::string&) override { throw Error("damaged blob"); }
    void store(const std::string&, int, const std::string&, const std::vector<char>&) override { ++stored; }
    int stored = 0;
  } store;
  const std::vector<KernelSpec> specs = {f32_sum("vectorized")};
  const CompileRequest request = make_compile_request(specs, 90);
  auto previous = set_log_sink([](LogLevel, std::string_view) {});
  FakeCompiler compiler;
  BinaryCache cache(compiler, &store);
  EXPECT_NE(cache.get(request), nullptr);
  set_log_sink(previous);
  EXPECT_EQ(compiler.compiles.load(), 1);
  EXPECT_EQ(store.stored, 1);
}

TEST(CompiledProgramBlob, RoundTripsAndRejectsGarbage) {
  CompiledProgram p;
  p.cubin = {'\x7f', 'E', 'L', 'F', '\0', '\1'};
  p.lowered_names = {"_Z1av", "_Z1bv"};
  p.log = "warning: none";
  const auto blob = serialize(p);
  const auto q = deserialize_program(blob);
  EXPECT_EQ(q.cubin, p.cubin);
  EXPECT_EQ(q.lowered_names, p.lowered_names);
  EXPECT_EQ(q.log, p.log);
  EXPECT_THROW(deserialize_program({'x'}), Error);
  auto truncated = blob;
  truncated.pop_back();
  EXPECT_THROW(deserialize_program(truncated), Error);
}

}  // namespace
}  // namespace reduce_tune
