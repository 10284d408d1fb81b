// The JSON export: the same rows as the SQLite file, for diffing, review and tools that
// do not speak SQLite. docs/DATABASE.md documents the format; kJsonExportVersion guards
// its shape.
#include <sqlite3.h>

#include <cmath>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>
#include <ostream>

#include "reduce_tune/db/transfer.h"
#include "columns.h"
#include "reduce_tune/error.h"
#include "rows.h"

namespace reduce_tune::db {
namespace {

using Json = nlohmann::ordered_json;
using detail::ColumnList;

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(const std::vector<std::byte>& bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t left = bytes.size() - i;
    std::uint32_t chunk = std::to_integer<std::uint32_t>(bytes[i]) << 16;
    if (left > 1) chunk |= std::to_integer<std::uint32_t>(bytes[i + 1]) << 8;
    if (left > 2) chunk |= std::to_integer<std::uint32_t>(bytes[i + 2]);
    out += kBase64[(chunk >> 18) & 63];
    out += kBase64[(chunk >> 12) & 63];
    out += left > 1 ? kBase64[(chunk >> 6) & 63] : '=';
    out += left > 2 ? kBase64[chunk & 63] : '=';
  }
  return out;
}

std::optional<std::vector<std::byte>> base64_decode(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0) return std::nullopt;
  std::vector<std::byte> out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t chunk = 0;
    int pad = 0;
    for (std::size_t j = 0; j < 4; ++j) {
      const char c = text[i + j];
      if (c == '=' && i + 4 == text.size() && j >= 2) {
        ++pad;
        chunk <<= 6;
        continue;
      }
      const int v = value(c);
      if (v < 0 || pad > 0) return std::nullopt;
      chunk = (chunk << 6) | static_cast<std::uint32_t>(v);
    }
    out.push_back(static_cast<std::byte>((chunk >> 16) & 0xff));
    if (pad < 2) out.push_back(static_cast<std::byte>((chunk >> 8) & 0xff));
    if (pad < 1) out.push_back(static_cast<std::byte>(chunk & 0xff));
  }
  return out;
}

// JSON has no NaN; a time that was not measured is null, as it is NULL in SQLite.
Json real(double value) { return std::isnan(value) ? Json(nullptr) : Json(value); }

std::int64_t micros(Timestamp t) { return t.time_since_epoch().count(); }

// A row's fields are named after its table's columns (columns.h), in their order; a
// lookup table's id column is exported as its text: config_id under "config",
// tool_version_id under "tool_version".
std::string json_name(std::string_view column) {
  if (column == "config_id") return "config";
  if (column == "tool_version_id") return "tool_version";
  return std::string(column);
}

// Binaries have a JSON shape of their own: the cubin as base64 text, after the time.
constexpr auto kBinaryJsonFields =
    detail::column_list("key", "arch", "nvrtc_version", "created_at_us", "cubin_base64");

[[noreturn]] void wrong_field_count(std::size_t used, std::size_t names) {
  throw DbError(SQLITE_MISUSE, "JSON row of " + std::to_string(names) + " fields given " + std::to_string(used));
}

// Writes a row's values in the order of its field names (a problem class takes the
// problem columns, a ProblemKey its size too).
class FieldWriter {
 public:
  explicit FieldWriter(ColumnList names) : names_(names) {}

  template <typename... Values>
  void write(const Values&... values) {
    (put(values), ...);
  }
  Json row() {
    if (next_ != names_.size()) wrong_field_count(next_, names_.size());
    return std::move(row_);
  }

