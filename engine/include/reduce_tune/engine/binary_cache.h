// Compiled binaries, cached in process and keyed for a persistent store (the tuning
// database). The key is a hash of everything that decides the CUBIN: the generated
// source, the headers the request names, the NVRTC options, the compiler version and
// the arch.
#pragma once

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "reduce_tune/engine/compiler.h"

namespace reduce_tune {

std::string binary_cache_key(const CompileRequest& request, const std::string& compiler_version);

// A persistent store behind the in-process cache (the database implements it).
class BinaryStore {
 public:
  virtual ~BinaryStore() = default;
  virtual std::optional<std::vector<char>> load(const std::string& key) = 0;
  virtual void store(const std::string& key, int arch, const std::string& compiler_version,
                     const std::vector<char>& blob) = 0;
};

struct CacheStats {
  std::size_t hits = 0;         // served from memory
  std::size_t store_hits = 0;   // served from the persistent store
  std::size_t compiles = 0;     // compiled by the compiler
};

// Thread-safe. Concurrent requests for one key compile it once; the others wait for it.
// A failed compile is not cached (its exception reaches every waiter).
class BinaryCache {
 public:
  explicit BinaryCache(Compiler& compiler, BinaryStore* store = nullptr);
  std::shared_ptr<const CompiledProgram> get(const CompileRequest& request);
  CacheStats stats() const;

 private:
  Compiler& compiler_;
  BinaryStore* store_;
  const std::string compiler_version_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_future<std::shared_ptr<const CompiledProgram>>> entries_;
  CacheStats stats_;
};

}  // namespace reduce_tune
