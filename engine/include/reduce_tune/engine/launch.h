// How one reduction is launched: the plan (grid, passes, workspace it needs), the
// workspace layout, and the enqueue step itself. Enqueueing allocates nothing and never
// synchronises; the Launcher seam lets tests check the launch sequence without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>

#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/engine/kernel_spec.h"

namespace reduce_tune {

struct LaunchPlan {
  std::uint32_t grid = 1;
  std::uint32_t block = 0;
  bool finalize = false;           // a second, one-block launch reduces the partials
  std::uint64_t partial_count = 0; // accumulators the workspace must hold for partials
  bool uses_ticket = false;
  bool uses_accumulator = false;
};

// The most blocks a one-dimensional grid may have (every launch plan clamps to it).
constexpr std::uint64_t kMaxGridBlocks = 0x7fffffffu;

// Tiles of block*items*vec elements; the grid policy caps the grid (never 0 blocks,
// never more than kMaxGridBlocks). One block writes the result itself.
LaunchPlan plan_launch(const KernelSpec& spec, std::uint64_t n, int sm_count);

// Device memory a reduction uses besides its input and output. Created zeroed with the
// accumulator slots at their identities (see make_workspace_init_image); single-pass
// kernels leave it that way.
struct WorkspaceView {
  void* partials = nullptr;
  std::size_t partials_bytes = 0;
  unsigned int* ticket = nullptr;
  void* accumulators = nullptr;  // kAccumulatorSlots slots of 8 bytes
  void* result = nullptr;        // 8 bytes for results copied back to the host
};

// Layout of one contiguous workspace allocation: header (the flat kernels' ticket,
// accumulator slots and result; then the axis kernels' tickets) followed by the partials.
// Axis kernels take the ticket slots at kWorkspaceAxisTicketsOffset (make_axis_params):
// slot 0 for a last block folding every output, a slot per group of blocks for split
// columns (rt::columns_ticket_finish), whose plans keep their groups within
// kAxisTicketSlots. Every slot is zero between launches.
constexpr std::size_t kWorkspaceResultOffset = 16 + kAccumulatorSlots * 8;
constexpr std::size_t kWorkspaceAxisTicketsOffset = 256;
static_assert(kWorkspaceAxisTicketsOffset >= kWorkspaceResultOffset + 8);
constexpr std::uint64_t kAxisTicketSlots = 4096;
constexpr std::size_t kWorkspaceHeaderBytes = kWorkspaceAxisTicketsOffset + kAxisTicketSlots * sizeof(unsigned int);
WorkspaceView workspace_view(void* base, std::size_t total_bytes);
// The bytes the header must hold before first use: ticket 0, every slot at its identity.
void make_workspace_header_image(unsigned char (&image)[kWorkspaceHeaderBytes]);

// One workspace allocation, header initialised before the constructor returns: the
// header is copied on `stream` (from a constant image, so the copy needs no buffer that
// outlives the call) and `stream` is waited for. Callers that may run while another
// thread captures a graph pass a stream of their own, not the caller's.
class Workspace {
 public:
  Workspace() = default;
  Workspace(std::size_t partial_bytes, cudaStream_t stream);
  WorkspaceView view() const { return workspace_view(buffer_.get(), buffer_.size()); }
  bool holds(std::size_t partial_bytes) const {
    return buffer_.get() != nullptr && buffer_.size() >= kWorkspaceHeaderBytes + partial_bytes;
  }
  std::size_t partial_capacity() const { return buffer_.size() - kWorkspaceHeaderBytes; }

