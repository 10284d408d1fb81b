#include "rows.h"

#include <algorithm>
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

constexpr int kProblemWidth = static_cast<int>(kProblemColumns.size());

// Statements built from the column lists. Ids are assigned by the database, so an
// INSERT names every column but "id".

std::string placeholders(int count) {
  std::string sql;
  for (int i = 1; i <= count; ++i) sql += (i > 1 ? ", ?" : "?") + std::to_string(i);
  return sql;
}

std::string insert_into(std::string_view table, ColumnList columns) {
  std::string names;
  int count = 0;
  for (std::string_view column : columns) {
    if (column == "id") continue;
    names += (count++ > 0 ? ", " : "") + std::string(column);
  }
  return "INSERT INTO " + std::string(table) + " (" + names + ") VALUES (" + placeholders(count) + ")";
}

// What an upsert updates: every column outside the conflict `key` (and the id).
std::string set_excluded(ColumnList columns, ColumnList key) {
  std::string sql;
  for (std::string_view column : columns) {
    if (column == "id" || std::find(key.begin(), key.end(), column) != key.end()) continue;
    sql += (sql.empty() ? "" : ", ") + std::string(column) + " = excluded." + std::string(column);
  }
  return sql;
}

// "SELECT a.x, a.y, ... FROM <table> <alias> ". An id column of a lookup table is read as
// its text: config_id from configs (c), or from axis_configs in axis_measurements, and
// tool_version_id from tool_versions (t).
std::string select_from(std::string_view table, std::string_view alias, ColumnList columns) {
  const std::string prefix = alias.empty() ? std::string() : std::string(alias) + ".";
  std::string list;
  std::string joins;
  for (std::string_view column : columns) {
    if (!list.empty()) list += ", ";
    if (column == "config_id") {
      list += "c.text";
      joins += std::string("JOIN ") + (table == "axis_measurements" ? "axis_configs" : "configs") + " c ON c.id = " +
               prefix + "config_id ";
    } else if (column == "tool_version_id") {
      list += "t.text";
      joins += "JOIN tool_versions t ON t.id = " + prefix + "tool_version_id ";
    } else {
      list += prefix + std::string(column);
    }
  }
  return "SELECT " + list + " FROM " + std::string(table) + (alias.empty() ? "" : " ") + std::string(alias) + " " +
         joins;
}

// Binds ?1, ?2, ... to the values in order, so the values follow the column list the
// statement was built from (kProblemColumns for a problem class, problem size after it).
template <typename T>
void bind_value(Statement& statement, int& next, const T& value) {
  statement.bind(next++, value);
}
void bind_value(Statement& statement, int& next, const ProblemClass& problem) {
  bind_problem(statement, next, problem);
  next += kProblemWidth;
}
void bind_value(Statement& statement, int& next, Timestamp time) { statement.bind(next++, to_db_time(time)); }
void bind_value(Statement& statement, int& next, const std::vector<std::byte>& bytes) {
  statement.bind(next++, std::span<const std::byte>(bytes));
}
void bind_value(Statement& statement, int& next, MeasurementStatus status) {
  statement.bind(next++, to_string(status));
}
void bind_value(Statement& statement, int& next, Determinism determinism) {
  statement.bind(next++, to_string(determinism));
}
void bind_value(Statement& statement, int& next, WinnerSource source) {
  statement.bind(next++, to_string(source));
}
void bind_value(Statement& statement, int& next, Op op) { statement.bind(next++, to_string(op)); }
void bind_value(Statement& statement, int& next, DType dtype) { statement.bind(next++, to_string(dtype)); }
void bind_value(Statement& statement, int& next, AxisLayout layout) { statement.bind(next++, to_string(layout)); }
void bind_value(Statement& statement, int& next, const AxisProblemClass& problem) {
  bind_axis_problem(statement, next, problem);
  next += static_cast<int>(kAxisProblemColumns.size());
  statement.bind(next++, problem.reduced_bucket);
  statement.bind(next++, problem.outputs_bucket);
}

template <typename... Values>
void bind_values(Statement& statement, const Values&... values) {
  int next = 1;
  (bind_value(statement, next, values), ...);
  if (next - 1 != statement.parameter_count())
    throw DbError(SQLITE_MISUSE, "bound " + std::to_string(next - 1) + " values to a statement of " +
                                     std::to_string(statement.parameter_count()) + " parameters");
}

