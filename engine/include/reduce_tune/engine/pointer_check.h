// Refusing pointers a kernel cannot read before anything is launched. A kernel that
// reads pageable host memory, another device's memory without peer access, or past the
// end of an allocation faults with an illegal address, and that poisons the CUDA
// context of the whole process; so each call asks the driver what its pointers are
// (cuPointerGetAttributes, reached through cudaGetDriverEntryPointByVersion: nothing
// links libcuda) and throws InvalidArgument instead.
#pragma once

#include <cstddef>
#include <cstdint>

namespace reduce_tune {

// What the driver says about one address.
struct PointerInfo {
  unsigned memory_type = 0;      // CUmemorytype: 0 unknown to CUDA (pageable), 1 host, 2 device, 4 unified
  int device_ordinal = -1;       // the device that owns it (device memory)
  bool managed = false;          // cudaMallocManaged
  std::uintptr_t device_pointer = 0;  // where the device reaches it (0: it cannot)
  std::uintptr_t range_start = 0;     // the allocation (or reserved range) holding it
  std::size_t range_size = 0;
  unsigned access_flags = 0;     // CU_POINTER_ATTRIBUTE_ACCESS_FLAG_*, for the current device
  std::uint64_t buffer_id = 0;   // unique to the allocation for the life of the process (0: none)
};

// The driver's view of `pointer`; throws CudaError when the query itself fails. The
// access flags and device pointer are asked for only where they decide something (not
// for device memory of `current_device`); the one-argument form asks for everything.
PointerInfo query_pointer(const void* pointer, int current_device);
PointerInfo query_pointer(const void* pointer);

// Why the device `device_ordinal` cannot use [pointer, pointer + bytes), or nullptr when
// it can. `what` names the argument ("input", "output"); `pageable_access` is the
// device's cudaDevAttrPageableMemoryAccess (HMM or ATS systems read pageable memory).
// Pure logic over `info`, so every branch is tested without a GPU.
const char* pointer_problem(const PointerInfo& info, const void* pointer, std::size_t bytes, int device_ordinal,
                            bool pageable_access);

// Throws InvalidArgument naming `what`, the pointer and the reason when the device
// cannot use the range; returns what the driver said otherwise.
PointerInfo check_device_accessible(const void* pointer, std::size_t bytes, int device_ordinal, bool pageable_access,
                                    const char* what);

// True when [pointer, pointer + bytes) lies inside the allocation `info` describes, so
// it needs no query of its own (an output inside the input, say).
bool inside_allocation(const PointerInfo& info, const void* pointer, std::size_t bytes);

// The device allocations one thread has recently seen pass the check, so that a warm
// call on the same buffers needs only the cheapest driver query: the allocation's buffer
// id (0.03 us instead of 0.05 us for the full description). Buffer ids are unique for the
// life of the process, so an allocation freed and replaced at the same address (with
// another size) never matches a remembered one. Only device memory of the calling
// device and managed memory that passed are remembered. Fixed size, no allocation.
class VerifiedRanges {
 public:
  static constexpr std::size_t kEntries = 8;
  // The remembered allocation of `device_ordinal` that holds [pointer, pointer + bytes)
  // (its range and buffer id), or a PointerInfo with buffer_id 0 when none does.
  PointerInfo find(int device_ordinal, const void* pointer, std::size_t bytes) const;
  // Remembers the allocation `info` describes when a later call may trust it (device or
  // managed memory that passed, with a range and a buffer id); evicts the oldest entry.
  void remember(int device_ordinal, const PointerInfo& info);
  void clear();

 private:
  struct Entry {
    int device = -1;
    bool managed = false;
    std::uintptr_t start = 0;
    std::size_t size = 0;
    std::uint64_t buffer_id = 0;
  };
  Entry entries_[kEntries];
  std::size_t next_ = 0;
};

// The buffer id the driver gives the allocation holding `pointer` (0 for memory CUDA does
// not know, or when it cannot say).
std::uint64_t query_buffer_id(const void* pointer);

// check_device_accessible, asking the driver only for the buffer id when `ranges` holds
// the allocation and it is still the same one; remembers what passed. Returns the full
// description when it asked for one, else the remembered range and buffer id.
PointerInfo check_device_accessible(VerifiedRanges& ranges, const void* pointer, std::size_t bytes,
                                    int device_ordinal, bool pageable_access, const char* what);

}  // namespace reduce_tune
