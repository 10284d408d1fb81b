#include "reduce_tune/db/database.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <system_error>
#include <thread>

#include "reduce_tune/error.h"
#include "rows.h"
#include "schema.h"
#include "sqlite_handle.h"

namespace reduce_tune::db {
namespace {

using detail::Connection;
using detail::Statement;
using detail::Transaction;
using detail::TransactionKind;

// An absolute file: URI, so that any byte of the path ('?', '#', '%', a leading "//")
// reaches the file system unchanged and query parameters can be added.
std::string file_uri(const std::filesystem::path& path, std::string_view query) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file://";
  const std::filesystem::path absolute = std::filesystem::absolute(path);
  for (const char byte : absolute.native()) {
    const auto c = static_cast<unsigned char>(byte);
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '/' || c == '.' || c == '_' || c == '-' || c == '~';
    if (plain) {
      uri += static_cast<char>(c);
    } else {
      uri += '%';
      uri += kHex[c >> 4];
      uri += kHex[c & 0xf];
    }
  }
  if (!query.empty()) {
    uri += '?';
    uri += query;
  }
  return uri;
}

void set_busy_timeout(const Connection& connection, const OpenOptions& options) {
  const auto ms = options.busy_timeout.count();
  sqlite3_busy_timeout(connection.get(),
                       static_cast<int>(std::min<long long>(ms, std::numeric_limits<int>::max())));
}

// Switching a file into WAL takes an exclusive lock, which SQLite does not wait for
// through the busy handler; two writers opening a new file at once would otherwise see
// SQLITE_BUSY here. A file already in WAL mode passes at once.
void enable_wal(const Connection& connection, const OpenOptions& options) {
  const auto deadline = std::chrono::steady_clock::now() + options.busy_timeout;
  for (;;) {
    try {
      Statement statement(connection, "PRAGMA journal_mode = WAL");
      statement.run();
      return;
    } catch (const DbError& error) {
      if ((error.code() & 0xff) != SQLITE_BUSY || std::chrono::steady_clock::now() > deadline) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void create_parent_folder(const std::filesystem::path& path) {
  const auto folder = path.parent_path();
  if (folder.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec)
    throw DbError(SQLITE_CANTOPEN,
                  path.string() + ": cannot create the folder " + folder.string() + " (" + ec.message() + ")");
}

std::int64_t bucket_low(int bucket) { return bucket == 0 ? 0 : std::int64_t{1} << bucket; }
std::int64_t bucket_high(int bucket) {  // inclusive
  return bucket >= 62 ? std::numeric_limits<std::int64_t>::max() : (std::int64_t{1} << (bucket + 1)) - 1;
}

void check_bucket(const BucketResult& r) {
  auto fail = [&](const std::string& why) {
    throw InvalidArgument("bucket " + std::to_string(r.bucket) + " of " + to_string(r.problem) + ": " + why);
  };
  if (r.bucket < 0 || r.bucket > 63) fail("bucket out of range");
  for (const auto& m : r.measurements) {
    if (ProblemClass::of(m.problem) != r.problem) fail("measurement of another problem: " + to_string(m.problem));
    if (size_bucket(m.problem.n) != r.bucket)
      fail("measurement n = " + std::to_string(m.problem.n) + " lies in bucket " +
           std::to_string(size_bucket(m.problem.n)));
  }
  std::set<Determinism> seen;
  for (const auto& w : r.winners) {
    if (w.measurement_index >= r.measurements.size()) fail("winner names a measurement that is not there");
    const Measurement& m = r.measurements[w.measurement_index];
    if (m.status != MeasurementStatus::ok) fail("a winner must come from an ok measurement");
    if (!std::isfinite(m.median_ms)) fail("a winner needs a measured time");
    if (!seen.insert(w.determinism).second) fail("two winners for one determinism class");
  }
}

void check_axis_bucket(const AxisBucketResult& r) {
  auto fail = [&](const std::string& why) { throw InvalidArgument("axis class " + to_string(r.problem) + ": " + why); };
  if (r.problem.layout != AxisLayout::rows && r.problem.layout != AxisLayout::columns)
    fail(std::string("layout '") + to_string(r.problem.layout) + "' is not tuned (only rows and columns are)");
  if (r.problem.reduced_bucket < 0 || r.problem.reduced_bucket > 63 || r.problem.outputs_bucket < 0 ||
      r.problem.outputs_bucket > 63)
    fail("bucket out of range");
  for (std::size_t i = 0; i < r.measurements.size(); ++i) {
    const AxisMeasurement& m = r.measurements[i];
    const std::string which = "measurement " + std::to_string(i) + " (R = " + std::to_string(m.reduced) +
                              ", outputs = " + std::to_string(m.outputs) + ", inner = " + std::to_string(m.inner) +
                              "): ";
    if (m.problem() != r.problem) fail(which + "lies in another class, " + to_string(m.problem()));
    if (m.layout == AxisLayout::rows && m.inner != 1) fail(which + "rows have inner = 1");
    if (m.layout == AxisLayout::columns && (m.inner < 1 || m.outputs % m.inner != 0))
      fail(which + "columns need inner >= 1 dividing the output count");
    if (m.config.empty()) fail(which + "empty config");
  }
  if (r.winner) {
    if (*r.winner >= r.measurements.size()) fail("winner names a measurement that is not there");
    const AxisMeasurement& m = r.measurements[*r.winner];
    if (m.status != MeasurementStatus::ok) fail("a winner must come from an ok measurement");
    if (!std::isfinite(m.median_ms)) fail("a winner needs a measured time");
  }
  if (r.grid_winner) {
    if (!r.winner) fail("a winner on the 16-byte grid needs a winner for the class");
    if (*r.grid_winner >= r.measurements.size()) fail("the grid's winner names a measurement that is not there");
    const AxisMeasurement& m = r.measurements[*r.grid_winner];
    if (m.status != MeasurementStatus::ok) fail("the grid's winner must come from an ok measurement");
    const std::string& grid = r.grid_winner_config.empty() ? m.config : r.grid_winner_config;
    const std::string& whole = r.winner_config.empty() ? r.measurements[*r.winner].config : r.winner_config;
    if (grid == whole) fail("the grid's winner repeats the class's winner");
  }
  if (!r.winner_config.empty() && !r.winner) fail("a winner's config needs a winner");
  if (!r.grid_winner_config.empty() && !r.grid_winner) fail("the grid winner's config needs a grid winner");
}

}  // namespace

Database::Database(std::unique_ptr<detail::Connection> connection, std::filesystem::path path, bool read_only,
                   int file_schema_version)
    : connection_(std::move(connection)),
      path_(std::move(path)),
      read_only_(read_only),
      file_schema_version_(file_schema_version) {}

Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

Database Database::open(const std::filesystem::path& path, const OpenOptions& options) {
  if (path.empty()) throw InvalidArgument("empty database path");
  create_parent_folder(path);
  auto connection = std::make_unique<Connection>(file_uri(path, "mode=rwc"),
                                                 SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, path.string());
  set_busy_timeout(*connection, options);
  // Read and judge the file before the first write (journal mode, migration), so that a
  // foreign, corrupt or newer file stays byte for byte as it was.
  const auto first_look = detail::inspect(*connection);
  detail::check_compatible(first_look, *connection, kSchemaVersion);
  enable_wal(*connection, options);
  // NORMAL in WAL mode: a killed process loses nothing committed; a power cut may lose
  // the last commits but never corrupts, and tuning commits once per bucket.
  // Foreign keys are enforced once the schema is current: a migration step that rebuilds
  // a table others refer to runs without them (schema.cpp checks the keys itself).
  connection->exec("PRAGMA foreign_keys = OFF; PRAGMA synchronous = NORMAL", "cannot configure");
  if (first_look.user_version < kSchemaVersion) {
    bool rebuilt = false;
    {
      Transaction transaction(*connection, TransactionKind::immediate);
      // Again under the write lock: another process may have created or migrated the
      // file since the first look.
      const auto state = detail::inspect(*connection);
      detail::check_compatible(state, *connection, kSchemaVersion);
      if (state.user_version < kSchemaVersion) {
        detail::migrate(*connection, state.user_version, kSchemaVersion);
        transaction.commit();
        rebuilt = detail::migration_rebuilds_tables(state.user_version);
      }
    }
    // A rebuilt table leaves its old pages free inside the file (a default run's axis
    // measurements: about 15 MB). Give them back once, now. This only saves room (later
    // writes reuse free pages anyway), so a busy or full disk leaves the file as it is.
    if (rebuilt) {
      try {
        connection->exec("VACUUM", "cannot compact the migrated database");
      } catch (const DbError&) {
      }
    }
  }
  connection->exec("PRAGMA foreign_keys = ON", "cannot configure");
  return Database(std::move(connection), path, false, kSchemaVersion);
}

std::optional<Database> Database::open_read_only(const std::filesystem::path& path, const OpenOptions& options) {
  if (path.empty()) throw InvalidArgument("empty database path");
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) return std::nullopt;
  if (ec) throw DbError(SQLITE_CANTOPEN, path.string() + ": cannot open (" + ec.message() + ")");
  if (std::filesystem::is_directory(status))
    throw DbError(SQLITE_CANTOPEN, path.string() + ": cannot open (is a folder)");

  auto open_with = [&](std::string_view query) {
    auto connection = std::make_unique<Connection>(file_uri(path, query), SQLITE_OPEN_READONLY, path.string());
    set_busy_timeout(*connection, options);
    return connection;
  };
  auto connection = open_with("mode=ro");
  detail::FileState state;
  try {
    state = detail::inspect(*connection);
  } catch (const DbError& error) {
    // A WAL file needs its -shm index; in a read-only folder where it cannot be created
    // SQLite refuses a plain read-only open. immutable=1 reads the main file without the
    // index, which is exact only when no -wal file holds commits the main file lacks (a
    // writer that closed cleanly checkpoints and removes it). With one there, reading
    // the main file alone would give stale or torn answers: refuse instead.
    const int primary = error.code() & 0xff;
    if (primary != SQLITE_CANTOPEN && primary != SQLITE_READONLY) throw;
    auto wal = path;
    wal += "-wal";
    std::error_code wal_error;
    const auto wal_size = std::filesystem::file_size(wal, wal_error);
    if (!wal_error && wal_size > 0)
      throw DbError(error.code(), path.string() +
                                      ": cannot read consistently: " + wal.filename().string() +
                                      " holds commits not yet in the main file (a tuner is writing, or was killed), "
                                      "and its index cannot be created here (" + error.what() +
                                      "); run reduce-tune once with write access to the folder, or wait for the "
                                      "writer to finish");
    connection = open_with("mode=ro&immutable=1");
    state = detail::inspect(*connection);
  }
  if (detail::is_empty(state)) return std::nullopt;
  detail::check_compatible(state, *connection, kSchemaVersion);
  if (state.user_version < kSchemaVersion) detail::add_read_shims(*connection, state.user_version);
  return Database(std::move(connection), path, true, state.user_version);
}

Database Database::open_in_memory() {
  auto connection = std::make_unique<Connection>(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, ":memory:");
  Transaction transaction(*connection, TransactionKind::immediate);
  detail::migrate(*connection, 0, kSchemaVersion);
  transaction.commit();
  connection->exec("PRAGMA foreign_keys = ON", "cannot configure");
  return Database(std::move(connection), ":memory:", false, kSchemaVersion);
}

void Database::require_writable(std::string_view what) const {
  if (read_only_)
    throw DbError(SQLITE_READONLY, path_.string() + ": cannot " + std::string(what) + " (opened read-only)");
}

RowId Database::upsert_device(const DeviceKey& device) {
  require_writable("store a device");
  Transaction transaction(*connection_, TransactionKind::immediate);
  const RowId id = detail::RowWriter(*connection_).upsert_device(device);
  transaction.commit();
  return id;
}

std::optional<RowId> Database::find_device(std::string_view uuid) const {
  Statement s(*connection_, "SELECT id FROM devices WHERE uuid = ?1");
  s.bind(1, uuid);
  if (!s.step()) return std::nullopt;
  return s.int64(0);
}

std::optional<DeviceRecord> Database::device(RowId id) const {
  auto rows = detail::select_devices(*connection_, "WHERE d.id = ?1", [&](Statement& s) { s.bind(1, id); });
  if (rows.empty()) return std::nullopt;
  return std::move(rows.front());
}

std::vector<DeviceRecord> Database::list_devices() const { return detail::select_devices(*connection_, "", {}); }

StoredBucket Database::store_bucket(const BucketResult& result) {
  require_writable("store a bucket");
  check_bucket(result);
  Transaction transaction(*connection_, TransactionKind::immediate);
  detail::RowWriter writer(*connection_);
  StoredBucket stored;
  stored.device_id = writer.upsert_device(result.device);
  stored.measurement_ids.reserve(result.measurements.size());
  for (const auto& m : result.measurements)
    stored.measurement_ids.push_back(writer.add_measurement(stored.device_id, m).first);
  for (const auto& bw : result.winners) {
    const Measurement& m = result.measurements[bw.measurement_index];
    Winner w;
    w.problem = result.problem;
    w.bucket = result.bucket;
    w.determinism = bw.determinism;
    w.config = m.config;
    w.median_ms = m.median_ms;
    w.tool_version = result.tool_version;
    w.created_at = result.created_at;
    writer.put_winner(stored.device_id, w, stored.measurement_ids[bw.measurement_index], WinnerSource::tuned);
  }
  writer.mark_bucket(stored.device_id,
                     TunedBucket{stored.device_id, result.problem, result.bucket, result.tool_version,
                                 result.created_at},
                     /*refresh=*/true);
  transaction.commit();
  return stored;
}

std::vector<int> Database::tuned_buckets(RowId device_id, const ProblemClass& problem) const {
  std::vector<int> buckets;
  for (const auto& b : tuned_bucket_records(device_id, problem)) buckets.push_back(b.bucket);
  return buckets;
}

std::vector<TunedBucket> Database::tuned_bucket_records(RowId device_id, const ProblemClass& problem) const {
  // Ordered by the table's key, whose last column is the bucket: ascending here.
  return detail::select_tuned_buckets(
      *connection_, "WHERE b.device_id = ?1 AND " + detail::sql_params_equal("b", detail::kProblemColumns, 2),
      [&](Statement& s) {
        s.bind(1, device_id);
        detail::bind_problem(s, 2, problem);
      });
}

std::vector<Winner> Database::winners_for_device(RowId device_id) const {
  return detail::select_winners(*connection_, "WHERE w.device_id = ?1",
                                [&](Statement& s) { s.bind(1, device_id); });
}

namespace {
// Winners (w) of the other devices with `device`'s compute capability.
constexpr const char* kSameArchWinners =
    "JOIN devices d ON d.id = w.device_id WHERE d.cc_major = ?1 AND d.cc_minor = ?2 AND d.uuid <> ?3";
auto same_arch_binder(const DeviceKey& device) {
  return [&device](Statement& s) { s.bind(1, device.cc_major).bind(2, device.cc_minor).bind(3, device.uuid); };
}
}  // namespace

std::vector<Winner> Database::winners_for_same_arch(const DeviceKey& device) const {
  return detail::select_winners(*connection_, kSameArchWinners, same_arch_binder(device));
}

std::vector<Measurement> Database::measurements(RowId device_id, const ProblemClass& problem,
                                                std::optional<int> bucket) const {
  return detail::select_measurements(
      *connection_,
      "WHERE m.device_id = ?1 AND " + detail::sql_params_equal("m", detail::kProblemColumns, 2) +
          " AND m.n BETWEEN ?8 AND ?9",
      [&](Statement& s) {
        s.bind(1, device_id);
        detail::bind_problem(s, 2, problem);
        s.bind(8, bucket ? bucket_low(*bucket) : 0)
            .bind(9, bucket ? bucket_high(*bucket) : std::numeric_limits<std::int64_t>::max());
      });
}

StoredBucket Database::store_axis_bucket(const AxisBucketResult& result) {
  require_writable("store an axis bucket");
  check_axis_bucket(result);
  Transaction transaction(*connection_, TransactionKind::immediate);
  detail::RowWriter writer(*connection_);
  StoredBucket stored;
  stored.device_id = writer.upsert_device(result.device);
  stored.measurement_ids.reserve(result.measurements.size());
  for (const auto& m : result.measurements)
    stored.measurement_ids.push_back(writer.add_axis_measurement(stored.device_id, m).first);
  if (result.winner) {
    const AxisMeasurement& m = result.measurements[*result.winner];
    AxisWinner w;
    w.problem = result.problem;
    w.config = result.winner_config.empty() ? m.config : result.winner_config;
    w.median_ms = m.median_ms;
    w.gbps = m.gbps;
    if (result.grid_winner)
      w.grid_config = result.grid_winner_config.empty() ? result.measurements[*result.grid_winner].config
                                                        : result.grid_winner_config;
    w.tool_version = result.tool_version;
    w.created_at = result.created_at;
    writer.put_axis_winner(stored.device_id, w, stored.measurement_ids[*result.winner], WinnerSource::tuned);
  }
  if (result.mark_tuned)
    writer.mark_axis_bucket(stored.device_id,
                            AxisTunedBucket{stored.device_id, result.problem, result.tool_version, result.created_at},
                            /*refresh=*/true);
  transaction.commit();
  return stored;
}

std::vector<AxisProblemClass> Database::axis_tuned_buckets(RowId device_id) const {
  std::vector<AxisProblemClass> classes;
  for (const auto& b : axis_tuned_bucket_records(device_id)) classes.push_back(b.problem);
  return classes;
}

std::vector<AxisTunedBucket> Database::axis_tuned_bucket_records(RowId device_id) const {
  auto records = detail::select_axis_tuned_buckets(*connection_, "WHERE b.device_id = ?1",
                                                   [&](Statement& s) { s.bind(1, device_id); });
  std::sort(records.begin(), records.end(),
            [](const AxisTunedBucket& a, const AxisTunedBucket& b) { return a.problem < b.problem; });
  return records;
}

std::vector<AxisWinner> Database::axis_winners_for_device(RowId device_id) const {
  return detail::select_axis_winners(*connection_, "WHERE w.device_id = ?1",
                                     [&](Statement& s) { s.bind(1, device_id); });
}

std::vector<AxisWinner> Database::axis_winners_for_same_arch(const DeviceKey& device) const {
  return detail::select_axis_winners(*connection_, kSameArchWinners, same_arch_binder(device));
}

std::vector<AxisMeasurement> Database::axis_measurements(RowId device_id,
                                                         std::optional<AxisProblemClass> problem) const {
  if (!problem)
    return detail::select_axis_measurements(*connection_, "WHERE m.device_id = ?1",
                                            [&](Statement& s) { s.bind(1, device_id); });
  return detail::select_axis_measurements(
      *connection_,
      "WHERE m.device_id = ?1 AND " + detail::sql_params_equal("m", detail::kAxisProblemColumns, 2) +
          " AND m.reduced BETWEEN ?6 AND ?7 AND m.outputs BETWEEN ?8 AND ?9",
      [&](Statement& s) {
        s.bind(1, device_id);
        detail::bind_axis_problem(s, 2, *problem);
        s.bind(6, bucket_low(problem->reduced_bucket))
            .bind(7, bucket_high(problem->reduced_bucket))
            .bind(8, bucket_low(problem->outputs_bucket))
            .bind(9, bucket_high(problem->outputs_bucket));
      });
}

std::vector<RowId> Database::store_bench_results(const DeviceKey& device, const std::vector<BenchResult>& rows) {
  require_writable("store bench results");
  for (const auto& row : rows) detail::checked_bench_config(row);  // refuse a bad run before writing
  Transaction transaction(*connection_, TransactionKind::immediate);
  detail::RowWriter writer(*connection_);
  const RowId device_id = writer.upsert_device(device);
  std::vector<RowId> ids;
  ids.reserve(rows.size());
  for (const auto& row : rows) ids.push_back(writer.add_bench_result(device_id, row).first);
  transaction.commit();
  return ids;
}

std::vector<BenchResult> Database::bench_results(RowId device_id) const {
  return detail::select_bench_results(*connection_, "WHERE r.device_id = ?1",
                                      [&](Statement& s) { s.bind(1, device_id); });
}

std::vector<BenchResult> Database::latest_bench_results(RowId device_id) const {
  // A row is the latest of its key when no row of the same key is newer; the UNIQUE
  // index (which leads with the key) serves the inner lookup.
  static const std::string where =
      "WHERE r.device_id = ?1 AND NOT EXISTS (SELECT 1 FROM bench_results o WHERE o.device_id = r.device_id AND (" +
      detail::sql_columns("o", detail::kProblemColumns) + ", o.n, o.implementation) = (" +
      detail::sql_columns("r", detail::kProblemColumns) +
      ", r.n, r.implementation) AND (o.created_at_us > r.created_at_us OR (o.created_at_us = r.created_at_us AND "
      "o.id > r.id)))";
  return detail::select_bench_results(*connection_, where, [&](Statement& s) { s.bind(1, device_id); });
}

std::optional<CompiledBinary> Database::find_binary(std::string_view key) const {
  return detail::select_binary(*connection_, key);
}

void Database::put_binaries(const std::vector<CompiledBinary>& binaries) {
  require_writable("store binaries");
  Transaction transaction(*connection_, TransactionKind::immediate);
  detail::RowWriter writer(*connection_);
  for (const auto& b : binaries) writer.put_binary(b, /*replace=*/true);
  transaction.commit();
}

void Database::put_binary(const CompiledBinary& binary) {
  require_writable("store a binary");
  Transaction transaction(*connection_, TransactionKind::immediate);
  detail::RowWriter(*connection_).put_binary(binary, /*replace=*/true);
  transaction.commit();
}

std::vector<Database::BinaryEntry> Database::list_binaries() const {
  Statement s(*connection_, "SELECT key, arch, nvrtc_version, length(cubin) FROM binaries ORDER BY key");
  std::vector<BinaryEntry> entries;
  while (s.step()) entries.push_back({s.text(0), s.int32(1), s.text(2), s.int64(3)});
  return entries;
}

int Database::remove_binaries(const std::vector<std::string>& keys) {
  require_writable("remove binaries");
  Transaction transaction(*connection_, TransactionKind::immediate);
  Statement s(*connection_, "DELETE FROM binaries WHERE key = ?1");
  int removed = 0;
  for (const auto& key : keys) {
    s.reset();
    s.bind(1, std::string_view(key));
    s.run();
    removed += sqlite3_changes(connection_->get());
  }
  transaction.commit();
  return removed;
}

void Database::compact() {
  require_writable("compact");
  connection_->exec("VACUUM", "cannot compact the database");
}

DbCounts Database::counts() const {
  Statement s(*connection_,
              "SELECT (SELECT count(*) FROM devices), (SELECT count(*) FROM configs), "
              "(SELECT count(*) FROM measurements), (SELECT count(*) FROM winners), "
              "(SELECT count(*) FROM tuned_buckets), (SELECT count(*) FROM binaries), "
              "(SELECT coalesce(sum(length(cubin)), 0) FROM binaries), (SELECT count(*) FROM bench_results), "
              "(SELECT count(*) FROM axis_measurements), (SELECT count(*) FROM axis_winners), "
              "(SELECT count(*) FROM axis_tuned_buckets)");
  s.step();
  DbCounts counts;
  counts.devices = s.int64(0);
  counts.configs = s.int64(1);
  counts.measurements = s.int64(2);
  counts.winners = s.int64(3);
  counts.tuned_buckets = s.int64(4);
  counts.binaries = s.int64(5);
  counts.binary_bytes = s.int64(6);
  counts.bench_results = s.int64(7);
  counts.axis_measurements = s.int64(8);
  counts.axis_winners = s.int64(9);
  counts.axis_tuned_buckets = s.int64(10);
  return counts;
}

std::vector<std::string> Database::integrity_problems() const {
  Statement s(*connection_, "PRAGMA integrity_check");
  std::vector<std::string> problems;
  while (s.step()) {
    std::string line = s.text(0);
    if (line != "ok") problems.push_back(std::move(line));
  }
  return problems;
}

}  // namespace reduce_tune::db
