#include "reduce_tune/engine/launch.h"

#include <gtest/gtest.h>

#include <set>

#include <cmath>
#include <cstring>
#include <limits>

#include "reduce_tune/error.h"

namespace reduce_tune {
namespace {

KernelSpec spec(const std::string& text, Op op = Op::sum, DType dtype = DType::f32) {
  return make_spec(op, dtype, default_out_dtype(op, dtype), *parse_config(text).config);
}

TEST(KernelSpec, IdentityBitsAreEachOpsNeutralValue) {
  // Bit patterns written out by hand (IEEE-754 and two's complement), not computed.
  EXPECT_EQ(identity_bits(Op::sum, DType::f32), 0x00000000u);
  EXPECT_EQ(identity_bits(Op::prod, DType::f32), 0x3f800000u);
  EXPECT_EQ(identity_bits(Op::min, DType::f32), 0x7f800000u);
  EXPECT_EQ(identity_bits(Op::max, DType::f32), 0xff800000u);
  EXPECT_EQ(identity_bits(Op::prod, DType::f64), 0x3ff0000000000000u);
  EXPECT_EQ(identity_bits(Op::max, DType::f64), 0xfff0000000000000u);
  EXPECT_EQ(identity_bits(Op::min, DType::i32), 0x7fffffffu);
  EXPECT_EQ(identity_bits(Op::max, DType::i32), 0x80000000u);
  EXPECT_EQ(identity_bits(Op::min, DType::u32), 0xffffffffu);
  EXPECT_EQ(identity_bits(Op::max, DType::u32), 0x0u);
  EXPECT_EQ(identity_bits(Op::max, DType::i64), 0x8000000000000000u);
  EXPECT_EQ(identity_bits(Op::prod, DType::i64), 0x1u);
}

TEST(LaunchPlan, EmptyInputRunsOneBlockThatWritesTheIdentity) {
  const auto plan = plan_launch(spec("vectorized:passes=two_pass"), 0, 132);
  EXPECT_EQ(plan.grid, 1u);
  EXPECT_FALSE(plan.finalize);
  EXPECT_EQ(plan.partial_count, 0u);
}

TEST(LaunchPlan, TilesPolicyCoversTheInputOneTilePerBlock) {
  const auto plan = plan_launch(spec("interleaved:block=256"), 1000, 132);
  EXPECT_EQ(plan.grid, 4u);  // ceil(1000 / 256)
  EXPECT_TRUE(plan.finalize);
  EXPECT_EQ(plan.partial_count, 4u);
  EXPECT_EQ(plan.block, 256u);
}

TEST(LaunchPlan, PerSmPolicyIsCappedByTheTiles) {
  const auto s = spec("vectorized:block=256,items=4,vec=4,grid=sm*4");
  EXPECT_EQ(plan_launch(s, 1u << 30, 132).grid, 528u);
  EXPECT_EQ(plan_launch(s, 4096 * 3, 132).grid, 3u);
  EXPECT_EQ(plan_launch(s, 4096 * 3 + 1, 132).grid, 4u);
  EXPECT_EQ(plan_launch(spec("warp_shuffle:grid=100"), 1u << 30, 132).grid, 100u);
}

TEST(LaunchPlan, SinglePassPlansUseATicketAndNoSecondLaunch) {
  const auto ticket = plan_launch(spec("vectorized:passes=single_pass_ticket"), 1u << 24, 132);
  EXPECT_FALSE(ticket.finalize);
  EXPECT_TRUE(ticket.uses_ticket);
  EXPECT_EQ(ticket.partial_count, ticket.grid);
  const auto atomic = plan_launch(spec("vectorized:passes=single_pass_atomic"), 1u << 24, 132);
  EXPECT_TRUE(atomic.uses_accumulator);
  EXPECT_EQ(atomic.partial_count, 0u);
}

TEST(LaunchPlan, GridNeverExceedsTheHardwareLimit) {
  const auto plan = plan_launch(spec("neighbored:block=64"), 1ull << 40, 132);
  EXPECT_EQ(plan.grid, 0x7fffffffu);
}

struct RecordedLaunch {
  const void* kernel;
  std::uint32_t grid, block;
  void* stream;
  std::uint64_t n;
  unsigned count;
  StreamOrder order;
};

class FakeLauncher : public Launcher {
 public:
  void launch(const void* kernel, std::uint32_t grid, std::uint32_t block, void* stream, void** args,
              StreamOrder order) override {
    RecordedLaunch r{kernel, grid, block, stream, 0, 0, order};
    // args[0] points at the kernel's parameter struct: in, n, ...
    std::memcpy(&r.n, static_cast<const char*>(args[0]) + 8, 8);
    if (kernel == reinterpret_cast<const void*>(0xf1)) r.count = *static_cast<unsigned*>(args[1]);
    launches.push_back(r);
  }
  std::vector<RecordedLaunch> launches;
};

TEST(EnqueueReduction, TwoPassLaunchesReduceThenOneBlockFinalize) {
  const auto s = spec("interleaved:block=128");
  const auto plan = plan_launch(s, 10000, 132);
  std::vector<unsigned char> memory(kWorkspaceHeaderBytes + plan.partial_count * 4);
  FakeLauncher launcher;
  const KernelHandles k{reinterpret_cast<const void*>(0xa1), reinterpret_cast<const void*>(0xf1)};
  float in[1], out[1];
  enqueue_reduction(launcher, k, s, plan, workspace_view(memory.data(), memory.size()), in, 10000, out,
                    reinterpret_cast<void*>(0x5));
  ASSERT_EQ(launcher.launches.size(), 2u);
  EXPECT_EQ(launcher.launches[0].kernel, k.reduce);
  EXPECT_EQ(launcher.launches[0].grid, 79u);
  EXPECT_EQ(launcher.launches[0].n, 10000u);
  EXPECT_EQ(launcher.launches[1].kernel, k.finalize);
  EXPECT_EQ(launcher.launches[1].grid, 1u);
  EXPECT_EQ(launcher.launches[1].count, 79u);
  EXPECT_EQ(launcher.launches[1].stream, reinterpret_cast<void*>(0x5));
  // Kernels compiled for an arch before sm_90: both launches serial.
  EXPECT_EQ(launcher.launches[0].order, StreamOrder::serial);
  EXPECT_EQ(launcher.launches[1].order, StreamOrder::serial);
}

TEST(EnqueueReduction, KernelsOfAnSm90ProgramLaunchProgrammatically) {
  const auto s = spec("interleaved:block=128");
  const auto plan = plan_launch(s, 10000, 132);
  std::vector<unsigned char> memory(kWorkspaceHeaderBytes + plan.partial_count * 4);
  FakeLauncher launcher;
  KernelHandles k{reinterpret_cast<const void*>(0xa1), reinterpret_cast<const void*>(0xf1)};
  k.programmatic = true;
  float in[1], out[1];
  enqueue_reduction(launcher, k, s, plan, workspace_view(memory.data(), memory.size()), in, 10000, out, nullptr);
  ASSERT_EQ(launcher.launches.size(), 2u);
  EXPECT_EQ(launcher.launches[0].order, StreamOrder::programmatic);  // waits on the device for what precedes it
  EXPECT_EQ(launcher.launches[1].order, StreamOrder::programmatic);
  // A single-pass plan: its one kernel, programmatic too.
  launcher.launches.clear();
  const auto ticket = spec("interleaved:block=128,passes=single_pass_ticket");
  enqueue_reduction(launcher, k, ticket, plan_launch(ticket, 10000, 132), workspace_view(memory.data(), memory.size()),
                    in, 10000, out, nullptr);
  ASSERT_EQ(launcher.launches.size(), 1u);
  EXPECT_EQ(launcher.launches[0].order, StreamOrder::programmatic);
}

TEST(EnqueueReduction, RefusesAWorkspaceTooSmallForThePartials) {
  const auto s = spec("interleaved:block=128");
  const auto plan = plan_launch(s, 10000, 132);
  std::vector<unsigned char> memory(kWorkspaceHeaderBytes + 8);
  FakeLauncher launcher;
  float in[1], out[1];
  EXPECT_THROW(enqueue_reduction(launcher, {}, s, plan, workspace_view(memory.data(), memory.size()), in,
                                 10000, out, nullptr),
               Error);
  EXPECT_TRUE(launcher.launches.empty());
}

TEST(ValidateArguments, RejectsNullAndMisalignedPointers) {
  const auto s = spec("vectorized", Op::sum, DType::f64);
  alignas(16) double buffer[4] = {};
  try {
    validate_arguments(s, nullptr, 5, buffer);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "input pointer is null but n > 0");
  }
  EXPECT_NO_THROW(validate_arguments(s, nullptr, 0, buffer));
  EXPECT_THROW(validate_arguments(s, buffer, 1, nullptr), InvalidArgument);
  const auto* misaligned = reinterpret_cast<const unsigned char*>(buffer) + 4;
  try {
    validate_arguments(s, misaligned, 1, buffer);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("not aligned to its 8-byte element type f64"), std::string::npos);
  }
  EXPECT_NO_THROW(validate_arguments(s, buffer + 1, 3, buffer));  // any element offset is fine
}