 private:
  DeviceBuffer buffer_;
};

// Throws InvalidArgument for arguments no kernel can take: a null input with n > 0, a
// null output, pointers not aligned to their element type.
void validate_arguments(const KernelSpec& spec, const void* in, std::uint64_t n, const void* out);
void validate_input(const KernelSpec& spec, const void* in, std::uint64_t n);
void validate_output(const KernelSpec& spec, const void* out);

// The one argument of every reduce and finalize kernel, written once: this list makes
// the host's KernelParams here and, as text, the device's rt::Params at the top of every
// generated source (NVRTC has no offsetof to check a second copy against), so the two
// cannot drift apart. Types are spelled the same in host C++ and device code.
//   in           the input; n its element count
//   partials     grid accumulators (two_pass, ticket)
//   ticket       zero between calls (ticket, atomic)
//   accumulator  the (op, accumulator type) slot, identity between calls (atomic)
//   out          the output
#define REDUCE_TUNE_KERNEL_PARAMS(FIELD) \
  FIELD(const void*, in)                  \
  FIELD(unsigned long long, n)            \
  FIELD(void*, partials)                  \
  FIELD(unsigned int*, ticket)            \
  FIELD(void*, accumulator)               \
  FIELD(void*, out)

struct KernelParams {
#define REDUCE_TUNE_FIELD(type, name) type name;
  REDUCE_TUNE_KERNEL_PARAMS(REDUCE_TUNE_FIELD)
#undef REDUCE_TUNE_FIELD
};
// The device's definition, as source text: "namespace rt { struct Params { ... }; }".
const char* kernel_params_source();
KernelParams make_kernel_params(const KernelSpec& spec, const WorkspaceView& workspace, const void* in,
                                std::uint64_t n, void* out);

struct KernelHandles {
  const void* reduce = nullptr;
  const void* finalize = nullptr;
  // Axis rows and columns programs: the main kernel's twin for data off the vector grid
  // (axis_has_twin), or null.
  const void* reduce_twin = nullptr;
  // The kernels may be launched programmatically, the first after whatever precedes the
  // call and the finalize after the main one (a program compiled for sm_90 or later,
  // kProgrammaticLaunchArch): each waits for the grid before it itself
  // (rt::begin_after_previous_grid).
  bool programmatic = false;
};

// The first arch whose kernels launch programmatically (griddepcontrol).
constexpr int kProgrammaticLaunchArch = 90;

// How a launch is ordered after the previous work on its stream: serially (it starts
// once that work is done), or programmatically (it may start while the previous kernel
// still runs, once that kernel allows it, and waits for it on the device; only for a
// kernel that does).
enum class StreamOrder { serial, programmatic };

class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual void launch(const void* kernel, std::uint32_t grid, std::uint32_t block, void* stream, void** args,
                      StreamOrder order) = 0;
};

// Launches a cudaKernel_t with cudaLaunchKernelExC (no libcuda link); throws CudaError
// when the launch is refused.
class CudaLauncher final : public Launcher {
 public:
  void launch(const void* kernel, std::uint32_t grid, std::uint32_t block, void* stream, void** args,
              StreamOrder order) override;
};

// A reduction whose kernels, grid and arguments are settled: all a launch needs, so a
// caller may keep it and enqueue it again for the same call (the runtime's warm path).
struct PreparedReduction {
  KernelHandles kernels;
  std::uint32_t grid = 1;
  std::uint32_t block = 0;
  bool finalize = false;
  KernelParams params{};
};

// Settles the reduction of in[0..n) into *out. The workspace must hold
// plan.partial_count accumulators; throws Error when it does not.
PreparedReduction prepare_reduction(const KernelHandles& kernels, const KernelSpec& spec, const LaunchPlan& plan,
                                    const WorkspaceView& workspace, const void* in, std::uint64_t n, void* out);

// Enqueues a prepared reduction on `stream`: one launch, or two with a finalize pass.
void enqueue_prepared(Launcher& launcher, const PreparedReduction& prepared, void* stream);

// Enqueues the reduction of in[0..n) into *out on `stream` (prepare, then enqueue).
void enqueue_reduction(Launcher& launcher, const KernelHandles& kernels, const KernelSpec& spec,
                       const LaunchPlan& plan, const WorkspaceView& workspace, const void* in,
                       std::uint64_t n, void* out, void* stream);

}  // namespace reduce_tune
