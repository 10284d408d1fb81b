#include "reduce_tune/db/transfer.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstring>
#include <fstream>
#include <unordered_map>

#include "database_access.h"
#include "reduce_tune/error.h"
#include "rows.h"

namespace reduce_tune::db {
namespace {

using detail::Statement;
using detail::Transaction;
using detail::TransactionKind;

template <typename Map>
std::optional<RowId> translate(const Map& ids, std::optional<RowId> id) {
  if (!id) return std::nullopt;
  auto it = ids.find(*id);
  if (it == ids.end()) return std::nullopt;
  return it->second;
}

RowId device_for(const std::unordered_map<RowId, RowId>& ids, RowId id, const char* row) {
  auto it = ids.find(id);
  if (it == ids.end())
    throw DbError(SQLITE_CONSTRAINT_FOREIGNKEY,
                  std::string("the ") + row + " refers to device id " + std::to_string(id) +
                      ", which the file does not hold");
  return it->second;
}

enum class Rule { import, merge };

TransferStats transfer(Database& destination, const DatabaseSnapshot& snapshot, Rule rule) {
  if (destination.read_only())
    throw DbError(SQLITE_READONLY, destination.path().string() + ": cannot import (opened read-only)");
  const auto& connection = DatabaseAccess::connection(destination);
  TransferStats stats;
  Transaction transaction(connection, TransactionKind::immediate);
  detail::RowWriter writer(connection);

  std::unordered_map<RowId, RowId> device_ids;
  for (const auto& d : snapshot.devices) {
    if (rule == Rule::import) {
      const bool existed = destination.find_device(d.key.uuid).has_value();
      device_ids[d.id] = writer.upsert_device(d.key);
      stats.devices_added += existed ? 0 : 1;
    } else {
      const auto [id, added] = writer.add_device_if_absent(d.key);
      device_ids[d.id] = id;
      stats.devices_added += added ? 1 : 0;
    }
  }

  std::unordered_map<RowId, RowId> measurement_ids;
  std::unordered_map<RowId, const Measurement*> source_measurements;
  for (const auto& m : snapshot.measurements) {
    const auto [id, added] = writer.add_measurement(device_for(device_ids, m.device_id, "measurement"), m);
    measurement_ids[m.id] = id;
    source_measurements[m.id] = &m;
    (added ? stats.measurements_added : stats.measurements_duplicate) += 1;
  }

  for (const auto& b : snapshot.tuned_buckets)
    stats.tuned_buckets_added +=
        writer.mark_bucket(device_for(device_ids, b.device_id, "tuned bucket"), b, /*refresh=*/false) ? 1 : 0;

  for (const auto& w : snapshot.winners) {
    const RowId device_id = device_for(device_ids, w.device_id, "winner");
    const auto measurement_id = translate(measurement_ids, w.measurement_id);
    const auto existing = writer.find_winner(device_id, w.problem, w.bucket, w.determinism);
    if (rule == Rule::import) {
      writer.put_winner(device_id, w, measurement_id, w.source);
      (existing ? stats.winners_replaced : stats.winners_added) += 1;
      continue;
    }
    // Merge: only a winner backed by an ok measurement of its own file can win.
    const Measurement* behind = nullptr;
    if (w.measurement_id) {
      auto it = source_measurements.find(*w.measurement_id);
      if (it != source_measurements.end()) behind = it->second;
    }
    if (behind == nullptr || behind->status != MeasurementStatus::ok) {
      ++stats.winners_unverified;
      continue;
    }
    if (!existing) {
      writer.put_winner(device_id, w, measurement_id, WinnerSource::merged);
      ++stats.winners_added;
    } else if (!existing->verified || w.median_ms < existing->median_ms) {
      writer.put_winner(device_id, w, measurement_id, WinnerSource::merged);
      ++stats.winners_replaced;
    } else {
      ++stats.winners_kept;  // slower, or a tie: the existing winner stays
    }
  }

  // Axis rows, by the same rules as the flat ones above.
  std::unordered_map<RowId, RowId> axis_measurement_ids;
  std::unordered_map<RowId, const AxisMeasurement*> source_axis_measurements;
  for (const auto& m : snapshot.axis_measurements) {
    const auto [id, added] =
        writer.add_axis_measurement(device_for(device_ids, m.device_id, "axis measurement"), m);
    axis_measurement_ids[m.id] = id;
    source_axis_measurements[m.id] = &m;
    (added ? stats.axis_measurements_added : stats.axis_measurements_duplicate) += 1;
  }

  for (const auto& b : snapshot.axis_tuned_buckets)
    stats.axis_tuned_buckets_added +=
        writer.mark_axis_bucket(device_for(device_ids, b.device_id, "axis tuned bucket"), b, /*refresh=*/false) ? 1
                                                                                                              : 0;

  for (const auto& w : snapshot.axis_winners) {
    const RowId device_id = device_for(device_ids, w.device_id, "axis winner");
    const auto measurement_id = translate(axis_measurement_ids, w.measurement_id);
    const auto existing = writer.find_axis_winner(device_id, w.problem);
    if (rule == Rule::import) {
      writer.put_axis_winner(device_id, w, measurement_id, w.source);
      (existing ? stats.axis_winners_replaced : stats.axis_winners_added) += 1;
      continue;
    }
    const AxisMeasurement* behind = nullptr;
    if (w.measurement_id) {
      auto it = source_axis_measurements.find(*w.measurement_id);
      if (it != source_axis_measurements.end()) behind = it->second;
    }
    if (behind == nullptr || behind->status != MeasurementStatus::ok) {
      ++stats.axis_winners_unverified;
      continue;
    }
    if (!existing) {
      writer.put_axis_winner(device_id, w, measurement_id, WinnerSource::merged);
      ++stats.axis_winners_added;
    } else if (!existing->verified || w.median_ms < existing->median_ms) {
      writer.put_axis_winner(device_id, w, measurement_id, WinnerSource::merged);
      ++stats.axis_winners_replaced;
    } else {
      ++stats.axis_winners_kept;  // slower, or a tie: the existing winner stays
    }
  }

  // Bench rows have no key to replace at: every run is kept, in both rules.
  for (const auto& r : snapshot.bench_results) {
    const bool added = writer.add_bench_result(device_for(device_ids, r.device_id, "bench row"), r).second;
    (added ? stats.bench_results_added : stats.bench_results_duplicate) += 1;
  }

  for (const auto& b : snapshot.binaries) {
    const auto [added, replaced] = writer.put_binary(b, /*replace=*/rule == Rule::import);
    stats.binaries_added += added ? 1 : 0;
    stats.binaries_replaced += replaced ? 1 : 0;
  }
  transaction.commit();
  return stats;
}

bool ends_with_json(const std::filesystem::path& file) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".json";
}

// A name beside the target, so the final rename stays on one file system and is atomic:
// a crashed export leaves no half-written file under the name asked for. Unique per
// process and per call, so concurrent exports never share one.
std::filesystem::path partial_name(const std::filesystem::path& file) {
  static std::atomic<unsigned> counter{0};
  auto partial = file;
  partial += ".partial-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
  return partial;
}

// Flushes a file (or a folder's entries) to stable storage.
void sync_path(const std::filesystem::path& path, bool folder) {
  const int fd = ::open(path.c_str(), (folder ? O_DIRECTORY : 0) | O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw DbError(SQLITE_IOERR, path.string() + ": cannot open to sync (" + std::strerror(errno) + ")");
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  // Some file systems cannot sync a folder (EINVAL); the file itself was synced.
  if (rc != 0 && !(folder && (saved == EINVAL || saved == EROFS)))
    throw DbError(SQLITE_IOERR, path.string() + ": cannot sync (" + std::strerror(saved) + ")");
}

// Gives `partial` the name `file` only if no file has that name: one atomic step, so two
// exports to one name cannot both succeed and none overwrites what another wrote.
void publish_without_replacing(const std::filesystem::path& partial, const std::filesystem::path& file) {
  if (::renameat2(AT_FDCWD, partial.c_str(), AT_FDCWD, file.c_str(), RENAME_NOREPLACE) == 0) return;
  int error = errno;
  if (error == EINVAL || error == ENOSYS) {
    // The file system cannot rename without replacing: a hard link fails just as
    // atomically when the name exists.
    if (::link(partial.c_str(), file.c_str()) == 0) {
      ::unlink(partial.c_str());
      return;
    }
    error = errno;
  }
  if (error == EEXIST)
    throw InvalidArgument(file.string() + ": already exists; export writes a new file");
  throw DbError(SQLITE_IOERR, file.string() + ": cannot write (" + std::strerror(error) + ")");
}

void remove_quietly(const std::filesystem::path& file) {
  std::error_code ignored;
  std::filesystem::remove(file, ignored);
}

}  // namespace

DatabaseSnapshot read_snapshot(const Database& database, std::optional<RowId> device_id) {
  const auto& connection = DatabaseAccess::connection(database);
  // One read transaction: a consistent view even while a tuner writes.
  Transaction transaction(connection, TransactionKind::deferred);
  DatabaseSnapshot snapshot;
  std::optional<int> arch;
  if (device_id) {
    auto bind = [&](Statement& s) { s.bind(1, *device_id); };
    snapshot.devices = detail::select_devices(connection, "WHERE d.id = ?1", bind);
    if (snapshot.devices.empty())
      throw InvalidArgument(database.path().string() + ": no device with id " + std::to_string(*device_id));
    arch = snapshot.devices.front().key.arch();
    snapshot.measurements = detail::select_measurements(connection, "WHERE m.device_id = ?1", bind);
    snapshot.winners = detail::select_winners(connection, "WHERE w.device_id = ?1", bind);
    snapshot.tuned_buckets = detail::select_tuned_buckets(connection, "WHERE b.device_id = ?1", bind);
    snapshot.bench_results = detail::select_bench_results(connection, "WHERE r.device_id = ?1", bind);
    snapshot.axis_measurements = detail::select_axis_measurements(connection, "WHERE m.device_id = ?1", bind);
    snapshot.axis_winners = detail::select_axis_winners(connection, "WHERE w.device_id = ?1", bind);
    snapshot.axis_tuned_buckets = detail::select_axis_tuned_buckets(connection, "WHERE b.device_id = ?1", bind);
  } else {
    snapshot.devices = detail::select_devices(connection, "", {});
    snapshot.measurements = detail::select_measurements(connection, "", {});
    snapshot.winners = detail::select_winners(connection, "", {});
    snapshot.tuned_buckets = detail::select_tuned_buckets(connection, "", {});
    snapshot.bench_results = detail::select_bench_results(connection, "", {});
    snapshot.axis_measurements = detail::select_axis_measurements(connection, "", {});
    snapshot.axis_winners = detail::select_axis_winners(connection, "", {});
    snapshot.axis_tuned_buckets = detail::select_axis_tuned_buckets(connection, "", {});
  }
  snapshot.binaries = detail::select_binaries(connection, arch);
  transaction.commit();
  return snapshot;
}

DatabaseSnapshot load_snapshot(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw DbError(SQLITE_CANTOPEN, file.string() + ": cannot open (" + std::strerror(errno) + ")");
  std::array<char, 16> head{};
  in.read(head.data(), head.size());
  const auto got = static_cast<std::size_t>(in.gcount());
  static constexpr char kSqliteMagic[16] = "SQLite format 3";  // with its terminating NUL
  if (got == head.size() && std::memcmp(head.data(), kSqliteMagic, head.size()) == 0) {
    in.close();
    auto database = Database::open_read_only(file);
    if (!database)
      throw DbError(SQLITE_NOTADB, file.string() + ": not a reduce-tune database (no reduce-tune schema)");
    return read_snapshot(*database);
  }
  std::size_t first = 0;
  while (first < got && std::isspace(static_cast<unsigned char>(head[first]))) ++first;
  if (first < got && head[first] == '{') {
    in.clear();
    in.seekg(0);
    return read_json(in, file.string());
  }
  throw DbError(SQLITE_NOTADB, file.string() + (got == 0 ? ": not a reduce-tune database (empty file)"
                                                         : ": not a reduce-tune database or JSON export"));
}

ExportFormat export_format_for(const std::filesystem::path& file) {
  return ends_with_json(file) ? ExportFormat::json : ExportFormat::sqlite;
}

void export_database(const Database& source, const std::filesystem::path& file, ExportFormat format,
                     std::optional<RowId> device_id) {
  write_export(read_snapshot(source, device_id), file, format);
}

void write_export(const DatabaseSnapshot& snapshot, const std::filesystem::path& file, ExportFormat format) {
  std::error_code ec;
  // Checked here for an early message; publish_without_replacing is what guarantees it.
  if (std::filesystem::exists(file, ec))
    throw InvalidArgument(file.string() + ": already exists; export writes a new file");
  if (!file.parent_path().empty()) std::filesystem::create_directories(file.parent_path(), ec);
  const auto partial = partial_name(file);
  remove_quietly(partial);
  try {
    if (format == ExportFormat::json) {
      std::ofstream out(partial, std::ios::binary | std::ios::trunc);
      if (!out) throw DbError(SQLITE_CANTOPEN, file.string() + ": cannot write (" + std::strerror(errno) + ")");
      write_json(snapshot, out);
      out.flush();
      if (!out) throw DbError(SQLITE_IOERR, file.string() + ": cannot write (" + std::strerror(errno) + ")");
    } else {
      auto exported = Database::open(partial);
      import_snapshot(exported, snapshot);
      // One self-contained file: no -wal beside it, and readers need no -shm.
      DatabaseAccess::connection(exported).exec("PRAGMA journal_mode = DELETE", "cannot finish the export");
    }
    // The contents reach the disk before the name does, and the name before we return.
    sync_path(partial, false);
    publish_without_replacing(partial, file);
    const auto folder = file.parent_path().empty() ? std::filesystem::path(".") : file.parent_path();
    sync_path(folder, true);
  } catch (...) {
    remove_quietly(partial);
    remove_quietly(std::filesystem::path(partial) += "-wal");
    remove_quietly(std::filesystem::path(partial) += "-shm");
    throw;
  }
}

TransferStats import_snapshot(Database& destination, const DatabaseSnapshot& snapshot) {
  return transfer(destination, snapshot, Rule::import);
}

TransferStats merge_snapshot(Database& destination, const DatabaseSnapshot& snapshot) {
  return transfer(destination, snapshot, Rule::merge);
}

}  // namespace reduce_tune::db