TEST(Workspace, HeaderStartsWithTicketZeroAndIdentitiesInEverySlot) {
  unsigned char image[kWorkspaceHeaderBytes];
  make_workspace_header_image(image);
  unsigned ticket;
  std::memcpy(&ticket, image, 4);
  EXPECT_EQ(ticket, 0u);
  auto slot = [&](Op op, DType acc) { return image + 16 + accumulator_slot(op, acc) * 8; };
  float f;
  std::memcpy(&f, slot(Op::min, DType::f32), 4);
  EXPECT_EQ(f, std::numeric_limits<float>::infinity());
  double d;
  std::memcpy(&d, slot(Op::max, DType::f64), 8);
  EXPECT_EQ(d, -std::numeric_limits<double>::infinity());
  std::int32_t i;
  std::memcpy(&i, slot(Op::min, DType::i32), 4);
  EXPECT_EQ(i, std::numeric_limits<std::int32_t>::max());
  std::uint32_t u;
  std::memcpy(&u, slot(Op::max, DType::u32), 4);
  EXPECT_EQ(u, 0u);
  std::int64_t l;
  std::memcpy(&l, slot(Op::prod, DType::i64), 8);
  EXPECT_EQ(l, 1);
  // Every slot holds its own identity, and no two (op, accumulator) pairs share one.
  std::set<int> seen;
  for (Op op : kAllOps)
    for (DType acc : kAccumulatorDTypes) {
      EXPECT_TRUE(seen.insert(accumulator_slot(op, acc)).second);
      EXPECT_LT(accumulator_slot(op, acc), kAccumulatorSlots);
      std::uint64_t bits = 0;
      std::memcpy(&bits, slot(op, acc), size_of(acc));
      EXPECT_EQ(bits, identity_bits(op, acc)) << to_string(op) << " " << to_string(acc);
    }
  // The 16-bit floats accumulate in f32 and have no slot of their own.
  EXPECT_THROW(accumulator_slot(Op::sum, DType::f16), InvalidArgument);
  EXPECT_THROW(accumulator_slot(Op::max, DType::bf16), InvalidArgument);
}

TEST(KernelSpec, OnlyFloatAtomicsAreNondeterministic) {
  EXPECT_FALSE(is_deterministic(spec("vectorized:passes=single_pass_atomic")));
  EXPECT_TRUE(is_deterministic(spec("vectorized:passes=single_pass_atomic", Op::sum, DType::i32)));
  EXPECT_TRUE(is_deterministic(spec("vectorized:passes=single_pass_ticket")));
  EXPECT_THROW(make_spec(Op::min, DType::i32, DType::i64, default_config(Strategy::vectorized)), InvalidArgument);
}

}  // namespace
}  // namespace reduce_tune
