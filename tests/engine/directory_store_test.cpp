// The kernel cache folder (DirectoryBinaryStore) and the runtime's layering of it behind
// the database (LayeredBinaryStore): what a later process loads, and that nothing but the
// exact file a store wrote for its key is ever loaded.
#include "reduce_tune/engine/directory_binary_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "fake_compiler.h"
#include "reduce_tune/error.h"
#include "reduce_tune/log.h"

namespace reduce_tune {
namespace {

namespace fs = std::filesystem;

// A fresh folder of this test's own.
fs::path fresh_folder(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("rt_kernel_cache_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p;
}

const std::string kKey = "0123456789abcdef0123456789abcdef";
const std::string kOtherKey = "fedcba9876543210fedcba9876543210";

std::vector<char> blob_of(std::size_t size, unsigned seed) {
  std::vector<char> b(size);
  std::mt19937 rng(seed);
  for (char& c : b) c = static_cast<char>(rng());
  return b;
}

std::vector<char> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_file(const fs::path& p, const std::vector<char>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Names in the folder other than kept files (temporaries left behind).
std::vector<std::string> strays(const fs::path& folder) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(folder))
    if (e.path().extension() != ".rtk") out.push_back(e.path().filename().string());
  return out;
}

using testing::FakeCompiler;

CompileRequest request_of(const std::string& source) {
  CompileRequest r;
  r.arch = 90;
  r.source = source;
  r.name_expressions = {"kernel"};
  return r;
}

TEST(DirectoryBinaryStore, RoundTripsAndCreatesItsFolder) {
  const fs::path folder = fresh_folder("roundtrip") / "a" / "b";
  DirectoryBinaryStore store(folder);
  EXPECT_EQ(store.load(kKey), std::nullopt);  // no folder yet: a miss
  const std::vector<char> blob = blob_of(5000, 1);
  store.store(kKey, 90, "nvrtc", blob);
  ASSERT_TRUE(fs::exists(store.file_for(kKey)));
  EXPECT_EQ(store.load(kKey), blob);
  EXPECT_EQ(store.load(kOtherKey), std::nullopt);
  // An empty blob too.
  store.store(kOtherKey, 90, "nvrtc", {});
  EXPECT_EQ(store.load(kOtherKey), std::vector<char>{});
  EXPECT_TRUE(strays(folder).empty());
  // A second store object on the folder (a later process) loads the same.
  DirectoryBinaryStore later(folder);
  EXPECT_EQ(later.load(kKey), blob);
  fs::remove_all(folder.parent_path().parent_path());
}

TEST(DirectoryBinaryStore, NoDamagedFileIsEverLoaded) {
  const fs::path folder = fresh_folder("damaged");
  DirectoryBinaryStore store(folder);
  const std::vector<char> blob = blob_of(300, 2);
  store.store(kKey, 90, "nvrtc", blob);
  const fs::path file = store.file_for(kKey);
  const std::vector<char> good = read_file(file);
  ASSERT_EQ(good.size(), 64u + blob.size());
  int refused = 0;
  // Every truncation, header and blob alike.
  for (std::size_t n = 0; n < good.size(); ++n) {
    write_file(file, std::vector<char>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)));
    EXPECT_EQ(store.load(kKey), std::nullopt) << "truncated to " << n;
    ++refused;
  }
  // One bit flipped at every byte: the magic, the format, the key, the size, the
  // checksum, the blob.
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::vector<char> bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    write_file(file, bad);
    EXPECT_EQ(store.load(kKey), std::nullopt) << "byte " << i << " flipped";
    ++refused;
  }
  // A byte past the end.
  std::vector<char> longer = good;
  longer.push_back('x');
  write_file(file, longer);
  EXPECT_EQ(store.load(kKey), std::nullopt);
  // Another key's whole file under this key's name.
  store.store(kOtherKey, 90, "nvrtc", blob);
  fs::copy_file(store.file_for(kOtherKey), file, fs::copy_options::overwrite_existing);
  EXPECT_EQ(store.load(kKey), std::nullopt);
  EXPECT_EQ(refused, static_cast<int>(2 * good.size()));
  // The next store replaces whatever was there.
  store.store(kKey, 90, "nvrtc", blob);
  EXPECT_EQ(store.load(kKey), blob);
  fs::remove_all(folder);
}

