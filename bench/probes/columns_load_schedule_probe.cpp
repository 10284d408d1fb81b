// Probe (not part of the build; no GPU): how the compiler schedules the columns program's
// loads. For a grid of 2-D columns shapes, every op and element type, the built-in
// choice's distinct columns specs, each compiled for sm_90 as make_axis_compile_request
// builds it with no register cap (occ 0) and capped at 1024, 1536 and 2048 threads an SM,
// into e<N>_<occ>.cubin; list.txt names each N. bench/probes/columns_load_schedule.py then
// reads each cubin's registers (cuobjdump) and, in the main kernel's first loop of several
// loads (the walk along R), how many loads are issued before the first instruction that
// uses a loaded value (nvdisasm). Set BO, docs/BENCHMARKS.md.
//   g++ -O2 -std=c++20 -Iengine/include -Icore/include -I/usr/local/cuda/include
//     bench/probes/columns_load_schedule_probe.cpp -o load_schedule_probe build/engine/libreduce_tune_engine.a
//     build/core/libreduce_tune_core.a -L/usr/local/cuda/lib64 -lcudart_static -lnvrtc -ldl -lpthread -lrt
//   (one command line)
//   mkdir out && cd out && ../load_schedule_probe > list.txt && python3 ../bench/probes/columns_load_schedule.py
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>
#include "reduce_tune/engine/axis.h"
#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/tensor.h"
using namespace reduce_tune;
int main() {
  std::map<std::string, AxisKernelSpec> all;
  std::map<std::string, std::vector<std::string>> where;
  const std::vector<std::int64_t> rs = {4, 8, 16, 33, 100, 257, 1000, 4097, 16385, 30001, 65537, 262145, 1048577};
  const std::vector<std::int64_t> ns = {7, 100, 257, 999, 1001, 1234, 2049, 3001, 4093, 4096, 6143, 16385, 65536, 1000003};
  for (Op op : {Op::sum, Op::mean, Op::max, Op::min})
    for (DType d : {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i32, DType::i64}) {
      const auto types = resolve_types(op, d, default_out_dtype(op, d));
      if (!types.rule) continue;
      for (std::int64_t r : rs)
        for (std::int64_t n : ns) {
          if (static_cast<double>(r) * static_cast<double>(n) > 6e8) continue;
          const std::int64_t extents[2] = {r, n};
          AxisList axes;
          axes.count = 1;
          axes.axes[0] = 0;
          const CanonicalResult c = canonicalize(TensorDesc::contiguous(extents, 2), axes);
          if (!c.ok || c.axes.layout != AxisLayout::columns) continue;
          // The spec with its cap taken off: the cap is what the probe varies.
          AxisKernelSpec s = builtin_axis_spec(op, *types.rule, c.axes, 132);
          if (s.family != AxisFamily::columns) continue;
          s.occupancy = 0;
          const std::string key = to_string(s);
          all.emplace(key, s);
          where[key].push_back(std::to_string(r) + "x" + std::to_string(n));
        }
    }
  NvrtcCompiler compiler;
  int i = 0;
  for (const auto& [key, spec] : all) {
    std::printf("%d %s | %zu shapes, e.g. %s\n", i, key.c_str(), where[key].size(), where[key][0].c_str());
    for (std::uint32_t occ : {0u, 1024u, 1536u, 2048u}) {
      AxisKernelSpec t = spec;
      t.occupancy = occ;
      if (!axis_spec_problem(t).empty()) continue;
      const CompiledProgram p = compiler.compile(make_axis_compile_request(t, 90));
      std::ofstream("e" + std::to_string(i) + "_" + std::to_string(occ) + ".cubin", std::ios::binary)
          .write(p.cubin.data(), static_cast<std::streamsize>(p.cubin.size()));
    }
    ++i;
  }
}
