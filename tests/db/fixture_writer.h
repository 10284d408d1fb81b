// Writes the fixture database of one old schema version: a small populated file made by
// the schema steps up to that version, as a file of that release would look. Used by
// db_make_fixtures (which writes tests/assets/db/schema_vN.db) and by the migration
// tests, for a version whose fixture is not checked in yet.
// The rows are written with that version's columns by hand, because the current row
// writers speak the current schema. Version 1 to 4 files hold the same rows (each with its
// own device UUID); version 2 adds a failure detail, the column it introduced, version 3
// one bench row, the table it introduced, and version 4 one tuned axis class (four
// measurements, a winner and its mark), the tables it introduced; version 5 holds the
// same axis rows with their texts in the lookup tables it introduced.
#pragma once

#include <bit>
#include <cstdint>
#include <filesystem>
#include <string>

#include "reduce_tune/config.h"
#include "reduce_tune/db/database.h"
#include "schema.h"
#include "sqlite_handle.h"

namespace reduce_tune::db::fixtures {

using reduce_tune::db::detail::Connection;
using reduce_tune::db::detail::Statement;
using reduce_tune::db::detail::Transaction;
using reduce_tune::db::detail::TransactionKind;

inline constexpr std::int64_t kTime = 1'700'000'000'000'000;  // fixed, so the bytes are reproducible

inline std::int64_t add_config(const Connection& c, const reduce_tune::ReduceConfig& config) {
  Statement s(c, "INSERT INTO configs (text, hash) VALUES (?1, ?2)");
  s.bind(1, reduce_tune::to_string(config)).bind(2, std::bit_cast<std::int64_t>(reduce_tune::config_hash(config)));
  s.run();
  return sqlite3_last_insert_rowid(c.get());
}

inline std::int64_t add_measurement(const Connection& c, std::int64_t config, const char* status,
                                    double median_ms, std::int64_t n) {
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
inline void write_fixture(const std::filesystem::path& path, int version) {
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
  if (version >= 3) {  // v3: a `reduce-tune bench` row
    Statement bench(c,
                    "INSERT INTO bench_results (device_id, op, dtype, out_dtype, layout, layout_outer, layout_inner, n, "
                    "implementation, config, median_ms, spread, repetitions, gbps, peak_fraction, peak_gbps, run_id, "
                    "tool_version, created_at_us) VALUES (1, 'sum', 'f32', 'f32', 'flat', 1, 1, ?1, 'cub', "
                    "'cub::DeviceReduce::Sum', 0.02, 0.01, 50, 3355.4432, 0.99, 3389.3, 'fixture-run', '0.2.0', ?2)");
    bench.bind(1, n).bind(2, kTime);
    bench.run();
  }
  if (version >= 4) {  // v4: one tuned axis class, its config and tool version as text (v5: as ids)
    // v5 stores each text once, in axis_configs and tool_versions, and a row's ids.
    auto text_id = [&](const char* table, const char* text) -> std::int64_t {
      Statement find(c, std::string("SELECT id FROM ") + table + " WHERE text = ?1");
      find.bind(1, text);
      if (find.step()) return find.int64(0);
      Statement add(c, std::string("INSERT INTO ") + table + " (text) VALUES (?1)");
      add.bind(1, text);
      add.run();
      return sqlite3_last_insert_rowid(c.get());
    };
    auto axis = [&](const char* config, const char* status, double median_ms, const char* tool_version,
                    std::int64_t at) -> std::int64_t {
      const bool ids = version >= 5;
      Statement m(c, std::string("INSERT INTO axis_measurements (device_id, op, dtype, out_dtype, layout, reduced, "
                                 "outputs, inner, ") +
                         (ids ? "config_id" : "config") + ", status, median_ms, spread, repetitions, gbps, " +
                         (ids ? "tool_version_id" : "tool_version") +
                         ", created_at_us, detail) VALUES (1, 'sum', 'f32', 'f32', 'rows', 1024, 16384, 1, ?1, ?2, "
                         "?3, 0.01, 25, ?4, ?5, ?6, ?7)");
      if (ids)
        m.bind(1, text_id("axis_configs", config)).bind(5, text_id("tool_versions", tool_version));
      else
        m.bind(1, config).bind(5, tool_version);
      m.bind(2, status).bind(6, at);
      if (median_ms > 0)
        m.bind(3, median_ms).bind(4, 1024.0 * 16384 * 4 / (median_ms * 1e6)).bind(7, "");
      else
        m.bind_null(3).bind_null(4).bind(7, "launch: too many resources requested");
      m.run();
      return sqlite3_last_insert_rowid(c.get());
    };
    const char* fast_axis = "rows:block=256,vec=4,rows_per_block=1";
    const std::int64_t time = kTime;
    axis("rows:block=128,vec=1,rows_per_block=1", "ok", 0.05, "0.4.0", time);
    const auto axis_winner = axis(fast_axis, "ok", 0.025, "0.4.0", time);
    axis("rows:block=1024,vec=4,rows_per_block=8", "launch_failed", 0, "0.4.0", time);
    // The same config again, measured by a later tool: a row of its own.
    axis(fast_axis, "ok", 0.026, "0.4.1", time + 1);
    Statement aw(c,
                 "INSERT INTO axis_winners (device_id, op, dtype, out_dtype, layout, reduced_bucket, outputs_bucket, "
                 "config, median_ms, gbps, measurement_id, source, tool_version, created_at_us) VALUES "
                 "(1, 'sum', 'f32', 'f32', 'rows', 10, 14, ?1, 0.025, 2684.35456, ?2, 'tuned', '0.4.0', ?3)");
    aw.bind(1, fast_axis).bind(2, axis_winner).bind(3, time);
    aw.run();
    Statement ab(c,
                 "INSERT INTO axis_tuned_buckets (device_id, op, dtype, out_dtype, layout, reduced_bucket, "
                 "outputs_bucket, tool_version, created_at_us) VALUES (1, 'sum', 'f32', 'f32', 'rows', 10, 14, "
                 "'0.4.0', ?1)");
    ab.bind(1, time);
    ab.run();
  }
  t.commit();
}

}  // namespace reduce_tune::db::fixtures
