#include "reduce_tune/engine/cuda_api.h"

#include <cstdio>
#include <utility>

#include "reduce_tune/log.h"
#include "reduce_tune/error.h"

namespace reduce_tune {

void check_cuda(cudaError_t result, const char* expression) {
  if (result == cudaSuccess) return;
  // The error is reported by the exception: clear the runtime's last error so that the
  // caller's next cudaGetLastError does not see it again (sticky errors stay).
  cudaGetLastError();
  throw CudaError(static_cast<int>(result), expression,
                  std::string(cudaGetErrorName(result)) + ": " + cudaGetErrorString(result));
}

namespace {
void log_cuda_failure(cudaError_t result, const char* what) {
  if (result != cudaSuccess)
    log_message(LogLevel::warning, std::string(what) + " failed: " + cudaGetErrorString(result));
}
}  // namespace

int cuda_device_count() {
  int count = 0;
  const cudaError_t result = cudaGetDeviceCount(&count);
  if (result == cudaErrorInsufficientDriver || result == cudaErrorNoDevice ||
      result == cudaErrorInitializationError || result == cudaErrorSystemDriverMismatch ||
      result == cudaErrorCompatNotSupportedOnDevice) {
    cudaGetLastError();  // clear the sticky status of the failed initialisation
    throw NoDeviceError(std::string("no CUDA device available (") + cudaGetErrorString(result) + ")");
  }
  check_cuda(result, "cudaGetDeviceCount");
  if (count == 0) throw NoDeviceError("no CUDA device available");
  return count;
}

DeviceKey query_device(int ordinal) {
  const int count = cuda_device_count();
  if (ordinal < 0 || ordinal >= count)
    throw NoDeviceError("device " + std::to_string(ordinal) + " does not exist (" +
                        std::to_string(count) + " CUDA device" + (count == 1 ? "" : "s") +
                        " present)");
  cudaDeviceProp prop{};
  RT_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  DeviceKey key;
  key.name = prop.name;
  key.cc_major = prop.major;
  key.cc_minor = prop.minor;
  key.sm_count = prop.multiProcessorCount;
  key.l2_bytes = prop.l2CacheSize;
  key.memory_bus_bits = prop.memoryBusWidth;
  int clock_khz = 0;
  RT_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, ordinal));
  key.memory_clock_khz = clock_khz;
  char uuid[64];
  const unsigned char* b = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  std::snprintf(uuid, sizeof(uuid),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  key.uuid = uuid;
  RT_CUDA_CHECK(cudaDriverGetVersion(&key.driver_version));
  RT_CUDA_CHECK(cudaRuntimeGetVersion(&key.runtime_version));
  return key;
}

void* driver_function(const char* name) {
  void* found = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &found, 12000, cudaEnableDefault, &status);
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return found;
}

int current_device_ordinal() {
  // CUdevice is the ordinal the runtime uses (both count the devices CUDA_VISIBLE_DEVICES
  // leaves). The driver's answer follows cudaSetDevice and cuCtxSetCurrent alike.
  using CtxGetDeviceFn = int (*)(int*);
  static const auto ctx_get_device = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {  // no driver: no entry points to ask for
      cudaGetLastError();
      return static_cast<CtxGetDeviceFn>(nullptr);
    }
    return reinterpret_cast<CtxGetDeviceFn>(driver_function("cuCtxGetDevice"));
  }();
  int ordinal = -1;
  if (ctx_get_device != nullptr && ctx_get_device(&ordinal) == 0 && ordinal >= 0) return ordinal;
  // No current context on this thread yet (or an old driver): the runtime's answer.
  const cudaError_t e = cudaGetDevice(&ordinal);
  if (e != cudaSuccess) {
    cudaGetLastError();
    cuda_device_count();  // throws NoDeviceError with the reason when there is no device
    check_cuda(e, "cudaGetDevice");
  }
  return ordinal;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) RT_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}
DeviceBuffer::~DeviceBuffer() { reset(); }
DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}
void DeviceBuffer::reset() noexcept {
  if (ptr_) log_cuda_failure(cudaFree(ptr_), "cudaFree");
  ptr_ = nullptr;
  bytes_ = 0;
}

Event::Event() { RT_CUDA_CHECK(cudaEventCreate(&event_)); }
Event::~Event() {
  if (event_) log_cuda_failure(cudaEventDestroy(event_), "cudaEventDestroy");
}
Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Stream::Stream() { RT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
Stream::~Stream() {
  if (stream_) log_cuda_failure(cudaStreamDestroy(stream_), "cudaStreamDestroy");
}
Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
  RT_CUDA_CHECK(cudaHostAlloc(&host_, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  const cudaError_t e = cudaHostGetDevicePointer(&device_, host_, 0);
  if (e != cudaSuccess) {
    log_cuda_failure(cudaFreeHost(host_), "cudaFreeHost");
    host_ = nullptr;
    check_cuda(e, "cudaHostGetDevicePointer");
  }
}
PinnedBuffer::~PinnedBuffer() {
  if (host_) log_cuda_failure(cudaFreeHost(host_), "cudaFreeHost");
}
PinnedBuffer::PinnedBuffer(PinnedBuffer&& other) noexcept
    : host_(std::exchange(other.host_, nullptr)),
      device_(std::exchange(other.device_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

LoadedLibrary::LoadedLibrary(const std::vector<char>& cubin) {
  RT_CUDA_CHECK(cudaLibraryLoadData(&library_, cubin.data(), nullptr, nullptr, 0, nullptr,
                                    nullptr, 0));
}
LoadedLibrary::~LoadedLibrary() {
  if (library_) log_cuda_failure(cudaLibraryUnload(library_), "cudaLibraryUnload");
}
LoadedLibrary::LoadedLibrary(LoadedLibrary&& other) noexcept
    : library_(std::exchange(other.library_, nullptr)) {}

cudaKernel_t LoadedLibrary::kernel(const std::string& lowered_name) const {
  cudaKernel_t k = nullptr;
  RT_CUDA_CHECK(cudaLibraryGetKernel(&k, library_, lowered_name.c_str()));
  return k;
}

}  // namespace reduce_tune
