#include "reduce_tune/engine/directory_binary_store.h"

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <system_error>
#include <thread>

#include "reduce_tune/error.h"
#include "reduce_tune/log.h"

namespace reduce_tune {
namespace {

// A kept file: this header, then the blob. The key is in the header too, so a file
// renamed or copied under another key's name is not loaded for it.
constexpr char kMagic[8] = {'R', 'T', 'K', 'E', 'R', 'N', 'E', 'L'};
constexpr std::uint32_t kFormat = 1;
constexpr std::size_t kKeyChars = 32;
constexpr std::size_t kHeaderBytes = sizeof(kMagic) + 4 + 4 + kKeyChars + 8 + 8;
// No compiled program comes near this; a size past it is a damaged header.
constexpr std::uint64_t kMaxBlobBytes = 1ull << 30;

bool is_key(const std::string& key) {
  if (key.size() != kKeyChars) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

void put_le(char* p, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
std::uint64_t get_le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

std::uint64_t checksum(const char* data, std::size_t size) { return XXH3_64bits(data, size); }

constexpr char kTemporaryPrefix[] = ".tmp-";
// A writer writes its temporary file in milliseconds; one this old was left by a process
// that died mid-write.
constexpr auto kStaleTemporary = std::chrono::minutes(10);

// A name no other writer uses: the process, the thread and a counter.
std::string temporary_name(const std::string& key) {
  static std::atomic<std::uint64_t> counter{0};
  return kTemporaryPrefix + key + "-" + std::to_string(::getpid()) + "-" +
         std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()) & 0xffffffffu) + "-" +
         std::to_string(counter.fetch_add(1));
}

}  // namespace

DirectoryBinaryStore::DirectoryBinaryStore(std::filesystem::path folder, std::uint64_t max_bytes)
    : folder_(std::move(folder)), max_bytes_(max_bytes) {}

std::filesystem::path DirectoryBinaryStore::file_for(const std::string& key) const {
  if (!is_key(key)) return {};
  return folder_ / (key + ".rtk");
}

std::optional<std::vector<char>> DirectoryBinaryStore::load(const std::string& key) {
  const std::filesystem::path path = file_for(key);
  if (path.empty()) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;  // not kept (or not readable): a miss
  char header[kHeaderBytes];
  if (!in.read(header, kHeaderBytes)) return std::nullopt;
  const char* p = header;
  if (std::memcmp(p, kMagic, sizeof(kMagic)) != 0) return std::nullopt;
  p += sizeof(kMagic);
  if (get_le(p, 4) != kFormat || get_le(p + 4, 4) != 0) return std::nullopt;  // the format, a reserved word
  p += 8;
  if (std::memcmp(p, key.data(), kKeyChars) != 0) return std::nullopt;
  p += kKeyChars;
  const std::uint64_t size = get_le(p, 8);
  const std::uint64_t sum = get_le(p + 8, 8);
  if (size > kMaxBlobBytes) return std::nullopt;
  std::vector<char> blob(size);
  if (size > 0 && !in.read(blob.data(), static_cast<std::streamsize>(size))) return std::nullopt;  // truncated
  if (in.peek() != std::ifstream::traits_type::eof()) return std::nullopt;  // trailing bytes
  if (checksum(blob.data(), blob.size()) != sum) return std::nullopt;
  // Used now: the last a trim deletes. A folder this process may not write (a shared,
  // read-only cache) keeps the time it had.
  in.close();
  std::error_code ignored;
  std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now(), ignored);
  return blob;
}

namespace {
enum class Kind { other, kept, temporary };
Kind kind_of(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  if (name.rfind(kTemporaryPrefix, 0) == 0) return Kind::temporary;
  if (path.extension() == ".rtk" && is_key(path.stem().string())) return Kind::kept;
  return Kind::other;
}
}  // namespace

DirectoryBinaryStore::Contents DirectoryBinaryStore::contents() const {
  namespace fs = std::filesystem;
  Contents c;
  std::error_code ec;
  c.exists = fs::is_directory(folder_, ec);
  if (!c.exists) return c;
  fs::directory_iterator it(folder_, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::error_code e;
    switch (kind_of(it->path())) {
      case Kind::kept: {
        const std::uint64_t bytes = fs::file_size(it->path(), e);
        if (e) break;
        ++c.kernels;
        c.bytes += bytes;
        break;
      }
      case Kind::temporary: ++c.temporaries; break;
      case Kind::other: break;
    }
  }
  return c;
}

DirectoryBinaryStore::Contents DirectoryBinaryStore::clear() {
  namespace fs = std::filesystem;
  Contents deleted;
  std::error_code ec;
  deleted.exists = fs::is_directory(folder_, ec);
  if (!deleted.exists) return deleted;
  const fs::file_time_type now = fs::file_time_type::clock::now();
  std::vector<fs::path> doomed;
  fs::directory_iterator it(folder_, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) doomed.push_back(it->path());
  if (ec) throw Error("cannot list the kernel cache " + folder_.string() + ": " + ec.message());
  for (const fs::path& path : doomed) {
    std::error_code e;
    const Kind kind = kind_of(path);
    if (kind == Kind::other) continue;
    const std::uint64_t bytes = kind == Kind::kept ? fs::file_size(path, e) : 0;
    if (e) continue;  // gone meanwhile
    if (kind == Kind::temporary) {
      const fs::file_time_type written = fs::last_write_time(path, e);
      if (e || now - written <= kStaleTemporary) continue;
    }
    if (!fs::remove(path, e)) {
      if (e) throw Error("cannot delete " + path.string() + ": " + e.message());
      continue;  // removed by another process meanwhile
    }
    if (kind == Kind::kept) {
      ++deleted.kernels;
      deleted.bytes += bytes;
    } else {
      ++deleted.temporaries;
    }
  }
  return deleted;
}

