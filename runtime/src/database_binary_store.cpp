#include "reduce_tune/runtime/database_binary_store.h"

#include <cstring>

namespace reduce_tune {

std::optional<std::vector<char>> DatabaseBinaryStore::load(const std::string& key) {
  if (database_ == nullptr) return std::nullopt;
  std::lock_guard lock(mutex_);
  auto b = database_->find_binary(key);
  if (!b) return std::nullopt;
  std::vector<char> out(b->cubin.size());
  if (!out.empty()) std::memcpy(out.data(), b->cubin.data(), out.size());
  return out;
}

void DatabaseBinaryStore::store(const std::string& key, int arch, const std::string& compiler_version,
                                const std::vector<char>& blob) {
  if (database_ == nullptr || database_->read_only()) return;
  db::CompiledBinary b;
  b.key = key;
  b.arch = arch;
  b.nvrtc_version = compiler_version;
  b.cubin.resize(blob.size());
  if (!blob.empty()) std::memcpy(b.cubin.data(), blob.data(), blob.size());
  b.created_at = db::now_timestamp();
  std::lock_guard lock(mutex_);
  database_->put_binary(b);
}

}  // namespace reduce_tune
