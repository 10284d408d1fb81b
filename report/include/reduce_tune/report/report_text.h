// Escaping and number formatting shared by the report renderers. Every string that came
// from the database goes through the escaper of the format it is written into.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "reduce_tune/db/records.h"
#include "reduce_tune/device_key.h"
#include "reduce_tune/tensor.h"
#include "reduce_tune/types.h"

namespace reduce_tune::report {

// & < > " ' as entities: safe in HTML text and in quoted attribute values.
std::string html_escape(std::string_view text);

// One RFC 4180 field: quoted (with quotes doubled) when it holds a comma, a quote, CR or LF.
std::string csv_field(std::string_view text);
// The same for text from the database (device names, UUIDs, configs), which is not
// trusted: a cell starting with = + - @ or a tab or CR would run as a formula when the
// file is opened in a spreadsheet, so such text gets a leading apostrophe (OWASP's
// CSV-injection rule). Numbers the report formats itself go through csv_field.
std::string csv_text_field(std::string_view text);

// Text for a Markdown table cell: HTML-significant characters as entities (Markdown
// passes raw HTML through), Markdown punctuation backslash-escaped, line breaks as spaces.
std::string markdown_escape(std::string_view text);

// The shortest text that reads back as exactly `value` (for CSV and machine use); empty
// for NaN and infinities.
std::string exact_number(double value);
// `decimals` digits after the point; "-" for NaN and infinities.
std::string fixed_number(double value, int decimals);
// Four significant digits without an exponent ("0.01234", "12.35", "1235").
std::string time_ms(double value);
// "1.23x".
std::string speedup_text(double value);
// "2^20".
std::string bucket_label(int bucket);
// 1024 -> "1K", 3 << 20 -> "3M", 1000 -> "1000" (binary units; exact multiples only).
std::string size_label(std::uint64_t n);
// First line of `text`, cut to `max_chars` with an ellipsis.
std::string first_line(std::string_view text, std::size_t max_chars);

// "sum f32 → f64" (the layout added when it is not flat).
std::string problem_title(const db::ProblemClass& problem);
// "sum f32 → f32, rows" (an axis heat map's op, types and layout).
std::string axis_title(Op op, DType dtype, DType out_dtype, AxisLayout layout);
// "[outputs, R], R contiguous" / "[outputs / inner, R, inner], inner contiguous".
std::string axis_layout_shape(AxisLayout layout);
// "sm_90".
std::string arch_label(const DeviceKey& device);
// 12080 -> "12.8".
std::string cuda_version_label(int version);
// "50 MiB".
std::string bytes_label(std::int64_t bytes);

}  // namespace reduce_tune::report
