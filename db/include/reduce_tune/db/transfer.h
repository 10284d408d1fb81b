// Moving tuning results between files: export (SQLite or JSON), import and merge. A fleet
// tunes once per GPU model and ships the file; docs/DATABASE.md states the rules.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "reduce_tune/db/database.h"
#include "reduce_tune/db/records.h"

namespace reduce_tune::db {

// The JSON export format's version; bumped when its shape changes incompatibly.
inline constexpr int kJsonExportVersion = 1;

// Every row of a database (or of one device), with the source file's row ids so that
// references (a winner's measurement, a row's device) can be translated on import.
struct DatabaseSnapshot {
  std::vector<DeviceRecord> devices;
  std::vector<Measurement> measurements;
  std::vector<Winner> winners;
  std::vector<TunedBucket> tuned_buckets;
  std::vector<CompiledBinary> binaries;
  std::vector<BenchResult> bench_results;
  // Tuned axis reductions (schema version 4; empty when read from an older file).
  std::vector<AxisMeasurement> axis_measurements;
  std::vector<AxisWinner> axis_winners;
  std::vector<AxisTunedBucket> axis_tuned_buckets;
};

// Reads everything, or only one device's rows (and the binaries of its arch). Bench rows
// are all of them, every run, not only the latest; axis rows are every measurement,
// winner and mark.
DatabaseSnapshot read_snapshot(const Database& database,
                               std::optional<RowId> device_id = std::nullopt);

// Reads an export (or any reduce-tune database) from a file: SQLite or JSON, told apart
// by the file's first bytes. Throws DbError for anything else; never writes the file.
DatabaseSnapshot load_snapshot(const std::filesystem::path& file);

void write_json(const DatabaseSnapshot& snapshot, std::ostream& out);
// `label` names the input in error messages.
DatabaseSnapshot read_json(std::istream& in, const std::string& label);

enum class ExportFormat { sqlite, json };
// json for a name ending in ".json" (any case), sqlite otherwise.
ExportFormat export_format_for(const std::filesystem::path& file);

// Writes a snapshot to a new file (through a temporary name and a rename, so a crash
// leaves no half file); refuses (InvalidArgument) to overwrite an existing one. A SQLite
// export is left in rollback-journal mode so it is one self-contained file that opens
// read-only anywhere.
void write_export(const DatabaseSnapshot& snapshot, const std::filesystem::path& file, ExportFormat format);

// read_snapshot + write_export.
void export_database(const Database& source, const std::filesystem::path& file, ExportFormat format,
                     std::optional<RowId> device_id = std::nullopt);

struct TransferStats {
  std::int64_t devices_added = 0;
  std::int64_t measurements_added = 0;
  std::int64_t measurements_duplicate = 0;  // already present (same identity)
  std::int64_t winners_added = 0;
  std::int64_t winners_replaced = 0;
  std::int64_t winners_kept = 0;        // merge: the existing winner stayed
  std::int64_t winners_unverified = 0;  // merge: skipped, no ok measurement behind it
  std::int64_t tuned_buckets_added = 0;
  std::int64_t binaries_added = 0;
  std::int64_t binaries_replaced = 0;
  std::int64_t bench_results_added = 0;
  std::int64_t bench_results_duplicate = 0;  // already present (same identity)
  // Axis rows, counted as their flat counterparts above.
  std::int64_t axis_measurements_added = 0;
  std::int64_t axis_measurements_duplicate = 0;  // already present (same identity)
  std::int64_t axis_winners_added = 0;
  std::int64_t axis_winners_replaced = 0;
  std::int64_t axis_winners_kept = 0;        // merge: the existing winner stayed
  std::int64_t axis_winners_unverified = 0;  // merge: skipped, no ok measurement behind it
  std::int64_t axis_tuned_buckets_added = 0;
};

// Import: the snapshot's rows go in unchanged (provenance included), in one
// transaction. Where a row exists already (device UUID, winner key, axis winner key,
// binary key) the imported one replaces it; measurements, axis measurements and bench
// rows are deduplicated by identity.
TransferStats import_snapshot(Database& destination, const DatabaseSnapshot& snapshot);

// Merge: every measurement, axis measurement and bench row of both is kept (deduplicated
// by identity); for a winner key (device, problem class, bucket, determinism) and for an
// axis winner key (device, axis class) the faster verified winner stays, a tie keeps the
// existing one, and a winner taken from the snapshot is marked `merged`. Existing
// devices, tuned marks and binaries are kept as they are. One transaction.
TransferStats merge_snapshot(Database& destination, const DatabaseSnapshot& snapshot);

}  // namespace reduce_tune::db