 private:
  Json& next() {
    if (next_ == names_.size()) wrong_field_count(next_ + 1, names_.size());
    return row_[json_name(names_[next_++])];
  }
  template <typename T>
  void put(const T& value) {  // integers and text
    next() = value;
  }
  void put(double value) { next() = real(value); }
  void put(Timestamp time) { next() = micros(time); }
  void put(const std::optional<RowId>& id) { next() = id ? Json(*id) : Json(nullptr); }
  void put(const ReduceConfig& config) { next() = to_string(config); }
  void put(const std::vector<std::byte>& bytes) { next() = base64_encode(bytes); }
  void put(MeasurementStatus status) { next() = to_string(status); }
  void put(Determinism determinism) { next() = to_string(determinism); }
  void put(WinnerSource source) { next() = to_string(source); }
  void put(Op op) { next() = to_string(op); }
  void put(DType dtype) { next() = to_string(dtype); }
  void put(AxisLayout layout) { next() = to_string(layout); }
  void put(const AxisProblemClass& p) {
    write(p.op, p.dtype, p.out_dtype, p.layout, p.reduced_bucket, p.outputs_bucket);
  }
  void put(const ProblemClass& p) {
    write(to_string(p.op), to_string(p.dtype), to_string(p.out_dtype), to_string(p.layout), p.layout.outer,
          p.layout.inner);
  }
  void put(const ProblemKey& p) { write(ProblemClass::of(p), p.n); }

  ColumnList names_;
  std::size_t next_ = 0;
  Json row_;
};

void write_fields(FieldWriter& out, const DeviceRecord& d) {
  out.write(d.id, d.key.uuid, d.key.name, d.key.cc_major, d.key.cc_minor, d.key.sm_count, d.key.l2_bytes,
            d.key.memory_bus_bits, d.key.memory_clock_khz, d.key.driver_version, d.key.runtime_version);
}
void write_fields(FieldWriter& out, const Measurement& m) {
  out.write(m.id, m.device_id, m.problem, m.config, m.status, m.median_ms, m.spread, m.repetitions, m.gbps,
            m.tool_version, m.created_at, m.detail);
}
void write_fields(FieldWriter& out, const Winner& w) {
  out.write(w.id, w.device_id, w.problem, w.bucket, w.determinism, w.config, w.median_ms, w.measurement_id,
            w.source, w.tool_version, w.created_at);
}
void write_fields(FieldWriter& out, const TunedBucket& b) {
  out.write(b.device_id, b.problem, b.bucket, b.tool_version, b.created_at);
}
void write_fields(FieldWriter& out, const CompiledBinary& b) {
  out.write(b.key, b.arch, b.nvrtc_version, b.created_at, b.cubin);
}
void write_fields(FieldWriter& out, const BenchResult& r) {
  out.write(r.id, r.device_id, r.problem, r.implementation, r.config, r.median_ms, r.spread, r.repetitions, r.gbps,
            r.peak_fraction, r.peak_gbps, r.run_id, r.tool_version, r.created_at);
}

void write_fields(FieldWriter& out, const AxisMeasurement& m) {
  out.write(m.id, m.device_id, m.op, m.dtype, m.out_dtype, m.layout, m.reduced, m.outputs, m.inner, m.config,
            m.status, m.median_ms, m.spread, m.repetitions, m.gbps, m.tool_version, m.created_at, m.detail);
}
void write_fields(FieldWriter& out, const AxisWinner& w) {
  out.write(w.id, w.device_id, w.problem, w.config, w.median_ms, w.gbps, w.measurement_id, w.source, w.tool_version,
            w.created_at, w.grid_config);
}
void write_fields(FieldWriter& out, const AxisTunedBucket& b) {
  out.write(b.device_id, b.problem, b.tool_version, b.created_at);
}

template <typename Record>
Json write_rows(const std::vector<Record>& records, ColumnList names) {
  Json rows = Json::array();
  for (const auto& record : records) {
    FieldWriter out(names);
    write_fields(out, record);
    rows.push_back(out.row());
  }
  return rows;
}

// Reading: every problem is reported as "<label>: <where>: <what>".
class Reader {
 public:
  explicit Reader(std::string label) : label_(std::move(label)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw DbError(SQLITE_NOTADB, label_ + ": not a valid reduce-tune JSON export (" + where + ": " + what + ")");
  }

