// Thin RAII wrappers over the CUDA runtime, one per handle, move-only; destructors log
// failures instead of throwing. Kernels compiled by NVRTC are loaded with
// cudaLibraryLoadData and launched with cudaLaunchKernelExC on the cudaKernel_t
// handle, so nothing links libcuda
// directly and the binaries start on machines without a driver.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

#include "reduce_tune/device_key.h"

namespace reduce_tune {

// Throws CudaError for anything but cudaSuccess.
void check_cuda(cudaError_t result, const char* expression);
#define RT_CUDA_CHECK(expr) ::reduce_tune::check_cuda((expr), #expr)

// The number of CUDA devices; throws NoDeviceError with a one-line reason when there is
// no driver or no device.
int cuda_device_count();
// Throws NoDeviceError when `ordinal` names no device.
DeviceKey query_device(int ordinal);

// A driver API function through the runtime's entry-point query (nothing links
// libcuda), or nullptr where the driver lacks it.
void* driver_function(const char* name);

// The device of the calling thread: the device of its current context (cuCtxGetDevice,
// about a third of cudaGetDevice's cost), or cudaGetDevice where no context is current
// yet. Throws NoDeviceError without a driver or device.
int current_device_ordinal();

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  std::size_t size() const { return bytes_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }

 private:
  void reset() noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class Event {
 public:
  Event();
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&&) = delete;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

class Stream {
 public:
  Stream();  // non-blocking stream
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&&) = delete;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Page-locked host memory mapped into the device's address space (cudaHostAlloc with
// cudaHostAllocMapped | cudaHostAllocPortable): kernels write it directly.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& other) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&&) = delete;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* host() const { return host_; }
  void* device() const { return device_; }  // the address kernels use
  std::size_t size() const { return bytes_; }

 private:
  void* host_ = nullptr;
  void* device_ = nullptr;
  std::size_t bytes_ = 0;
};

// A CUBIN loaded into the current context of the current device.
class LoadedLibrary {
 public:
  explicit LoadedLibrary(const std::vector<char>& cubin);
  ~LoadedLibrary();
  LoadedLibrary(LoadedLibrary&& other) noexcept;
  LoadedLibrary& operator=(LoadedLibrary&&) = delete;
  LoadedLibrary(const LoadedLibrary&) = delete;
  LoadedLibrary& operator=(const LoadedLibrary&) = delete;
  // The kernel with this (lowered) name; usable as the `func` of cudaLaunchKernel(ExC).
  cudaKernel_t kernel(const std::string& lowered_name) const;

 private:
  cudaLibrary_t library_ = nullptr;
};

}  // namespace reduce_tune
