// Reading and writing single rows, shared by Database (store_bucket, queries) and the
// transfer code (export, import, merge). Callers own the transaction.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "columns.h"
#include "reduce_tune/db/records.h"
#include "sqlite_handle.h"

namespace reduce_tune::db::detail {

std::int64_t to_db_time(Timestamp time);
Timestamp from_db_time(std::int64_t micros);

// Prepared statements for writing rows, prepared on first use and reused for every row
// of one transaction.
class RowWriter {
 public:
  explicit RowWriter(const Connection& connection) : connection_(connection) {}

  // Inserts or refreshes the device with this UUID.
  RowId upsert_device(const DeviceKey& device);
  // Inserts the device unless its UUID is present; second: whether it was inserted.
  std::pair<RowId, bool> add_device_if_absent(const DeviceKey& device);

  RowId config_id(const ReduceConfig& config);

  // The id of a text in a lookup table of schema version 5 (an axis config, a tool
  // version), inserted if new.
  enum class TextTable { axis_configs, tool_versions };
  RowId text_id(TextTable table, const std::string& text);

  // Inserts the measurement unless one with the same identity exists; returns its id
  // either way and whether it was inserted.
  std::pair<RowId, bool> add_measurement(RowId device_id, const Measurement& measurement);

  // Writes a winner at its key (device, problem class, bucket, determinism), replacing
  // the one there. winner.device_id and winner.measurement_id are ignored: the ids given
  // here are this file's.
  void put_winner(RowId device_id, const Winner& winner, std::optional<RowId> measurement_id,
                  WinnerSource source);

  // The winner at a key, with whether an ok measurement stands behind it.
  struct ExistingWinner {
    RowId id = 0;
    double median_ms = 0;
    bool verified = false;
  };
  std::optional<ExistingWinner> find_winner(RowId device_id, const ProblemClass& problem, int bucket,
                                            Determinism determinism);

  // Marks a bucket tuned; `refresh` updates the provenance of an existing mark. Returns
  // whether the mark is new.
  bool mark_bucket(RowId device_id, const TunedBucket& bucket, bool refresh);

  // Inserts or (with `replace`) replaces by key; returns {inserted, replaced}.
  std::pair<bool, bool> put_binary(const CompiledBinary& binary, bool replace);

  // Axis rows (schema version 4; a measurement's config and tool version are ids since 5),
  // as their flat counterparts above: a measurement is inserted unless one with the same
  // identity exists; a winner is written at its key (device, axis class), replacing the
  // one there; a mark is added (or refreshed).
  std::pair<RowId, bool> add_axis_measurement(RowId device_id, const AxisMeasurement& measurement);
  void put_axis_winner(RowId device_id, const AxisWinner& winner, std::optional<RowId> measurement_id,
                       WinnerSource source);
  std::optional<ExistingWinner> find_axis_winner(RowId device_id, const AxisProblemClass& problem);
  bool mark_axis_bucket(RowId device_id, const AxisTunedBucket& bucket, bool refresh);

  // Inserts the bench row unless one with the same identity (device, problem, n,
  // implementation, run id, timestamp) exists; returns its id either way and whether it
  // was inserted. Throws InvalidArgument for a row check_bench_result refuses.
  std::pair<RowId, bool> add_bench_result(RowId device_id, const BenchResult& row);

 private:
  Statement& prepared(std::optional<Statement>& slot, std::string_view sql);

  const Connection& connection_;
  std::map<std::string, RowId> config_ids_, axis_config_ids_, tool_version_ids_;
  std::optional<Statement> find_axis_config_, insert_axis_config_, find_tool_version_, insert_tool_version_;
  std::optional<Statement> upsert_device_, find_device_, insert_device_, find_config_,
      insert_config_, insert_measurement_, find_measurement_, put_winner_, find_winner_,
      mark_bucket_, refresh_bucket_, find_binary_, put_binary_, insert_bench_, find_bench_, insert_axis_measurement_,
      find_axis_measurement_, put_axis_winner_, find_axis_winner_, mark_axis_bucket_, refresh_axis_bucket_;
};

// Queries return rows in id order. `where` is appended to the SELECT and names the
// columns through the aliases d (devices), m (measurements), w (winners), b (tuned
// buckets); `bind` binds its parameters.
using Binder = std::function<void(Statement&)>;
std::vector<DeviceRecord> select_devices(const Connection& connection, std::string_view where,
                                         const Binder& bind);
std::vector<Measurement> select_measurements(const Connection& connection, std::string_view where,
                                             const Binder& bind);
std::vector<Winner> select_winners(const Connection& connection, std::string_view where,
                                   const Binder& bind);
std::vector<TunedBucket> select_tuned_buckets(const Connection& connection, std::string_view where,
                                              const Binder& bind);
// Alias r (bench_results); ordered oldest first (created_at_us, then id).
std::vector<BenchResult> select_bench_results(const Connection& connection, std::string_view where,
                                              const Binder& bind);
// Axis rows, under the same aliases as their flat counterparts: m (axis_measurements,
// by id), w (axis_winners, by device id and id), b (axis_tuned_buckets, by key).
std::vector<AxisMeasurement> select_axis_measurements(const Connection& connection, std::string_view where,
                                                      const Binder& bind);
std::vector<AxisWinner> select_axis_winners(const Connection& connection, std::string_view where,
                                            const Binder& bind);
std::vector<AxisTunedBucket> select_axis_tuned_buckets(const Connection& connection, std::string_view where,
                                                       const Binder& bind);
// Binaries of one arch, or all when arch is empty.
std::vector<CompiledBinary> select_binaries(const Connection& connection, std::optional<int> arch);
std::optional<CompiledBinary> select_binary(const Connection& connection, std::string_view key);

// The config text a bench row is stored with: the canonical ReduceConfig text for our
// kernels (whatever form of it the caller gave), the name as given for CUB. Throws
// InvalidArgument for an unknown implementation, an empty config or run id, or a config
// of ours that does not parse.
std::string checked_bench_config(const BenchResult& row);

// Binds the problem columns (kProblemColumns) from parameter `first` on.
void bind_problem(Statement& statement, int first, const ProblemClass& problem);

// Binds the axis problem columns (kAxisProblemColumns: op, types, layout; not the
// buckets) from parameter `first` on.
void bind_axis_problem(Statement& statement, int first, const AxisProblemClass& problem);

// SQL text from column lists, for statements and WHERE clauses: "a.x, a.y" (with
// `alias` empty: "x, y"), and "a.x = ?first AND a.y = ?first+1".
std::string sql_columns(std::string_view alias, ColumnList columns);
std::string sql_params_equal(std::string_view alias, ColumnList columns, int first);

}  // namespace reduce_tune::db::detail
