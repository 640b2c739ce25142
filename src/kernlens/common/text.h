// Text read from inputs, made safe to keep and to show. One rule for bytes that are not
// UTF-8: each bad sequence becomes U+FFFD (as browsers and Python's errors="replace" do),
// where text enters kernlens, so the database and every JSON output hold valid UTF-8. And
// for terminals and Markdown: control characters shown as escapes, never sent raw (a
// kernel name could otherwise repaint the terminal or fake a line of output).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kernlens {

// `s` with every invalid UTF-8 sequence replaced by U+FFFD; nullopt when `s` is valid.
std::optional<std::string> repaired_utf8(std::string_view s);
// `s` as valid UTF-8 (repaired when it is not).
std::string valid_utf8(std::string_view s);

// `s` with its control characters as visible escapes: \n \r \t, others as \xHH (C0 and
// DEL) or \u0080..\u009f (C1). Everything else, backslashes included, unchanged.
std::string escape_controls(std::string_view s);
// The same, keeping line breaks: for whole messages of several lines.
std::string escape_controls_but_newlines(std::string_view s);

// `text` fit for a file name: every byte but ASCII letters, digits, '-', '.' and '_' becomes '_'.
std::string file_name_safe(std::string text);

}  // namespace kernlens
