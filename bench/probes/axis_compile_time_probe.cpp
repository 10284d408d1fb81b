// Probe (not part of the build; no GPU): NVRTC time of the axis candidates' programs, a
// sample of the distinct ones over a grid of f32 sum shapes, as make_axis_compile_request
// builds them against the same request with the finalize kernel's name expression added
// back where the spec does not split in two passes (the form before the axis programs
// dropped it). Each pair alternates which form compiles first. Set AD, docs/BENCHMARKS.md.
//   g++ -O2 -std=c++20 -Iengine/include -Icore/include -I/usr/local/cuda/include \
//     bench/probes/axis_compile_time_probe.cpp -o axis_compile_time_probe build/engine/libreduce_tune_engine.a \
//     build/core/libreduce_tune_core.a -L/usr/local/cuda/lib64 -lcudart_static -lnvrtc -ldl -lpthread -lrt
//   ./axis_compile_time_probe [programs sampled, default 40]
#include <chrono>
#include <cstdio>
#include <map>
#include "reduce_tune/engine/axis.h"
#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/tensor.h"
using namespace reduce_tune;
int main(int argc, char** argv) {
  const int limit = argc > 1 ? std::atoi(argv[1]) : 40;
  std::map<std::uint64_t, AxisKernelSpec> all;
  for (std::int64_t r : {2, 16, 100, 1000, 4097, 65537, 1048577, 16777216})
    for (std::int64_t o : {1, 7, 100, 1000, 16385, 262144, 1048577})
      for (int axis : {0, 1}) {
        if (r * o > (1ll << 28) || r * o < (1 << 16)) continue;
        std::vector<std::int64_t> shape = axis == 1 ? std::vector<std::int64_t>{o, r} : std::vector<std::int64_t>{r, o};
        TensorDesc t = TensorDesc::contiguous(shape.data(), 2);
        AxisList a; a.count = 1; a.axes[0] = axis;
        auto c = canonicalize(t, a);
        if (!c.ok || c.axes.layout == AxisLayout::flat) continue;
        for (auto& s : axis_candidates(Op::sum, TypeRule{DType::f32, DType::f32, DType::f32}, c.axes, 132)) all.emplace(axis_spec_key(s), s);
      }
  std::vector<AxisKernelSpec> pick;
  std::size_t i = 0, step = std::max<std::size_t>(1, all.size() / limit);
  for (auto& [k, s] : all) if (i++ % step == 0 && (int)pick.size() < limit) pick.push_back(s);
  std::size_t two_pass = 0;
  for (auto& [k, s] : all) two_pass += s.split == AxisSplit::two_pass ? 1 : 0;
  NvrtcCompiler compiler;
  double now = 0, old = 0, now_split = 0, old_split = 0;  // the _split sums: programs not two_pass
  int tp = 0;
  for (auto& s : pick) {
    tp += s.split == AxisSplit::two_pass;
    CompileRequest r = make_axis_compile_request(s, 90);
    CompileRequest o = r;
    if (s.split != AxisSplit::two_pass) {
      const std::string type = r.name_expressions[0].substr(r.name_expressions[0].find('<') + 1);
      o.name_expressions.insert(o.name_expressions.begin() + 1, "rt::axis_finalize_kernel<" + type);
    }
    // Alternate which form goes first.
    const bool old_first = pick.size() % 2 == 0 ? (&s - &pick[0]) % 2 == 0 : true;
    const CompileRequest& first = old_first ? o : r;
    const CompileRequest& second = old_first ? r : o;
    auto t0 = std::chrono::steady_clock::now();
    compiler.compile(first);
    auto t1 = std::chrono::steady_clock::now();
    compiler.compile(second);
    auto t2 = std::chrono::steady_clock::now();
    const double dt_first = std::chrono::duration<double>(t1 - t0).count();
    const double dt_second = std::chrono::duration<double>(t2 - t1).count();
    (old_first ? old : now) += dt_first;
    (old_first ? now : old) += dt_second;
    if (s.split != AxisSplit::two_pass) {
      (old_first ? old_split : now_split) += dt_first;
      (old_first ? now_split : old_split) += dt_second;
    }
  }
  std::printf("%zu distinct programs (%zu two_pass), %zu sampled (%d two_pass): old form %.2f s, now %.2f s (%.1f%% less); "
              "the %zu not two_pass: %.2f s, now %.2f s (%.1f%% less)\n",
              all.size(), two_pass, pick.size(), tp, old, now, 100 * (1 - now / old), pick.size() - tp, old_split,
              now_split, 100 * (1 - now_split / old_split));
}