TEST(DirectoryBinaryStore, KeysOfAnotherFormAreNeitherLoadedNorStored) {
  const fs::path folder = fresh_folder("keys");
  DirectoryBinaryStore store(folder);
  for (const std::string& key : {std::string("../../escape"), std::string("0123456789ABCDEF0123456789ABCDEF"),
                                 kKey.substr(1), kKey + "0", std::string(""), std::string("/tmp/x")}) {
    EXPECT_TRUE(store.file_for(key).empty()) << key;
    store.store(key, 90, "nvrtc", blob_of(10, 3));
    EXPECT_EQ(store.load(key), std::nullopt) << key;
  }
  EXPECT_FALSE(fs::exists(folder));  // nothing was written anywhere
}

TEST(DirectoryBinaryStore, AFolderThatCannotBeWrittenIsAMissWithOneWarning) {
  // A regular file where the folder would be: no one (root included) can create it.
  const fs::path base = fresh_folder("unwritable");
  fs::create_directories(base);
  write_file(base / "file", {'x'});
  DirectoryBinaryStore store(base / "file" / "kernels");
  std::vector<std::string> warnings;
  int debug = 0;
  auto previous = set_log_sink([&](LogLevel level, std::string_view m) {
    if (level == LogLevel::warning) warnings.emplace_back(m);
    if (level == LogLevel::debug) ++debug;
  });
  for (int i = 0; i < 3; ++i) EXPECT_NO_THROW(store.store(kKey, 90, "nvrtc", blob_of(10, 4)));
  set_log_sink(previous);
  EXPECT_EQ(store.load(kKey), std::nullopt);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("could not keep a compiled kernel"), std::string::npos) << warnings[0];
  EXPECT_EQ(debug, 2);
  fs::remove_all(base);
}

