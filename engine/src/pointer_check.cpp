#include "reduce_tune/engine/pointer_check.h"

#include <cuda.h>  // driver types only: the function comes from the runtime's entry-point query
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <string>

#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/error.h"

namespace reduce_tune {

namespace {

using GetAttributesFn = CUresult (*)(unsigned int, CUpointer_attribute*, void**, CUdeviceptr);

template <typename Fn>
Fn driver_entry_point(const char* name) {
  return reinterpret_cast<Fn>(driver_function(name));
}

GetAttributesFn driver_get_attributes() {
  static GetAttributesFn fn = driver_entry_point<GetAttributesFn>("cuPointerGetAttributes");
  return fn;
}

// Whether the current device has peer access to `peer`'s memory enabled now (cudaMalloc
// memory of another device is reachable only so). No query tells; asking to enable it
// does, and an enable that succeeds (it was not there) is undone. The errors these calls
// leave (the answer "already enabled" among them) are cleared: they are answers, not
// errors for the caller to find later.
bool peer_access_enabled(int current_device, int peer) {
  int can = 0;
  if (cudaDeviceCanAccessPeer(&can, current_device, peer) != cudaSuccess || can == 0) {
    cudaGetLastError();
    return false;
  }
  bool enabled = false;
  const cudaError_t r = cudaDeviceEnablePeerAccess(peer, 0);
  if (r == cudaErrorPeerAccessAlreadyEnabled) {
    enabled = true;
  } else if (r == cudaSuccess) {
    cudaDeviceDisablePeerAccess(peer);
  }
  cudaGetLastError();
  return enabled;
}

// The CU_POINTER_ATTRIBUTE_ACCESS_FLAG_* a memory pool grants `device`.
unsigned pool_access(cudaMemPool_t pool, int device) {
  cudaMemAccessFlags flags = cudaMemAccessFlagsProtNone;
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeDevice;
  location.id = device;
  if (cudaMemPoolGetAccess(&flags, pool, &location) != cudaSuccess) {
    cudaGetLastError();
    return CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE;
  }
  return flags == cudaMemAccessFlagsProtReadWrite ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE
         : flags == cudaMemAccessFlagsProtRead    ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ
                                                  : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE;
}

}  // namespace

PointerInfo query_pointer(const void* pointer) { return query_pointer(pointer, -1); }

PointerInfo query_pointer(const void* pointer, int current_device) {
  PointerInfo info;
  GetAttributesFn fn = driver_get_attributes();
  if (fn == nullptr) {
    // No driver entry point (an old driver): the runtime's coarser query.
    cudaPointerAttributes a{};
    RT_CUDA_CHECK(cudaPointerGetAttributes(&a, pointer));
    info.memory_type = a.type == cudaMemoryTypeHost      ? 1u
                       : a.type == cudaMemoryTypeDevice  ? 2u
                       : a.type == cudaMemoryTypeManaged ? 4u
                                                         : 0u;
    info.managed = a.type == cudaMemoryTypeManaged;
    info.device_ordinal = a.device;
    info.device_pointer = reinterpret_cast<std::uintptr_t>(a.devicePointer);
    info.access_flags = a.devicePointer != nullptr ? 3u : 0u;
    return info;
  }
  // Each attribute lands in 8 zeroed bytes: the driver writes 4 or 8 of them, and the
  // low bytes are read back (little-endian x86-64 and aarch64). The common case (device
  // memory of the current device) needs the first six; the others are asked for only
  // where they decide something, since every call pays for this query.
  auto ask = [&](std::initializer_list<CUpointer_attribute> wanted, unsigned long long* values) {
    CUpointer_attribute attributes[8];
    void* data[8];
    unsigned count = 0;
    for (auto a : wanted) {
      attributes[count] = a;
      values[count] = 0;
      data[count] = &values[count];
      ++count;
    }
    const CUresult r = fn(count, attributes, data, reinterpret_cast<CUdeviceptr>(pointer));
    if (r != CUDA_SUCCESS)
      throw CudaError(static_cast<int>(r), "cuPointerGetAttributes",
                      "the driver could not describe a pointer (CUresult " + std::to_string(static_cast<int>(r)) + ")");
  };
  unsigned long long values[6];
  ask({CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_IS_MANAGED,
       CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE, CU_POINTER_ATTRIBUTE_BUFFER_ID},
      values);
  info.buffer_id = values[5];
  info.memory_type = static_cast<unsigned>(values[0] & 0xffffffffu);
  info.device_ordinal = static_cast<int>(static_cast<std::uint32_t>(values[1] & 0xffffffffu));
  info.managed = (values[2] & 0xffu) != 0;
  info.range_start = static_cast<std::uintptr_t>(values[3]);
  info.range_size = static_cast<std::size_t>(values[4]);
  if (info.memory_type == CU_MEMORYTYPE_DEVICE) info.device_pointer = reinterpret_cast<std::uintptr_t>(pointer);
  if ((info.memory_type != 0 && info.memory_type != CU_MEMORYTYPE_DEVICE) ||
      (info.memory_type == CU_MEMORYTYPE_DEVICE && info.device_ordinal != current_device)) {
    unsigned long long more[4];
    ask({CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS,
         CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE},
        more);
    info.device_pointer = static_cast<std::uintptr_t>(more[0]);
    info.access_flags = static_cast<unsigned>(more[1] & 0xffffffffu);
    // Another device's memory: the driver reported cudaMalloc memory readable and
    // writable whether or not the current device could reach it (an H200 pair without
    // peer access: a kernel reading it faulted, and the context with it). The current
    // device reaches such memory only through peer access, which the caller enables or
    // not, and memory of a pool (cudaMallocAsync) only where the pool grants it access.
    if (info.memory_type == CU_MEMORYTYPE_DEVICE && !info.managed && current_device >= 0) {
      if (more[3] != 0)
        info.access_flags = pool_access(reinterpret_cast<cudaMemPool_t>(static_cast<std::uintptr_t>(more[3])),
                                        current_device);
      else if ((more[2] & 0xffu) != 0)
        info.access_flags = peer_access_enabled(current_device, info.device_ordinal)
                                ? CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE
                                : CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE;
    }
  }
  return info;
}



const char* pointer_problem(const PointerInfo& info, const void* pointer, std::size_t bytes, int device_ordinal,
                            bool pageable_access) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  if (info.memory_type == 0 && !info.managed) {
    if (pageable_access) return nullptr;  // HMM/ATS: the device reads any host page
    return "is host memory the device cannot read (pageable memory from malloc, new, a std::vector or the "
           "stack); copy it to device memory, or allocate it with cudaMallocHost or cudaMallocManaged";
  }
  if (!info.managed) {
    if (info.memory_type == CU_MEMORYTYPE_HOST && info.device_pointer != address)
      return info.device_pointer == 0
                 ? "is page-locked host memory that is not mapped for the device (register it with "
                   "cudaHostRegisterMapped or allocate it with cudaHostAllocMapped)"
                 : "is page-locked host memory whose device address differs from its host address; pass the "
                   "pointer cudaHostGetDevicePointer returns";
    if (info.memory_type == CU_MEMORYTYPE_DEVICE && info.device_ordinal != device_ordinal &&
        (info.access_flags & CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ) == 0)
      return "is memory of another device that the current device cannot reach (call on the device that owns "
             "it, or enable peer access)";
  }
  if (info.range_size > 0 &&
      (address < info.range_start || address - info.range_start > info.range_size ||
       bytes > info.range_size - (address - info.range_start)))
    return "runs past the end of its allocation";
  return nullptr;
}

