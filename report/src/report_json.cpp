// The JSON renderer; docs/REPORTS.md documents the schema (schema_version 1). Numbers are
// written at full precision; missing values (NaN, no measurement) are null.
#include <cmath>
#include <nlohmann/json.hpp>

#include "reduce_tune/config.h"
#include "reduce_tune/report/report_render.h"
#include "reduce_tune/report/report_text.h"

namespace reduce_tune::report {
namespace {

using Json = nlohmann::ordered_json;

Json number_or_null(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }
Json number_or_null(const std::optional<double>& value) { return value ? number_or_null(*value) : Json(nullptr); }

Json problem_fields(const db::ProblemClass& problem) {
  return Json{{"op", to_string(problem.op)},
              {"dtype", to_string(problem.dtype)},
              {"out_dtype", to_string(problem.out_dtype)},
              {"layout", to_string(problem.layout)}};
}

Json measurement_json(const DeviceKey& device, const db::Measurement& m) {
  return Json{{"measurement_id", m.id},
              {"strategy", to_string(m.config.strategy)},
              {"config", to_string(m.config)},
              {"n", m.problem.n},
              {"median_ms", number_or_null(m.median_ms)},
              {"gbps", number_or_null(m.gbps)},
              {"percent_of_peak", number_or_null(percent_of_peak(device, m.gbps))},
              {"spread", number_or_null(m.spread)},
              {"repetitions", m.repetitions}};
}

Json winner_json(const DeviceKey& device, const ReportWinner& entry) {
  const auto& w = entry.winner;
  Json json{{"determinism", to_string(w.determinism)},
            {"strategy", to_string(w.config.strategy)},
            {"config", to_string(w.config)},
            {"median_ms", number_or_null(w.median_ms)},
            {"source", to_string(w.source)},
            {"tool_version", w.tool_version},
            {"measurement", nullptr}};
  if (entry.measurement) json["measurement"] = measurement_json(device, *entry.measurement);
  return json;
}

Json bench_json(const std::optional<BenchComparison>& comparison) {
  if (!comparison) return nullptr;
  return Json{{"n", comparison->n},
              {"tuned_ms", number_or_null(comparison->tuned_ms)},
              {"default_ms", number_or_null(comparison->default_ms)},
              {"cub_ms", number_or_null(comparison->cub_ms)},
              {"classic_best_ms", number_or_null(comparison->classic_best_ms)},
              {"speedup_over_default", number_or_null(comparison->speedup_over_default())},
              {"speedup_over_cub", number_or_null(comparison->speedup_over_cub())},
              {"speedup_over_classic_best", number_or_null(comparison->speedup_over_classic_best())}};
}

Json bucket_json(const DeviceReport& device, const ProblemReport& problem, const BucketReport& bucket) {
  Json winners = Json::array();
  for (const auto& w : bucket.winners) winners.push_back(winner_json(device.key, w));
  Json by_status = Json::object();
  Json examples = Json::object();
  for (const auto& s : bucket.statuses) {
    by_status[std::string(to_string(s.status))] = s.count;
    if (!s.example_detail.empty()) examples[std::string(to_string(s.status))] = s.example_detail;
  }
  Json strategies = Json::array();
  for (const auto& m : bucket.strategy_best) strategies.push_back(measurement_json(device.key, m));
  return Json{{"bucket", bucket.bucket},
              {"min_n", bucket.bucket >= 64 ? 0 : std::uint64_t{1} << bucket.bucket},
              {"winners", std::move(winners)},
              {"candidates", Json{{"tried", bucket.candidates},
                                  {"by_status", std::move(by_status)},
                                  {"example_detail", std::move(examples)}}},
              {"strategies", std::move(strategies)},
              {"bench", bench_json(compare_with_bench(device, problem, bucket))}};
}

Json axis_winner_json(const DeviceReport& device, const AxisReport& axis, const ReportAxisWinner& entry) {
  const auto& w = entry.winner;
  const double gbps = axis_gbps(entry);
  Json json{{"op", to_string(axis.op)},
            {"dtype", to_string(axis.dtype)},
            {"out_dtype", to_string(axis.out_dtype)},
            {"layout", to_string(axis.layout)},
            {"reduced_bucket", w.problem.reduced_bucket},
            {"outputs_bucket", w.problem.outputs_bucket},
            {"config", w.config},
            {"median_ms", number_or_null(w.median_ms)},
            {"gbps", number_or_null(gbps)},
            {"percent_of_peak", number_or_null(percent_of_peak(device.key, gbps))},
            {"source", to_string(w.source)},
            {"filled", entry.filled},
            {"tool_version", w.tool_version},
            {"measurement", nullptr}};
  if (!w.grid_config.empty()) json["grid_config"] = w.grid_config;  // the class's winner on the 16-byte grid
  if (const auto& m = entry.measurement)
    json["measurement"] = Json{{"measurement_id", m->id},
                               {"reduced", m->reduced},
                               {"outputs", m->outputs},
                               {"inner", m->inner},
                               {"median_ms", number_or_null(m->median_ms)},
                               {"gbps", number_or_null(m->gbps)},
                               {"spread", number_or_null(m->spread)},
                               {"repetitions", m->repetitions}};
  return json;
}

Json device_json(const DeviceReport& device) {
  const auto& key = device.key;
  Json problems = Json::array();
  for (const auto& problem : device.problems) {
    Json json = problem_fields(problem.problem);
    Json buckets = Json::array();
    for (const auto& bucket : problem.buckets) buckets.push_back(bucket_json(device, problem, bucket));
    json["buckets"] = std::move(buckets);
    problems.push_back(std::move(json));
  }
  Json bench = Json::array();
  for (const auto& row : device.bench) {
    Json json = problem_fields(db::ProblemClass::of(row.problem));
    json["n"] = row.problem.n;
    json["implementation"] = row.implementation;
    json["median_ms"] = number_or_null(row.median_ms);
    json["gbps"] = number_or_null(row.gbps);
    json["config"] = row.config;
    json["peak_fraction"] = number_or_null(row.peak_fraction);
    bench.push_back(std::move(json));
  }
  Json json{{"index", device.index},
              {"uuid", key.uuid},
              {"name", key.name},
              {"arch", arch_label(key)},
              {"cc_major", key.cc_major},
              {"cc_minor", key.cc_minor},
              {"sm_count", key.sm_count},
              {"l2_bytes", key.l2_bytes},
              {"memory_bus_bits", key.memory_bus_bits},
              {"memory_clock_khz", key.memory_clock_khz},
              {"peak_bandwidth_gbps", number_or_null(key.peak_bandwidth_gbps())},
              {"driver_version", key.driver_version},
              {"runtime_version", key.runtime_version},
              {"problems", std::move(problems)},
              {"bench", std::move(bench)}};
  // Only when the device has axis winners, so a report without them is unchanged.
  Json axis = Json::array();
  for (const auto& a : device.axis)
    for (const auto& w : a.winners) axis.push_back(axis_winner_json(device, a, w));
  if (!axis.empty()) json["axis_winners"] = std::move(axis);
  return json;
}

}  // namespace

std::string render_json(const ReportData& data) {
  Json devices = Json::array();
  for (const auto& device : data.devices) devices.push_back(device_json(device));
  const Json report{{"schema_version", kReportJsonSchemaVersion},
                    {"generator", "reduce-tune report"},
                    {"database", data.database},
                    {"devices", std::move(devices)}};
  // Invalid UTF-8 in a stored name becomes U+FFFD rather than an exception.
  return report.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace reduce_tune::report