// Reads a result row's columns in order, each into the field that holds it (a problem
// class takes kProblemColumns, a ProblemKey its size too). read() reads the whole row.
class ColumnReader {
 public:
  ColumnReader(const Connection& connection, const Statement& row) : connection_(connection), row_(row) {}

  template <typename... Fields>
  void read(Fields&... fields) {
    (get(fields), ...);
    if (next_ != row_.column_count())
      throw DbError(SQLITE_MISUSE, connection_.label() + ": read " + std::to_string(next_) + " of " +
                                       std::to_string(row_.column_count()) + " columns");
  }

 private:
  void get(std::int64_t& value) { value = row_.int64(next_++); }
  void get(int& value) { value = row_.int32(next_++); }
  void get(double& value) { value = row_.real(next_++); }
  void get(std::string& value) { value = row_.text(next_++); }
  void get(std::vector<std::byte>& value) { value = row_.blob(next_++); }
  void get(std::optional<std::int64_t>& value) { value = row_.optional_int64(next_++); }
  void get(Timestamp& value) { value = from_db_time(row_.int64(next_++)); }
  void get(ReduceConfig& value) { value = read_config(connection_, row_, next_++); }
  void get(ProblemClass& value) {
    value = read_problem(connection_, row_, next_);
    next_ += kProblemWidth;
  }
  void get(ProblemKey& value) {
    ProblemClass problem;
    get(problem);
    value = problem.with_size(static_cast<std::uint64_t>(row_.int64(next_++)));
  }
  void get(MeasurementStatus& value) {
    value = parse_column<MeasurementStatus>(connection_, row_, next_++, "status", parse_measurement_status);
  }
  void get(Determinism& value) {
    value = parse_column<Determinism>(connection_, row_, next_++, "determinism class", parse_determinism);
  }
  void get(WinnerSource& value) {
    value = parse_column<WinnerSource>(connection_, row_, next_++, "winner source", parse_winner_source);
  }
  void get(std::uint64_t& value) { value = static_cast<std::uint64_t>(row_.int64(next_++)); }
  void get(Op& value) { value = parse_column<Op>(connection_, row_, next_++, "op", parse_op); }
  void get(DType& value) { value = parse_column<DType>(connection_, row_, next_++, "dtype", parse_dtype); }
  void get(AxisLayout& value) {
    value = parse_column<AxisLayout>(connection_, row_, next_++, "axis layout", parse_axis_layout);
  }
  void get(AxisProblemClass& p) {
    get(p.op);
    get(p.dtype);
    get(p.out_dtype);
    get(p.layout);
    get(p.reduced_bucket);
    get(p.outputs_bucket);
  }

  const Connection& connection_;
  const Statement& row_;
  int next_ = 0;
};

void read_row(ColumnReader& in, DeviceRecord& d) {
  in.read(d.id, d.key.uuid, d.key.name, d.key.cc_major, d.key.cc_minor, d.key.sm_count, d.key.l2_bytes,
          d.key.memory_bus_bits, d.key.memory_clock_khz, d.key.driver_version, d.key.runtime_version);
}
void read_row(ColumnReader& in, Measurement& m) {
  in.read(m.id, m.device_id, m.problem, m.config, m.status, m.median_ms, m.spread, m.repetitions, m.gbps,
          m.tool_version, m.created_at, m.detail);
}
void read_row(ColumnReader& in, Winner& w) {
  in.read(w.id, w.device_id, w.problem, w.bucket, w.determinism, w.config, w.median_ms, w.measurement_id, w.source,
          w.tool_version, w.created_at);
}
void read_row(ColumnReader& in, TunedBucket& b) {
  in.read(b.device_id, b.problem, b.bucket, b.tool_version, b.created_at);
}
void read_row(ColumnReader& in, CompiledBinary& b) { in.read(b.key, b.arch, b.nvrtc_version, b.cubin, b.created_at); }
void read_row(ColumnReader& in, BenchResult& r) {
  in.read(r.id, r.device_id, r.problem, r.implementation, r.config, r.median_ms, r.spread, r.repetitions, r.gbps,
          r.peak_fraction, r.peak_gbps, r.run_id, r.tool_version, r.created_at);
}

