// A fast CSV record scanner over a byte range (RFC 4180 quoting, LF or CRLF, ragged rows).
//
// Written by hand rather than taken from a library: the readers need byte-range input, the
// line where each record starts (for FILE:LINE errors), records of varying width, a clear
// signal when the data ends inside a record (a truncated file), the ability to skip foreign
// lines (ncu's ==PROF== progress) — and speed: an Nsight Compute raw page has ~600 short
// fields per row. The scan classifies 64 bytes at a time with SIMD compares, tracks quoted
// regions with a prefix XOR (simdjson's technique), and visits only field separators and
// line ends (with AVX2 or AVX-512 and a carry-less multiply where the CPU has them, chosen
// at run time).
// Fields are views into the input; only fields with doubled quotes are copied.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernlens::ingest {

struct CsvRecord {
  std::vector<std::string_view> fields;
  std::int64_t line = 0;  // line on which the record starts, 1-based
  bool closed = true;     // false when the data ended inside a quoted field
};

class CsvScanner {
 public:
  // A record keeps at most this many fields (16 bytes each; ncu's widest pages have a few
  // thousand): the fields after them are counted, not kept, so that a line of millions of
  // commas costs no more memory than this. Such a row is wider than any header, an error.
  static constexpr std::size_t kMaxFields = std::size_t{1} << 16;

  // `first_line` is the line number of data[0] within the file.
  explicit CsvScanner(std::string_view data, std::int64_t first_line = 1);

  // Reads the next record into `rec` (its views stay valid until the next call).
  // Returns false when no data is left.
  bool next(CsvRecord& rec);

  bool at_end() const { return pos_ >= data_.size(); }
  std::int64_t line() const { return line_; }
  std::size_t offset() const { return pos_; }
  // The first byte of the next line (0 at the end), to test for foreign lines cheaply.
  char peek_byte() const { return pos_ < data_.size() ? data_[pos_] : '\0'; }
  // The next line's text without its line break, not consumed.
  std::string_view peek_line() const;
  // Consumes the next line without parsing it.
  void skip_line();

  // From now on only the fields at these indices (ascending) get their text; the others
  // are counted, and whole 64-byte blocks without a selected field are skipped by their
  // separator count. rec.fields still has one entry per field, but unselected entries hold
  // no meaningful value. An empty list selects every field again.
  void select_fields(std::vector<std::size_t> indices);

 private:
  template <class Isa>
  bool scan(CsvRecord& rec);
  bool next_baseline(CsvRecord& rec);
  bool next_avx2(CsvRecord& rec);    // x86-64 with AVX2 and PCLMUL, chosen at run time
  bool next_avx512(CsvRecord& rec);  // ... and with AVX-512BW
  std::string_view field_text(std::size_t begin, std::size_t end, bool ends_line);
  std::string_view unescape(std::string_view raw);

  std::string_view data_;
  std::size_t pos_ = 0;
  std::int64_t line_;
  std::vector<std::size_t> selected_;  // empty: all fields
  std::deque<std::string> owned_;  // unescaped copies; a deque keeps addresses stable
  std::size_t owned_used_ = 0;     // those in use by the current record
};

// For a record the data ended inside a quoted field (rec.closed false), read by `scanner`:
// why it is an error, when a quote opened in it took more than its own line (a stray '"'
// made the rows after it one field: they would be lost). nullopt when the record breaks
// off within its own line, as the last row of a file cut short does.
std::optional<std::string> unclosed_quote(const CsvRecord& rec, const CsvScanner& scanner);

// Skips a UTF-8 byte order mark.
std::string_view strip_bom(std::string_view data);

// True for Nsight Compute's own console lines ("==PROF== ...", "==WARNING== ...").
bool is_ncu_console_line(std::string_view line);

}  // namespace kernlens::ingest
