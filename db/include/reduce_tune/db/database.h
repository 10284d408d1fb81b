// The tuning database: one SQLite file holding devices, configs, every measurement,
// winners per size bucket and compiled binaries (docs/DATABASE.md has the schema and
// the guarantees). A Database owns one connection; use one per thread.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reduce_tune/db/records.h"
#include "reduce_tune/device_key.h"

namespace reduce_tune::db {

namespace detail {
class Connection;  // RAII over sqlite3*; db/src/sqlite_handle.h
}

// The schema this code writes. Files of older versions are migrated when opened for
// writing (and read in place through read shims when opened read-only); files of
// newer versions are refused and left untouched.
inline constexpr int kSchemaVersion = 6;

struct OpenOptions {
  // How long a writer waits for another writer's transaction before giving up. Tuning
  // transactions take milliseconds, so reaching this means a stuck process.
  std::chrono::milliseconds busy_timeout{60'000};
};

class Database {
 public:
  // Opens for reading and writing, creating the file (and its folder) when missing and
  // migrating an older schema. Throws DbError for a file that is not a reduce-tune
  // database, is corrupt, or has a newer schema; such a file is never modified.
  static Database open(const std::filesystem::path& path, const OpenOptions& options = {});

  // Opens without ever writing (what the runtime uses). Empty when the file does not
  // exist or holds no schema yet: that means "no tuning yet", not an error. Works on a
  // read-only file and in a read-only folder. Throws DbError as open() does.
  static std::optional<Database> open_read_only(const std::filesystem::path& path,
                                                const OpenOptions& options = {});

  // A private database for tests and scratch work.
  static Database open_in_memory();

  Database(Database&&) noexcept;
  Database& operator=(Database&&) noexcept;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  const std::filesystem::path& path() const { return path_; }  // ":memory:" in memory
  bool read_only() const { return read_only_; }
  // The version the file holds (older than kSchemaVersion for an old file opened
  // read-only; queries still see the current schema).
  int file_schema_version() const { return file_schema_version_; }

  // Devices. upsert_device keys on the UUID and refreshes the other fields (a driver
  // update keeps the device's history).
  RowId upsert_device(const DeviceKey& device);
  std::optional<RowId> find_device(std::string_view uuid) const;
  std::optional<DeviceRecord> device(RowId id) const;
  std::vector<DeviceRecord> list_devices() const;  // by id

  // Writes a bucket's device, configs, measurements, winners and its "done" mark in one
  // transaction: after a crash the bucket is all there or not there. Measurements equal
  // to stored ones (same device, problem, config, timestamp and tool version) are not
  // duplicated. Winners replace the bucket's previous winners of the same class.
  // Throws InvalidArgument for an inconsistent BucketResult, DbError for SQLite errors.
  StoredBucket store_bucket(const BucketResult& result);

  // Buckets already tuned for (device, problem class), ascending; for resuming.
  std::vector<int> tuned_buckets(RowId device_id, const ProblemClass& problem) const;
  // The same marks with the tool version that tuned each, ascending by bucket: a rerun
  // tunes again what another version of the tool or its kernels tuned.
  std::vector<TunedBucket> tuned_bucket_records(RowId device_id, const ProblemClass& problem) const;

  // All winners of a device: what the runtime loads once into memory.
  std::vector<Winner> winners_for_device(RowId device_id) const;
  // Winners of other devices with the same compute capability (the runtime's fallback),
  // ordered by device id.
  std::vector<Winner> winners_for_same_arch(const DeviceKey& device) const;

  // Measurements of a device and problem class, all sizes or one size bucket; by id.
  std::vector<Measurement> measurements(RowId device_id, const ProblemClass& problem,
                                        std::optional<int> bucket = std::nullopt) const;

  // Axis reductions. store_axis_bucket writes a class's device, measurements, winner
  // (replacing the class's previous winner; a result without one leaves it standing) and
  // "done" mark (unless result.mark_tuned is false) in one transaction; measurements
  // equal to stored ones (same device, shape, config, timestamp, tool version) are not
  // duplicated. Throws InvalidArgument, before writing anything, for an inconsistent
  // result (a layout other than rows or columns, a shape outside the class, rows with
  // inner != 1, columns whose inner does not divide the outputs, an empty config, a
  // winner that is not a timed ok measurement), DbError for SQLite errors. Ids are
  // parallel to result.measurements.
  StoredBucket store_axis_bucket(const AxisBucketResult& result);
  // The axis classes already tuned for a device, in AxisProblemClass order; for resuming.
  std::vector<AxisProblemClass> axis_tuned_buckets(RowId device_id) const;
  // The same marks with the tool version that tuned each, in AxisProblemClass order.
  std::vector<AxisTunedBucket> axis_tuned_bucket_records(RowId device_id) const;
  // All axis winners of a device (what the runtime loads once), by id.
  std::vector<AxisWinner> axis_winners_for_device(RowId device_id) const;
  // Axis winners of other devices with the same compute capability, by device id.
  std::vector<AxisWinner> axis_winners_for_same_arch(const DeviceKey& device) const;
  // Axis measurements of a device, all of them or one class's; by id.
  std::vector<AxisMeasurement> axis_measurements(RowId device_id,
                                                 std::optional<AxisProblemClass> problem = std::nullopt) const;

  // Bench results (`reduce-tune bench`). store_bench_results writes one run's rows for a
  // device in one transaction, upserting the device; ids are parallel to `rows`. A row
  // equal to a stored one (same device, problem, n, implementation, run id and
  // timestamp) is not duplicated: its id is the stored row's. Configs of our kernels are
  // stored as canonical text. Throws InvalidArgument, before writing anything, for an
  // implementation other than kBenchImplementations, an empty config or run id, or a
  // config of ours that does not parse.
  std::vector<RowId> store_bench_results(const DeviceKey& device, const std::vector<BenchResult>& rows);
  // Every bench row of a device, oldest first (by timestamp, then id).
  std::vector<BenchResult> bench_results(RowId device_id) const;
  // Per (problem, n, implementation), only the row of the latest run that measured it
  // (the newest timestamp; the later-stored row on a tie); oldest first.
  std::vector<BenchResult> latest_bench_results(RowId device_id) const;

  // Binary cache. put_binary replaces an entry with the same key.
  std::optional<CompiledBinary> find_binary(std::string_view key) const;
  void put_binary(const CompiledBinary& binary);
  // Many at once, in one transaction.
  void put_binaries(const std::vector<CompiledBinary>& binaries);
  // The cache's entries without their bytes: key, arch, NVRTC version and size.
  struct BinaryEntry {
    std::string key;
    int arch = 0;
    std::string nvrtc_version;
    std::int64_t bytes = 0;
  };
  std::vector<BinaryEntry> list_binaries() const;
  // Removes these entries in one transaction; returns how many were there.
  int remove_binaries(const std::vector<std::string>& keys);
  // Gives the pages freed by removals back to the file system (SQLite's VACUUM).
  void compact();

  DbCounts counts() const;

  // PRAGMA integrity_check: empty when the file is sound, else SQLite's findings.
  std::vector<std::string> integrity_problems() const;

 private:
  friend struct DatabaseAccess;  // db/src: transfer code and tests reach the connection
  Database(std::unique_ptr<detail::Connection> connection, std::filesystem::path path,
           bool read_only, int file_schema_version);
  void require_writable(std::string_view what) const;

  std::unique_ptr<detail::Connection> connection_;
  std::filesystem::path path_;
  bool read_only_ = false;
  int file_schema_version_ = 0;
};

}  // namespace reduce_tune::db