  const Json& field(const Json& row, const std::string& name, const std::string& where) const {
    if (!row.is_object()) fail(where, "not an object");
    auto it = row.find(name);
    if (it == row.end()) fail(where, "missing \"" + name + "\"");
    return *it;
  }
  template <typename T>
  T get(const Json& row, const std::string& name, const std::string& where) const {
    const Json& value = field(row, name, where);
    try {
      return value.get<T>();
    } catch (const nlohmann::json::exception&) {
      fail(where, "bad \"" + name + "\"");
    }
  }
  const Json& array(const Json& root, const char* name) const {
    const Json& value = field(root, name, "top level");
    if (!value.is_array()) fail("top level", std::string("\"") + name + "\" is not an array");
    return value;
  }

 private:
  std::string label_;
};

std::string at(const char* table, std::size_t index) {
  return std::string(table) + "[" + std::to_string(index) + "]";
}

// Reads a row's fields in the order of its field names, each into the field that holds
// it (a problem class takes the problem columns, a ProblemKey its size too).
class FieldReader {
 public:
  FieldReader(const Reader& reader, const Json& row, std::string where, ColumnList names)
      : reader_(reader), row_(row), where_(std::move(where)), names_(names) {}

  template <typename... Fields>
  void read(Fields&... fields) {
    (get(fields), ...);
  }
  // A field that older or hand-written files may leave out: `fallback` where absent.
  template <typename T>
  void read_optional(T& field, T fallback) {
    if (next_ < names_.size() && row_.contains(json_name(names_[next_]))) {
      get(field);
    } else {
      next();
      field = std::move(fallback);
    }
  }
  void expect_done() const {
    if (next_ != names_.size()) wrong_field_count(next_, names_.size());
  }
  [[noreturn]] void fail(const std::string& what) const { reader_.fail(where_, what); }

 private:
  std::string next() {
    if (next_ == names_.size()) wrong_field_count(next_ + 1, names_.size());
    return json_name(names_[next_++]);
  }
  template <typename T>
  void get(T& value) {  // integers and text
    value = reader_.get<T>(row_, next(), where_);
  }
  void get(double& value) {
    const std::string name = next();
    const Json& field = reader_.field(row_, name, where_);
    if (field.is_null()) {
      value = std::numeric_limits<double>::quiet_NaN();
      return;
    }
    if (!field.is_number()) fail("bad \"" + name + "\"");
    value = field.get<double>();
  }
  void get(Timestamp& value) {
    value = Timestamp(std::chrono::microseconds(reader_.get<std::int64_t>(row_, next(), where_)));
  }
  void get(std::optional<RowId>& value) {
    const std::string name = next();
    if (!row_.contains(name) || row_.at(name).is_null())
      value = std::nullopt;
    else
      value = reader_.get<RowId>(row_, name, where_);
  }
  void get(ReduceConfig& value) {
    const auto text = reader_.get<std::string>(row_, next(), where_);
    auto result = parse_config(text);
    if (!result.config) fail("config '" + text + "': " + result.error);
    value = *result.config;
  }
  void get(std::vector<std::byte>& value) {
    const std::string name = next();
    auto bytes = base64_decode(reader_.get<std::string>(row_, name, where_));
    if (!bytes) fail("\"" + name + "\" is not base64");
    value = std::move(*bytes);
  }
  template <typename T, typename Parse>
  void parsed(T& value, Parse parse) {
    const std::string name = next();
    const auto text = reader_.get<std::string>(row_, name, where_);
    auto result = parse(text);
    if (!result) fail("unknown " + name + " '" + text + "'");
    value = *result;
  }
  void get(Op& value) { parsed(value, parse_op); }
  void get(DType& value) { parsed(value, parse_dtype); }
  void get(LayoutKind& value) { parsed(value, parse_layout_kind); }
  void get(MeasurementStatus& value) { parsed(value, parse_measurement_status); }
  void get(Determinism& value) { parsed(value, parse_determinism); }
  void get(WinnerSource& value) { parsed(value, parse_winner_source); }
  void get(AxisLayout& value) { parsed(value, parse_axis_layout); }
  void get(AxisProblemClass& p) { read(p.op, p.dtype, p.out_dtype, p.layout, p.reduced_bucket, p.outputs_bucket); }
  void get(ProblemClass& p) { read(p.op, p.dtype, p.out_dtype, p.layout.kind, p.layout.outer, p.layout.inner); }
  void get(ProblemKey& value) {
    ProblemClass problem;
    std::uint64_t n = 0;
    read(problem, n);
    value = problem.with_size(n);
  }