void read_row(ColumnReader& in, AxisMeasurement& m) {
  in.read(m.id, m.device_id, m.op, m.dtype, m.out_dtype, m.layout, m.reduced, m.outputs, m.inner, m.config, m.status,
          m.median_ms, m.spread, m.repetitions, m.gbps, m.tool_version, m.created_at, m.detail);
}
void read_row(ColumnReader& in, AxisWinner& w) {
  in.read(w.id, w.device_id, w.problem, w.config, w.median_ms, w.gbps, w.measurement_id, w.source, w.tool_version,
          w.created_at, w.grid_config);
}
void read_row(ColumnReader& in, AxisTunedBucket& b) { in.read(b.device_id, b.problem, b.tool_version, b.created_at); }

// The rows of `table` (under `alias`) that `where` selects, in `order`.
template <typename Record>
std::vector<Record> select_rows(const Connection& connection, std::string_view table, std::string_view alias,
                                ColumnList columns, std::string_view where, std::string_view order,
                                const Binder& bind) {
  Statement s(connection,
              select_from(table, alias, columns) + std::string(where) + " ORDER BY " + std::string(order));
  if (bind) bind(s);
  std::vector<Record> rows;
  while (s.step()) {
    Record record;
    ColumnReader in(connection, s);
    read_row(in, record);
    rows.push_back(std::move(record));
  }
  return rows;
}

// Runs an INSERT ... RETURNING id: the row's id, or nothing where the insert did nothing
// (ON CONFLICT DO NOTHING).
std::optional<RowId> inserted_id(Statement& insert) {
  if (!insert.step()) return std::nullopt;
  const RowId id = insert.int64(0);
  insert.run();
  return id;
}

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

void bind_axis_problem(Statement& statement, int first, const AxisProblemClass& problem) {
  statement.bind(first, to_string(problem.op))
      .bind(first + 1, to_string(problem.dtype))
      .bind(first + 2, to_string(problem.out_dtype))
      .bind(first + 3, to_string(problem.layout));
}

std::string sql_columns(std::string_view alias, ColumnList columns) {
  std::string sql;
  for (std::string_view column : columns) {
    if (!sql.empty()) sql += ", ";
    if (!alias.empty()) sql += std::string(alias) + ".";
    sql += column;
  }
  return sql;
}

std::string sql_params_equal(std::string_view alias, ColumnList columns, int first) {
  std::string sql;
  for (std::string_view column : columns) {
    if (!sql.empty()) sql += " AND ";
    if (!alias.empty()) sql += std::string(alias) + ".";
    sql += std::string(column) + " = ?" + std::to_string(first++);
  }
  return sql;
}

Statement& RowWriter::prepared(std::optional<Statement>& slot, std::string_view sql) {
  if (!slot) slot.emplace(connection_, sql);
  slot->reset();
  return *slot;
}

namespace {
void bind_device(Statement& s, const DeviceKey& d) {
  bind_values(s, d.uuid, d.name, d.cc_major, d.cc_minor, d.sm_count, d.l2_bytes, d.memory_bus_bits,
              d.memory_clock_khz, d.driver_version, d.runtime_version);
}
}  // namespace

RowId RowWriter::upsert_device(const DeviceKey& device) {
  if (device.uuid.empty()) throw InvalidArgument("a device needs a UUID to be stored");
  static const std::string sql = insert_into("devices", kDeviceColumns) + " ON CONFLICT (uuid) DO UPDATE SET " +
                                 set_excluded(kDeviceColumns, kDeviceKey) + " RETURNING id";
  auto& s = prepared(upsert_device_, sql);
  bind_device(s, device);
  const auto id = inserted_id(s);
  if (!id) connection_.fail(SQLITE_ERROR, "upserting a device returned no id");
  return *id;
}

