// The columns of every table, in schema order, written once. rows.cpp builds its SQL
// statements from these lists and json_format.cpp names its fields after them (the JSON
// name of a config_id column is "config", the config's text; binaries keep a JSON shape
// of their own). Code that binds or reads a row goes through the values in this order.
//
// The schema itself is defined by the migration steps in schema.cpp, which never change:
// a new column or table is a new step, and goes here too. The Columns tests in
// tests/db/migration_test.cpp check that a new database has exactly these tables and
// columns, in this order.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

namespace reduce_tune::db::detail {

using ColumnList = std::span<const std::string_view>;

template <typename... Names>
constexpr std::array<std::string_view, sizeof...(Names)> column_list(Names... names) {
  return {std::string_view(names)...};
}

// The lists one after the other.
template <std::size_t... N>
constexpr std::array<std::string_view, (N + ...)> join(const std::array<std::string_view, N>&... parts) {
  std::array<std::string_view, (N + ...)> joined{};
  std::size_t next = 0;
  for (ColumnList part : {ColumnList(parts)...})
    for (std::string_view name : part) joined[next++] = name;
  return joined;
}

// A problem class; every table keyed by one holds these.
inline constexpr auto kProblemColumns =
    column_list("op", "dtype", "out_dtype", "layout", "layout_outer", "layout_inner");

inline constexpr auto kDeviceKey = column_list("uuid");
inline constexpr auto kDeviceColumns =
    column_list("id", "uuid", "name", "cc_major", "cc_minor", "sm_count", "l2_bytes", "memory_bus_bits",
                "memory_clock_khz", "driver_version", "runtime_version");

inline constexpr auto kConfigKey = column_list("text");
inline constexpr auto kConfigColumns = column_list("id", "text", "hash");

inline constexpr auto kMeasurementColumns =
    join(column_list("id", "device_id"), kProblemColumns,
         column_list("n", "config_id", "status", "median_ms", "spread", "repetitions", "gbps", "tool_version",
                     "created_at_us", "detail"));
// A measurement's identity (its UNIQUE constraint): storing it twice adds nothing.
inline constexpr auto kMeasurementIdentity =
    join(column_list("device_id"), kProblemColumns, column_list("n", "config_id", "created_at_us", "tool_version"));

// One winner per key (the upsert replaces the rest of the row).
inline constexpr auto kWinnerKey =
    join(column_list("device_id"), kProblemColumns, column_list("bucket", "determinism"));
inline constexpr auto kWinnerColumns =
    join(column_list("id"), kWinnerKey,
         column_list("config_id", "median_ms", "measurement_id", "source", "tool_version", "created_at_us"));

// One mark per key.
inline constexpr auto kTunedBucketKey = join(column_list("device_id"), kProblemColumns, column_list("bucket"));
inline constexpr auto kTunedBucketColumns = join(kTunedBucketKey, column_list("tool_version", "created_at_us"));

inline constexpr auto kBinaryKey = column_list("key");
inline constexpr auto kBinaryColumns = join(kBinaryKey, column_list("arch", "nvrtc_version", "cubin", "created_at_us"));

inline constexpr auto kBenchResultColumns =
    join(column_list("id", "device_id"), kProblemColumns,
         column_list("n", "implementation", "config", "median_ms", "spread", "repetitions", "gbps", "peak_fraction",
                     "peak_gbps", "run_id", "tool_version", "created_at_us"));
// A bench row's identity (its UNIQUE constraint): merging a run twice adds nothing.
inline constexpr auto kBenchResultIdentity =
    join(column_list("device_id"), kProblemColumns, column_list("n", "implementation", "run_id", "created_at_us"));

// Axis reductions (schema version 4). An axis problem class: op, types, layout and the
// log2 buckets of the reduced extent and of the output count; a measurement holds its
// shape instead of the buckets.
inline constexpr auto kAxisProblemColumns = column_list("op", "dtype", "out_dtype", "layout");
inline constexpr auto kAxisClassColumns = join(kAxisProblemColumns, column_list("reduced_bucket", "outputs_bucket"));

// Schema version 5 stores an axis measurement's config and tool version as ids into these
// lookup tables; they are read (and exported) as their texts, under "config" and
// "tool_version".
inline constexpr auto kTextKey = column_list("text");
inline constexpr auto kTextColumns = column_list("id", "text");

inline constexpr auto kAxisMeasurementColumns =
    join(column_list("id", "device_id"), kAxisProblemColumns,
         column_list("reduced", "outputs", "inner", "config_id", "status", "median_ms", "spread", "repetitions",
                     "gbps", "tool_version_id", "created_at_us", "detail"));
// An axis measurement's identity (its UNIQUE constraint): storing it twice adds nothing.
inline constexpr auto kAxisMeasurementIdentity =
    join(column_list("device_id"), kAxisProblemColumns,
         column_list("reduced", "outputs", "inner", "config_id", "created_at_us", "tool_version_id"));

// One axis winner per (device, class).
inline constexpr auto kAxisWinnerKey = join(column_list("device_id"), kAxisClassColumns);
inline constexpr auto kAxisWinnerColumns =
    join(column_list("id"), kAxisWinnerKey,
         column_list("config", "median_ms", "gbps", "measurement_id", "source", "tool_version", "created_at_us",
                     "grid_config"));

inline constexpr auto kAxisTunedBucketKey = kAxisWinnerKey;
inline constexpr auto kAxisTunedBucketColumns = join(kAxisTunedBucketKey, column_list("tool_version", "created_at_us"));

struct TableColumns {
  std::string_view table;
  ColumnList columns;
};

// Every table of the current schema.
inline constexpr TableColumns kTables[] = {
    {"devices", kDeviceColumns},
    {"configs", kConfigColumns},
    {"measurements", kMeasurementColumns},
    {"winners", kWinnerColumns},
    {"tuned_buckets", kTunedBucketColumns},
    {"binaries", kBinaryColumns},
    {"bench_results", kBenchResultColumns},
    {"axis_measurements", kAxisMeasurementColumns},
    {"axis_winners", kAxisWinnerColumns},
    {"axis_tuned_buckets", kAxisTunedBucketColumns},
    {"axis_configs", kTextColumns},
    {"tool_versions", kTextColumns},
};

// The keys and identities above, each the column list of a UNIQUE constraint or primary
// key of its table (checked by the same test).
inline constexpr TableColumns kUniqueKeys[] = {
    {"devices", kDeviceKey},
    {"configs", kConfigKey},
    {"measurements", kMeasurementIdentity},
    {"winners", kWinnerKey},
    {"tuned_buckets", kTunedBucketKey},
    {"binaries", kBinaryKey},
    {"bench_results", kBenchResultIdentity},
    {"axis_measurements", kAxisMeasurementIdentity},
    {"axis_winners", kAxisWinnerKey},
    {"axis_tuned_buckets", kAxisTunedBucketKey},
    {"axis_configs", kTextKey},
    {"tool_versions", kTextKey},
};

}  // namespace reduce_tune::db::detail
