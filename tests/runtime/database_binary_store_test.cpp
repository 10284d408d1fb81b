// The database's side of the binary cache: blobs round-trip compressed (xz), blobs stored
// uncompressed or zlib-compressed by older versions still load, a damaged one is refused (and the cache
// then compiles instead), and a read-only database stores nothing.
#include "reduce_tune/runtime/database_binary_store.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <random>

#include "reduce_tune/error.h"

namespace reduce_tune {
namespace {

std::vector<char> sample_blob(std::size_t size) {
  std::vector<char> blob(size);
  std::mt19937 rng(3);
  for (std::size_t i = 0; i < size; ++i) blob[i] = static_cast<char>(i % 64 < 48 ? 0 : rng());  // CUBIN-like
  return blob;
}

TEST(DatabaseBinaryStore, BlobsRoundTripCompressed) {
  auto database = db::Database::open_in_memory();
  DatabaseBinaryStore store(&database);
  const auto blob = sample_blob(40000);
  store.store("key", 90, "nvrtc 13.0", blob);
  const auto stored = database.find_binary("key");
  ASSERT_TRUE(stored);
  EXPECT_LT(stored->cubin.size(), blob.size() / 2);  // compressed
  EXPECT_EQ(store.load("key"), blob);
  EXPECT_FALSE(store.load("missing"));
}

TEST(DatabaseBinaryStore, UncompressedBlobsOfOlderVersionsStillLoad) {
  auto database = db::Database::open_in_memory();
  const auto blob = sample_blob(1000);
  std::vector<std::byte> raw(blob.size());
  std::memcpy(raw.data(), blob.data(), blob.size());
  database.put_binary({"old", 90, "nvrtc 12.4", raw, db::now_timestamp()});
  DatabaseBinaryStore store(&database);
  EXPECT_EQ(store.load("old"), blob);
}

// What versions before xz compression wrote: "RTZ1", the size, a zlib stream.
TEST(DatabaseBinaryStore, ZlibBlobsOfOlderVersionsStillLoad) {
  const auto blob = sample_blob(30000);
  uLongf bound = compressBound(static_cast<uLong>(blob.size()));
  std::vector<std::byte> stored(12 + bound);
  std::memcpy(stored.data(), "RTZ1", 4);
  const std::uint64_t size = blob.size();
  std::memcpy(stored.data() + 4, &size, 8);
  ASSERT_EQ(compress2(reinterpret_cast<Bytef*>(stored.data() + 12), &bound,
                      reinterpret_cast<const Bytef*>(blob.data()), static_cast<uLong>(blob.size()), 6),
            Z_OK);
  stored.resize(12 + bound);
  auto database = db::Database::open_in_memory();
  database.put_binary({"zlib", 90, "nvrtc 13.0", stored, db::now_timestamp()});
  DatabaseBinaryStore store(&database);
  EXPECT_EQ(store.load("zlib"), blob);
  // This version writes xz, smaller than that zlib stream.
  const auto xz = compress_blob(blob);
  EXPECT_EQ(std::memcmp(xz.data(), "RTX1", 4), 0);
  EXPECT_LT(xz.size(), stored.size());
  EXPECT_EQ(decompress_blob(xz), blob);
}

TEST(DatabaseBinaryStore, ADamagedBlobIsRefused) {
  auto stored = compress_blob(sample_blob(5000));
  stored[stored.size() / 2] ^= std::byte{0xff};
  EXPECT_THROW(decompress_blob(stored), Error);
  stored.resize(20);
  EXPECT_THROW(decompress_blob(stored), Error);
  // A stream cut short, and a size that does not match the stream's.
  auto cut = compress_blob(sample_blob(5000));
  cut.resize(cut.size() - 8);
  EXPECT_THROW(decompress_blob(cut), Error);
  auto wrong_size = compress_blob(sample_blob(5000));
  const std::uint64_t bigger = 5001;
  std::memcpy(wrong_size.data() + 4, &bigger, 8);
  EXPECT_THROW(decompress_blob(wrong_size), Error);
}

TEST(DatabaseBinaryStore, WithoutADatabaseNothingIsStoredOrLoaded) {
  DatabaseBinaryStore none(nullptr);
  none.store("k", 90, "v", sample_blob(10));
  EXPECT_FALSE(none.load("k"));
}

}  // namespace
}  // namespace reduce_tune
