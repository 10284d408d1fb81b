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

KernelSet::KernelSet(std::shared_ptr<const CompiledProgram> program, std::size_t spec_count, int arch)
    : program_(std::move(program)), library_(program_->cubin) {
  // Two kernels per spec; one axis spec may add a third, its main kernel's peeled twin.
  const std::size_t names = program_->lowered_names.size();
  if (names != 2 * spec_count && !(spec_count == 1 && names == 3))
    throw Error("compiled program has " + std::to_string(names) + " kernels, expected " +
                std::to_string(2 * spec_count));
  for (std::size_t i = 0; i < spec_count; ++i) {
    KernelHandles h;
    h.reduce = library_.kernel(program_->lowered_names[2 * i]);
    h.finalize = library_.kernel(program_->lowered_names[2 * i + 1]);
    if (names == 3) h.reduce_twin = library_.kernel(program_->lowered_names[2]);
    h.programmatic = arch >= kProgrammaticLaunchArch;
    handles_.push_back(h);
  }
}

}  // namespace reduce_tune