std::pair<RowId, bool> RowWriter::add_device_if_absent(const DeviceKey& device) {
  if (device.uuid.empty()) throw InvalidArgument("a device needs a UUID to be stored");
  auto& find = prepared(find_device_, "SELECT id FROM devices WHERE uuid = ?1");
  find.bind(1, device.uuid);
  if (find.step()) return {find.int64(0), false};
  static const std::string sql = insert_into("devices", kDeviceColumns);
  auto& insert = prepared(insert_device_, sql);
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
    static const std::string sql = insert_into("configs", kConfigColumns);
    auto& insert = prepared(insert_config_, sql);
    bind_values(insert, text, db_hash(config));
    insert.run();
    id = sqlite3_last_insert_rowid(connection_.get());
  }
  config_ids_.emplace(std::move(text), id);
  return id;
}

RowId RowWriter::text_id(TextTable table, const std::string& text) {
  auto& ids = table == TextTable::axis_configs ? axis_config_ids_ : tool_version_ids_;
  if (auto it = ids.find(text); it != ids.end()) return it->second;
  const bool configs = table == TextTable::axis_configs;
  auto& find = configs ? prepared(find_axis_config_, "SELECT id FROM axis_configs WHERE text = ?1")
                       : prepared(find_tool_version_, "SELECT id FROM tool_versions WHERE text = ?1");
  find.bind(1, text);
  RowId id = 0;
  if (find.step()) {
    id = find.int64(0);
  } else {
    auto& insert = configs ? prepared(insert_axis_config_, "INSERT INTO axis_configs (text) VALUES (?1)")
                           : prepared(insert_tool_version_, "INSERT INTO tool_versions (text) VALUES (?1)");
    insert.bind(1, text);
    insert.run();
    id = sqlite3_last_insert_rowid(connection_.get());
  }
  ids.emplace(text, id);
  return id;
}

std::pair<RowId, bool> RowWriter::add_measurement(RowId device_id, const Measurement& m) {
  const RowId config = config_id(m.config);
  const ProblemClass problem = ProblemClass::of(m.problem);
  const std::int64_t n = to_db_size(m.problem.n, "n");
  static const std::string insert_sql =
      insert_into("measurements", kMeasurementColumns) + " ON CONFLICT DO NOTHING RETURNING id";
  auto& insert = prepared(insert_measurement_, insert_sql);
  bind_values(insert, device_id, problem, n, config, m.status, m.median_ms, m.spread, m.repetitions, m.gbps,
              m.tool_version, m.created_at, m.detail);
  if (const auto id = inserted_id(insert)) return {*id, true};
  static const std::string find_sql =
      "SELECT id FROM measurements WHERE " + sql_params_equal("", kMeasurementIdentity, 1);
  auto& find = prepared(find_measurement_, find_sql);
  bind_values(find, device_id, problem, n, config, m.created_at, m.tool_version);
  if (!find.step())
    connection_.fail(SQLITE_CONSTRAINT, "a measurement was neither inserted nor found");
  return {find.int64(0), false};
}

void RowWriter::put_winner(RowId device_id, const Winner& w, std::optional<RowId> measurement_id,
                           WinnerSource source) {
  const RowId config = config_id(w.config);
  static const std::string sql = insert_into("winners", kWinnerColumns) + " ON CONFLICT DO UPDATE SET " +
                                 set_excluded(kWinnerColumns, kWinnerKey);
  auto& s = prepared(put_winner_, sql);
  bind_values(s, device_id, w.problem, w.bucket, w.determinism, config, w.median_ms, measurement_id, source,
              w.tool_version, w.created_at);
  s.run();
}

std::optional<RowWriter::ExistingWinner> RowWriter::find_winner(RowId device_id, const ProblemClass& problem,
                                                                int bucket, Determinism determinism) {
  static const std::string sql =
      "SELECT w.id, w.median_ms, m.status = 'ok' FROM winners w LEFT JOIN measurements m ON m.id = "
      "w.measurement_id WHERE " +
      sql_params_equal("w", kWinnerKey, 1);
  auto& s = prepared(find_winner_, sql);
  bind_values(s, device_id, problem, bucket, determinism);
  if (!s.step()) return std::nullopt;
  ExistingWinner existing{s.int64(0), s.real(1), !s.is_null(2) && s.int64(2) != 0};
  s.run();
  return existing;
}

