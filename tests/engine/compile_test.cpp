// Every strategy x op x dtype instantiation of the coverage set compiles with NVRTC for
// sm_90 and sm_80 (no GPU needed), one NVRTC program per strategy and arch.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "reduce_tune/engine/compiler.h"
#include "coverage.h"
#include "reduce_tune/engine/kernel_set.h"
#include "reduce_tune/error.h"

namespace reduce_tune {
namespace {

class CompileAll : public ::testing::TestWithParam<std::tuple<Strategy, int>> {};

TEST_P(CompileAll, EveryOpAndDtypeCompiles) {
  const auto [strategy, arch] = GetParam();
  const auto specs = testing::coverage_specs(strategy, arch);
  ASSERT_GE(specs.size(), testing::all_problem_types().size());
  NvrtcCompiler compiler;
  const CompileRequest request = make_compile_request(specs, arch);
  const auto start = std::chrono::steady_clock::now();
  CompiledProgram program;
  try {
    program = compiler.compile(request);
  } catch (const NvrtcError& e) {
    FAIL() << e.what();
  }
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("[ timing   ] %s sm_%d: %zu instantiations in %.0f ms (%.1f ms each)\n",
              std::string(to_string(strategy)).c_str(), arch, specs.size(), ms, ms / specs.size());
  EXPECT_FALSE(program.cubin.empty());
  ASSERT_EQ(program.lowered_names.size(), 2 * specs.size());
  for (const auto& name : program.lowered_names) EXPECT_EQ(name.rfind("_Z", 0), 0u) << name;
  // Each spec's main kernel, then its finalize kernel, as KernelSet tells them apart.
  for (std::size_t i = 0; i < specs.size(); ++i) {
    EXPECT_FALSE(is_finalize_kernel_name(program.lowered_names[2 * i])) << program.lowered_names[2 * i];
    EXPECT_TRUE(is_finalize_kernel_name(program.lowered_names[2 * i + 1])) << program.lowered_names[2 * i + 1];
  }
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<Strategy, int>>& info) {
  return std::string(to_string(std::get<0>(info.param))) + "_sm" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllStrategies, CompileAll,
                         ::testing::Combine(::testing::ValuesIn(kAllStrategies),
                                            ::testing::Values(90, 80)),
                         param_name);

}  // namespace
}  // namespace reduce_tune
