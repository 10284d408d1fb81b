// The kernel templates (kernel_templates/rt/*.cuh), embedded at build time: the headers
// every program the engine generates includes, and part of every binary-cache key.
#pragma once

#include <span>
#include <string>

#include "reduce_tune/engine/compiler.h"

namespace reduce_tune {

std::span<const SourceFile> kernel_template_sources();

// A digest of the kernel templates (names and text; 16 hex digits): what a stored
// measurement was timed with, beside the tool's version.
std::string kernel_templates_digest();

}  // namespace reduce_tune
