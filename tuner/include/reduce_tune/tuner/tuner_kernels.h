// The tuner's own device code (tuner/kernels/*.cuh: the test-data generator), embedded
// at build time. Compiled beside the engine's templates, never part of a runtime key.
#pragma once

#include <span>

#include "reduce_tune/engine/compiler.h"

namespace reduce_tune {

std::span<const SourceFile> tuner_kernel_sources();

}  // namespace reduce_tune
