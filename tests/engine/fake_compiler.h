// A compiler for the binary cache's tests: its "CUBIN" is the request's source, each
// compile takes 20 ms (so that concurrent requests overlap) and is counted, and it fails
// on request. And the check that a later process is served by a store.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "reduce_tune/engine/binary_cache.h"
#include "reduce_tune/engine/compiler.h"
#include "reduce_tune/error.h"

namespace reduce_tune::testing {

class FakeCompiler : public Compiler {
 public:
  CompiledProgram compile(const CompileRequest& request) override {
    ++compiles;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (fail) throw NvrtcError(6, "nvrtcCompileProgram", "error: fake failure");
    CompiledProgram p;
    p.cubin.assign(request.source.begin(), request.source.end());
    p.lowered_names = request.name_expressions;
    return p;
  }
  std::string version() const override { return "fake 1.0"; }
  std::atomic<int> compiles{0};
  bool fail = false;
};

// A fresh cache over `store` (as a later process makes) serves `request` from the store,
// compiling nothing, with the program `first` was.
inline void expect_served_by_the_store(BinaryStore& store, const CompileRequest& request,
                                       const CompiledProgram& first) {
  FakeCompiler compiler;
  BinaryCache cache(compiler, &store);
  const auto second = cache.get(request);
  EXPECT_EQ(compiler.compiles.load(), 0);
  EXPECT_EQ(cache.stats().store_hits, 1u);
  EXPECT_EQ(second->cubin, first.cubin);
  EXPECT_EQ(second->lowered_names, first.lowered_names);
}

}  // namespace reduce_tune::testing
