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
#include <vector>

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

  // Reading the events of a window on several threads: each thread reads a copy of the
  // tokenizer from its own cut (TraceEventCuts) to the next.
  // Whether the tokenizer is inside "traceEvents" (its next part is an event or the end).
  bool in_events() const;
  // Reads on from window[pos], the '{' of an event, its line counted from 1 there.
  void resume_event_at(std::size_t pos);
  // next() returns nothing at an event that starts at window[limit] or later, and, with
  // `array_end`, once "traceEvents" ends; stop_at(npos, false) to read everything again.
  void stop_at(std::size_t limit, bool array_end);
  // Whether it stopped at the event at window[limit]: the cut there was an event's start.
  bool stopped_at(std::size_t limit) const;
  void shift_lines(std::int64_t by) { line_ += by; }

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
  std::size_t limit_ = std::string_view::npos;
  bool stop_at_array_end_ = false;
};

// Where to cut the events of a window (text starting at an event's '{' or before it, inside
// "traceEvents") into up to `parts` parts of about equal size, none smaller than
// `min_bytes`: the offsets of the events parts 1.. start with, one at a time as they are
// needed (working out all of a large window's cuts at once would touch its pages all over,
// and the kernel maps a large folio of the file at each). A cut is the '{' after the first
// '}', ',' and '{' in a row (spaces between) past the share's end: an event's start, unless
// that text is inside a string or an event's nested array. A reader checks each cut (the
// part before it must stop there: TraceTokenizer::stopped_at) and reads on from where that
// part stopped when one is wrong.
class TraceEventCuts {
 public:
  TraceEventCuts(std::string_view text, std::size_t parts, std::size_t min_bytes);
  // The next cut, or npos when the rest is one part.
  std::size_t next();

 private:
  std::string_view text_;
  std::size_t parts_, min_bytes_, target_;
  std::size_t k_ = 1;     // the cut next() looks for
  std::size_t from_ = 0;  // the start of the part before
};

}  // namespace kernlens::ingest
