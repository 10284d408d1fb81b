#include "reduce_tune/engine/compiler.h"

#include <dlfcn.h>
#include <nvrtc.h>

#include <cstring>
#include <memory>
#include <mutex>

#include "reduce_tune/error.h"

namespace reduce_tune {

namespace {

void check_nvrtc(nvrtcResult result, const char* expression, const std::string& log = {}) {
  if (result != NVRTC_SUCCESS)
    throw NvrtcError(static_cast<int>(result),
                     std::string(expression) + ": " + nvrtcGetErrorString(result), log);
}
#define RT_NVRTC_CHECK(expr) check_nvrtc((expr), #expr)

// Owns an nvrtcProgram; destroys it on every path.
class NvrtcProgramHandle {
 public:
  explicit NvrtcProgramHandle(const CompileRequest& request) {
    const auto& files = request.headers;
    std::vector<std::string> contents, names;
    for (const auto& f : files) {
      contents.emplace_back(f.content);
      names.emplace_back(f.name);
    }
    std::vector<const char*> content_ptrs, name_ptrs;
    for (std::size_t i = 0; i < files.size(); ++i) {
      content_ptrs.push_back(contents[i].c_str());
      name_ptrs.push_back(names[i].c_str());
    }
    RT_NVRTC_CHECK(nvrtcCreateProgram(&program_, request.source.c_str(),
                                      request.program_name.c_str(),
                                      static_cast<int>(files.size()), content_ptrs.data(),
                                      name_ptrs.data()));
  }
  ~NvrtcProgramHandle() {
    if (program_) nvrtcDestroyProgram(&program_);
  }
  NvrtcProgramHandle(const NvrtcProgramHandle&) = delete;
  NvrtcProgramHandle& operator=(const NvrtcProgramHandle&) = delete;
  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_ = nullptr;
};

std::string program_log(nvrtcProgram program) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);
  return log;
}

}  // namespace

std::string nvrtc_builtins_path(const std::string& nvrtc_path, int major, int minor) {
  const auto slash = nvrtc_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : nvrtc_path.substr(0, slash);
  return dir + "/libnvrtc-builtins.so." + std::to_string(major) + "." + std::to_string(minor);
}

void preload_nvrtc_builtins() {
  // NVRTC dlopens libnvrtc-builtins.so.M.m by bare name, which only the loader's cache
  // or LD_LIBRARY_PATH resolve: a toolkit that is not in ld.so.conf (a runfile install,
  // a copied toolkit) fails at the first compile although libnvrtc itself was found
  // through the binary's run path. Load it from beside libnvrtc first; NVRTC's own
  // dlopen then finds it by its soname. Failing here is harmless: NVRTC reports.
  static std::once_flag once;
  std::call_once(once, [] {
    Dl_info info{};
    int major = 0, minor = 0;
    if (dladdr(reinterpret_cast<void*>(&nvrtcVersion), &info) == 0 || info.dli_fname == nullptr)
      return;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return;
    const std::string path = nvrtc_builtins_path(info.dli_fname, major, minor);
    dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);  // kept open for the process's life
  });
}

std::vector<std::string> nvrtc_options(const CompileRequest& request) {
  std::vector<std::string> options = {
      "--gpu-architecture=sm_" + std::to_string(request.arch),
      "--std=c++17",
  };
  options.insert(options.end(), request.extra_options.begin(), request.extra_options.end());
  return options;
}

CompiledProgram NvrtcCompiler::compile(const CompileRequest& request) {
  preload_nvrtc_builtins();
  NvrtcProgramHandle program(request);
  for (const auto& expr : request.name_expressions)
    RT_NVRTC_CHECK(nvrtcAddNameExpression(program.get(), expr.c_str()));

  const std::vector<std::string> options = nvrtc_options(request);
  std::vector<const char*> option_ptrs;
  for (const auto& o : options) option_ptrs.push_back(o.c_str());
  const nvrtcResult result =
      nvrtcCompileProgram(program.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());
  CompiledProgram out;
  out.log = program_log(program.get());
  check_nvrtc(result, "nvrtcCompileProgram", out.log);

  std::size_t cubin_size = 0;
  RT_NVRTC_CHECK(nvrtcGetCUBINSize(program.get(), &cubin_size));
  out.cubin.resize(cubin_size);
  RT_NVRTC_CHECK(nvrtcGetCUBIN(program.get(), out.cubin.data()));
  for (const auto& expr : request.name_expressions) {
    const char* lowered = nullptr;
    RT_NVRTC_CHECK(nvrtcGetLoweredName(program.get(), expr.c_str(), &lowered));
    out.lowered_names.emplace_back(lowered);
  }
  return out;
}

std::string NvrtcCompiler::version() const {
  int major = 0, minor = 0;
  RT_NVRTC_CHECK(nvrtcVersion(&major, &minor));
  return "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
}

namespace {
constexpr char kMagic[8] = {'R', 'T', 'C', 'U', 'B', 'I', 'N', '1'};

void put_u64(std::vector<char>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
std::uint64_t get_u64(const std::vector<char>& in, std::size_t& pos) {
  if (pos + 8 > in.size()) throw Error("truncated compiled-program blob");
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(in[pos + i])) << (8 * i);
  pos += 8;
  return v;
}
void put_bytes(std::vector<char>& out, const char* data, std::size_t size) {
  put_u64(out, size);
  out.insert(out.end(), data, data + size);
}
std::string get_string(const std::vector<char>& in, std::size_t& pos) {
  const std::uint64_t size = get_u64(in, pos);
  if (size > in.size() - pos) throw Error("truncated compiled-program blob");
  std::string s(in.data() + pos, size);
  pos += size;
  return s;
}
}  // namespace

std::vector<char> serialize(const CompiledProgram& program) {
  std::vector<char> out(kMagic, kMagic + sizeof(kMagic));
  put_u64(out, program.lowered_names.size());
  for (const auto& n : program.lowered_names) put_bytes(out, n.data(), n.size());
  put_bytes(out, program.log.data(), program.log.size());
  put_bytes(out, program.cubin.data(), program.cubin.size());
  return out;
}

CompiledProgram deserialize_program(const std::vector<char>& blob) {
  if (blob.size() < sizeof(kMagic) || std::memcmp(blob.data(), kMagic, sizeof(kMagic)) != 0)
    throw Error("not a reduce-tune compiled-program blob");
  std::size_t pos = sizeof(kMagic);
  CompiledProgram p;
  const std::uint64_t count = get_u64(blob, pos);
  if (count > blob.size()) throw Error("corrupt compiled-program blob");
  for (std::uint64_t i = 0; i < count; ++i) p.lowered_names.push_back(get_string(blob, pos));
  p.log = get_string(blob, pos);
  const std::string cubin = get_string(blob, pos);
  p.cubin.assign(cubin.begin(), cubin.end());
  if (pos != blob.size()) throw Error("corrupt compiled-program blob (trailing bytes)");
  return p;
}

}  // namespace reduce_tune
