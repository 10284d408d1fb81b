// The kernel templates (kernel_templates/rt/*.cuh), embedded at build time: the headers
// every program the engine generates includes, and part of every binary-cache key.
#pragma once

#include <span>

#include "reduce_tune/engine/compiler.h"

namespace reduce_tune {

std::span<const SourceFile> kernel_template_sources();

}  // namespace reduce_tune
