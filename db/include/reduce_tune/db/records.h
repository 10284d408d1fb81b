// The rows of the tuning database as plain values: what the tuner hands to the database
// and what the runtime reads back. Nothing here knows about SQLite.
#pragma once

#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "reduce_tune/config.h"
#include "reduce_tune/device_key.h"
#include "reduce_tune/tensor.h"
#include "reduce_tune/types.h"

namespace reduce_tune::db {

// A row id inside one database file. Ids are local to a file: export, import and merge
// translate them, so never store one outside the database it came from.
using RowId = std::int64_t;

// Microseconds since the Unix epoch (UTC); stored as an integer so that measurement
// identity (which includes the timestamp) compares exactly across export and import.
using Timestamp = std::chrono::sys_time<std::chrono::microseconds>;
Timestamp now_timestamp();

// What one candidate came to. A failed candidate is data, not an exception, so the
// tuner stores it with its reason in Measurement::detail.
enum class MeasurementStatus : std::uint8_t { ok, compile_failed, launch_failed, wrong_result, skipped };
std::string_view to_string(MeasurementStatus status);
std::optional<MeasurementStatus> parse_measurement_status(std::string_view text);

// Whether a config gives bit-identical results run to run; the tuner keeps one winner
// per class and the runtime picks deterministic ones unless told otherwise.
enum class Determinism : std::uint8_t { deterministic, nondeterministic };
std::string_view to_string(Determinism determinism);
std::optional<Determinism> parse_determinism(std::string_view text);

// How a winner came into this file: tuned here (or carried unchanged by export/import),
// taken from another file by `db merge`, or imported from a file that did not say.
enum class WinnerSource : std::uint8_t { tuned, imported, merged };
std::string_view to_string(WinnerSource source);
std::optional<WinnerSource> parse_winner_source(std::string_view text);

// A problem without its size: what winners and tuned buckets are keyed by (together
// with a size bucket).
struct ProblemClass {
  Op op = Op::sum;
  DType dtype = DType::f32;
  DType out_dtype = DType::f32;
  Layout layout;

