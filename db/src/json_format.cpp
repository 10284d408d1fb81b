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
#include "reduce_tune/error.h"
#include "rows.h"

namespace reduce_tune::db {
namespace {

using Json = nlohmann::ordered_json;

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

Json problem_fields(Json row, const ProblemClass& p) {
  row["op"] = to_string(p.op);
  row["dtype"] = to_string(p.dtype);
  row["out_dtype"] = to_string(p.out_dtype);
  row["layout"] = to_string(p.layout);
  row["layout_outer"] = p.layout.outer;
  row["layout_inner"] = p.layout.inner;
  return row;
}

std::int64_t micros(Timestamp t) { return t.time_since_epoch().count(); }

// Reading: every problem is reported as "<label>: <where>: <what>".
class Reader {
 public:
  explicit Reader(std::string label) : label_(std::move(label)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw DbError(SQLITE_NOTADB, label_ + ": not a valid reduce-tune JSON export (" + where + ": " + what + ")");
  }

  const Json& field(const Json& row, const char* name, const std::string& where) const {
    if (!row.is_object()) fail(where, "not an object");
    auto it = row.find(name);
    if (it == row.end()) fail(where, std::string("missing \"") + name + "\"");
    return *it;
  }
  template <typename T>
  T get(const Json& row, const char* name, const std::string& where) const {
    const Json& value = field(row, name, where);
    try {
      return value.get<T>();
    } catch (const nlohmann::json::exception&) {
      fail(where, std::string("bad \"") + name + "\"");
    }
  }
  double get_real(const Json& row, const char* name, const std::string& where) const {
    const Json& value = field(row, name, where);
    if (value.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!value.is_number()) fail(where, std::string("bad \"") + name + "\"");
    return value.get<double>();
  }
  template <typename T, typename Parse>
  T parsed(const Json& row, const char* name, const std::string& where, Parse parse) const {
    const auto text = get<std::string>(row, name, where);
    if (auto value = parse(text)) return *value;
    fail(where, std::string("unknown ") + name + " '" + text + "'");
  }
  ProblemClass problem(const Json& row, const std::string& where) const {
    ProblemClass p;
    p.op = parsed<Op>(row, "op", where, parse_op);
    p.dtype = parsed<DType>(row, "dtype", where, parse_dtype);
    p.out_dtype = parsed<DType>(row, "out_dtype", where, parse_dtype);
    p.layout.kind = parsed<LayoutKind>(row, "layout", where, parse_layout_kind);
    p.layout.outer = get<std::uint64_t>(row, "layout_outer", where);
    p.layout.inner = get<std::uint64_t>(row, "layout_inner", where);
    return p;
  }
  ReduceConfig config(const Json& row, const std::string& where) const {
    const auto text = get<std::string>(row, "config", where);
    auto result = parse_config(text);
    if (!result.config) fail(where, "config '" + text + "': " + result.error);
    return *result.config;
  }
  Timestamp time(const Json& row, const char* name, const std::string& where) const {
    return Timestamp(std::chrono::microseconds(get<std::int64_t>(row, name, where)));
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

}  // namespace

void write_json(const DatabaseSnapshot& snapshot, std::ostream& out) {
  Json root;
  root["format"] = "reduce-tune-db";
  root["version"] = kJsonExportVersion;
  root["schema_version"] = kSchemaVersion;
  Json& devices = root["devices"] = Json::array();
  for (const auto& d : snapshot.devices) {
    devices.push_back({{"id", d.id},
                       {"uuid", d.key.uuid},
                       {"name", d.key.name},
                       {"cc_major", d.key.cc_major},
                       {"cc_minor", d.key.cc_minor},
                       {"sm_count", d.key.sm_count},
                       {"l2_bytes", d.key.l2_bytes},
                       {"memory_bus_bits", d.key.memory_bus_bits},
                       {"memory_clock_khz", d.key.memory_clock_khz},
                       {"driver_version", d.key.driver_version},
                       {"runtime_version", d.key.runtime_version}});
  }
  Json& measurements = root["measurements"] = Json::array();
  for (const auto& m : snapshot.measurements) {
    Json row = problem_fields({{"id", m.id}, {"device_id", m.device_id}}, ProblemClass::of(m.problem));
    row["n"] = m.problem.n;
    row["config"] = to_string(m.config);
    row["status"] = to_string(m.status);
    row["median_ms"] = real(m.median_ms);
    row["spread"] = real(m.spread);
    row["repetitions"] = m.repetitions;
    row["gbps"] = real(m.gbps);
    row["tool_version"] = m.tool_version;
    row["created_at_us"] = micros(m.created_at);
    row["detail"] = m.detail;
    measurements.push_back(std::move(row));
  }
  Json& winners = root["winners"] = Json::array();
  for (const auto& w : snapshot.winners) {
    Json row = problem_fields({{"id", w.id}, {"device_id", w.device_id}}, w.problem);
    row["bucket"] = w.bucket;
    row["determinism"] = to_string(w.determinism);
    row["config"] = to_string(w.config);
    row["median_ms"] = real(w.median_ms);
    row["measurement_id"] = w.measurement_id ? Json(*w.measurement_id) : Json(nullptr);
    row["source"] = to_string(w.source);
    row["tool_version"] = w.tool_version;
    row["created_at_us"] = micros(w.created_at);
    winners.push_back(std::move(row));
  }
  Json& buckets = root["tuned_buckets"] = Json::array();
  for (const auto& b : snapshot.tuned_buckets) {
    Json row = problem_fields({{"device_id", b.device_id}}, b.problem);
    row["bucket"] = b.bucket;
    row["tool_version"] = b.tool_version;
    row["created_at_us"] = micros(b.created_at);
    buckets.push_back(std::move(row));
  }
  Json& binaries = root["binaries"] = Json::array();
  for (const auto& b : snapshot.binaries) {
    binaries.push_back({{"key", b.key},
                        {"arch", b.arch},
                        {"nvrtc_version", b.nvrtc_version},
                        {"created_at_us", micros(b.created_at)},
                        {"cubin_base64", base64_encode(b.cubin)}});
  }
  // Added in schema version 3; older readers ignore the section (no format bump).
  Json& bench = root["bench_results"] = Json::array();
  for (const auto& r : snapshot.bench_results) {
    Json row = problem_fields({{"id", r.id}, {"device_id", r.device_id}}, ProblemClass::of(r.problem));
    row["n"] = r.problem.n;
    row["implementation"] = r.implementation;
    row["config"] = r.config;
    row["median_ms"] = real(r.median_ms);
    row["spread"] = real(r.spread);
    row["repetitions"] = r.repetitions;
    row["gbps"] = real(r.gbps);
    row["peak_fraction"] = real(r.peak_fraction);
    row["peak_gbps"] = real(r.peak_gbps);
    row["run_id"] = r.run_id;
    row["tool_version"] = r.tool_version;
    row["created_at_us"] = micros(r.created_at);
    bench.push_back(std::move(row));
  }
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
  const Json& devices = r.array(root, "devices");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const Json& row = devices[i];
    const auto where = at("devices", i);
    DeviceRecord d;
    d.id = r.get<RowId>(row, "id", where);
    d.key.uuid = r.get<std::string>(row, "uuid", where);
    d.key.name = r.get<std::string>(row, "name", where);
    d.key.cc_major = r.get<int>(row, "cc_major", where);
    d.key.cc_minor = r.get<int>(row, "cc_minor", where);
    d.key.sm_count = r.get<int>(row, "sm_count", where);
    d.key.l2_bytes = r.get<std::int64_t>(row, "l2_bytes", where);
    d.key.memory_bus_bits = r.get<int>(row, "memory_bus_bits", where);
    d.key.memory_clock_khz = r.get<std::int64_t>(row, "memory_clock_khz", where);
    d.key.driver_version = r.get<int>(row, "driver_version", where);
    d.key.runtime_version = r.get<int>(row, "runtime_version", where);
    snapshot.devices.push_back(std::move(d));
  }
  const Json& measurements = r.array(root, "measurements");
  for (std::size_t i = 0; i < measurements.size(); ++i) {
    const Json& row = measurements[i];
    const auto where = at("measurements", i);
    Measurement m;
    m.id = r.get<RowId>(row, "id", where);
    m.device_id = r.get<RowId>(row, "device_id", where);
    m.problem = r.problem(row, where).with_size(r.get<std::uint64_t>(row, "n", where));
    m.config = r.config(row, where);
    m.status = r.parsed<MeasurementStatus>(row, "status", where, parse_measurement_status);
    m.median_ms = r.get_real(row, "median_ms", where);
    m.spread = r.get_real(row, "spread", where);
    m.repetitions = r.get<int>(row, "repetitions", where);
    m.gbps = r.get_real(row, "gbps", where);
    m.tool_version = r.get<std::string>(row, "tool_version", where);
    m.created_at = r.time(row, "created_at_us", where);
    m.detail = row.contains("detail") ? r.get<std::string>(row, "detail", where) : std::string();
    snapshot.measurements.push_back(std::move(m));
  }
  const Json& winners = r.array(root, "winners");
  for (std::size_t i = 0; i < winners.size(); ++i) {
    const Json& row = winners[i];
    const auto where = at("winners", i);
    Winner w;
    w.id = r.get<RowId>(row, "id", where);
    w.device_id = r.get<RowId>(row, "device_id", where);
    w.problem = r.problem(row, where);
    w.bucket = r.get<int>(row, "bucket", where);
    w.determinism = r.parsed<Determinism>(row, "determinism", where, parse_determinism);
    w.config = r.config(row, where);
    w.median_ms = r.get_real(row, "median_ms", where);
    if (!row.contains("measurement_id") || row["measurement_id"].is_null())
      w.measurement_id = std::nullopt;
    else
      w.measurement_id = r.get<RowId>(row, "measurement_id", where);
    // A hand-written or foreign file may not say where its winners came from.
    w.source = row.contains("source") ? r.parsed<WinnerSource>(row, "source", where, parse_winner_source)
                                      : WinnerSource::imported;
    w.tool_version = r.get<std::string>(row, "tool_version", where);
    w.created_at = r.time(row, "created_at_us", where);
    snapshot.winners.push_back(std::move(w));
  }
  // Optional sections: an export of winners alone is still importable.
  if (root.contains("tuned_buckets")) {
    const Json& buckets = r.array(root, "tuned_buckets");
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      const Json& row = buckets[i];
      const auto where = at("tuned_buckets", i);
      TunedBucket b;
      b.device_id = r.get<RowId>(row, "device_id", where);
      b.problem = r.problem(row, where);
      b.bucket = r.get<int>(row, "bucket", where);
      b.tool_version = r.get<std::string>(row, "tool_version", where);
      b.created_at = r.time(row, "created_at_us", where);
      snapshot.tuned_buckets.push_back(std::move(b));
    }
  }
  if (root.contains("binaries")) {
    const Json& binaries = r.array(root, "binaries");
    for (std::size_t i = 0; i < binaries.size(); ++i) {
      const Json& row = binaries[i];
      const auto where = at("binaries", i);
      CompiledBinary b;
      b.key = r.get<std::string>(row, "key", where);
      b.arch = r.get<int>(row, "arch", where);
      b.nvrtc_version = r.get<std::string>(row, "nvrtc_version", where);
      b.created_at = r.time(row, "created_at_us", where);
      auto cubin = base64_decode(r.get<std::string>(row, "cubin_base64", where));
      if (!cubin) r.fail(where, "\"cubin_base64\" is not base64");
      b.cubin = std::move(*cubin);
      snapshot.binaries.push_back(std::move(b));
    }
  }
  // Absent from exports written before schema version 3.
  if (root.contains("bench_results")) {
    const Json& bench = r.array(root, "bench_results");
    for (std::size_t i = 0; i < bench.size(); ++i) {
      const Json& row = bench[i];
      const auto where = at("bench_results", i);
      BenchResult b;
      b.id = r.get<RowId>(row, "id", where);
      b.device_id = r.get<RowId>(row, "device_id", where);
      b.problem = r.problem(row, where).with_size(r.get<std::uint64_t>(row, "n", where));
      b.implementation = r.get<std::string>(row, "implementation", where);
      if (!is_bench_implementation(b.implementation))
        r.fail(where, "unknown implementation '" + b.implementation + "'");
      b.config = r.get<std::string>(row, "config", where);
      b.median_ms = r.get_real(row, "median_ms", where);
      b.spread = r.get_real(row, "spread", where);
      b.repetitions = r.get<int>(row, "repetitions", where);
      b.gbps = r.get_real(row, "gbps", where);
      b.peak_fraction = r.get_real(row, "peak_fraction", where);
      b.peak_gbps = r.get_real(row, "peak_gbps", where);
      b.run_id = r.get<std::string>(row, "run_id", where);
      b.tool_version = r.get<std::string>(row, "tool_version", where);
      b.created_at = r.time(row, "created_at_us", where);
      try {
        detail::checked_bench_config(b);  // refuse the file here, naming the row
      } catch (const InvalidArgument& error) {
        r.fail(where, error.what());
      }
      snapshot.bench_results.push_back(std::move(b));
    }
  }
  return snapshot;
}

}  // namespace reduce_tune::db