bool inside_allocation(const PointerInfo& info, const void* pointer, std::size_t bytes) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  return info.range_size > 0 && address >= info.range_start && address - info.range_start <= info.range_size &&
         bytes <= info.range_size - (address - info.range_start);
}

PointerInfo VerifiedRanges::find(int device_ordinal, const void* pointer, std::size_t bytes) const {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  PointerInfo info;
  for (const Entry& e : entries_)
    if (e.device == device_ordinal && e.size > 0 && address >= e.start && address - e.start <= e.size &&
        bytes <= e.size - (address - e.start)) {
      info.memory_type = CU_MEMORYTYPE_DEVICE;
      info.device_ordinal = device_ordinal;
      info.managed = e.managed;
      info.device_pointer = address;
      info.range_start = e.start;
      info.range_size = e.size;
      info.buffer_id = e.buffer_id;
      break;
    }
  return info;
}

void VerifiedRanges::remember(int device_ordinal, const PointerInfo& info) {
  // Device memory of this device, or managed memory: what a later call may trust. Host
  // memory (pinned or pageable) and other devices' memory are asked about every time.
  const bool own_device = info.memory_type == CU_MEMORYTYPE_DEVICE && !info.managed &&
                          info.device_ordinal == device_ordinal;
  if (!(own_device || info.managed) || info.range_size == 0 || info.buffer_id == 0) return;
  // An allocation already remembered is refreshed in place, not stored twice.
  for (Entry& e : entries_)
    if (e.device == device_ordinal && e.start == info.range_start) {
      e = Entry{device_ordinal, info.managed, info.range_start, info.range_size, info.buffer_id};
      return;
    }
  entries_[next_] = Entry{device_ordinal, info.managed, info.range_start, info.range_size, info.buffer_id};
  next_ = (next_ + 1) % kEntries;
}

void VerifiedRanges::clear() {
  for (Entry& e : entries_) e = Entry{};
  next_ = 0;
}

std::uint64_t query_buffer_id(const void* pointer) {
  // The plural query, for one attribute: it answers 0 for memory CUDA does not know (a
  // freed buffer, say) instead of failing the call, as cuPointerGetAttribute does (which
  // compute-sanitizer reports as an API error), and costs the same (0.041 against
  // 0.038 us for two attributes against one, H100).
  GetAttributesFn fn = driver_get_attributes();
  if (fn == nullptr) return 0;
  unsigned long long id = 0;
  CUpointer_attribute attribute = CU_POINTER_ATTRIBUTE_BUFFER_ID;
  void* data = &id;
  if (fn(1, &attribute, &data, reinterpret_cast<CUdeviceptr>(pointer)) != CUDA_SUCCESS) return 0;
  return id;
}

PointerInfo check_device_accessible(VerifiedRanges& ranges, const void* pointer, std::size_t bytes,
                                    int device_ordinal, bool pageable_access, const char* what) {
  const PointerInfo remembered = ranges.find(device_ordinal, pointer, bytes);
  if (remembered.buffer_id != 0 && query_buffer_id(pointer) == remembered.buffer_id) return remembered;
  PointerInfo info = check_device_accessible(pointer, bytes, device_ordinal, pageable_access, what);
  ranges.remember(device_ordinal, info);
  return info;
}

PointerInfo check_device_accessible(const void* pointer, std::size_t bytes, int device_ordinal, bool pageable_access,
                                    const char* what) {
  const PointerInfo info = query_pointer(pointer, device_ordinal);
  const char* problem = pointer_problem(info, pointer, bytes, device_ordinal, pageable_access);
  if (problem == nullptr) return info;
  char address[32];
  std::snprintf(address, sizeof(address), "%p", pointer);
  std::string message = what;
  message.append(" pointer ").append(address).append(" (").append(std::to_string(bytes)).append(" bytes) ");
  message.append(problem);
  throw InvalidArgument(message);
}

}  // namespace reduce_tune
