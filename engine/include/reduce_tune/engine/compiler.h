// The compiler seam: everything above it (binary cache, tuner, runtime) is tested with a
// fake; NvrtcCompiler is the real one. A failed compile throws NvrtcError carrying the
// build log.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reduce_tune {

// A header the program may include, by its include name (e.g. "rt/kernels.cuh"). The
// text is embedded in the library at build time and outlives every request.
struct SourceFile {
  std::string_view name;
  std::string_view content;
};

struct CompileRequest {
  std::string program_name = "reduce_tune_kernels.cu";
  std::string source;
  // The headers the source may include; they are part of the binary-cache key, so a
  // program depends on exactly these files and no others.
  std::vector<SourceFile> headers;
  std::vector<std::string> name_expressions;
  int arch = 90;                           // CUBIN for sm_<arch>
  std::vector<std::string> extra_options;  // each one option, never split on spaces
};

struct CompiledProgram {
  std::vector<char> cubin;
  std::vector<std::string> lowered_names;  // parallel to the request's name_expressions
  std::string log;                         // warnings, when there were any
};

class Compiler {
 public:
  virtual ~Compiler() = default;
  virtual CompiledProgram compile(const CompileRequest& request) = 0;
  // Identifies the compiler for cache keys, e.g. "nvrtc 13.0".
  virtual std::string version() const = 0;
};

// The options passed to NVRTC for a request (exposed for tests and cache keys).
std::vector<std::string> nvrtc_options(const CompileRequest& request);

// Where NVRTC's builtins library lies beside libnvrtc at nvrtc_path, for version major.minor.
std::string nvrtc_builtins_path(const std::string& nvrtc_path, int major, int minor);
// Loads that library once per process, so NVRTC finds it where the loader's search would
// not (a toolkit missing from ld.so.conf). NvrtcCompiler::compile calls it.
void preload_nvrtc_builtins();

class NvrtcCompiler final : public Compiler {
 public:
  CompiledProgram compile(const CompileRequest& request) override;
  std::string version() const override;
};

// A compiled program as one blob (names and CUBIN), for the database's binary cache.
std::vector<char> serialize(const CompiledProgram& program);
// Throws Error on a blob that is not a serialized program.
CompiledProgram deserialize_program(const std::vector<char>& blob);

}  // namespace reduce_tune
