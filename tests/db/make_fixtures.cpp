// Writes tests/assets/db/schema_vN.db: a small populated database made by the schema
// steps up to version N, as a file of that release would look. Run it only to recreate a
// fixture (docs/DATABASE.md), naming the versions to write (default: all of them):
//   cmake --build build --target db_make_fixtures && ./build/tests/db/db_make_fixtures tests/assets/db 2
// The rows are written with that version's columns by hand, because the current row
// writers speak the current schema. Version 1 and 2 files hold the same rows (each with
// its own device UUID); version 2 adds a failure detail, the column it introduced.
#include <bit>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "reduce_tune/config.h"
#include "reduce_tune/db/database.h"
#include "schema.h"
#include "sqlite_handle.h"

namespace {

using reduce_tune::db::detail::Connection;
using reduce_tune::db::detail::Statement;
using reduce_tune::db::detail::Transaction;
using reduce_tune::db::detail::TransactionKind;

constexpr std::int64_t kTime = 1'700'000'000'000'000;  // fixed, so the bytes are reproducible

std::int64_t add_config(const Connection& c, const reduce_tune::ReduceConfig& config) {
  Statement s(c, "INSERT INTO configs (text, hash) VALUES (?1, ?2)");
  s.bind(1, reduce_tune::to_string(config)).bind(2, std::bit_cast<std::int64_t>(reduce_tune::config_hash(config)));
  s.run();
  return sqlite3_last_insert_rowid(c.get());
}

std::int64_t add_measurement(const Connection& c, std::int64_t config, const char* status, double median_ms,
                             std::int64_t n) {
  Statement s(c,
              "INSERT INTO measurements (device_id, op, dtype, out_dtype, layout, layout_outer, layout_inner, n, "
              "config_id, status, median_ms, spread, repetitions, gbps, tool_version, created_at_us) VALUES "
              "(1, 'sum', 'f32', 'f32', 'flat', 1, 1, ?1, ?2, ?3, ?4, 0.02, 25, ?5, '0.1.0', ?6)");
  s.bind(1, n).bind(2, config).bind(3, status);
  if (median_ms > 0) {
    s.bind(4, median_ms).bind(5, static_cast<double>(n) * 4 / (median_ms * 1e6));
  } else {
    s.bind_null(4).bind_null(5);
  }
  s.bind(6, kTime);
  s.run();
  return sqlite3_last_insert_rowid(c.get());
}

// Writes the fixture of one schema version. Each version's rows stay as they were when
// that version was current, so a regenerated file holds what the old code wrote.
void write_fixture(const std::filesystem::path& path, int version) {
  std::filesystem::remove(path);
  Connection c(path.string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path.string());
  Transaction t(c, TransactionKind::immediate);
  reduce_tune::db::detail::migrate(c, 0, version);
  Statement device(c,
                   "INSERT INTO devices (id, uuid, name, cc_major, cc_minor, sm_count, l2_bytes, memory_bus_bits, "
                   "memory_clock_khz, driver_version, runtime_version) VALUES (1, ?1, 'NVIDIA H100 80GB HBM3', "
                   "9, 0, 132, 52428800, 5120, 2619000, 12040, 12040)");
  device.bind(1, "GPU-fixture-v" + std::to_string(version));
  device.run();
  reduce_tune::ReduceConfig fast;  // the defaults: vectorized, 256 threads
  const auto slow = reduce_tune::default_config(reduce_tune::Strategy::interleaved);
  auto broken = fast;
  broken.block_threads = 1024;
  broken.items_per_thread = 16;
  const auto fast_id = add_config(c, fast);
  const auto slow_id = add_config(c, slow);
  const auto broken_id = add_config(c, broken);
  const std::int64_t n = 1 << 24;
  const auto winner = add_measurement(c, fast_id, "ok", 0.125, n);
  add_measurement(c, slow_id, "ok", 0.5, n);
  const auto failed = add_measurement(c, broken_id, "compile_failed", 0, n);
  if (version >= 2) {  // v2: why a candidate failed
    Statement detail(c, "UPDATE measurements SET detail = 'ptxas: too many registers' WHERE id = ?1");
    detail.bind(1, failed);
    detail.run();
  }
  Statement w(c,
              "INSERT INTO winners (device_id, op, dtype, out_dtype, layout, layout_outer, layout_inner, bucket, "
              "determinism, config_id, median_ms, measurement_id, source, tool_version, created_at_us) VALUES "
              "(1, 'sum', 'f32', 'f32', 'flat', 1, 1, 24, 'deterministic', ?1, 0.125, ?2, 'tuned', '0.1.0', ?3)");
  w.bind(1, fast_id).bind(2, winner).bind(3, kTime);
  w.run();
  Statement b(c,
              "INSERT INTO tuned_buckets (device_id, op, dtype, out_dtype, layout, layout_outer, layout_inner, "
              "bucket, tool_version, created_at_us) VALUES (1, 'sum', 'f32', 'f32', 'flat', 1, 1, 24, '0.1.0', ?1)");
  b.bind(1, kTime);
  b.run();
  Statement bin(c,
                "INSERT INTO binaries (key, arch, nvrtc_version, cubin, created_at_us) VALUES "
                "('fixture-key', 90, '12.4', X'7F454C46000102', ?1)");
  bin.bind(1, kTime);
  bin.run();
  t.commit();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: db_make_fixtures OUTPUT_FOLDER [VERSION...]\n";
    return 2;
  }
  std::vector<int> versions;
  for (int i = 2; i < argc; ++i) versions.push_back(std::atoi(argv[i]));
  if (versions.empty())
    for (int v = 1; v < reduce_tune::db::kSchemaVersion; ++v) versions.push_back(v);
  for (const int version : versions) {
    if (version < 1 || version >= reduce_tune::db::kSchemaVersion) {
      std::cerr << "db_make_fixtures: version " << version << ": fixtures are of versions 1 to "
                << reduce_tune::db::kSchemaVersion - 1 << '\n';
      return 2;
    }
    const auto path = std::filesystem::path(argv[1]) / ("schema_v" + std::to_string(version) + ".db");
    try {
      write_fixture(path, version);
    } catch (const std::exception& e) {
      std::cerr << e.what() << '\n';
      return 1;
    }
    std::cout << "wrote " << path.string() << '\n';
  }
  return 0;
}
