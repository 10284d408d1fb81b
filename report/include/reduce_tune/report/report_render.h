// Turns the report model into text: Markdown for reading and pasting into issues, CSV for
// spreadsheets, JSON for programs (docs/REPORTS.md has the CSV columns and the JSON
// schema) and one self-contained HTML file with SVG charts. Renderers return strings;
// they never print.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "reduce_tune/report/report.h"

namespace reduce_tune::report {

enum class ReportFormat { markdown, csv, json, html };
inline constexpr ReportFormat kAllReportFormats[] = {ReportFormat::markdown, ReportFormat::csv, ReportFormat::json,
                                                     ReportFormat::html};

// "md", "csv", "json", "html" (what --format takes; "markdown" is accepted too).
std::string_view to_string(ReportFormat format);
std::optional<ReportFormat> parse_report_format(std::string_view text);
// The format a file name implies by its extension (.md, .csv, .json, .html/.htm).
std::optional<ReportFormat> report_format_for_file(std::string_view file_name);

// The JSON layout version written as "schema_version".
inline constexpr int kReportJsonSchemaVersion = 1;

std::string render_markdown(const ReportData& data);
std::string render_csv(const ReportData& data);
std::string render_json(const ReportData& data);
std::string render_html(const ReportData& data);
std::string render_report(const ReportData& data, ReportFormat format);

}  // namespace reduce_tune::report