TEST(DirectoryBinaryStore, ConcurrentWritersAndReadersSeeWholeFilesOnly) {
  const fs::path folder = fresh_folder("concurrent");
  std::vector<std::vector<char>> blobs;
  for (unsigned t = 0; t < 6; ++t) blobs.push_back(blob_of(1000 + 4096 * t, 10 + t));  // each writer its own
  std::atomic<bool> torn{false};
  std::atomic<int> loads{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      DirectoryBinaryStore store(folder);  // as separate processes would
      for (int i = 0; i < 40; ++i) {
        store.store(kKey, 90, "nvrtc", blobs[t]);
        if (auto got = store.load(kKey)) {
          ++loads;
          if (std::find(blobs.begin(), blobs.end(), *got) == blobs.end()) torn = true;
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_FALSE(torn.load());
  EXPECT_EQ(loads.load(), 6 * 40);  // each load follows a store of the key: never a miss
  DirectoryBinaryStore store(folder);
  const auto last = store.load(kKey);
  ASSERT_TRUE(last.has_value());
  EXPECT_NE(std::find(blobs.begin(), blobs.end(), *last), blobs.end());
  EXPECT_TRUE(strays(folder).empty());
  fs::remove_all(folder);
}

TEST(DirectoryBinaryStore, ASecondProcessLoadsWhatTheFirstCompiled) {
  const fs::path folder = fresh_folder("process");
  const CompileRequest request = request_of("__global__ void kernel() {}");
  std::shared_ptr<const CompiledProgram> first;
  {
    DirectoryBinaryStore store(folder);
    FakeCompiler compiler;
    BinaryCache cache(compiler, &store);
    first = cache.get(request);
    EXPECT_EQ(compiler.compiles.load(), 1);
  }
  {
    DirectoryBinaryStore store(folder);
    testing::expect_served_by_the_store(store, request, *first);
  }
  // Damaged on disk: compiled again and the file replaced, so a third process loads it.
  DirectoryBinaryStore store(folder);
  const fs::path file = store.file_for(binary_cache_key(request, "fake 1.0"));
  std::vector<char> bytes = read_file(file);
  bytes.back() = static_cast<char>(bytes.back() ^ 1);
  write_file(file, bytes);
  {
    FakeCompiler compiler;
    BinaryCache cache(compiler, &store);
    EXPECT_EQ(cache.get(request)->cubin, first->cubin);
    EXPECT_EQ(compiler.compiles.load(), 1);
  }
  testing::expect_served_by_the_store(store, request, *first);
  fs::remove_all(folder);
}

// The key of kernel number i (32 lowercase hex digits).
std::string key_of(unsigned i) {
  char text[33];
  std::snprintf(text, sizeof text, "%032x", i);
  return text;
}

std::uint64_t bytes_kept(const fs::path& folder) {
  std::uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(folder))
    if (e.path().extension() == ".rtk") total += fs::file_size(e.path());
  return total;
}

// The file times a test sets: `seconds` before now.
void used_ago(const fs::path& file, int seconds) {
  fs::last_write_time(file, fs::file_time_type::clock::now() - std::chrono::seconds(seconds));
}

TEST(DirectoryBinaryStore, KeepsWithinItsLimitDeletingTheLeastRecentlyUsed) {
  const fs::path folder = fresh_folder("limit");
  const std::vector<char> blob = blob_of(1000, 3);
  std::uint64_t file_bytes = 0;
  {
    DirectoryBinaryStore probe(fresh_folder("limit_probe"));
    probe.store(kKey, 90, "nvrtc", blob);
    file_bytes = fs::file_size(probe.file_for(kKey));
    fs::remove_all(probe.folder());
  }
  ASSERT_GT(file_bytes, blob.size());
  DirectoryBinaryStore store(folder, 3 * file_bytes + file_bytes / 2);  // room for three
  for (unsigned i = 1; i <= 3; ++i) store.store(key_of(i), 90, "nvrtc", blob);
  // Stored 300, 200 and 100 s ago; then kernel 1 loaded now.
  for (unsigned i = 1; i <= 3; ++i) used_ago(store.file_for(key_of(i)), 400 - 100 * static_cast<int>(i));
  ASSERT_EQ(store.load(key_of(1)), blob);
  store.store(key_of(4), 90, "nvrtc", blob);  // four do not fit: kernel 2 goes
  EXPECT_FALSE(fs::exists(store.file_for(key_of(2))));
  for (unsigned i : {1u, 3u, 4u}) EXPECT_EQ(store.load(key_of(i)), blob) << i;
  EXPECT_LE(bytes_kept(folder), store.max_bytes());
  // Loads are uses: kernel 3 loaded last of the three before kernel 5 is stored.
  used_ago(store.file_for(key_of(1)), 30);
  used_ago(store.file_for(key_of(4)), 20);
  used_ago(store.file_for(key_of(3)), 10);
  store.store(key_of(5), 90, "nvrtc", blob);
  EXPECT_FALSE(fs::exists(store.file_for(key_of(1))));
  for (unsigned i : {3u, 4u, 5u}) EXPECT_TRUE(fs::exists(store.file_for(key_of(i)))) << i;
  // A kernel larger than the whole limit is not kept, and pushes nothing out.
  store.store(key_of(6), 90, "nvrtc", blob_of(4 * 1000, 4));
  EXPECT_FALSE(fs::exists(store.file_for(key_of(6))));
  for (unsigned i : {3u, 4u, 5u}) EXPECT_TRUE(fs::exists(store.file_for(key_of(i)))) << i;
  fs::remove_all(folder);
}

TEST(DirectoryBinaryStore, NoLimitKeepsEverythingAndForeignFilesAreLeftAlone) {
  const fs::path folder = fresh_folder("no_limit");
  fs::create_directories(folder);
  const std::vector<char> foreign = blob_of(50000, 5);
  write_file(folder / "notes.bin", foreign);      // not a kept file's name
  write_file(folder / "abc.rtk", foreign);        // .rtk, but not a key
  used_ago(folder / "notes.bin", 100000);
  used_ago(folder / "abc.rtk", 100000);
  {
    DirectoryBinaryStore store(folder);  // 0: no limit
    for (unsigned i = 0; i < 30; ++i) store.store(key_of(i), 90, "nvrtc", blob_of(2000, i));
    for (unsigned i = 0; i < 30; ++i) EXPECT_EQ(store.load(key_of(i)), blob_of(2000, i)) << i;
  }
  // A limit that the kept files meet without the foreign ones: nothing is deleted.
  DirectoryBinaryStore store(folder, bytes_kept(folder) - fs::file_size(folder / "abc.rtk") + 1);
  store.store(key_of(0), 90, "nvrtc", blob_of(2000, 0));
  for (unsigned i = 0; i < 30; ++i) EXPECT_TRUE(fs::exists(store.file_for(key_of(i)))) << i;
  EXPECT_EQ(read_file(folder / "notes.bin"), foreign);
  EXPECT_EQ(read_file(folder / "abc.rtk"), foreign);
  fs::remove_all(folder);
}

TEST(DirectoryBinaryStore, StaleTemporariesAreDeletedByTheNextStore) {
  const fs::path folder = fresh_folder("stale");
  fs::create_directories(folder);
  const fs::path stale = folder / (".tmp-" + kKey + "-1-2-3");
  const fs::path fresh = folder / (".tmp-" + kOtherKey + "-4-5-6");
  write_file(stale, blob_of(100, 6));
  write_file(fresh, blob_of(100, 7));
  used_ago(stale, 11 * 60);  // older than any writer takes
  used_ago(fresh, 60);       // perhaps another process still writing
  DirectoryBinaryStore store(folder);
  store.store(kKey, 90, "nvrtc", blob_of(100, 8));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));
  fs::remove_all(folder);
}

