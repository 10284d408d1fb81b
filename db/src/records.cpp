#include "reduce_tune/db/records.h"

namespace reduce_tune::db {
namespace {

// One table per enum keeps the stored spelling next to the value it stands for.
template <typename Enum, std::size_t N>
std::optional<Enum> parse_by_name(const std::pair<Enum, std::string_view> (&names)[N],
                                  std::string_view text) {
  for (const auto& [value, name] : names)
    if (name == text) return value;
  return std::nullopt;
}

template <typename Enum, std::size_t N>
std::string_view name_of(const std::pair<Enum, std::string_view> (&names)[N], Enum value) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return "?";
}

constexpr std::pair<MeasurementStatus, std::string_view> kStatusNames[] = {
    {MeasurementStatus::ok, "ok"},
    {MeasurementStatus::compile_failed, "compile_failed"},
    {MeasurementStatus::launch_failed, "launch_failed"},
    {MeasurementStatus::wrong_result, "wrong_result"},
    {MeasurementStatus::skipped, "skipped"},
};
constexpr std::pair<Determinism, std::string_view> kDeterminismNames[] = {
    {Determinism::deterministic, "deterministic"},
    {Determinism::nondeterministic, "nondeterministic"},
};
constexpr std::pair<WinnerSource, std::string_view> kSourceNames[] = {
    {WinnerSource::tuned, "tuned"},
    {WinnerSource::imported, "imported"},
    {WinnerSource::merged, "merged"},
};

}  // namespace

Timestamp now_timestamp() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
}

std::string_view to_string(MeasurementStatus status) { return name_of(kStatusNames, status); }
std::optional<MeasurementStatus> parse_measurement_status(std::string_view text) {
  return parse_by_name(kStatusNames, text);
}

std::string_view to_string(Determinism determinism) {
  return name_of(kDeterminismNames, determinism);
}
std::optional<Determinism> parse_determinism(std::string_view text) {
  return parse_by_name(kDeterminismNames, text);
}

std::string_view to_string(WinnerSource source) { return name_of(kSourceNames, source); }
std::optional<WinnerSource> parse_winner_source(std::string_view text) {
  return parse_by_name(kSourceNames, text);
}

bool is_bench_implementation(std::string_view name) {
  for (const auto implementation : kBenchImplementations)
    if (implementation == name) return true;
  return false;
}

std::optional<LayoutKind> parse_layout_kind(std::string_view text) {
  if (text == to_string(Layout{LayoutKind::flat})) return LayoutKind::flat;
  return std::nullopt;
}

namespace {
// "op<dtype>[" or "op<dtype,out_dtype>[", the start of a problem's text.
std::string problem_head(Op op, DType dtype, DType out_dtype) {
  std::string text(to_string(op));
  text += "<";
  text += to_string(dtype);
  if (out_dtype != dtype) {
    text += ",";
    text += to_string(out_dtype);
  }
  text += ">[";
  return text;
}
}  // namespace

std::string to_string(const ProblemClass& problem) {
  std::string text = problem_head(problem.op, problem.dtype, problem.out_dtype);
  text += to_string(problem.layout);
  text += "]";
  return text;
}

std::optional<AxisLayout> parse_axis_layout(std::string_view text) {
  for (const AxisLayout layout : {AxisLayout::rows, AxisLayout::columns})
    if (text == to_string(layout)) return layout;
  return std::nullopt;
}

std::string to_string(const AxisProblemClass& problem) {
  std::string text = problem_head(problem.op, problem.dtype, problem.out_dtype);
  text += to_string(problem.layout);
  text += " R 2^" + std::to_string(problem.reduced_bucket) + " x 2^" + std::to_string(problem.outputs_bucket) +
          " outputs]";
  return text;
}

AxisProblemClass AxisMeasurement::problem() const {
  return {op, dtype, out_dtype, layout, size_bucket(reduced), size_bucket(outputs)};
}

}  // namespace reduce_tune::db
