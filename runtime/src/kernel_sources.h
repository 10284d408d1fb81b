// The kernel templates (kernel_templates/rt/*.cuh), embedded at build time.
#pragma once

#include <span>
#include <string_view>

namespace reduce_tune::detail {

struct EmbeddedFile {
  std::string_view name;     // include name, e.g. "rt/kernels.cuh"
  std::string_view content;
};

std::span<const EmbeddedFile> embedded_kernel_sources();

}  // namespace reduce_tune::detail
