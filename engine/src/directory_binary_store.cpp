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

// The files of a store's names in `folder` (anything else is left out), each with its
// size and modification time; a file gone between the listing and its stat is left out.
struct Listed {
  Kind kind;
  std::filesystem::path path;
  std::uint64_t bytes;
  std::filesystem::file_time_type written;
};
std::vector<Listed> list(const std::filesystem::path& folder, std::error_code& ec) {
  namespace fs = std::filesystem;
  std::vector<Listed> out;
  fs::directory_iterator it(folder, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const Kind kind = kind_of(it->path());
    if (kind == Kind::other) continue;
    std::error_code e;
    const std::uint64_t bytes = fs::file_size(it->path(), e);
    if (e) continue;
    const fs::file_time_type written = fs::last_write_time(it->path(), e);
    if (e) continue;
    out.push_back({kind, it->path(), bytes, written});
  }
  return out;
}

// A temporary file this old was left by a writer that died.
bool stale(const Listed& f, std::filesystem::file_time_type now) {
  return f.kind == Kind::temporary && now - f.written > kStaleTemporary;
}

// Counts a listed file into `c`: a kept kernel (and its bytes) or a temporary.
void count(DirectoryBinaryStore::Contents& c, const Listed& f) {
  if (f.kind == Kind::kept) {
    ++c.kernels;
    c.bytes += f.bytes;
  } else {
    ++c.temporaries;
  }
}

// The folder's files of a store's names; an error where it cannot be listed (say, not
// readable), rather than an empty folder.
std::vector<Listed> list_or_throw(const std::filesystem::path& folder) {
  std::error_code ec;
  std::vector<Listed> files = list(folder, ec);
  if (ec) throw Error("cannot list the kernel cache " + folder.string() + ": " + ec.message());
  return files;
}
}  // namespace

DirectoryBinaryStore::Contents DirectoryBinaryStore::contents() const {
  Contents c;
  std::error_code ec;
  c.exists = std::filesystem::is_directory(folder_, ec);
  if (!c.exists) return c;
  for (const Listed& f : list_or_throw(folder_)) count(c, f);
  return c;
}

DirectoryBinaryStore::Contents DirectoryBinaryStore::clear() {
  namespace fs = std::filesystem;
  Contents deleted;
  std::error_code ec;
  deleted.exists = fs::is_directory(folder_, ec);
  if (!deleted.exists) return deleted;
  const std::vector<Listed> files = list_or_throw(folder_);
  const fs::file_time_type now = fs::file_time_type::clock::now();
  for (const Listed& f : files) {
    if (f.kind == Kind::temporary && !stale(f, now)) continue;  // perhaps another process writing
    std::error_code e;
    if (!fs::remove(f.path, e)) {
      if (e) throw Error("cannot delete " + f.path.string() + ": " + e.message());
      continue;  // removed by another process meanwhile
    }
    count(deleted, f);
  }
  return deleted;
}

void DirectoryBinaryStore::trim() {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<Listed> kept = list(folder_, ec);
  const fs::file_time_type now = fs::file_time_type::clock::now();
  std::uint64_t total = 0;
  for (const Listed& f : kept) {
    std::error_code e;
    if (stale(f, now)) fs::remove(f.path, e);
    if (f.kind == Kind::kept) total += f.bytes;
  }
  if (max_bytes_ == 0 || total <= max_bytes_) return;
  std::erase_if(kept, [](const Listed& f) { return f.kind != Kind::kept; });
  // Least recently used first (a load sets its file's time).
  std::sort(kept.begin(), kept.end(), [](const Listed& a, const Listed& b) {
    return a.written != b.written ? a.written < b.written : a.path < b.path;
  });
  std::size_t removed = 0;
  for (const Listed& k : kept) {
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
