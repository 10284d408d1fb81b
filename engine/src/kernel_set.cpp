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

KernelSet::KernelSet(std::shared_ptr<const CompiledProgram> program, std::size_t spec_count)
    : program_(std::move(program)), library_(program_->cubin) {
  if (program_->lowered_names.size() != 2 * spec_count)
    throw Error("compiled program has " + std::to_string(program_->lowered_names.size()) +
                " kernels, expected " + std::to_string(2 * spec_count));
  for (std::size_t i = 0; i < spec_count; ++i) {
    KernelHandles h;
    h.reduce = library_.kernel(program_->lowered_names[2 * i]);
    h.finalize = library_.kernel(program_->lowered_names[2 * i + 1]);
    handles_.push_back(h);
  }
}

}  // namespace reduce_tune
