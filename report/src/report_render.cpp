// Format names and dispatch, and the Markdown renderer.
#include "reduce_tune/report/report_render.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "reduce_tune/report/report_tables.h"
#include "reduce_tune/report/report_text.h"

namespace reduce_tune::report {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

void write_markdown_table(std::ostream& out, const Table& table) {
  out << '|';
  for (const auto& h : table.header) out << ' ' << markdown_escape(h) << " |";
  out << "\n|";
  for (std::size_t i = 0; i < table.header.size(); ++i) out << (table.numeric_columns[i] ? " ---: |" : " --- |");
  out << '\n';
  for (const auto& row : table.rows) {
    out << '|';
    for (const auto& cell : row) {
      // Code spans keep the text literal; the canonical config text has no backticks or pipes.
      // Text that does (an axis config is stored unparsed) is escaped as plain text instead.
      if (cell.code && cell.text.find_first_of("`|\r\n") == std::string::npos) out << " `" << cell.text << "` |";
      else out << ' ' << markdown_escape(cell.text) << " |";
    }
    out << '\n';
  }
  out << '\n';
}

}  // namespace

std::string_view to_string(ReportFormat format) {
  switch (format) {
    case ReportFormat::markdown: return "md";
    case ReportFormat::csv: return "csv";
    case ReportFormat::json: return "json";
    case ReportFormat::html: return "html";
  }
  return "?";
}

std::optional<ReportFormat> parse_report_format(std::string_view text) {
  if (text == "markdown") return ReportFormat::markdown;
  for (const auto format : kAllReportFormats)
    if (text == to_string(format)) return format;
  return std::nullopt;
}

std::optional<ReportFormat> report_format_for_file(std::string_view file_name) {
  const auto dot = file_name.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string extension = lower(file_name.substr(dot + 1));
  if (extension == "htm") return ReportFormat::html;
  return parse_report_format(extension);
}

std::string render_markdown(const ReportData& data) {
  std::ostringstream out;
  out << "# reduce-tune report\n\n"
      << "Database: " << markdown_escape(data.database) << "\n\n";
  if (data.devices.empty()) out << "No tuned devices match.\n";
  for (const auto& device : data.devices) {
    out << "## Device " << device.index << ": " << markdown_escape(device.key.name) << "\n\n";
    write_markdown_table(out, device_table(device));
    if (device.problems.empty() && device.axis.empty()) out << "Nothing tuned for this device matches.\n\n";
    if (device.bench.empty() && !device.problems.empty())
      out << "No bench data stored: speedups over the default config and CUB appear once "
             "`reduce-tune bench` has run.\n\n";
    for (const auto& problem : device.problems) {
      out << "### " << markdown_escape(problem_title(problem.problem)) << "\n\n";
      out << "#### Winners\n\n";
      write_markdown_table(out, winners_table(device, problem));
      if (has_bench_rows(device, problem.problem)) {
        out << "#### Bench: tuned vs CUB\n\n" << markdown_escape(bench_note(device, problem.problem)) << "\n\n";
        write_markdown_table(out, bench_table(device, problem.problem));
      }
      out << "#### Candidates\n\n";
      write_markdown_table(out, candidates_table(problem));
      const auto failures = failure_examples(problem);
      if (!failures.empty()) {
        out << "Why candidates failed:\n\n";
        for (const auto& f : failures) {
          out << "- " << markdown_escape(to_string(f.status)) << ": " << f.count;
          if (!f.detail.empty())
            out << ", e.g. at " << bucket_label(f.bucket) << ": " << markdown_escape(first_line(f.detail, 160));
          out << '\n';
        }
        out << '\n';
      }
      out << "#### Best time per strategy\n\n"
             "Milliseconds (GB/s in parentheses) of each strategy's fastest verified config; "
             "columns follow the classic lineage.\n\n";
      write_markdown_table(out, strategy_table(problem));
    }
    for (const auto& axis : device.axis) {
      out << "### Axis: " << markdown_escape(axis_title(axis.op, axis.dtype, axis.out_dtype, axis.layout)) << "\n\n";
      out << "#### GB/s heat map\n\n" << markdown_escape(axis_heat_note(axis)) << "\n\n";
      write_markdown_table(out, axis_heat_table(axis));
      out << "#### Axis winners\n\n";
      write_markdown_table(out, axis_winners_table(device, axis));
    }
  }
  return out.str();
}

std::string render_report(const ReportData& data, ReportFormat format) {
  switch (format) {
    case ReportFormat::markdown: return render_markdown(data);
    case ReportFormat::csv: return render_csv(data);
    case ReportFormat::json: return render_json(data);
    case ReportFormat::html: return render_html(data);
  }
  return render_markdown(data);
}

}  // namespace reduce_tune::report
