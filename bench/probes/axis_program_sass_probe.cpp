// Probe (not part of the build; no GPU): for 13 non-two-pass f32 sum axis programs (every
// k-th distinct candidate over six shapes), the CUBIN as make_axis_compile_request builds it
// now (newN.cubin) and with the finalize kernel's name expression added back (oldN.cubin),
// so that nvdisasm can show the main and twin kernels compile to the same SASS either way.
// Set AD, docs/BENCHMARKS.md.
//   g++ -O2 -std=c++20 -Iengine/include -Icore/include -I/usr/local/cuda/include \
//     bench/probes/axis_program_sass_probe.cpp -o sass_probe build/engine/libreduce_tune_engine.a \
//     build/core/libreduce_tune_core.a -L/usr/local/cuda/lib64 -lcudart_static -lnvrtc -ldl -lpthread -lrt
//   ./sass_probe; for k in $(seq 0 12); do for v in new old; do nvdisasm -c $v$k.cubin |
//     awk '/\.text\./{f = ($0 !~ /finalize/)} /SYMBOLS/{f=0} f' | sed -E 's@/\*[0-9a-f]+\*/@@; s/\.L_x_[0-9]+/L/g' |
//     grep -v '^\s*$' > $v$k.sass; done; cmp new$k.sass old$k.sass && echo "$k same"; done
#include <cstdio>
#include <fstream>
#include <map>
#include "reduce_tune/engine/axis.h"
#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/tensor.h"
using namespace reduce_tune;
int main() {
  std::map<std::uint64_t, AxisKernelSpec> all;
  for (auto shape : std::vector<std::vector<std::int64_t>>{{1048577, 100}, {100, 1048577}, {16777216, 7}, {7, 65537}, {1000, 1000}, {16, 16777216}})
    for (int axis : {0, 1}) {
      TensorDesc t = TensorDesc::contiguous(shape.data(), 2);
      AxisList a; a.count = 1; a.axes[0] = axis;
      auto c = canonicalize(t, a);
      for (auto& s : axis_candidates(Op::sum, TypeRule{DType::f32, DType::f32, DType::f32}, c.axes, 132))
        if (s.split != AxisSplit::two_pass) all.emplace(axis_spec_key(s), s);
    }
  NvrtcCompiler compiler;
  int i = 0, n = 0;
  for (auto& [k, s] : all) {
    if (i++ % (all.size() / 12) != 0) continue;
    CompileRequest r = make_axis_compile_request(s, 90), o = r;
    const std::string type = r.name_expressions[0].substr(r.name_expressions[0].find('<') + 1);
    o.name_expressions.insert(o.name_expressions.begin() + 1, "rt::axis_finalize_kernel<" + type);
    auto a = compiler.compile(r), b = compiler.compile(o);
    std::ofstream("new" + std::to_string(n) + ".cubin", std::ios::binary).write(a.cubin.data(), a.cubin.size());
    std::ofstream("old" + std::to_string(n) + ".cubin", std::ios::binary).write(b.cubin.data(), b.cubin.size());
    std::printf("%d %s\n", n, to_string(s).c_str());
    ++n;
  }
}
