#include "reduce_tune/report/report_text.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>

#include "reduce_tune/types.h"

namespace reduce_tune::report {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_text_field(std::string_view text) {
  if (!text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos) {
    std::string guarded = "'";
    guarded.append(text);
    return csv_field(guarded);
  }
  return csv_field(text);
}

std::string markdown_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\r': break;
      case '\n': out += ' '; break;
      case '\\': case '`': case '*': case '_': case '[': case ']': case '|': case '#':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

std::string exact_number(double value) {
  if (!std::isfinite(value)) return "";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string fixed_number(double value, int decimals) {
  if (!std::isfinite(value)) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string time_ms(double value) {
  if (!std::isfinite(value)) return "-";
  if (value == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
  const int decimals = std::clamp(3 - magnitude, 0, 6);
  return fixed_number(value, decimals);
}

std::string speedup_text(double value) { return fixed_number(value, 2) + "x"; }

std::string bucket_label(int bucket) { return "2^" + std::to_string(bucket); }

std::string size_label(std::uint64_t n) {
  static constexpr const char* kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
  std::size_t unit = 0;
  while (n >= 1024 && n % 1024 == 0 && unit + 1 < std::size(kUnits)) {
    n /= 1024;
    ++unit;
  }
  return std::to_string(n) + kUnits[unit];
}

std::string first_line(std::string_view text, std::size_t max_chars) {
  const auto end = text.find_first_of("\r\n");
  std::string_view line = text.substr(0, end);
  if (line.size() <= max_chars && end == std::string_view::npos) return std::string(line);
  if (line.size() > max_chars) line = line.substr(0, max_chars);
  return std::string(line) + "…";
}

std::string problem_title(const db::ProblemClass& problem) {
  std::string title = std::string(to_string(problem.op)) + " " + std::string(to_string(problem.dtype)) + " → " +
                      std::string(to_string(problem.out_dtype));
  if (problem.layout != Layout{}) title += " (" + to_string(problem.layout) + ")";
  return title;
}

std::string axis_title(Op op, DType dtype, DType out_dtype, AxisLayout layout) {
  return std::string(to_string(op)) + " " + std::string(to_string(dtype)) + " → " + std::string(to_string(out_dtype)) +
         ", " + to_string(layout);
}

std::string axis_layout_shape(AxisLayout layout) {
  switch (layout) {
    case AxisLayout::rows: return "[outputs, R], R contiguous";
    case AxisLayout::columns: return "[outputs / inner, R, inner], inner contiguous";
    case AxisLayout::flat: return "flat";
    case AxisLayout::general: return "general strides";
  }
  return "?";
}

std::string arch_label(const DeviceKey& device) { return "sm_" + std::to_string(device.arch()); }

std::string cuda_version_label(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string bytes_label(std::int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return std::to_string(bytes >> 10) + " KiB";
  if (bytes >= (1 << 20)) return fixed_number(static_cast<double>(bytes) / (1 << 20), 1) + " MiB";
  return std::to_string(bytes) + " B";
}

}  // namespace reduce_tune::report
