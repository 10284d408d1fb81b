#include "rows.h"

#include <bit>
#include <cmath>
#include <limits>

#include "reduce_tune/error.h"

namespace reduce_tune::db::detail {
namespace {

constexpr std::int64_t kMaxDbInt = std::numeric_limits<std::int64_t>::max();

// SQLite integers are signed; sizes beyond 2^63 are not a reduction anyone runs.
std::int64_t to_db_size(std::uint64_t value, const char* what) {
  if (value > static_cast<std::uint64_t>(kMaxDbInt))
    throw InvalidArgument(std::string(what) + " " + std::to_string(value) + " does not fit the database");
  return static_cast<std::int64_t>(value);
}

[[noreturn]] void bad_value(const Connection& connection, std::string_view what, std::string_view value) {
  throw DbError(SQLITE_MISMATCH, connection.label() + ": unknown " + std::string(what) + " '" +
                                     std::string(value) + "' (written by a newer reduce-tune?)");
}

template <typename T, typename Parse>
T parse_column(const Connection& connection, const Statement& row, int column, std::string_view what,
               Parse parse) {
  const std::string text = row.text(column);
  if (auto value = parse(text)) return *value;
  bad_value(connection, what, text);
}

ProblemClass read_problem(const Connection& connection, const Statement& row, int first) {
  ProblemClass problem;
  problem.op = parse_column<Op>(connection, row, first, "op", parse_op);
  problem.dtype = parse_column<DType>(connection, row, first + 1, "dtype", parse_dtype);
  problem.out_dtype = parse_column<DType>(connection, row, first + 2, "dtype", parse_dtype);
  problem.layout.kind = parse_column<LayoutKind>(connection, row, first + 3, "layout", parse_layout_kind);
  problem.layout.outer = static_cast<std::uint64_t>(row.int64(first + 4));
  problem.layout.inner = static_cast<std::uint64_t>(row.int64(first + 5));
  return problem;
}

ReduceConfig read_config(const Connection& connection, const Statement& row, int column) {
  const std::string text = row.text(column);
  auto parsed = parse_config(text);
  if (!parsed.config)
    throw DbError(SQLITE_MISMATCH, connection.label() + ": stored config '" + text +
                                       "' does not parse (" + parsed.error + ")");
  return *parsed.config;
}

std::int64_t db_hash(const ReduceConfig& config) {
  return std::bit_cast<std::int64_t>(config_hash(config));
}

constexpr const char* kProblemColumns = "op, dtype, out_dtype, layout, layout_outer, layout_inner";

}  // namespace

std::int64_t to_db_time(Timestamp time) { return time.time_since_epoch().count(); }
Timestamp from_db_time(std::int64_t micros) { return Timestamp(std::chrono::microseconds(micros)); }

void bind_problem(Statement& statement, int first, const ProblemClass& problem) {
  statement.bind(first, to_string(problem.op))
      .bind(first + 1, to_string(problem.dtype))
      .bind(first + 2, to_string(problem.out_dtype))
      .bind(first + 3, to_string(problem.layout))
      .bind(first + 4, to_db_size(problem.layout.outer, "layout outer size"))
      .bind(first + 5, to_db_size(problem.layout.inner, "layout inner size"));
}

Statement& RowWriter::prepared(std::optional<Statement>& slot, std::string_view sql) {
  if (!slot) slot.emplace(connection_, sql);
  slot->reset();
  return *slot;
}

namespace {
void bind_device(Statement& s, const DeviceKey& d) {
  s.bind(1, d.uuid)
      .bind(2, d.name)
      .bind(3, d.cc_major)
      .bind(4, d.cc_minor)
      .bind(5, d.sm_count)
      .bind(6, d.l2_bytes)
      .bind(7, d.memory_bus_bits)
      .bind(8, d.memory_clock_khz)
      .bind(9, d.driver_version)
      .bind(10, d.runtime_version);
}
constexpr const char* kInsertDevice =
    "INSERT INTO devices (uuid, name, cc_major, cc_minor, sm_count, l2_bytes, memory_bus_bits, "
    "memory_clock_khz, driver_version, runtime_version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
}  // namespace

RowId RowWriter::upsert_device(const DeviceKey& device) {
  if (device.uuid.empty()) throw InvalidArgument("a device needs a UUID to be stored");
  auto& s = prepared(upsert_device_,
                     std::string(kInsertDevice) +
                         " ON CONFLICT (uuid) DO UPDATE SET name = excluded.name, cc_major = "
                         "excluded.cc_major, cc_minor = excluded.cc_minor, sm_count = "
                         "excluded.sm_count, l2_bytes = excluded.l2_bytes, memory_bus_bits = "
                         "excluded.memory_bus_bits, memory_clock_khz = excluded.memory_clock_khz, "
                         "driver_version = excluded.driver_version, runtime_version = "
                         "excluded.runtime_version RETURNING id");
  bind_device(s, device);
  if (!s.step()) connection_.fail(SQLITE_ERROR, "upserting a device returned no id");
  const RowId id = s.int64(0);
  s.run();
  return id;
}

std::pair<RowId, bool> RowWriter::add_device_if_absent(const DeviceKey& device) {
  if (device.uuid.empty()) throw InvalidArgument("a device needs a UUID to be stored");
  auto& find = prepared(find_device_, "SELECT id FROM devices WHERE uuid = ?1");
  find.bind(1, device.uuid);
  if (find.step()) return {find.int64(0), false};
  auto& insert = prepared(insert_device_, kInsertDevice);
  bind_device(insert, device);
  insert.run();
  return {sqlite3_last_insert_rowid(connection_.get()), true};
}

RowId RowWriter::config_id(const ReduceConfig& config) {
  std::string text = to_string(config);
  if (auto it = config_ids_.find(text); it != config_ids_.end()) return it->second;
  auto& find = prepared(find_config_, "SELECT id FROM configs WHERE text = ?1");
  find.bind(1, text);
  RowId id = 0;
  if (find.step()) {
    id = find.int64(0);
  } else {
    auto& insert = prepared(insert_config_, "INSERT INTO configs (text, hash) VALUES (?1, ?2)");
    insert.bind(1, text).bind(2, db_hash(config));
    insert.run();
    id = sqlite3_last_insert_rowid(connection_.get());
  }
  config_ids_.emplace(std::move(text), id);
  return id;
}

std::pair<RowId, bool> RowWriter::add_measurement(RowId device_id, const Measurement& m) {
  const RowId config = config_id(m.config);
  const ProblemClass problem = ProblemClass::of(m.problem);
  const std::int64_t n = to_db_size(m.problem.n, "n");
  auto& insert = prepared(
      insert_measurement_,
      std::string("INSERT INTO measurements (device_id, ") + kProblemColumns +
          ", n, config_id, status, median_ms, spread, repetitions, gbps, tool_version, "
          "created_at_us, detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
          "?14, ?15, ?16, ?17) ON CONFLICT DO NOTHING RETURNING id");
  insert.bind(1, device_id);
  bind_problem(insert, 2, problem);
  insert.bind(8, n)
      .bind(9, config)
      .bind(10, to_string(m.status))
      .bind(11, m.median_ms)
      .bind(12, m.spread)
      .bind(13, m.repetitions)
      .bind(14, m.gbps)
      .bind(15, m.tool_version)
      .bind(16, to_db_time(m.created_at))
      .bind(17, m.detail);
  if (insert.step()) {
    const RowId id = insert.int64(0);
    insert.run();
    return {id, true};
  }
  auto& find = prepared(find_measurement_,
                        std::string("SELECT id FROM measurements WHERE device_id = ?1 AND (") +
                            kProblemColumns +
                            ") = (?2, ?3, ?4, ?5, ?6, ?7) AND n = ?8 AND config_id = ?9 AND "
                            "created_at_us = ?10 AND tool_version = ?11");
  find.bind(1, device_id);
  bind_problem(find, 2, problem);
  find.bind(8, n).bind(9, config).bind(10, to_db_time(m.created_at)).bind(11, m.tool_version);
  if (!find.step())
    connection_.fail(SQLITE_CONSTRAINT, "a measurement was neither inserted nor found");
  return {find.int64(0), false};
}

void RowWriter::put_winner(RowId device_id, const Winner& w, std::optional<RowId> measurement_id,
                           WinnerSource source) {
  const RowId config = config_id(w.config);
  auto& s = prepared(
      put_winner_,
      std::string("INSERT INTO winners (device_id, ") + kProblemColumns +
          ", bucket, determinism, config_id, median_ms, measurement_id, source, tool_version, "
          "created_at_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
          "ON CONFLICT DO UPDATE SET config_id = excluded.config_id, median_ms = "
          "excluded.median_ms, measurement_id = excluded.measurement_id, source = excluded.source, "
          "tool_version = excluded.tool_version, created_at_us = excluded.created_at_us");
  s.bind(1, device_id);
  bind_problem(s, 2, w.problem);
  s.bind(8, w.bucket)
      .bind(9, to_string(w.determinism))
      .bind(10, config)
      .bind(11, w.median_ms)
      .bind(12, measurement_id)
      .bind(13, to_string(source))
      .bind(14, w.tool_version)
      .bind(15, to_db_time(w.created_at));
  s.run();
}

std::optional<RowWriter::ExistingWinner> RowWriter::find_winner(RowId device_id, const ProblemClass& problem,
                                                                int bucket, Determinism determinism) {
  auto& s = prepared(find_winner_,
                     std::string("SELECT w.id, w.median_ms, m.status = 'ok' FROM winners w LEFT JOIN "
                                 "measurements m ON m.id = w.measurement_id WHERE w.device_id = ?1 AND (") +
                         "w.op, w.dtype, w.out_dtype, w.layout, w.layout_outer, w.layout_inner" +
                         ") = (?2, ?3, ?4, ?5, ?6, ?7) AND w.bucket = ?8 AND w.determinism = ?9");
  s.bind(1, device_id);
  bind_problem(s, 2, problem);
  s.bind(8, bucket).bind(9, to_string(determinism));
  if (!s.step()) return std::nullopt;
  ExistingWinner existing{s.int64(0), s.real(1), !s.is_null(2) && s.int64(2) != 0};
  s.run();
  return existing;
}

bool RowWriter::mark_bucket(RowId device_id, const TunedBucket& bucket, bool refresh) {
  const std::string insert = std::string("INSERT INTO tuned_buckets (device_id, ") + kProblemColumns +
                             ", bucket, tool_version, created_at_us) VALUES (?1, ?2, ?3, ?4, ?5, "
                             "?6, ?7, ?8, ?9, ?10) ON CONFLICT DO ";
  auto& s = refresh ? prepared(refresh_bucket_, insert +
                                                    "UPDATE SET tool_version = excluded.tool_version, "
                                                    "created_at_us = excluded.created_at_us")
                    : prepared(mark_bucket_, insert + "NOTHING");
  s.bind(1, device_id);
  bind_problem(s, 2, bucket.problem);
  s.bind(8, bucket.bucket).bind(9, bucket.tool_version).bind(10, to_db_time(bucket.created_at));
  const auto before = sqlite3_total_changes64(connection_.get());
  s.run();
  // An upsert that updates also counts as a change, so only DO NOTHING tells "new"
  // apart by the change count; a refresh reports whether the row existed before.
  return refresh ? false : sqlite3_total_changes64(connection_.get()) > before;
}

std::pair<bool, bool> RowWriter::put_binary(const CompiledBinary& binary, bool replace) {
  auto& find = prepared(find_binary_, "SELECT 1 FROM binaries WHERE key = ?1");
  find.bind(1, binary.key);
  const bool exists = find.step();
  find.reset();
  if (exists && !replace) return {false, false};
  auto& s = exists ? prepared(replace_binary_,
                              "UPDATE binaries SET arch = ?2, nvrtc_version = ?3, cubin = ?4, "
                              "created_at_us = ?5 WHERE key = ?1")
                   : prepared(insert_binary_,
                              "INSERT INTO binaries (key, arch, nvrtc_version, cubin, created_at_us) "
                              "VALUES (?1, ?2, ?3, ?4, ?5)");
  s.bind(1, binary.key)
      .bind(2, binary.arch)
      .bind(3, binary.nvrtc_version)
      .bind(4, std::span<const std::byte>(binary.cubin))
      .bind(5, to_db_time(binary.created_at));
  s.run();
  return {!exists, exists};
}

std::string checked_bench_config(const BenchResult& row) {
  auto fail = [&](const std::string& why) {
    throw InvalidArgument("bench row " + std::string(to_string(row.problem.op)) + "<" +
                          std::string(to_string(row.problem.dtype)) + "> n = " + std::to_string(row.problem.n) +
                          ": " + why);
  };
  if (!is_bench_implementation(row.implementation))
    fail("unknown implementation '" + row.implementation + "' (expected tuned, default, cub or classic_best)");
  if (row.config.empty()) fail("empty config");
  if (row.run_id.empty()) fail("empty run id");
  if (row.implementation == kBenchCub) return row.config;
  const auto parsed = parse_config(row.config);
  if (!parsed.config) fail("config '" + row.config + "' does not parse (" + parsed.error + ")");
  return to_string(*parsed.config);
}

std::pair<RowId, bool> RowWriter::add_bench_result(RowId device_id, const BenchResult& row) {
  const std::string config = checked_bench_config(row);
  const ProblemClass problem = ProblemClass::of(row.problem);
  const std::int64_t n = to_db_size(row.problem.n, "n");
  auto& insert = prepared(
      insert_bench_,
      std::string("INSERT INTO bench_results (device_id, ") + kProblemColumns +
          ", n, implementation, config, median_ms, spread, repetitions, gbps, peak_fraction, peak_gbps, run_id, "
          "tool_version, created_at_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
          "?15, ?16, ?17, ?18, ?19) ON CONFLICT DO NOTHING RETURNING id");
  insert.bind(1, device_id);
  bind_problem(insert, 2, problem);
  insert.bind(8, n)
      .bind(9, row.implementation)
      .bind(10, config)
      .bind(11, row.median_ms)
      .bind(12, row.spread)
      .bind(13, row.repetitions)
      .bind(14, row.gbps)
      .bind(15, row.peak_fraction)
      .bind(16, row.peak_gbps)
      .bind(17, row.run_id)
      .bind(18, row.tool_version)
      .bind(19, to_db_time(row.created_at));
  if (insert.step()) {
    const RowId id = insert.int64(0);
    insert.run();
    return {id, true};
  }
  auto& find = prepared(find_bench_,
                        std::string("SELECT id FROM bench_results WHERE device_id = ?1 AND (") + kProblemColumns +
                            ") = (?2, ?3, ?4, ?5, ?6, ?7) AND n = ?8 AND implementation = ?9 AND run_id = ?10 "
                            "AND created_at_us = ?11");
  find.bind(1, device_id);
  bind_problem(find, 2, problem);
  find.bind(8, n).bind(9, row.implementation).bind(10, row.run_id).bind(11, to_db_time(row.created_at));
  if (!find.step()) connection_.fail(SQLITE_CONSTRAINT, "a bench row was neither inserted nor found");
  return {find.int64(0), false};
}

std::vector<DeviceRecord> select_devices(const Connection& connection, std::string_view where,
                                         const Binder& bind) {
  Statement s(connection,
              std::string("SELECT d.id, d.uuid, d.name, d.cc_major, d.cc_minor, d.sm_count, d.l2_bytes, "
                          "d.memory_bus_bits, d.memory_clock_khz, d.driver_version, d.runtime_version "
                          "FROM devices d ") +
                  std::string(where) + " ORDER BY d.id");
  if (bind) bind(s);
  std::vector<DeviceRecord> rows;
  while (s.step()) {
    DeviceRecord r;
    r.id = s.int64(0);
    r.key.uuid = s.text(1);
    r.key.name = s.text(2);
    r.key.cc_major = s.int32(3);
    r.key.cc_minor = s.int32(4);
    r.key.sm_count = s.int32(5);
    r.key.l2_bytes = s.int64(6);
    r.key.memory_bus_bits = s.int32(7);
    r.key.memory_clock_khz = s.int64(8);
    r.key.driver_version = s.int32(9);
    r.key.runtime_version = s.int32(10);
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<Measurement> select_measurements(const Connection& connection, std::string_view where,
                                             const Binder& bind) {
  Statement s(connection,
              std::string("SELECT m.id, m.device_id, m.op, m.dtype, m.out_dtype, m.layout, m.layout_outer, "
                          "m.layout_inner, m.n, c.text, m.status, m.median_ms, m.spread, m.repetitions, "
                          "m.gbps, m.tool_version, m.created_at_us, m.detail FROM measurements m JOIN "
                          "configs c ON c.id = m.config_id ") +
                  std::string(where) + " ORDER BY m.id");
  if (bind) bind(s);
  std::vector<Measurement> rows;
  while (s.step()) {
    Measurement m;
    m.id = s.int64(0);
    m.device_id = s.int64(1);
    m.problem = read_problem(connection, s, 2).with_size(static_cast<std::uint64_t>(s.int64(8)));
    m.config = read_config(connection, s, 9);
    m.status = parse_column<MeasurementStatus>(connection, s, 10, "status", parse_measurement_status);
    m.median_ms = s.real(11);
    m.spread = s.real(12);
    m.repetitions = s.int32(13);
    m.gbps = s.real(14);
    m.tool_version = s.text(15);
    m.created_at = from_db_time(s.int64(16));
    m.detail = s.text(17);
    rows.push_back(std::move(m));
  }
  return rows;
}

std::vector<Winner> select_winners(const Connection& connection, std::string_view where,
                                   const Binder& bind) {
  Statement s(connection,
              std::string("SELECT w.id, w.device_id, w.op, w.dtype, w.out_dtype, w.layout, w.layout_outer, "
                          "w.layout_inner, w.bucket, w.determinism, c.text, w.median_ms, "
                          "w.measurement_id, w.source, w.tool_version, w.created_at_us FROM winners w "
                          "JOIN configs c ON c.id = w.config_id ") +
                  std::string(where) + " ORDER BY w.device_id, w.id");
  if (bind) bind(s);
  std::vector<Winner> rows;
  while (s.step()) {
    Winner w;
    w.id = s.int64(0);
    w.device_id = s.int64(1);
    w.problem = read_problem(connection, s, 2);
    w.bucket = s.int32(8);
    w.determinism = parse_column<Determinism>(connection, s, 9, "determinism class", parse_determinism);
    w.config = read_config(connection, s, 10);
    w.median_ms = s.real(11);
    w.measurement_id = s.optional_int64(12);
    w.source = parse_column<WinnerSource>(connection, s, 13, "winner source", parse_winner_source);
    w.tool_version = s.text(14);
    w.created_at = from_db_time(s.int64(15));
    rows.push_back(std::move(w));
  }
  return rows;
}

std::vector<TunedBucket> select_tuned_buckets(const Connection& connection, std::string_view where,
                                              const Binder& bind) {
  Statement s(connection,
              std::string("SELECT b.device_id, b.op, b.dtype, b.out_dtype, b.layout, b.layout_outer, "
                          "b.layout_inner, b.bucket, b.tool_version, b.created_at_us FROM tuned_buckets b ") +
                  std::string(where) +
                  " ORDER BY b.device_id, b.op, b.dtype, b.out_dtype, b.layout, b.layout_outer, "
                  "b.layout_inner, b.bucket");
  if (bind) bind(s);
  std::vector<TunedBucket> rows;
  while (s.step()) {
    TunedBucket b;
    b.device_id = s.int64(0);
    b.problem = read_problem(connection, s, 1);
    b.bucket = s.int32(7);
    b.tool_version = s.text(8);
    b.created_at = from_db_time(s.int64(9));
    rows.push_back(std::move(b));
  }
  return rows;
}

std::vector<BenchResult> select_bench_results(const Connection& connection, std::string_view where,
                                              const Binder& bind) {
  Statement s(connection,
              std::string("SELECT r.id, r.device_id, r.op, r.dtype, r.out_dtype, r.layout, r.layout_outer, "
                          "r.layout_inner, r.n, r.implementation, r.config, r.median_ms, r.spread, r.repetitions, "
                          "r.gbps, r.peak_fraction, r.peak_gbps, r.run_id, r.tool_version, r.created_at_us "
                          "FROM bench_results r ") +
                  std::string(where) + " ORDER BY r.created_at_us, r.id");
  if (bind) bind(s);
  std::vector<BenchResult> rows;
  while (s.step()) {
    BenchResult r;
    r.id = s.int64(0);
    r.device_id = s.int64(1);
    r.problem = read_problem(connection, s, 2).with_size(static_cast<std::uint64_t>(s.int64(8)));
    r.implementation = s.text(9);
    r.config = s.text(10);
    r.median_ms = s.real(11);
    r.spread = s.real(12);
    r.repetitions = s.int32(13);
    r.gbps = s.real(14);
    r.peak_fraction = s.real(15);
    r.peak_gbps = s.real(16);
    r.run_id = s.text(17);
    r.tool_version = s.text(18);
    r.created_at = from_db_time(s.int64(19));
    rows.push_back(std::move(r));
  }
  return rows;
}

namespace {
CompiledBinary read_binary(const Statement& s) {
  CompiledBinary b;
  b.key = s.text(0);
  b.arch = s.int32(1);
  b.nvrtc_version = s.text(2);
  b.cubin = s.blob(3);
  b.created_at = from_db_time(s.int64(4));
  return b;
}
constexpr const char* kSelectBinary = "SELECT key, arch, nvrtc_version, cubin, created_at_us FROM binaries ";
}  // namespace

std::vector<CompiledBinary> select_binaries(const Connection& connection, std::optional<int> arch) {
  Statement s(connection, std::string(kSelectBinary) + (arch ? "WHERE arch = ?1 " : "") + "ORDER BY key");
  if (arch) s.bind(1, *arch);
  std::vector<CompiledBinary> rows;
  while (s.step()) rows.push_back(read_binary(s));
  return rows;
}

std::optional<CompiledBinary> select_binary(const Connection& connection, std::string_view key) {
  Statement s(connection, std::string(kSelectBinary) + "WHERE key = ?1");
  s.bind(1, key);
  if (!s.step()) return std::nullopt;
  return read_binary(s);
}

}  // namespace reduce_tune::db::detail
