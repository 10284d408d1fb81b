// The tuning database as the engine's BinaryStore: the runtime loads the binaries the
// tuner stored; the tuner also stores what it compiles. Internal (not installed).
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "reduce_tune/db/database.h"
#include "reduce_tune/engine/binary_cache.h"

namespace reduce_tune {

// Thread-safe over one borrowed connection (compile threads call it concurrently). A
// database opened read-only, or none at all, stores nothing: store() is then a no-op,
// so the runtime never writes. A writer that also stores buckets must give this store
// a connection of its own: a bucket's transaction and a binary's cannot share one.
class DatabaseBinaryStore final : public BinaryStore {
 public:
  explicit DatabaseBinaryStore(db::Database* database) : database_(database) {}
  std::optional<std::vector<char>> load(const std::string& key) override;
  void store(const std::string& key, int arch, const std::string& compiler_version,
             const std::vector<char>& blob) override;

 private:
  db::Database* database_;
  std::mutex mutex_;
};

}  // namespace reduce_tune
