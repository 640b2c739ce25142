// libFuzzer harness: CsvScanner on any bytes, reading every record, then mixing
// peek_line/skip_line with next() as next_ncu_row does. Every call must consume input
// (else a reader looping on it hangs), and every field must be readable (ASan checks the
// views, including the unescaped copies the scanner owns).
#include "fuzz_common.h"
#include "kernlens/ingest/csv/scanner.h"

using namespace kernlens;

namespace {

std::size_t touch(const ingest::CsvRecord& rec) {
  std::size_t sum = 0;
  for (auto f : rec.fields) {
    for (char c : f) sum += static_cast<unsigned char>(c);
  }
  return sum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view bytes = fuzz::as_text(data, size);
  volatile std::size_t sink = 0;

  ingest::CsvScanner all(bytes);
  ingest::CsvRecord rec;
  std::int64_t last_line = 1;
  while (true) {
    std::size_t before = all.offset();
    if (!all.next(rec)) break;
    fuzz::check(all.offset() > before, "next() consumed nothing");
    fuzz::check(rec.line >= last_line && all.line() >= rec.line, "line numbers went back");
    fuzz::check(!rec.fields.empty(), "a record without fields");
    fuzz::check(rec.closed || all.at_end(), "an unclosed record before the end");
    last_line = rec.line;
    sink = sink + touch(rec);
  }
  fuzz::check(all.at_end(), "next() stopped before the end");

  // The input's own bytes choose between skipping a line and parsing a record.
  ingest::CsvScanner mixed(ingest::strip_bom(bytes));
  for (std::size_t step = 0; !mixed.at_end(); ++step) {
    std::string_view line = mixed.peek_line();
    fuzz::check(line.find('\n') == std::string_view::npos, "peek_line() crossed a line break");
    std::size_t before = mixed.offset();
    if (ingest::is_ncu_console_line(line) || (data[step % size] & 1)) {
      mixed.skip_line();
    } else {
      mixed.next(rec);
      sink = sink + touch(rec);
    }
    fuzz::check(mixed.offset() > before, "skip_line() or next() consumed nothing");
  }
  return 0;
}
