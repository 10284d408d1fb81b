// The tuner's checks bite: kernels compiled with a deliberate fault (-DRT_MUTATION, see
// kernel_templates/rt/common.cuh) that skip one tile, drop the last element or the head,
// or return the identity are rejected at 2^30 elements, for every op and dtype, through
// the same checks every tuning candidate goes through. The same kernels without the
// fault pass.
#include <gtest/gtest.h>

#include <cstdio>

#include "gpu_env.h"
#include "reduce_tune/engine/search_space.h"
#include "reduce_tune/tuner/tuner.h"

namespace reduce_tune {
namespace {

TEST(Mutation, BrokenKernelsAreRejectedAt2To30ForEveryOpAndDtype) {
  RT_REQUIRE_GPU();
  if (testing::quick_mode()) GTEST_SKIP() << "not in quick mode (sanitizer run)";
  const std::uint64_t n = std::uint64_t{1} << 30;
  const char* mutations[] = {"skips a tile", "drops the last element", "drops the head", "returns the identity"};
  const DeviceKey device = *testing::test_device();
  tuner::CandidateChecker checker(0);
  int rejected = 0, cases = 0;
  for (DType dtype : kAllDTypes)
    for (Op op : kAllOps) {
      const TypeRule types = *resolve_types(op, dtype, default_out_dtype(op, dtype)).rule;
      // The one-launch vectorized default and a striped classic with one tile per block.
      std::vector<ReduceConfig> configs = {default_config_for(Strategy::vectorized, op, types, device.arch()),
                                           default_config_for(Strategy::complete_unroll, op, types, device.arch())};
      for (const auto& config : configs) {
        const KernelSpec spec{op, types, config};
        const std::string label = to_string(spec);
        EXPECT_EQ(checker.check(spec, n), "") << label << " (no fault)";
        for (int k = 1; k <= 4; ++k) {
          ++cases;
          const std::string why = checker.check(spec, n, {"-DRT_MUTATION=" + std::to_string(k)});
          if (!why.empty()) ++rejected;
          EXPECT_NE(why, "") << label << " " << mutations[k - 1] << " and passed";
        }
      }
    }
  std::printf("[ counts   ] mutation test: %d of %d broken kernels rejected at n = 2^30\n", rejected, cases);
}

}  // namespace
}  // namespace reduce_tune