void DirectoryBinaryStore::trim() {
  namespace fs = std::filesystem;
  struct Kept {
    fs::file_time_type used;
    std::uint64_t bytes;
    fs::path path;
  };
  std::vector<Kept> kept;
  std::uint64_t total = 0;
  const fs::file_time_type now = fs::file_time_type::clock::now();
  std::error_code ec;
  fs::directory_iterator it(folder_, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& path = it->path();
    std::error_code e;
    const Kind kind = kind_of(path);
    if (kind == Kind::temporary) {
      const fs::file_time_type written = fs::last_write_time(path, e);
      if (!e && now - written > kStaleTemporary) fs::remove(path, e);
      continue;
    }
    if (kind != Kind::kept) continue;  // only the files this store writes: the rest is left alone
    const std::uint64_t bytes = fs::file_size(path, e);
    if (e) continue;  // gone since the listing (another process trimmed it)
    const fs::file_time_type used = fs::last_write_time(path, e);
    if (e) continue;
    kept.push_back({used, bytes, path});
    total += bytes;
  }
  if (max_bytes_ == 0 || total <= max_bytes_) return;
  std::sort(kept.begin(), kept.end(), [](const Kept& a, const Kept& b) {
    return a.used != b.used ? a.used < b.used : a.path < b.path;
  });
  std::size_t removed = 0;
  for (const Kept& k : kept) {
    if (total <= max_bytes_) break;
    std::error_code e;
    // Removed here or by another process's trim: either way no longer counted.
    fs::remove(k.path, e);
    total -= k.bytes;
    ++removed;
  }
  log_message(LogLevel::debug, "kernel cache " + folder_.string() + ": deleted the " + std::to_string(removed) +
                                   " least recently used kernels to stay within " + std::to_string(max_bytes_) +
                                   " bytes");
}

void DirectoryBinaryStore::store(const std::string& key, int /*arch*/, const std::string& /*compiler_version*/,
                                 const std::vector<char>& blob) {
  const std::filesystem::path path = file_for(key);
  if (path.empty() || blob.size() > kMaxBlobBytes) return;
  if (max_bytes_ != 0 && kHeaderBytes + blob.size() > max_bytes_) {
    // Kept, it would push out everything else and then itself.
    log_message(LogLevel::debug, "kernel cache " + folder_.string() + ": a kernel of " +
                                     std::to_string(blob.size()) + " bytes is larger than the folder's limit");
    return;
  }
  auto give_up = [&](const std::string& why) {
    // A folder that cannot be written is not an error of the call: one warning, then the
    // same at debug level.
    const bool first = !warned_.exchange(true, std::memory_order_relaxed);
    log_message(first ? LogLevel::warning : LogLevel::debug,
                "could not keep a compiled kernel in " + folder_.string() + " (" + why +
                    "); later processes will compile it again");
  };
  std::error_code ec;
  std::filesystem::create_directories(folder_, ec);
  if (ec) return give_up(ec.message());
  char header[kHeaderBytes];
  char* p = header;
  std::memcpy(p, kMagic, sizeof(kMagic));
  p += sizeof(kMagic);
  put_le(p, kFormat, 4);
  put_le(p + 4, 0, 4);  // reserved
  p += 8;
  std::memcpy(p, key.data(), kKeyChars);
  p += kKeyChars;
  put_le(p, blob.size(), 8);
  put_le(p + 8, checksum(blob.data(), blob.size()), 8);
  const std::filesystem::path temporary = folder_ / temporary_name(key);
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) return give_up("cannot create " + temporary.filename().string());
    out.write(header, static_cast<std::streamsize>(kHeaderBytes));
    out.write(blob.data(), static_cast<std::streamsize>(blob.size()));
    out.close();
    if (!out) {
      std::filesystem::remove(temporary, ec);
      return give_up("cannot write " + temporary.filename().string());
    }
  }
  // Atomic within the folder: a reader opens the old file, the new one or none.
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return give_up(ec.message());
  }
  trim();
}

std::optional<std::vector<char>> LayeredBinaryStore::load(const std::string& key) {
  for (BinaryStore* store : {first_, second_}) {
    if (store == nullptr) continue;
    try {
      if (auto blob = store->load(key)) return blob;
    } catch (const Error& e) {
      log_message(LogLevel::warning, "could not read a stored kernel (" + std::string(e.what()) + ")");
    }
  }
  return std::nullopt;
}

void LayeredBinaryStore::store(const std::string& key, int arch, const std::string& compiler_version,
                               const std::vector<char>& blob) {
  for (BinaryStore* store : {first_, second_}) {
    if (store == nullptr) continue;
    try {
      store->store(key, arch, compiler_version, blob);
    } catch (const Error& e) {
      log_message(LogLevel::warning, "could not store a compiled kernel (" + std::string(e.what()) + ")");
    }
  }
}

}  // namespace reduce_tune