bool RowWriter::mark_bucket(RowId device_id, const TunedBucket& bucket, bool refresh) {
  static const std::string insert = insert_into("tuned_buckets", kTunedBucketColumns) + " ON CONFLICT DO ";
  static const std::string refresh_sql = insert + "UPDATE SET " + set_excluded(kTunedBucketColumns, kTunedBucketKey);
  static const std::string mark_sql = insert + "NOTHING";
  auto& s = refresh ? prepared(refresh_bucket_, refresh_sql) : prepared(mark_bucket_, mark_sql);
  bind_values(s, device_id, bucket.problem, bucket.bucket, bucket.tool_version, bucket.created_at);
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
  static const std::string sql = insert_into("binaries", kBinaryColumns) + " ON CONFLICT (key) DO UPDATE SET " +
                                 set_excluded(kBinaryColumns, kBinaryKey);
  auto& s = prepared(put_binary_, sql);
  bind_values(s, binary.key, binary.arch, binary.nvrtc_version, binary.cubin, binary.created_at);
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
  static const std::string insert_sql =
      insert_into("bench_results", kBenchResultColumns) + " ON CONFLICT DO NOTHING RETURNING id";
  auto& insert = prepared(insert_bench_, insert_sql);
  bind_values(insert, device_id, problem, n, row.implementation, config, row.median_ms, row.spread, row.repetitions,
              row.gbps, row.peak_fraction, row.peak_gbps, row.run_id, row.tool_version, row.created_at);
  if (const auto id = inserted_id(insert)) return {*id, true};
  static const std::string find_sql =
      "SELECT id FROM bench_results WHERE " + sql_params_equal("", kBenchResultIdentity, 1);
  auto& find = prepared(find_bench_, find_sql);
  bind_values(find, device_id, problem, n, row.implementation, row.run_id, row.created_at);
  if (!find.step()) connection_.fail(SQLITE_CONSTRAINT, "a bench row was neither inserted nor found");
  return {find.int64(0), false};
}

std::pair<RowId, bool> RowWriter::add_axis_measurement(RowId device_id, const AxisMeasurement& m) {
  const std::int64_t reduced = to_db_size(m.reduced, "reduced extent");
  const std::int64_t outputs = to_db_size(m.outputs, "output count");
  const std::int64_t inner = to_db_size(m.inner, "inner extent");
  const RowId config = text_id(TextTable::axis_configs, m.config);
  const RowId tool_version = text_id(TextTable::tool_versions, m.tool_version);
  static const std::string insert_sql =
      insert_into("axis_measurements", kAxisMeasurementColumns) + " ON CONFLICT DO NOTHING RETURNING id";
  auto& insert = prepared(insert_axis_measurement_, insert_sql);
  bind_values(insert, device_id, m.op, m.dtype, m.out_dtype, m.layout, reduced, outputs, inner, config, m.status,
              m.median_ms, m.spread, m.repetitions, m.gbps, tool_version, m.created_at, m.detail);
  if (const auto id = inserted_id(insert)) return {*id, true};
  static const std::string find_sql =
      "SELECT id FROM axis_measurements WHERE " + sql_params_equal("", kAxisMeasurementIdentity, 1);
  auto& find = prepared(find_axis_measurement_, find_sql);
  bind_values(find, device_id, m.op, m.dtype, m.out_dtype, m.layout, reduced, outputs, inner, config, m.created_at,
              tool_version);
  if (!find.step()) connection_.fail(SQLITE_CONSTRAINT, "an axis measurement was neither inserted nor found");
  return {find.int64(0), false};
}

void RowWriter::put_axis_winner(RowId device_id, const AxisWinner& w, std::optional<RowId> measurement_id,
                                WinnerSource source) {
  static const std::string sql = insert_into("axis_winners", kAxisWinnerColumns) + " ON CONFLICT DO UPDATE SET " +
                                 set_excluded(kAxisWinnerColumns, kAxisWinnerKey);
  auto& s = prepared(put_axis_winner_, sql);
  bind_values(s, device_id, w.problem, w.config, w.median_ms, w.gbps, measurement_id, source, w.tool_version,
              w.created_at, w.grid_config);
  s.run();
}

std::optional<RowWriter::ExistingWinner> RowWriter::find_axis_winner(RowId device_id,
                                                                     const AxisProblemClass& problem) {
  static const std::string sql =
      "SELECT w.id, w.median_ms, m.status = 'ok' FROM axis_winners w LEFT JOIN axis_measurements m ON m.id = "
      "w.measurement_id WHERE " +
      sql_params_equal("w", kAxisWinnerKey, 1);
  auto& s = prepared(find_axis_winner_, sql);
  bind_values(s, device_id, problem);
  if (!s.step()) return std::nullopt;
  ExistingWinner existing{s.int64(0), s.real(1), !s.is_null(2) && s.int64(2) != 0};
  s.run();
  return existing;
}