TEST(DirectoryBinaryStore, ConcurrentWritersStayWithinTheLimit) {
  const fs::path folder = fresh_folder("limit_concurrent");
  const std::uint64_t limit = 10 * (3000 + 64);
  std::atomic<bool> wrong{false};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      DirectoryBinaryStore store(folder, limit);  // as separate processes would
      for (unsigned i = 0; i < 25; ++i) {
        const unsigned k = t * 100 + i;
        store.store(key_of(k), 90, "nvrtc", blob_of(3000, k));
        // Trimmed away by another writer (a miss) or whole: never anything else.
        for (unsigned j = t * 100; j <= k; ++j)
          if (auto got = store.load(key_of(j)); got && *got != blob_of(3000, j)) wrong = true;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_FALSE(wrong.load());
  DirectoryBinaryStore store(folder, limit);
  store.store(key_of(1000), 90, "nvrtc", blob_of(3000, 1000));
  EXPECT_LE(bytes_kept(folder), limit);
  EXPECT_GE(bytes_kept(folder), limit - 2 * (3000 + 64));  // trimmed to the limit, not emptied
  EXPECT_TRUE(strays(folder).empty());
  fs::remove_all(folder);
}

TEST(LayeredBinaryStore, LoadsTheFirstThenTheSecondAndStoresIntoBoth) {
  struct Store final : BinaryStore {
    std::map<std::string, std::vector<char>> blobs;
    bool throws = false;
    std::optional<std::vector<char>> load(const std::string& key) override {
      if (throws) throw Error("locked");
      auto it = blobs.find(key);
      if (it == blobs.end()) return std::nullopt;
      return it->second;
    }
    void store(const std::string& key, int, const std::string&, const std::vector<char>& blob) override {
      if (throws) throw Error("read-only");
      blobs[key] = blob;
    }
  } database, folder;
  LayeredBinaryStore layered(&database, &folder);
  database.blobs[kKey] = {'d'};
  folder.blobs[kKey] = {'f'};
  folder.blobs[kOtherKey] = {'o'};
  EXPECT_EQ(layered.load(kKey), std::vector<char>{'d'});
  EXPECT_EQ(layered.load(kOtherKey), std::vector<char>{'o'});
  layered.store("k3", 90, "v", {'n'});
  EXPECT_EQ(database.blobs["k3"], std::vector<char>{'n'});
  EXPECT_EQ(folder.blobs["k3"], std::vector<char>{'n'});
  // A database that throws (locked, damaged): the folder still serves and still stores.
  auto previous = set_log_sink([](LogLevel, std::string_view) {});
  database.throws = true;
  EXPECT_EQ(layered.load(kKey), std::vector<char>{'f'});
  EXPECT_NO_THROW(layered.store("k4", 90, "v", {'m'}));
  set_log_sink(previous);
  EXPECT_EQ(folder.blobs["k4"], std::vector<char>{'m'});
  // Either may be absent.
  LayeredBinaryStore only_folder(nullptr, &folder);
  EXPECT_EQ(only_folder.load(kOtherKey), std::vector<char>{'o'});
  LayeredBinaryStore none(nullptr, nullptr);
  EXPECT_EQ(none.load(kKey), std::nullopt);
  EXPECT_NO_THROW(none.store(kKey, 90, "v", {'x'}));
}

}  // namespace
}  // namespace reduce_tune
