// The pointer check is pure logic over what the driver reports, so every branch is
// tested here with made-up reports; the GPU tests feed it real allocations.
#include "reduce_tune/engine/pointer_check.h"

#include <gtest/gtest.h>

#include <cuda.h>

#include <string>

#include "reduce_tune/error.h"

namespace reduce_tune {
namespace {

const void* at(std::uintptr_t address) { return reinterpret_cast<const void*>(address); }

PointerInfo device_memory(int ordinal, std::uintptr_t start, std::size_t size) {
  PointerInfo info;
  info.memory_type = CU_MEMORYTYPE_DEVICE;
  info.device_ordinal = ordinal;
  info.device_pointer = start;
  info.range_start = start;
  info.range_size = size;
  info.access_flags = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;
  return info;
}

std::string problem(const PointerInfo& info, std::uintptr_t address, std::size_t bytes, int device = 0,
                    bool pageable_access = false) {
  const char* p = pointer_problem(info, at(address), bytes, device, pageable_access);
  return p ? p : "";
}

TEST(PointerCheck, DeviceMemoryOfTheCurrentDeviceInsideItsAllocationPasses) {
  const auto info = device_memory(0, 0x7f0000000000, 4096);
  EXPECT_EQ(problem(info, 0x7f0000000000, 4096), "");
  EXPECT_EQ(problem(info, 0x7f0000000004, 4092), "");
  EXPECT_EQ(problem(info, 0x7f0000000ffc, 4), "");
}

TEST(PointerCheck, RangePastTheAllocationIsRefused) {
  const auto info = device_memory(0, 0x7f0000000000, 4096);
  EXPECT_NE(problem(info, 0x7f0000000000, 4097).find("past the end"), std::string::npos);
  EXPECT_NE(problem(info, 0x7f0000000ffc, 8).find("past the end"), std::string::npos);
  // A huge byte count must not wrap around.
  EXPECT_NE(problem(info, 0x7f0000000010, ~std::size_t{0} - 8).find("past the end"), std::string::npos);
}

TEST(PointerCheck, PageableHostMemoryIsRefusedUnlessTheDeviceReadsIt) {
  const PointerInfo unknown;  // what the driver reports for malloc'd or stack memory
  EXPECT_NE(problem(unknown, 0x5555000, 64).find("pageable"), std::string::npos);
  EXPECT_EQ(problem(unknown, 0x5555000, 64, 0, /*pageable_access=*/true), "");
}

TEST(PointerCheck, MappedPinnedHostMemoryPassesAndUnmappedIsRefused) {
  PointerInfo pinned;
  pinned.memory_type = CU_MEMORYTYPE_HOST;
  pinned.device_pointer = 0x200000;
  pinned.range_start = 0x200000;
  pinned.range_size = 1 << 20;
  EXPECT_EQ(problem(pinned, 0x200000, 1024), "");
  pinned.device_pointer = 0;
  EXPECT_NE(problem(pinned, 0x200000, 1024).find("not mapped"), std::string::npos);
  pinned.device_pointer = 0x900000;  // mapped, at another address
  EXPECT_NE(problem(pinned, 0x200000, 1024).find("cudaHostGetDevicePointer"), std::string::npos);
}

TEST(PointerCheck, AnotherDevicesMemoryNeedsPeerAccess) {
  auto info = device_memory(1, 0x7f0000000000, 4096);
  info.access_flags = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE;
  EXPECT_NE(problem(info, 0x7f0000000000, 16, /*device=*/0).find("another device"), std::string::npos);
  info.access_flags = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE;  // peer access enabled
  EXPECT_EQ(problem(info, 0x7f0000000000, 16, 0), "");
  EXPECT_EQ(problem(device_memory(1, 0x7f0000000000, 4096), 0x7f0000000000, 16, 1), "");
}

TEST(PointerCheck, ManagedMemoryPasses) {
  PointerInfo managed;
  managed.memory_type = CU_MEMORYTYPE_DEVICE;
  managed.managed = true;
  managed.device_ordinal = 3;
  managed.range_start = 0x100000;
  managed.range_size = 256;
  EXPECT_EQ(problem(managed, 0x100000, 256), "");
  EXPECT_NE(problem(managed, 0x100000, 257).find("past the end"), std::string::npos);
}

TEST(PointerCheck, InsideAllocationTellsWhetherASecondPointerNeedsItsOwnQuery) {
  const auto info = device_memory(0, 0x7f0000000000, 4096);
  EXPECT_TRUE(inside_allocation(info, at(0x7f0000000000), 4096));
  EXPECT_TRUE(inside_allocation(info, at(0x7f0000000ffc), 4));
  EXPECT_FALSE(inside_allocation(info, at(0x7f0000000ffc), 8));
  EXPECT_FALSE(inside_allocation(info, at(0x7f0000001000), 4));
  EXPECT_FALSE(inside_allocation(info, at(0x7effffffffff), 4));
  EXPECT_FALSE(inside_allocation(PointerInfo{}, at(0x5555000), 4));  // no range known
}

TEST(PointerCheck, DescribesTheArgumentInTheError) {
  // check_device_accessible asks the driver; without one it must fail as CudaError or
  // InvalidArgument, never crash.
  int on_stack = 0;
  try {
    check_device_accessible(&on_stack, sizeof(on_stack), 0, false, "input");
    GTEST_SKIP() << "a device that reads pageable memory";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("input pointer"), std::string::npos) << what;
    EXPECT_NE(what.find("pageable"), std::string::npos) << what;
  } catch (const CudaError&) {
    // No driver here: the runtime could not ask.
  }
}


PointerInfo with_id(PointerInfo info, std::uint64_t id) {
  info.buffer_id = id;
  return info;
}

TEST(VerifiedRanges, FindsOnlyRangesInsideARememberedAllocationOfTheSameDevice) {
  VerifiedRanges v;
  EXPECT_EQ(v.find(0, at(0x7f0000000000), 4).buffer_id, 0u);
  v.remember(0, with_id(device_memory(0, 0x7f0000000000, 4096), 41));
  const PointerInfo hit = v.find(0, at(0x7f0000000ffc), 4);
  EXPECT_EQ(hit.buffer_id, 41u);
  EXPECT_EQ(hit.range_start, 0x7f0000000000u);
  EXPECT_EQ(hit.range_size, 4096u);
  EXPECT_EQ(v.find(0, at(0x7f0000000000), 4096).buffer_id, 41u);
  EXPECT_EQ(v.find(0, at(0x7f0000000ffc), 8).buffer_id, 0u);   // runs past the end
  EXPECT_EQ(v.find(0, at(0x7effffffffff), 4).buffer_id, 0u);   // starts before it
  EXPECT_EQ(v.find(1, at(0x7f0000000000), 4).buffer_id, 0u);   // another device
  EXPECT_EQ(v.find(0, at(0x7f0000001000), 4).buffer_id, 0u);
  // The same address again (freed and allocated anew, smaller): the new description
  // replaces the old one, so the old extent is not trusted.
  v.remember(0, with_id(device_memory(0, 0x7f0000000000, 1024), 42));
  EXPECT_EQ(v.find(0, at(0x7f0000000000), 1024).buffer_id, 42u);
  EXPECT_EQ(v.find(0, at(0x7f0000000000), 2048).buffer_id, 0u);
  v.clear();
  EXPECT_EQ(v.find(0, at(0x7f0000000000), 4).buffer_id, 0u);
}

TEST(VerifiedRanges, NeverRemembersHostMemoryAnotherDevicesMemoryOrAnAllocationWithoutId) {
  VerifiedRanges v;
  PointerInfo pageable;  // unknown to CUDA
  pageable.range_start = 0x5555000;
  pageable.range_size = 4096;
  pageable.buffer_id = 7;
  v.remember(0, pageable);
  EXPECT_EQ(v.find(0, at(0x5555000), 4).buffer_id, 0u);
  PointerInfo pinned = with_id(device_memory(0, 0x200000000, 4096), 8);
  pinned.memory_type = CU_MEMORYTYPE_HOST;
  v.remember(0, pinned);
  EXPECT_EQ(v.find(0, at(0x200000000), 4).buffer_id, 0u);
  v.remember(0, with_id(device_memory(1, 0x300000000, 4096), 9));  // device 1's memory, called on device 0
  EXPECT_EQ(v.find(0, at(0x300000000), 4).buffer_id, 0u);
  EXPECT_EQ(v.find(1, at(0x300000000), 4).buffer_id, 0u);
  v.remember(0, with_id(device_memory(0, 0x400000000, 0), 10));  // no range reported
  EXPECT_EQ(v.find(0, at(0x400000000), 0).buffer_id, 0u);
  v.remember(0, device_memory(0, 0x600000000, 4096));  // no buffer id reported
  EXPECT_EQ(v.find(0, at(0x600000000), 4).buffer_id, 0u);
  PointerInfo managed = with_id(device_memory(0, 0x500000000, 4096), 11);
  managed.managed = true;
  v.remember(0, managed);
  EXPECT_EQ(v.find(0, at(0x500000000), 4096).buffer_id, 11u);
  EXPECT_TRUE(v.find(0, at(0x500000000), 4096).managed);
}

TEST(VerifiedRanges, ForgetsTheOldestWhenFull) {
  VerifiedRanges v;
  const std::uintptr_t base = 0x7f0000000000;
  for (std::size_t i = 0; i <= VerifiedRanges::kEntries; ++i)
    v.remember(0, with_id(device_memory(0, base + i * 0x10000, 4096), 100 + i));
  EXPECT_EQ(v.find(0, at(base), 4).buffer_id, 0u);  // the first was evicted by the last
  for (std::size_t i = 1; i <= VerifiedRanges::kEntries; ++i)
    EXPECT_EQ(v.find(0, at(base + i * 0x10000), 4).buffer_id, 100 + i) << i;
}

}  // namespace
}  // namespace reduce_tune