bool RowWriter::mark_axis_bucket(RowId device_id, const AxisTunedBucket& bucket, bool refresh) {
  static const std::string insert = insert_into("axis_tuned_buckets", kAxisTunedBucketColumns) + " ON CONFLICT DO ";
  static const std::string refresh_sql =
      insert + "UPDATE SET " + set_excluded(kAxisTunedBucketColumns, kAxisTunedBucketKey);
  static const std::string mark_sql = insert + "NOTHING";
  auto& s = refresh ? prepared(refresh_axis_bucket_, refresh_sql) : prepared(mark_axis_bucket_, mark_sql);
  bind_values(s, device_id, bucket.problem, bucket.tool_version, bucket.created_at);
  const auto before = sqlite3_total_changes64(connection_.get());
  s.run();
  return refresh ? false : sqlite3_total_changes64(connection_.get()) > before;
}

std::vector<DeviceRecord> select_devices(const Connection& connection, std::string_view where,
                                         const Binder& bind) {
  return select_rows<DeviceRecord>(connection, "devices", "d", kDeviceColumns, where, "d.id", bind);
}

std::vector<Measurement> select_measurements(const Connection& connection, std::string_view where,
                                             const Binder& bind) {
  return select_rows<Measurement>(connection, "measurements", "m", kMeasurementColumns, where, "m.id", bind);
}

std::vector<Winner> select_winners(const Connection& connection, std::string_view where,
                                   const Binder& bind) {
  return select_rows<Winner>(connection, "winners", "w", kWinnerColumns, where, "w.device_id, w.id", bind);
}

std::vector<TunedBucket> select_tuned_buckets(const Connection& connection, std::string_view where,
                                              const Binder& bind) {
  static const std::string order = sql_columns("b", kTunedBucketKey);
  return select_rows<TunedBucket>(connection, "tuned_buckets", "b", kTunedBucketColumns, where, order, bind);
}

std::vector<BenchResult> select_bench_results(const Connection& connection, std::string_view where,
                                              const Binder& bind) {
  return select_rows<BenchResult>(connection, "bench_results", "r", kBenchResultColumns, where,
                                  "r.created_at_us, r.id", bind);
}

std::vector<AxisMeasurement> select_axis_measurements(const Connection& connection, std::string_view where,
                                                      const Binder& bind) {
  return select_rows<AxisMeasurement>(connection, "axis_measurements", "m", kAxisMeasurementColumns, where, "m.id",
                                      bind);
}

std::vector<AxisWinner> select_axis_winners(const Connection& connection, std::string_view where,
                                            const Binder& bind) {
  return select_rows<AxisWinner>(connection, "axis_winners", "w", kAxisWinnerColumns, where, "w.device_id, w.id",
                                 bind);
}

std::vector<AxisTunedBucket> select_axis_tuned_buckets(const Connection& connection, std::string_view where,
                                                       const Binder& bind) {
  static const std::string order = sql_columns("b", kAxisTunedBucketKey);
  return select_rows<AxisTunedBucket>(connection, "axis_tuned_buckets", "b", kAxisTunedBucketColumns, where, order,
                                      bind);
}

std::vector<CompiledBinary> select_binaries(const Connection& connection, std::optional<int> arch) {
  return select_rows<CompiledBinary>(connection, "binaries", "", kBinaryColumns, arch ? "WHERE arch = ?1" : "",
                                     "key", [&](Statement& s) {
                                       if (arch) s.bind(1, *arch);
                                     });
}

std::optional<CompiledBinary> select_binary(const Connection& connection, std::string_view key) {
  auto rows = select_rows<CompiledBinary>(connection, "binaries", "", kBinaryColumns, "WHERE key = ?1", "key",
                                          [&](Statement& s) { s.bind(1, key); });
  if (rows.empty()) return std::nullopt;
  return std::move(rows.front());
}

}  // namespace reduce_tune::db::detail
