#include "kernlens/ingest/detect.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "kernlens/ingest/csv.h"
#include "kernlens/ingest/kltrace.h"
#include "kernlens/ingest/ncu_csv_common.h"
#include "kernlens/ingest/ncu_details.h"
#include "kernlens/ingest/ncu_raw.h"
#include "kernlens/ingest/ncu_summary.h"
#include "kernlens/ingest/nsys_sqlite.h"
#include "kernlens/ingest/nsys_stats.h"
#include "kernlens/ingest/pytorch_trace.h"
#include "kernlens/ingest/sqlite_db.h"
#include "kernlens/tracer/format.h"

namespace kernlens::ingest {
namespace {

constexpr std::array kFormats = {
    FormatInfo{"ncu-details-csv", "Nsight Compute details page CSV", &read_ncu_details_csv},
    FormatInfo{"ncu-summary-csv", "Nsight Compute summary CSV", &read_ncu_summary_csv},
    FormatInfo{"ncu-raw-csv", "Nsight Compute raw page CSV", &read_ncu_raw_csv, &read_ncu_raw_csv_file},
    FormatInfo{"pytorch-trace", "PyTorch profiler trace (chrome trace JSON)", &read_pytorch_trace,
               &read_pytorch_trace_file, true},
    FormatInfo{"nsys-sqlite", "Nsight Systems SQLite export", &read_nsys_sqlite, &read_nsys_sqlite_file},
    FormatInfo{"nsys-stats-csv", "Nsight Systems stats kernel summary CSV", &read_nsys_stats_csv},
    FormatInfo{"kltrace", "kernlens tracer trace (.kltrace)", &read_kltrace},
};

// A CSV page is recognised by columns its header must have. First match wins.
struct CsvSignature {
  std::string_view format_id;
  std::array<std::string_view, 2> columns;
};

// Both long pages have "Metric Name"; only the summary has "Invocations". The columns a
// reader needs beyond these are checked by the reader, which names what is missing.
constexpr std::array kCsvSignatures = {
    CsvSignature{"ncu-summary-csv", {"Invocations", "Metric Name"}},
    CsvSignature{"ncu-details-csv", {"Section Name", "Metric Name"}},
    CsvSignature{"ncu-raw-csv", {"Kernel Name", "Kernel Name"}},
};

const FormatInfo* format_by_id(std::string_view id) {
  for (const auto& f : kFormats) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

// Columns only Nsight Compute CSV pages have: a header with one of them but no
// "Kernel Name" is an ncu export missing its most important column.
constexpr std::array<std::string_view, 7> kNcuMarkerColumns = {
    "ID", "Process ID", "Host Name", "Section Name", "Metric Name", "Invocations",
    "gpu__time_duration.sum"};

struct FirstLine {
  std::vector<std::string> fields;  // copies: the scanner's views die with it
  std::int64_t line = 0;
};

// The first line that is not ncu console output or blank, parsed as CSV.
std::optional<FirstLine> first_csv_line(std::string_view bytes) {
  CsvScanner scanner(strip_bom(bytes));
  CsvRecord rec;
  if (!next_ncu_row(scanner, rec)) return std::nullopt;
  return FirstLine{{rec.fields.begin(), rec.fields.end()}, rec.line};
}

constexpr std::string_view kExpected =
    "expected an Nsight Compute CSV export (--page raw --csv, --page details --csv, or "
    "--csv --print-summary per-kernel), an nsys SQLite export, an nsys stats CSV "
    "(--report cuda_gpu_kern_sum --format csv), a PyTorch profiler trace (.json, .json.gz) or a "
    "kernlens tracer trace (.kltrace)";

// A JSON object, or an array of them (the other form of chrome trace), judged by its first
// bytes: no CSV export starts so.
bool looks_like_json(std::string_view bytes) {
  if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
  constexpr std::string_view kSpace = " \t\r\n";
  std::size_t at = bytes.find_first_not_of(kSpace);
  if (at == std::string_view::npos) return false;
  if (bytes[at] == '[') at = bytes.find_first_not_of(kSpace, at + 1);
  return at != std::string_view::npos && bytes[at] == '{';
}

}  // namespace

std::span<const FormatInfo> formats() { return kFormats; }

Detection detect_format(std::string_view bytes) {
  // An SQLite file is taken for an nsys export; the reader says which tables it lacks if not.
  if (is_sqlite_header(bytes)) return {format_by_id("nsys-sqlite"), {}};
  if (trace_format::has_magic(bytes)) return {format_by_id("kltrace"), {}};
  if (looks_like_chrome_trace(bytes)) return {format_by_id("pytorch-trace"), {}};
  if (looks_like_json(bytes)) {
    return {nullptr, "a JSON document without \"traceEvents\" near its start, not a PyTorch profiler "
                     "trace (torch.profiler's export_chrome_trace writes one)"};
  }
  std::string_view head = bytes.substr(0, 1 << 16);
  if (std::memchr(head.data(), '\0', head.size()) != nullptr) {
    return {nullptr, "a binary file, not a text export; " + std::string(kExpected)};
  }
  if (find_nsys_stats_header(bytes)) return {format_by_id("nsys-stats-csv"), {}};
  auto header_at = find_ncu_header(bytes);
  if (!header_at) {
    if (auto other = describe_other_nsys_stats(bytes)) return {nullptr, *other};
    if (auto first = first_csv_line(bytes)) {
      for (auto marker : kNcuMarkerColumns) {
        if (std::find(first->fields.begin(), first->fields.end(), marker) != first->fields.end()) {
          return {nullptr, "missing column 'Kernel Name' in the Nsight Compute CSV header", first->line};
        }
      }
    }
    return {nullptr, "no CSV header with a 'Kernel Name' column; " + std::string(kExpected)};
  }
  CsvScanner scanner(bytes.substr(header_at->offset), header_at->line);
  CsvRecord header;
  scanner.next(header);
  for (const auto& sig : kCsvSignatures) {
    bool all = std::all_of(sig.columns.begin(), sig.columns.end(), [&](std::string_view c) {
      return std::find(header.fields.begin(), header.fields.end(), c) != header.fields.end();
    });
    if (all) return {format_by_id(sig.format_id), {}};
  }
  return {nullptr, std::string(kExpected)};
}

}  // namespace kernlens::ingest