  const Reader& reader_;
  const Json& row_;
  std::string where_;
  ColumnList names_;
  std::size_t next_ = 0;
};

void read_fields(FieldReader& in, DeviceRecord& d) {
  in.read(d.id, d.key.uuid, d.key.name, d.key.cc_major, d.key.cc_minor, d.key.sm_count, d.key.l2_bytes,
          d.key.memory_bus_bits, d.key.memory_clock_khz, d.key.driver_version, d.key.runtime_version);
}
void read_fields(FieldReader& in, Measurement& m) {
  in.read(m.id, m.device_id, m.problem, m.config, m.status, m.median_ms, m.spread, m.repetitions, m.gbps,
          m.tool_version, m.created_at);
  in.read_optional(m.detail, std::string());  // added in schema version 2
}
void read_fields(FieldReader& in, Winner& w) {
  in.read(w.id, w.device_id, w.problem, w.bucket, w.determinism, w.config, w.median_ms, w.measurement_id);
  // A hand-written or foreign file may not say where its winners came from.
  in.read_optional(w.source, WinnerSource::imported);
  in.read(w.tool_version, w.created_at);
}
void read_fields(FieldReader& in, TunedBucket& b) {
  in.read(b.device_id, b.problem, b.bucket, b.tool_version, b.created_at);
}
void read_fields(FieldReader& in, CompiledBinary& b) { in.read(b.key, b.arch, b.nvrtc_version, b.created_at, b.cubin); }
void read_fields(FieldReader& in, BenchResult& b) {
  in.read(b.id, b.device_id, b.problem, b.implementation);
  if (!is_bench_implementation(b.implementation)) in.fail("unknown implementation '" + b.implementation + "'");
  in.read(b.config, b.median_ms, b.spread, b.repetitions, b.gbps, b.peak_fraction, b.peak_gbps, b.run_id,
          b.tool_version, b.created_at);
  try {
    detail::checked_bench_config(b);  // refuse the file here, naming the row
  } catch (const InvalidArgument& error) {
    in.fail(error.what());
  }
}

// Axis configs are the engine's text, which the database never parses; an empty one is
// refused (the schema refuses it too).
void read_fields(FieldReader& in, AxisMeasurement& m) {
  in.read(m.id, m.device_id, m.op, m.dtype, m.out_dtype, m.layout, m.reduced, m.outputs, m.inner, m.config);
  if (m.config.empty()) in.fail("empty config");
  in.read(m.status, m.median_ms, m.spread, m.repetitions, m.gbps, m.tool_version, m.created_at);
  in.read_optional(m.detail, std::string());
}
void read_fields(FieldReader& in, AxisWinner& w) {
  in.read(w.id, w.device_id, w.problem, w.config);
  if (w.config.empty()) in.fail("empty config");
  in.read(w.median_ms, w.gbps, w.measurement_id);
  in.read_optional(w.source, WinnerSource::imported);  // as for flat winners
  in.read(w.tool_version, w.created_at);
  in.read_optional(w.grid_config, std::string());  // files of schema 5 and older have none
}
void read_fields(FieldReader& in, AxisTunedBucket& b) { in.read(b.device_id, b.problem, b.tool_version, b.created_at); }