  static ProblemClass of(const ProblemKey& key) {
    return {key.op, key.dtype, key.out_dtype, key.layout};
  }
  ProblemKey with_size(std::uint64_t n) const { return {op, dtype, out_dtype, layout, n}; }
  auto tie() const { return std::tie(op, dtype, out_dtype, layout); }
  friend bool operator==(const ProblemClass& a, const ProblemClass& b) { return a.tie() == b.tie(); }
  friend bool operator<(const ProblemClass& a, const ProblemClass& b) { return a.tie() < b.tie(); }
};
std::string to_string(const ProblemClass& problem);  // "sum<f32>[flat]"

// The layout's kind as stored ("flat"); Layout has no parser in core.
std::optional<LayoutKind> parse_layout_kind(std::string_view text);

struct DeviceRecord {
  RowId id = 0;
  DeviceKey key;
  friend bool operator==(const DeviceRecord&, const DeviceRecord&) = default;
};

// One candidate tried. Times are NaN where nothing was measured (a failed candidate);
// NaN is stored as NULL and read back as NaN.
struct Measurement {
  RowId id = 0;         // set by the database; ignored when storing
  RowId device_id = 0;  // set by the database; ignored when storing
  ProblemKey problem;
  ReduceConfig config;
  MeasurementStatus status = MeasurementStatus::ok;
  double median_ms = 0;  // median time of the whole reduction
  double spread = 0;     // relative spread of the repetitions, as the timer reports it
  int repetitions = 0;
  double gbps = 0;       // input bytes / median time
  std::string tool_version;
  Timestamp created_at{};
  std::string detail;    // why a candidate failed or was skipped; empty when ok
};

// The chosen config for (device, problem class, size bucket, determinism class).
struct Winner {
  RowId id = 0;
  RowId device_id = 0;
  ProblemClass problem;
  int bucket = 0;  // reduce_tune::size_bucket(n)
  Determinism determinism = Determinism::deterministic;
  ReduceConfig config;
  double median_ms = 0;
  // The measurement that chose it; empty when that measurement is not in this file.
  std::optional<RowId> measurement_id;
  WinnerSource source = WinnerSource::tuned;
  std::string tool_version;
  Timestamp created_at{};
};

// A (device, problem class, bucket) the tuner finished; a rerun skips these.
struct TunedBucket {
  RowId device_id = 0;
  ProblemClass problem;
  int bucket = 0;
  std::string tool_version;
  Timestamp created_at{};
  friend bool operator==(const TunedBucket&, const TunedBucket&) = default;
};

// A compiled kernel. The key is the runtime's hash of source, options, NVRTC version
// and arch; the database treats it as opaque.
struct CompiledBinary {
  std::string key;
  int arch = 0;  // 90 for sm_90
  std::string nvrtc_version;
  std::vector<std::byte> cubin;
  Timestamp created_at{};
  friend bool operator==(const CompiledBinary&, const CompiledBinary&) = default;
};

// A winner of a bucket, named by the measurement that won (its config and time are that
// measurement's, so the two cannot disagree).
struct BucketWinner {
  Determinism determinism = Determinism::deterministic;
  std::size_t measurement_index = 0;  // into BucketResult::measurements
};

// Everything the tuner learned about one size bucket; stored in one transaction.
struct BucketResult {
  DeviceKey device;
  ProblemClass problem;
  int bucket = 0;
  std::vector<Measurement> measurements;  // every n must fall in `bucket`
  std::vector<BucketWinner> winners;      // at most one per determinism class
  std::string tool_version;
  Timestamp created_at{};
};

struct StoredBucket {
  RowId device_id = 0;
  std::vector<RowId> measurement_ids;  // parallel to BucketResult::measurements
};

// The implementations `reduce-tune bench` times side by side, as stored in
// bench_results.implementation: the runtime's tuned call, the runtime's built-in default
// config, cub::DeviceReduce, and the best classic kernel (the multi_element strategy).
inline constexpr std::string_view kBenchTuned = "tuned";
inline constexpr std::string_view kBenchDefault = "default";
inline constexpr std::string_view kBenchCub = "cub";
inline constexpr std::string_view kBenchClassicBest = "classic_best";
inline constexpr std::string_view kBenchImplementations[] = {kBenchTuned, kBenchDefault, kBenchCub,
                                                             kBenchClassicBest};
bool is_bench_implementation(std::string_view name);

// One row of a bench run: one implementation timed on one problem, with the same method
// as the tuner's measurements. Times are NaN where nothing was measured (stored as NULL).
struct BenchResult {
  RowId id = 0;          // set by the database; ignored when storing
  RowId device_id = 0;   // set by the database; ignored when storing
  ProblemKey problem;
  std::string implementation;  // one of kBenchImplementations
  std::string config;          // canonical config text, or the CUB call's name
  double median_ms = 0;
  double spread = 0;           // relative spread of the repetitions
  int repetitions = 0;
  double gbps = 0;             // input bytes / median time
  double peak_fraction = 0;    // gbps / peak_gbps
  double peak_gbps = 0;        // the peak bandwidth the bench compared against
  std::string run_id;          // names one bench run; rows of a run share it
  std::string tool_version;
  Timestamp created_at{};
};

// Axis reductions (issue 12). An axis problem class is tuned per log2 bucket of the
// reduced extent R and of the output count: bucket b holds [2^b, 2^(b+1)), as
// size_bucket() says. Only the rows and columns layouts are tuned (flat problems use the
// flat tables; general strided views always take the built-in choice). Configs are the
// engine's canonical axis config text ("rows:block=256,group=4,vec=4,split=none,rows=4");
// the database stores it as text and never parses it. Axis kernels are deterministic,
// so there is one winner per class.
struct AxisProblemClass {
  Op op = Op::sum;
  DType dtype = DType::f32;
  DType out_dtype = DType::f32;
  AxisLayout layout = AxisLayout::rows;  // rows or columns
  int reduced_bucket = 0;                // size_bucket(R)
  int outputs_bucket = 0;                // size_bucket(outputs)
  auto tie() const { return std::tie(op, dtype, out_dtype, layout, reduced_bucket, outputs_bucket); }
  friend bool operator==(const AxisProblemClass& a, const AxisProblemClass& b) { return a.tie() == b.tie(); }
  friend bool operator<(const AxisProblemClass& a, const AxisProblemClass& b) { return a.tie() < b.tie(); }
};
std::string to_string(const AxisProblemClass& problem);  // "sum<f32>[rows R 2^10 x 2^14 outputs]"
// "rows" / "columns" as stored; nothing else parses.
std::optional<AxisLayout> parse_axis_layout(std::string_view text);

// One axis candidate tried on one shape: rows are [outputs, R] (R innermost, contiguous);
// columns are [outputs / inner, R, inner] (inner contiguous), C-contiguous in both.
struct AxisMeasurement {
  RowId id = 0;         // set by the database; ignored when storing
  RowId device_id = 0;  // set by the database; ignored when storing
  Op op = Op::sum;
  DType dtype = DType::f32;
  DType out_dtype = DType::f32;
  AxisLayout layout = AxisLayout::rows;
  std::uint64_t reduced = 0;  // R
  std::uint64_t outputs = 0;
  std::uint64_t inner = 1;    // 1 for rows
  std::string config;         // canonical axis config text
  MeasurementStatus status = MeasurementStatus::ok;
  double median_ms = 0;       // NaN where nothing was measured (stored as NULL)
  double spread = 0;
  int repetitions = 0;
  double gbps = 0;            // input bytes / median time
  std::string tool_version;
  Timestamp created_at{};
  std::string detail;         // why a candidate failed or was skipped; empty when ok
  AxisProblemClass problem() const;  // the class its shape falls in
};

// The chosen axis config for (device, axis problem class).
struct AxisWinner {
  RowId id = 0;
  RowId device_id = 0;
  AxisProblemClass problem;
  std::string config;
  double median_ms = 0;  // at the measurement that chose it
  double gbps = 0;
  std::optional<RowId> measurement_id;  // empty when that measurement is not in this file
  WinnerSource source = WinnerSource::tuned;
  std::string tool_version;
  Timestamp created_at{};
  // The config for the class's shapes on the 16-byte grid (axis_on_16byte_grid), where
  // the tuner found none that held against the built-in choice both on and off it; empty:
  // `config` serves every shape.
  std::string grid_config;
};

// An axis class the tuner finished; a rerun skips it.
struct AxisTunedBucket {
  RowId device_id = 0;
  AxisProblemClass problem;
  std::string tool_version;
  Timestamp created_at{};
};

// Everything the tuner learned about one axis class; stored in one transaction with its
// "done" mark. Every measurement's shape must fall in `problem`'s buckets, with its op
// and types.
struct AxisBucketResult {
  DeviceKey device;
  AxisProblemClass problem;
  std::vector<AxisMeasurement> measurements;
  std::optional<std::size_t> winner;  // index into measurements (status ok), if any
  // The winner on the 16-byte grid where it differs (AxisWinner::grid_config), likewise.
  std::optional<std::size_t> grid_winner;
  // Where not empty, the config text stored for the winner (the grid's winner) in place
  // of its measurement's: the tuner's mark for the built-in choice made at each shape,
  // whose measurement at the class's corner stands for it.
  std::string winner_config;
  std::string grid_winner_config;
  std::string tool_version;
  Timestamp created_at{};
  // Whether the class counts as tuned (a rerun skips it, and the runtime lends its
  // winner to the neighbouring classes). False for a class the tuner filled in between
  // tuned ones by timing only their winners and the built-in choice: its winner serves
  // the class itself, and a later search of the class replaces it.
  bool mark_tuned = true;
};

struct DbCounts {
  std::int64_t devices = 0;
  std::int64_t configs = 0;
  std::int64_t measurements = 0;
  std::int64_t winners = 0;
  std::int64_t tuned_buckets = 0;
  std::int64_t binaries = 0;
  std::int64_t binary_bytes = 0;
  std::int64_t bench_results = 0;
  std::int64_t axis_measurements = 0;
  std::int64_t axis_winners = 0;
  std::int64_t axis_tuned_buckets = 0;
  friend bool operator==(const DbCounts&, const DbCounts&) = default;
};

}  // namespace reduce_tune::db
