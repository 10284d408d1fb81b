// The tuning database as the engine's BinaryStore: the runtime loads the binaries the
// tuner stored; the tuner also stores what it compiles. Blobs are stored zlib-compressed
// (a default run compiles thousands of kernels; CUBINs shrink about 4x), and blobs
// stored uncompressed by older versions still load. Internal (not installed).
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
// The stored form of a blob and back; decompress throws Error on a damaged blob.
std::vector<std::byte> compress_blob(const std::vector<char>& blob);
std::vector<char> decompress_blob(const std::vector<std::byte>& stored);

class DatabaseBinaryStore final : public BinaryStore {
 public:
  explicit DatabaseBinaryStore(db::Database* database) : database_(database) {}
  std::optional<std::vector<char>> load(const std::string& key) override;
  void store(const std::string& key, int arch, const std::string& compiler_version,
             const std::vector<char>& blob) override;
  // Many binaries in one transaction (the tuner writes a bucket's at once).
  struct Entry {
    std::string key;
    int arch = 0;
    std::string compiler_version;
    const std::vector<char>* blob = nullptr;
  };
  void store_many(const std::vector<Entry>& entries);

 private:
  db::Database* database_;
  std::mutex mutex_;
};

}  // namespace reduce_tune
