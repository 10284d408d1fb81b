// The HTML renderer: one self-contained page (inline CSS and SVG, no scripts, fonts or
// links) that opens offline. Every string from the database is HTML-escaped.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <sstream>

#include "reduce_tune/config.h"
#include "reduce_tune/report/report_render.h"
#include "reduce_tune/report/report_tables.h"
#include "reduce_tune/report/report_text.h"

namespace reduce_tune::report {
namespace {

constexpr const char* kStyle = R"(
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px 32px; color: #1d1d1f;
       background: #fff; max-width: 1500px; }
h1 { font-size: 26px; margin-bottom: 4px; }
h2 { font-size: 22px; margin-top: 36px; border-bottom: 2px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 18px; margin-top: 28px; }
h4 { font-size: 15px; margin: 18px 0 6px; }
p.note { color: #555; font-size: 13px; margin: 4px 0 10px; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0 12px; }
th, td { border: 1px solid #d0d0d0; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
td code { overflow-wrap: break-word; }
ul.failures { font-size: 13px; margin: 4px 0 12px; }
ul.failures code { white-space: pre-wrap; }
figure { margin: 8px 0 16px; }
figcaption { font-size: 13px; color: #555; }
svg.chart { background: #fff; border: 1px solid #e3e3e3; }
svg.chart text { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 12px; fill: #333; }
svg.chart .grid { stroke: #e8e8e8; stroke-width: 1; }
svg.chart .axis { stroke: #888; stroke-width: 1; }
svg.chart .peak { stroke: #b00020; stroke-width: 1.2; stroke-dasharray: 6 4; }
svg.chart text.peak-label { fill: #b00020; }
svg.chart .series { fill: none; stroke-width: 2; stroke-linejoin: round; }
svg.chart .series.cub { stroke-dasharray: 7 4; stroke-width: 2.5; }
)";

// Added to kStyle only when the report has axis heat maps, so reports without them keep
// their bytes.
constexpr const char* kAxisStyle = R"(table.heat td, table.heat th { text-align: right; min-width: 48px; }
table.heat td.untuned { color: #999; text-align: center; }
table.heat td.failed { color: #b00020; text-align: center; }
)";

// One color per strategy in lineage order (a categorical palette), CUB in black.
constexpr const char* kStrategyColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
constexpr const char* kCubColor = "#111111";

struct Point {
  double log2_n;
  double gbps;
  std::string tooltip;
};

struct Series {
  std::string name;   // strategy name or "cub"
  std::string label;  // legend text
  std::string color;
  bool cub = false;
  std::vector<Point> points;  // ascending n
};

std::vector<Series> chart_series(const DeviceReport& device, const ProblemReport& problem) {
  std::vector<Series> series;
  std::size_t color = 0;
  for (const auto strategy : kAllStrategies) {
    Series s{std::string(to_string(strategy)), std::string(to_string(strategy)),
             kStrategyColors[color++ % std::size(kStrategyColors)], false, {}};
    for (const auto& bucket : problem.buckets)
      for (const auto& m : bucket.strategy_best)
        if (m.config.strategy == strategy && std::isfinite(m.gbps) && m.problem.n > 0)
          s.points.push_back({std::log2(static_cast<double>(m.problem.n)), m.gbps,
                              s.name + ", n = " + std::to_string(m.problem.n) + ": " + fixed_number(m.gbps, 1) +
                                  " GB/s, " + time_ms(m.median_ms) + " ms\n" + to_string(m.config)});
    if (!s.points.empty()) series.push_back(std::move(s));
  }
  Series cub{"cub", "CUB (bench)", kCubColor, true, {}};
  for (const auto& row : bench_rows(device, problem.problem, kBenchCub))
    if (std::isfinite(row.gbps) && row.problem.n > 0)
      cub.points.push_back({std::log2(static_cast<double>(row.problem.n)), row.gbps,
                            "cub::DeviceReduce, n = " + std::to_string(row.problem.n) + ": " +
                                fixed_number(row.gbps, 1) + " GB/s, " + time_ms(row.median_ms) + " ms"});
  if (!cub.points.empty()) series.push_back(std::move(cub));
  return series;
}

// A round number (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten), at least `value`.
double nice_ceiling(double value) {
  if (!(value > 0)) return 1;
  const double power = std::pow(10.0, std::floor(std::log10(value)));
  for (const double step : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0})
    if (step * power >= value * (1 - 1e-12)) return step * power;
  return 10 * power;
}

std::string coord(double value) { return fixed_number(value, 1); }

void write_chart(std::ostream& out, const DeviceReport& device, const ProblemReport& problem) {
  const auto series = chart_series(device, problem);
  if (series.empty()) {
    out << "<p class=\"note\">No verified measurements to chart.</p>\n";
    return;
  }
  constexpr double kWidth = 980, kHeight = 420;
  constexpr double kLeft = 70, kRight = 190, kTop = 24, kBottom = 56;
  constexpr double kPlotWidth = kWidth - kLeft - kRight, kPlotHeight = kHeight - kTop - kBottom;

  double x_min = INFINITY, x_max = -INFINITY, y_data = 0;
  for (const auto& s : series)
    for (const auto& p : s.points) {
      x_min = std::min(x_min, p.log2_n);
      x_max = std::max(x_max, p.log2_n);
      y_data = std::max(y_data, p.gbps);
    }
  x_min = std::floor(x_min) - 0.5;
  x_max = std::ceil(x_max) + 0.5;
  const double peak = device.key.peak_bandwidth_gbps();
  // The peak is in range so the curves read against it, unless it dwarfs the data
  // (tiny sizes only), where it would flatten every line.
  const bool show_peak = peak > 0 && peak <= 4 * std::max(y_data, 1e-9);
  const double y_max = nice_ceiling(std::max(y_data, show_peak ? peak : 0.0) * 1.05);
  auto x_of = [&](double log2_n) { return kLeft + (log2_n - x_min) / (x_max - x_min) * kPlotWidth; };
  auto y_of = [&](double gbps) { return kTop + kPlotHeight - gbps / y_max * kPlotHeight; };

  const std::string title = "GB/s against n for " + problem_title(problem.problem) + " on " + device.key.name;
  out << "<figure>\n<svg class=\"chart\" role=\"img\" width=\"" << kWidth << "\" height=\"" << kHeight
      << "\" viewBox=\"0 0 " << kWidth << ' ' << kHeight << "\">\n<title>" << html_escape(title) << "</title>\n";

  // Horizontal grid and y labels: 4 to 10 steps of 1, 2 or 5 times a power of ten.
  const double power = std::pow(10.0, std::floor(std::log10(y_max)));
  double y_step = power / 10;
  for (const double divisor : {1.0, 2.0, 5.0})
    if (y_max / (power / divisor) >= 4 - 1e-9) {
      y_step = power / divisor;
      break;
    }
  const int y_decimals = y_step >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(y_step)));
  for (double y = 0; y <= y_max * (1 + 1e-9); y += y_step) {
    out << "<line class=\"grid\" x1=\"" << kLeft << "\" x2=\"" << kLeft + kPlotWidth << "\" y1=\"" << coord(y_of(y))
        << "\" y2=\"" << coord(y_of(y)) << "\"/>\n";
    out << "<text x=\"" << kLeft - 8 << "\" y=\"" << coord(y_of(y) + 4) << "\" text-anchor=\"end\">"
        << fixed_number(y, y_decimals) << "</text>\n";
  }
  // Vertical grid and x labels at powers of two, thinned to at most 12 labels.
  const int first = static_cast<int>(std::ceil(x_min)), last = static_cast<int>(std::floor(x_max));
  const int stride = std::max(1, (last - first + 12) / 12);
  for (int k = first; k <= last; ++k) {
    if (k % stride != 0) continue;
    out << "<line class=\"grid\" x1=\"" << coord(x_of(k)) << "\" x2=\"" << coord(x_of(k)) << "\" y1=\"" << kTop
        << "\" y2=\"" << kTop + kPlotHeight << "\"/>\n";
    out << "<text x=\"" << coord(x_of(k)) << "\" y=\"" << kTop + kPlotHeight + 18 << "\" text-anchor=\"middle\">"
        << (k >= 0 && k < 64 ? size_label(std::uint64_t{1} << k) : "2^" + std::to_string(k)) << "</text>\n";
  }
  out << "<line class=\"axis\" x1=\"" << kLeft << "\" x2=\"" << kLeft << "\" y1=\"" << kTop << "\" y2=\""
      << kTop + kPlotHeight << "\"/>\n"
      << "<line class=\"axis\" x1=\"" << kLeft << "\" x2=\"" << kLeft + kPlotWidth << "\" y1=\"" << kTop + kPlotHeight
      << "\" y2=\"" << kTop + kPlotHeight << "\"/>\n"
      << "<text x=\"" << kLeft + kPlotWidth / 2 << "\" y=\"" << kHeight - 12
      << "\" text-anchor=\"middle\">n (elements, log2 scale)</text>\n"
      << "<text x=\"18\" y=\"" << kTop + kPlotHeight / 2 << "\" text-anchor=\"middle\" transform=\"rotate(-90 18 "
      << kTop + kPlotHeight / 2 << ")\">GB/s</text>\n";
  if (show_peak)
    out << "<line class=\"peak\" x1=\"" << kLeft << "\" x2=\"" << kLeft + kPlotWidth << "\" y1=\"" << coord(y_of(peak))
        << "\" y2=\"" << coord(y_of(peak)) << "\"/>\n<text class=\"peak-label\" x=\"" << kLeft + 6 << "\" y=\""
        << coord(y_of(peak) - 5) << "\">peak " << fixed_number(peak, 0) << " GB/s</text>\n";

  for (const auto& s : series) {
    out << "<g data-strategy=\"" << html_escape(s.name) << "\">\n<polyline class=\"series" << (s.cub ? " cub" : "")
        << "\" stroke=\"" << s.color << "\" points=\"";
    for (std::size_t i = 0; i < s.points.size(); ++i)
      out << (i ? " " : "") << coord(x_of(s.points[i].log2_n)) << ',' << coord(y_of(s.points[i].gbps));
    out << "\"/>\n";
    for (const auto& p : s.points)
      out << "<circle cx=\"" << coord(x_of(p.log2_n)) << "\" cy=\"" << coord(y_of(p.gbps)) << "\" r=\"3\" fill=\""
          << s.color << "\" data-gbps=\"" << exact_number(p.gbps) << "\"><title>" << html_escape(p.tooltip)
          << "</title></circle>\n";
    out << "</g>\n";
  }

  // Legend, right of the plot, in lineage order.
  double y = kTop + 8;
  const double x = kLeft + kPlotWidth + 18;
  for (const auto& s : series) {
    out << "<line class=\"series" << (s.cub ? " cub" : "") << "\" stroke=\"" << s.color << "\" x1=\"" << x
        << "\" x2=\"" << x + 24 << "\" y1=\"" << y << "\" y2=\"" << y << "\"/>\n<text x=\"" << x + 30 << "\" y=\""
        << y + 4 << "\">" << html_escape(s.label) << "</text>\n";
    y += 20;
  }
  if (show_peak)
    out << "<line class=\"peak\" x1=\"" << x << "\" x2=\"" << x + 24 << "\" y1=\"" << y << "\" y2=\"" << y
        << "\"/>\n<text x=\"" << x + 30 << "\" y=\"" << y + 4 << "\">peak bandwidth</text>\n";
  out << "</svg>\n<figcaption>Best verified GB/s of each strategy per size bucket"
      << (series.back().cub ? ", and cub::DeviceReduce from the bench data" : "")
      << ". Hover a point for its time and config.</figcaption>\n</figure>\n";
}

// Long config texts may wrap after a comma, not inside a field name.
std::string with_break_points(const std::string& escaped) {
  std::string out;
  for (const char c : escaped) {
    out += c;
    if (c == ',') out += "<wbr>";
  }
  return out;
}

void write_table(std::ostream& out, const Table& table) {
  out << "<table>\n<thead><tr>";
  for (std::size_t i = 0; i < table.header.size(); ++i)
    out << (table.numeric_columns[i] ? "<th class=\"num\">" : "<th>") << html_escape(table.header[i]) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out << "<tr>";
    for (const auto& cell : row) {
      out << (cell.numeric ? "<td class=\"num\">" : "<td>");
      if (cell.code) out << "<code>" << with_break_points(html_escape(cell.text)) << "</code>";
      else out << html_escape(cell.text);
      out << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";
}

// A sequential blue scale: 0 is near white, 1 dark blue.
std::string heat_colour(double fraction) {
  struct Stop {
    double at, r, g, b;
  };
  constexpr Stop kStops[] = {{0.0, 247, 251, 255}, {0.5, 107, 174, 214}, {1.0, 8, 48, 107}};
  fraction = std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0);
  std::size_t i = 0;
  while (i + 2 < std::size(kStops) && fraction > kStops[i + 1].at) ++i;
  const Stop& lo = kStops[i];
  const Stop& hi = kStops[i + 1];
  const double t = (fraction - lo.at) / (hi.at - lo.at);
  auto channel = [t](double a, double b) { return static_cast<int>(std::lround(a + (b - a) * t)); };
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "#%02x%02x%02x", channel(lo.r, hi.r), channel(lo.g, hi.g), channel(lo.b, hi.b));
  return buffer;
}

// The GB/s a heat map's colours are scaled to: the device's peak bandwidth when known,
// else the map's fastest cell.
double heat_scale(const DeviceReport& device, const AxisReport& axis) {
  const double peak = device.key.peak_bandwidth_gbps();
  if (peak > 0) return peak;
  double top = 0;
  for (const auto& w : axis.winners)
    if (std::isfinite(axis_gbps(w))) top = std::max(top, axis_gbps(w));
  return top;
}

std::string axis_tooltip(const DeviceReport& device, const AxisReport& axis, const ReportAxisWinner& w) {
  const double gbps = axis_gbps(w);
  std::string tip = "R " + bucket_label(w.winner.problem.reduced_bucket) + ", outputs " +
                    bucket_label(w.winner.problem.outputs_bucket) + ": " + fixed_number(gbps, 1) + " GB/s";
  const double percent = percent_of_peak(device.key, gbps);
  if (std::isfinite(percent)) tip += " (" + fixed_number(percent, 1) + " % of peak)";
  tip += ", " + time_ms(w.winner.median_ms) + " ms";
  if (const auto& m = w.measurement) {
    tip += " at R = " + std::to_string(m->reduced) + ", outputs = " + std::to_string(m->outputs);
    if (axis.layout == AxisLayout::columns) tip += ", inner = " + std::to_string(m->inner);
  }
  if (w.filled) tip += "; filled in between tuned classes";
  return tip + "\n" + w.winner.config;
}

void write_heat_map(std::ostream& out, const DeviceReport& device, const AxisReport& axis) {
  const auto range = axis_grid_range(axis);
  const double scale = heat_scale(device, axis);
  const double peak = device.key.peak_bandwidth_gbps();
  out << "<p class=\"note\">" << html_escape(axis_heat_note(axis)) << " Colour: GB/s "
      << (peak > 0 ? "against the peak bandwidth (" + fixed_number(peak, 1) + " GB/s)"
                   : std::string("against the fastest cell (the peak bandwidth is unknown)"))
      << ", darker is faster. Hover a cell for its config.</p>\n";
  out << "<table class=\"heat\" data-layout=\"" << to_string(axis.layout) << "\">\n<thead><tr><th>"
      << html_escape("R ↓ outputs →") << "</th>";
  for (const int o : range.outputs_buckets) out << "<th class=\"num\">" << bucket_label(o) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const int r : range.reduced_buckets) {
    out << "<tr><th>" << bucket_label(r) << "</th>";
    for (const int o : range.outputs_buckets) {
      const auto text = axis_heat_cell_text(axis, r, o);
      const auto* w = find_axis_winner(axis, r, o);
      if (w == nullptr) {
        const bool failed = axis_class_without_winner(axis, r, o);
        out << "<td class=\"" << (failed ? "failed" : "untuned") << "\" data-reduced-bucket=\"" << r
            << "\" data-outputs-bucket=\"" << o << "\"";
        if (failed)
          out << " title=\"R " << bucket_label(r) << ", outputs " << bucket_label(o)
              << ": tuned, no candidate passed\"";
        out << ">" << text << "</td>";
        continue;
      }
      const double gbps = axis_gbps(*w);
      const double fraction = scale > 0 && std::isfinite(gbps) ? gbps / scale : 0.0;
      out << "<td class=\"num\" style=\"background:" << heat_colour(fraction)
          << (fraction > 0.55 ? ";color:#fff" : "") << "\" data-reduced-bucket=\"" << r << "\" data-outputs-bucket=\""
          << o << "\" data-gbps=\"" << exact_number(gbps) << "\" title=\"" << html_escape(axis_tooltip(device, axis, *w))
          << "\">" << html_escape(text) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody>\n</table>\n";
}

void write_axis(std::ostream& out, const DeviceReport& device, const AxisReport& axis) {
  out << "<h3>Axis: " << html_escape(axis_title(axis.op, axis.dtype, axis.out_dtype, axis.layout)) << "</h3>\n";
  out << "<h4>GB/s heat map</h4>\n";
  write_heat_map(out, device, axis);
  out << "<h4>Axis winners</h4>\n";
  write_table(out, axis_winners_table(device, axis));
}

void write_problem(std::ostream& out, const DeviceReport& device, const ProblemReport& problem) {
  out << "<h3>" << html_escape(problem_title(problem.problem)) << "</h3>\n";
  write_chart(out, device, problem);
  out << "<h4>Winners</h4>\n";
  write_table(out, winners_table(device, problem));
  if (has_bench_rows(device, problem.problem)) {
    out << "<h4>Bench: tuned vs CUB</h4>\n<p class=\"note\">" << html_escape(bench_note(device, problem.problem))
        << "</p>\n";
    write_table(out, bench_table(device, problem.problem));
  }
  out << "<h4>Candidates</h4>\n";
  write_table(out, candidates_table(problem));
  const auto failures = failure_examples(problem);
  if (!failures.empty()) {
    out << "<ul class=\"failures\">\n";
    for (const auto& f : failures) {
      out << "<li><b>" << to_string(f.status) << "</b>: " << f.count;
      if (!f.detail.empty())
        out << ", e.g. at " << bucket_label(f.bucket) << ": <code>" << html_escape(first_line(f.detail, 240))
            << "</code>";
      out << "</li>\n";
    }
    out << "</ul>\n";
  }
  out << "<h4>Best time per strategy</h4>\n<p class=\"note\">Milliseconds (GB/s in parentheses) of each strategy's "
         "fastest verified config; columns follow the classic lineage.</p>\n";
  write_table(out, strategy_table(problem));
}

}  // namespace

std::string render_html(const ReportData& data) {
  std::ostringstream out;
  std::string devices;
  bool has_axis = false;
  for (const auto& d : data.devices) {
    devices += (devices.empty() ? "" : ", ") + d.key.name;
    has_axis = has_axis || !d.axis.empty();
  }
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>reduce-tune report" << (devices.empty() ? "" : ": " + html_escape(devices)) << "</title>\n"
      << "<style>" << kStyle << (has_axis ? kAxisStyle : "") << "</style>\n</head>\n<body>\n"
      << "<h1>reduce-tune report</h1>\n<p class=\"note\">Database: <code>" << html_escape(data.database)
      << "</code></p>\n";
  if (data.devices.empty()) out << "<p>No tuned devices match.</p>\n";
  for (const auto& device : data.devices) {
    out << "<section>\n<h2>Device " << device.index << ": " << html_escape(device.key.name) << "</h2>\n";
    write_table(out, device_table(device));
    if (device.problems.empty() && device.axis.empty()) out << "<p>Nothing tuned for this device matches.</p>\n";
    if (device.bench.empty() && !device.problems.empty())
      out << "<p class=\"note\">No bench data stored: speedups over the default config and CUB appear once "
             "<code>reduce-tune bench</code> has run.</p>\n";
    for (const auto& problem : device.problems) write_problem(out, device, problem);
    for (const auto& axis : device.axis) write_axis(out, device, axis);
    out << "</section>\n";
  }
  out << "</body>\n</html>\n";
  return out.str();
}

}  // namespace reduce_tune::report
