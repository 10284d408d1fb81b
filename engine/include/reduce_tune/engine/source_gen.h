// Generates the NVRTC source for one or more kernel instantiations. The host-side
// config is written into the source as template arguments, and static_asserts check
// that the device side agrees with the host on everything the host relies on (the
// numbering of the enums, type sizes, the tile size it sizes grids with).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reduce_tune/engine/kernel_spec.h"

namespace reduce_tune {

struct KernelNames {
  std::string reduce;    // name expression of rt::reduce_kernel<...>
  std::string finalize;  // name expression of rt::finalize_kernel<...>
};

struct GeneratedProgram {
  std::string source;
  std::vector<KernelNames> names;  // one per spec, in order
  std::vector<std::string> name_expressions() const;
};

// The device functor of an op ("rt::SumOp", ...), for every generated source.
std::string_view op_type(Op op);

// The template argument list that instantiates `spec`, e.g.
// "rt::Config<rt::SumOp, float, float, float, rt::strategy_vectorized, 256, ...>".
std::string config_type_text(const KernelSpec& spec);

GeneratedProgram generate_program(std::span<const KernelSpec> specs);

}  // namespace reduce_tune
