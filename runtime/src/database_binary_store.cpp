#include "reduce_tune/runtime/database_binary_store.h"

#include <zlib.h>

#include <cstring>

#include "reduce_tune/error.h"

namespace reduce_tune {

namespace {
// "RTZ1", then the original size (8 bytes, little-endian), then a zlib stream.
constexpr char kMagic[4] = {'R', 'T', 'Z', '1'};
constexpr std::size_t kHeader = 12;
}  // namespace

std::vector<std::byte> compress_blob(const std::vector<char>& blob) {
  uLongf bound = compressBound(static_cast<uLong>(blob.size()));
  std::vector<std::byte> out(kHeader + bound);
  std::memcpy(out.data(), kMagic, 4);
  const std::uint64_t size = blob.size();
  std::memcpy(out.data() + 4, &size, 8);
  if (compress2(reinterpret_cast<Bytef*>(out.data() + kHeader), &bound, reinterpret_cast<const Bytef*>(blob.data()),
                static_cast<uLong>(blob.size()), 6) != Z_OK)
    throw Error("cannot compress a binary for the database");
  out.resize(kHeader + bound);
  return out;
}

std::vector<char> decompress_blob(const std::vector<std::byte>& stored) {
  if (stored.size() < kHeader || std::memcmp(stored.data(), kMagic, 4) != 0) {
    std::vector<char> plain(stored.size());  // stored before compression existed
    if (!plain.empty()) std::memcpy(plain.data(), stored.data(), plain.size());
    return plain;
  }
  std::uint64_t size = 0;
  std::memcpy(&size, stored.data() + 4, 8);
  if (size > (std::uint64_t{1} << 31)) throw Error("a compressed binary in the database is damaged (size)");
  std::vector<char> out(size);
  uLongf length = static_cast<uLongf>(size);
  const int rc = uncompress(reinterpret_cast<Bytef*>(out.data()), &length,
                            reinterpret_cast<const Bytef*>(stored.data() + kHeader),
                            static_cast<uLong>(stored.size() - kHeader));
  if (rc != Z_OK || length != size) throw Error("a compressed binary in the database is damaged");
  return out;
}

std::optional<std::vector<char>> DatabaseBinaryStore::load(const std::string& key) {
  if (database_ == nullptr) return std::nullopt;
  std::lock_guard lock(mutex_);
  auto b = database_->find_binary(key);
  if (!b) return std::nullopt;
  return decompress_blob(b->cubin);
}

void DatabaseBinaryStore::store(const std::string& key, int arch, const std::string& compiler_version,
                                const std::vector<char>& blob) {
  if (database_ == nullptr || database_->read_only()) return;
  db::CompiledBinary b;
  b.key = key;
  b.arch = arch;
  b.nvrtc_version = compiler_version;
  b.cubin = compress_blob(blob);
  b.created_at = db::now_timestamp();
  std::lock_guard lock(mutex_);
  database_->put_binary(b);
}

void DatabaseBinaryStore::store_many(const std::vector<Entry>& entries) {
  if (database_ == nullptr || database_->read_only() || entries.empty()) return;
  std::vector<db::CompiledBinary> binaries;
  binaries.reserve(entries.size());
  for (const auto& e : entries) {
    db::CompiledBinary b;
    b.key = e.key;
    b.arch = e.arch;
    b.nvrtc_version = e.compiler_version;
    b.cubin = compress_blob(*e.blob);
    b.created_at = db::now_timestamp();
    binaries.push_back(std::move(b));
  }
  std::lock_guard lock(mutex_);
  database_->put_binaries(binaries);
}

}  // namespace reduce_tune
