// reduce_tune::Context: the tuned reductions, with explicit control over the database,
// determinism and logging. Most programs use the one-line functions in reduce.h, which
// go through default_context().
//
// A call enqueues the reduction on the stream of the current device and returns: no
// host synchronisation, no allocation and no database query once warm (the first call
// on a device loads its winners; the first call of a problem size class loads or
// compiles its kernel; the first call on a stream creates that stream's small workspace,
// which lives as long as the context). Calls may be captured into CUDA graphs, the first
// call on a stream included. Thread-safe: no call holds a lock while it launches, copies
// or waits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "reduce_tune/config.h"
#include "reduce_tune/log.h"
#include "reduce_tune/tensor.h"
#include "reduce_tune/types.h"

// The CUDA runtime's stream handle, declared as cuda_runtime_api.h declares it, so this
// header needs no CUDA include.
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

namespace reduce_tune {

struct ContextOptions {
  // The tuning database; empty: $REDUCE_TUNE_DB, else $XDG_DATA_HOME/reduce-tune/tuning.db,
  // else ~/.local/share/reduce-tune/tuning.db. A missing file means built-in defaults.
  std::optional<std::filesystem::path> database;
  // Kernels compiled at a first call (the built-in choices, and winners whose binary the
  // database does not hold) are kept in this folder, and a later process loads them from
  // it instead of compiling them again with NVRTC (0.2 s to a few seconds a kernel).
  // Empty: $REDUCE_TUNE_KERNEL_CACHE, else $XDG_CACHE_HOME/reduce-tune/kernels, else
  // ~/.cache/reduce-tune/kernels (read when the context is made). "off" (here or in the
  // variable) keeps none. Each file is checked (its key and a checksum) before it is used,
  // a damaged one is compiled again and replaced, and a folder that cannot be written only
  // costs later processes the compile. The folder may be deleted at any time.
  std::optional<std::filesystem::path> kernel_cache;
  // The most that folder holds, in bytes: when a kernel is stored past it, the kernels
  // loaded or stored least recently are deleted. Empty: $REDUCE_TUNE_KERNEL_CACHE_MAX_SIZE
  // (bytes, or with a K, M or G suffix, 1024-based: "512M"), else 256 MiB. 0: no limit.
  std::optional<std::uint64_t> kernel_cache_max_bytes;
  // Allow configs whose float results may differ in the last bits from run to run
  // (atomic accumulation). Off by default: the same call returns the same bits.
  bool allow_nondeterministic = false;
  // Every call refuses pointers its kernel cannot use (pageable host memory, another
  // device's memory without peer access, a range past the end of its allocation), by
  // asking the driver. A thread remembers the last few device allocations that passed and
  // then asks only for the allocation's id, which no later allocation shares (about
  // 0.03 us instead of 0.05 us per pointer). Set this to ask for the full description on
  // every call instead.
  bool check_pointers_every_call = false;
};

// What the context chose for a call, and why.
struct Explanation {
  ProblemKey problem;
  ReduceConfig config;
  MatchKind match = MatchKind::default_config;
  bool deterministic = true;
  std::string device;  // the device the call runs on
  std::string reason;  // one line
  // The measurement behind the choice (absent for the built-in default).
  struct Measured {
    std::string device;  // where it was measured
    int bucket = 0;      // size bucket (2^bucket elements)
    double median_ms = 0;
    double gbps = 0;
    std::string tool_version;
  };
  std::optional<Measured> measured;
  std::string to_string() const;
};

// What the context runs for an axis reduction, and why.
struct AxisExplanation {
  CanonicalAxes shape;  // the canonical form (layout class, merged dimensions)
  std::string kernel;   // the kernel and its config ("flat" for the flat kernels)
  MatchKind match = MatchKind::default_config;  // tuned for this class, a neighbour's, or built in
  std::string device;
  std::string reason;   // one line
  std::string to_string() const;
};

namespace detail {
// The stream a caller means. A translation unit built with `nvcc --default-stream
// per-thread` (which defines CUDA_API_PER_THREAD_DEFAULT_STREAM) means its thread's
// default stream by a null stream; the library itself is built without that option, so
// the header, compiled in the caller's unit, names the per-thread stream explicitly.
inline cudaStream_t caller_stream(cudaStream_t stream) {
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
  // cudaStreamPerThread, as cuda_runtime_api.h defines it.
  if (stream == nullptr) return reinterpret_cast<cudaStream_t>(0x2);
#endif
  return stream;
}
}  // namespace detail

class Context {
 public:
  explicit Context(ContextOptions options = {});
  // Frees the context's workspaces and kernels; work it enqueued must have finished
  // (and graphs captured from its calls must no longer be replayed).
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Enqueues out[0] = op(in[0..n)) on `stream` (nullptr: the default stream, per thread
  // where the caller was built for per-thread default streams; cudaStreamPerThread works
  // too). Calls from any number of threads may run at once, on the same or different
  // streams; no launch waits for another thread's call.
  // Throws InvalidArgument (unsupported op/type pair; null, misaligned or host pointers
  // the device cannot read; a range that runs past its allocation), NoDeviceError,
  // CudaError, NvrtcError.
  // `out` may point into the input: the input is read completely before `out` is written.
  void reduce(Op op, DType in_type, DType out_type, const void* in, std::uint64_t n, void* out,
              cudaStream_t stream) {
    enqueue(op, in_type, out_type, in, n, out, detail::caller_stream(stream));
  }
  // The same, then waits for the stream and writes the result to `host_out`
  // (size_of(out_type) bytes of host memory).
  void reduce_to_host(Op op, DType in_type, DType out_type, const void* in, std::uint64_t n, void* host_out,
                      cudaStream_t stream) {
    enqueue_and_wait(op, in_type, out_type, in, n, host_out, detail::caller_stream(stream));
  }
  // What reduce() would run on the current device.
  Explanation explain(Op op, DType in_type, DType out_type, std::uint64_t n);

  // Enqueues the reduction of `tensor` (at `in`, strides in elements, any view) along
  // `axes` into `out`: the kept dimensions in order, C-contiguous. Semantics per output
  // element as for flat reductions; `mean` divides by the reduced extent, an empty
  // reduced extent gives the identity (mean: NaN), no outputs writes nothing.
  // Throws InvalidArgument for a bad shape or axis (the message names it), an output
  // that overlaps the input (unless everything is reduced to one value), and the
  // pointer errors of reduce(); NoDeviceError, CudaError, NvrtcError.
  void reduce_axes(Op op, DType in_type, DType out_type, const void* in, const TensorDesc& tensor,
                   const AxisList& axes, void* out, cudaStream_t stream) {
    enqueue_axes(op, in_type, out_type, in, tensor, axes, out, detail::caller_stream(stream));
  }
  // What reduce_axes() would run on the current device; throws InvalidArgument as it does.
  // `in`: the pointer reduce_axes() would be given, where known (the built-in choice for
  // some views turns on its alignment); null explains a base on every vector grid, as
  // cudaMalloc returns.
  AxisExplanation explain_axes(Op op, DType in_type, DType out_type, const TensorDesc& tensor, const AxisList& axes,
                               const void* in = nullptr);

  const ContextOptions& options() const;

 private:
  void enqueue(Op op, DType in_type, DType out_type, const void* in, std::uint64_t n, void* out,
               cudaStream_t stream);
  void enqueue_and_wait(Op op, DType in_type, DType out_type, const void* in, std::uint64_t n, void* host_out,
                        cudaStream_t stream);
  void enqueue_axes(Op op, DType in_type, DType out_type, const void* in, const TensorDesc& tensor,
                    const AxisList& axes, void* out, cudaStream_t stream);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The context the one-line functions use (created on first use, never destroyed, so it
// outlives static destructors that still reduce).
Context& default_context();

}  // namespace reduce_tune
