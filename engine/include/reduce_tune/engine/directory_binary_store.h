// Compiled binaries kept as files in a folder, so that a later process (a Python session,
// a test run, a program started again) loads the kernels an earlier one compiled instead
// of compiling them with NVRTC again. The runtime puts it behind the tuning database
// (LayeredBinaryStore): kernels the tuner stored load from the database, the rest (the
// built-in choices, winners of classes whose binary is not stored) from here.
//
// A cache, never the only copy of anything: every failure is a miss. A file that is not
// exactly what store() wrote for its key (truncated, damaged, another version's, another
// key's) is not loaded: its checksum and header are checked before a byte of it is used,
// and the next store() replaces it. A folder that cannot be created or written leaves
// store() a no-op (one warning for the store's life). Writers write a file of their own and rename it
// into place, so readers and other writers (threads, processes) see the whole file or
// none, and a process killed mid-write leaves a stray temporary file, never a short one;
// a later store() deletes such a file once it is ten minutes old.
//
// The folder's size is bounded: after each store(), while the kept files add up to more
// than `max_bytes`, the one loaded or stored least recently is deleted (a load marks its
// file used by setting its modification time). Stores follow compiles, which take far
// longer than the folder's scan. Other processes trim the same folder the same way; a
// file deleted under a reader is a miss. Internal (not installed).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "reduce_tune/engine/binary_cache.h"

namespace reduce_tune {

class DirectoryBinaryStore final : public BinaryStore {
 public:
  // max_bytes: the most the kept files may add up to; 0 for no limit.
  explicit DirectoryBinaryStore(std::filesystem::path folder, std::uint64_t max_bytes = 0);
  std::optional<std::vector<char>> load(const std::string& key) override;
  void store(const std::string& key, int arch, const std::string& compiler_version,
             const std::vector<char>& blob) override;
  const std::filesystem::path& folder() const { return folder_; }
  // The file a key is kept in; empty for a key that is not binary_cache_key's form (32
  // lowercase hex digits), which is neither loaded nor stored.
  std::filesystem::path file_for(const std::string& key) const;
  std::uint64_t max_bytes() const { return max_bytes_; }

  // What the folder keeps: the files of this store's names only (kept kernels and
  // temporaries; anything else in the folder is neither counted nor deleted).
  struct Contents {
    bool exists = false;  // the folder
    std::uint64_t kernels = 0, bytes = 0;
    std::uint64_t temporaries = 0;
  };
  // Throws Error where the folder exists but cannot be listed.
  Contents contents() const;
  // Deletes every kept kernel, and temporaries older than ten minutes (younger ones may
  // be another process's writes); returns what was deleted. Loads then miss, and the
  // runtime compiles and keeps its kernels again.
  Contents clear();

 private:
  // Deletes stale temporaries, then the least recently used kept files while they add up
  // to more than max_bytes_.
  void trim();

  std::filesystem::path folder_;
  std::uint64_t max_bytes_;
  std::atomic<bool> warned_{false};
};

// Loads from `first`, then `second`; stores into both (a store that keeps nothing, such
// as a read-only database's, ignores it). A failure of one is logged and does not stop
// the other. Either may be null.
class LayeredBinaryStore final : public BinaryStore {
 public:
  LayeredBinaryStore(BinaryStore* first, BinaryStore* second) : first_(first), second_(second) {}
  std::optional<std::vector<char>> load(const std::string& key) override;
  void store(const std::string& key, int arch, const std::string& compiler_version,
             const std::vector<char>& blob) override;

 private:
  BinaryStore* first_;
  BinaryStore* second_;
};

}  // namespace reduce_tune
