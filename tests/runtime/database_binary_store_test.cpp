// The database's side of the binary cache: blobs round-trip compressed, blobs stored
// uncompressed by older versions still load, a damaged one is refused (and the cache
// then compiles instead), and a read-only database stores nothing.
#include "reduce_tune/runtime/database_binary_store.h"

#include <gtest/gtest.h>

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

TEST(DatabaseBinaryStore, ADamagedBlobIsRefused) {
  auto stored = compress_blob(sample_blob(5000));
  stored[stored.size() / 2] ^= std::byte{0xff};
  EXPECT_THROW(decompress_blob(stored), Error);
  stored.resize(20);
  EXPECT_THROW(decompress_blob(stored), Error);
}

TEST(DatabaseBinaryStore, WithoutADatabaseNothingIsStoredOrLoaded) {
  DatabaseBinaryStore none(nullptr);
  none.store("k", 90, "v", sample_blob(10));
  EXPECT_FALSE(none.load("k"));
}

}  // namespace
}  // namespace reduce_tune
