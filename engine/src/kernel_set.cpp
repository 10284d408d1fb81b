#include "reduce_tune/engine/kernel_set.h"

#include "reduce_tune/engine/kernel_sources.h"
#include "reduce_tune/error.h"

namespace reduce_tune {

CompileRequest make_compile_request(std::span<const KernelSpec> specs, int arch) {
  GeneratedProgram generated = generate_program(specs);
  CompileRequest request;
  request.source = std::move(generated.source);
  request.name_expressions = generated.name_expressions();
  request.arch = arch;
  const auto templates = kernel_template_sources();
  request.headers.assign(templates.begin(), templates.end());
  return request;
}

bool is_finalize_kernel_name(std::string_view lowered) {
  // The nested names' length-prefixed identifiers: _ZN2rt15finalize_kernelI...,
  // _ZN2rt20axis_finalize_kernelI...
  return lowered.find("2rt15finalize_kernelI") != std::string_view::npos ||
         lowered.find("2rt20axis_finalize_kernelI") != std::string_view::npos;
}

KernelSet::KernelSet(std::shared_ptr<const CompiledProgram> program, std::size_t spec_count, int arch)
    : program_(std::move(program)), library_(program_->cubin) {
  const std::vector<std::string>& names = program_->lowered_names;
  if (spec_count == 1) {
    // One spec: its main kernel first, then a finalize kernel where it has one (every
    // flat program; axis programs of two-pass splits) and, for an axis spec, the main
    // kernel's peeled twin where it has one. Binaries stored before the axis programs
    // dropped their unused finalize kernels hold all three and load the same way.
    KernelHandles h;
    std::size_t finalizes = 0, mains = 0;
    for (const std::string& name : names) {
      if (is_finalize_kernel_name(name)) {
        h.finalize = library_.kernel(name);
        ++finalizes;
      } else if (mains++ == 0) {
        h.reduce = library_.kernel(name);
      } else {
        h.reduce_twin = library_.kernel(name);
      }
    }
    if (mains < 1 || mains > 2 || finalizes > 1)
      throw Error("compiled program has " + std::to_string(names.size()) + " kernels (" + std::to_string(finalizes) +
                  " finalize), expected a main kernel, a finalize kernel or none, and a twin or none");
    h.programmatic = arch >= kProgrammaticLaunchArch;
    handles_.push_back(h);
    return;
  }
  // Batches of flat specs: a main and a finalize kernel per spec, in spec order.
  if (names.size() != 2 * spec_count)
    throw Error("compiled program has " + std::to_string(names.size()) + " kernels, expected " +
                std::to_string(2 * spec_count));
  for (std::size_t i = 0; i < spec_count; ++i) {
    KernelHandles h;
    h.reduce = library_.kernel(names[2 * i]);
    h.finalize = library_.kernel(names[2 * i + 1]);
    h.programmatic = arch >= kProgrammaticLaunchArch;
    handles_.push_back(h);
  }
}

}  // namespace reduce_tune