template <typename Record>
std::vector<Record> read_rows(const Reader& r, const Json& root, const char* table, ColumnList names) {
  const Json& rows = r.array(root, table);
  std::vector<Record> records;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    FieldReader in(r, rows[i], at(table, i), names);
    Record record;
    read_fields(in, record);
    in.expect_done();
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace

void write_json(const DatabaseSnapshot& snapshot, std::ostream& out) {
  Json root;
  root["format"] = "reduce-tune-db";
  root["version"] = kJsonExportVersion;
  root["schema_version"] = kSchemaVersion;
  root["devices"] = write_rows(snapshot.devices, detail::kDeviceColumns);
  root["measurements"] = write_rows(snapshot.measurements, detail::kMeasurementColumns);
  root["winners"] = write_rows(snapshot.winners, detail::kWinnerColumns);
  root["tuned_buckets"] = write_rows(snapshot.tuned_buckets, detail::kTunedBucketColumns);
  root["binaries"] = write_rows(snapshot.binaries, kBinaryJsonFields);
  // Added in schema version 3; older readers ignore the section (no format bump).
  root["bench_results"] = write_rows(snapshot.bench_results, detail::kBenchResultColumns);
  // Added in schema version 4, the same way.
  root["axis_measurements"] = write_rows(snapshot.axis_measurements, detail::kAxisMeasurementColumns);
  root["axis_winners"] = write_rows(snapshot.axis_winners, detail::kAxisWinnerColumns);
  root["axis_tuned_buckets"] = write_rows(snapshot.axis_tuned_buckets, detail::kAxisTunedBucketColumns);
  out << root.dump(1) << '\n';
}

DatabaseSnapshot read_json(std::istream& in, const std::string& label) {
  const Reader r(label);
  Json root;
  try {
    root = Json::parse(in);
  } catch (const nlohmann::json::parse_error& error) {
    r.fail("parse", error.what());
  }
  if (!root.is_object() || root.value("format", std::string()) != "reduce-tune-db")
    r.fail("top level", "\"format\" is not \"reduce-tune-db\"");
  const int version = r.get<int>(root, "version", "top level");
  if (version > kJsonExportVersion)
    throw DbError(SQLITE_CANTOPEN, label + ": JSON export version " + std::to_string(version) +
                                       " is newer than this reduce-tune supports (" +
                                       std::to_string(kJsonExportVersion) + ")");

  DatabaseSnapshot snapshot;
  snapshot.devices = read_rows<DeviceRecord>(r, root, "devices", detail::kDeviceColumns);
  snapshot.measurements = read_rows<Measurement>(r, root, "measurements", detail::kMeasurementColumns);
  snapshot.winners = read_rows<Winner>(r, root, "winners", detail::kWinnerColumns);
  // Optional sections: an export of winners alone is still importable.
  if (root.contains("tuned_buckets"))
    snapshot.tuned_buckets = read_rows<TunedBucket>(r, root, "tuned_buckets", detail::kTunedBucketColumns);
  if (root.contains("binaries")) snapshot.binaries = read_rows<CompiledBinary>(r, root, "binaries", kBinaryJsonFields);
  // Absent from exports written before schema version 3.
  if (root.contains("bench_results"))
    snapshot.bench_results = read_rows<BenchResult>(r, root, "bench_results", detail::kBenchResultColumns);
  // Absent from exports written before schema version 4.
  if (root.contains("axis_measurements"))
    snapshot.axis_measurements =
        read_rows<AxisMeasurement>(r, root, "axis_measurements", detail::kAxisMeasurementColumns);
  if (root.contains("axis_winners"))
    snapshot.axis_winners = read_rows<AxisWinner>(r, root, "axis_winners", detail::kAxisWinnerColumns);
  if (root.contains("axis_tuned_buckets"))
    snapshot.axis_tuned_buckets =
        read_rows<AxisTunedBucket>(r, root, "axis_tuned_buckets", detail::kAxisTunedBucketColumns);
  return snapshot;
}

}  // namespace reduce_tune::db
