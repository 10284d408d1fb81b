// From specs to launchable kernels: one NVRTC program per batch of specs (through the
// binary cache), loaded as one library, with the kernels of each spec looked up.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "reduce_tune/engine/binary_cache.h"
#include "reduce_tune/engine/cuda_api.h"
#include "reduce_tune/engine/launch.h"
#include "reduce_tune/engine/source_gen.h"

namespace reduce_tune {

// The compile request for a batch of specs, with the name expressions in spec order
// (reduce, finalize for each).
CompileRequest make_compile_request(std::span<const KernelSpec> specs, int arch);

// Whether a lowered (mangled) kernel name is a finalize kernel's: rt::finalize_kernel
// (flat) or rt::axis_finalize_kernel. KernelSet tells a one-spec program's kernels apart
// by it, since axis programs carry a finalize kernel only where they split in two passes.
bool is_finalize_kernel_name(std::string_view lowered);

// A loaded batch of a program compiled for `arch`. Handles are valid in the context the
// library was loaded into.
class KernelSet {
 public:
  KernelSet(std::shared_ptr<const CompiledProgram> program, std::size_t spec_count, int arch);
  const KernelHandles& handles(std::size_t spec_index) const { return handles_.at(spec_index); }
  std::size_t size() const { return handles_.size(); }

 private:
  std::shared_ptr<const CompiledProgram> program_;
  LoadedLibrary library_;
  std::vector<KernelHandles> handles_;
};

}  // namespace reduce_tune
