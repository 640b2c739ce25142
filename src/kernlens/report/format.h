// Small formatting helpers shared by the writers.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kernlens::report {

// 1234567 -> "1.235 ms"; 850 -> "850 ns". Four significant digits, for people.
std::string human_duration_ns(double ns);
// A count with an SI prefix and a unit, four significant digits: (7.56e7, "B") -> "75.56 MB",
// (1.2e12, "FLOP/s") -> "1.200 TFLOP/s". Decimal prefixes, as datasheets quote bandwidth.
std::string human_si(double v, std::string_view unit);
// The two helpers below show text from inputs, and so escape its control characters
// (common/text.h): a name holding ESC or a newline cannot repaint a terminal or fake a line.
// Wraps `text` at `width` columns for a caller that has printed `indent` columns of the first
// line already; the lines after it start with `indent` spaces.
std::string wrap(std::string_view text, std::size_t width, std::size_t indent);
// 0.1234 -> "12.3%".
std::string human_percent(double fraction);
// Cuts `s` (control characters escaped) to `width` characters (counting UTF-8 code points) with a trailing "…"; 0 = no limit.
std::string ellipsize(std::string_view s, std::size_t width);
// The characters `s` shows: UTF-8 code points.
std::size_t display_width(std::string_view s);
// An NVTX path ("step/decode/layer0/attn") as label lines of at most `width` characters that
// never lose its leaf range: the whole path when it fits, else its first and last ranges with
// "…" between them, else "first/…/" on a line of its own and the leaf wrapped over the next
// lines (after "::", "/", "_", "." or " " where it can).
std::vector<std::string> lane_label_lines(std::string_view path, std::size_t width);
// `s` safe as HTML text and as a quoted attribute value: & < > " ' become entities. Every
// string an HTML report shows (kernel names are full of < > &) goes through this one function.
std::string html_escape(std::string_view s);
// A JSON number that prints integral values without a fraction ("12128", not "12128.0").
nlohmann::ordered_json json_number(double v);

}  // namespace kernlens::report
