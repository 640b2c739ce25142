// Splits a Chrome trace JSON document ({"traceEvents": [...], "other": ...}) into its parts
// without parsing them: each element of the "traceEvents" array, and every other top-level
// member. The first of a reader's two steps (find the parts cheaply, then decode only the
// parts and fields used), as in Perfetto's json_trace_tokenizer.
//
// Why not one parser over the whole document: a trace runs to gigabytes, and a full-document
// parser keeps an index of every token (simdjson: 4 bytes per token, about the size of the
// file again, and no document over 4 GB). Parts are small, so each is parsed on its own,
// and the file can be fed one window at a time: memory stays bounded whatever its size.
//
// The tokenizer checks the document's outer structure (an object whose "traceEvents" is an
// array) and that strings and brackets balance inside each part; the reader's parser checks
// the rest of the parts it decodes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kernlens/common/error.h"

namespace kernlens::ingest {

struct TracePart {
  enum class Kind : std::uint8_t { kEvent, kMember };
  Kind kind = Kind::kEvent;
  std::string_view key;    // kMember: the member's key as written (escapes kept)
  std::string_view value;  // the event, or the member's value, as written
  std::uint64_t offset = 0;  // of value[0] in the file
  std::int64_t line = 0;     // of value[0], 1-based
};

class TraceTokenizer {
 public:
  explicit TraceTokenizer(std::string path) : path_(std::move(path)) {}

  // Starts on the next window of the file: the bytes from offset() on. `last`: the window
  // ends the file.
  void set_window(std::string_view window, bool last);

  // The next whole part of the window; std::nullopt when the window holds no more (the rest
  // of it, from consumed() on, is a part cut short by its end, to be passed again at the
  // start of the next window). Errors: malformed structure, or a file that ends early.
  Result<std::optional<TracePart>> next();

  // Bytes of the current window that are done with.
  std::size_t consumed() const { return pos_; }
  // File offset and line of the first byte not yet consumed.
  std::uint64_t offset() const { return base_ + pos_; }
  std::int64_t line() const { return line_; }
  // Whether the document had a "traceEvents" array (checked once the file ends).
  bool saw_trace_events() const { return saw_events_; }

 private:
  enum class State : std::uint8_t {
    kStart, kFirstKey, kKey, kAfterMember, kFirstEvent, kEvent, kAfterEvent, kDone
  };
  // Skips whitespace, counting lines; false when the window ends first.
  bool skip_space();
  Result<std::optional<TracePart>> member();
  Result<std::optional<TracePart>> event();
  // The end of the JSON value at `at` (one past it), or npos when the window cuts it.
  std::size_t value_end(std::size_t at, std::int64_t& lines) const;
  std::size_t string_end(std::size_t at) const;  // `at` is just past the opening quote
  // Expects one of two punctuation bytes; which one it was, or an error.
  Result<char> punctuation(char a, char b, const char* after);
  // A part cut by the end of the window: wait for more, or fail at the end of the file.
  Result<std::optional<TracePart>> cut(const char* what) const;
  Error error_at(std::size_t at, std::int64_t line, const std::string& message) const;  // window_[at]
  Error error_here(const std::string& message) const;

  std::string path_;
  std::string_view window_;
  bool last_ = false;
  std::size_t pos_ = 0;
  std::uint64_t base_ = 0;  // file offset of window_[0]
  std::int64_t line_ = 1;
  State state_ = State::kStart;
  bool saw_events_ = false;
};

}  // namespace kernlens::ingest
