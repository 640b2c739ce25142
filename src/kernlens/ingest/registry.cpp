#include "kernlens/ingest/registry.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "kernlens/common/sqlite_db.h"
#include "kernlens/format/kltrace.h"
#include "kernlens/ingest/kltrace/reader.h"
#include "kernlens/ingest/ncu/details.h"
#include "kernlens/ingest/ncu/page.h"
#include "kernlens/ingest/ncu/raw.h"
#include "kernlens/ingest/ncu/summary.h"
#include "kernlens/ingest/nsys/sqlite.h"
#include "kernlens/ingest/nsys/stats.h"
#include "kernlens/ingest/pytorch/trace.h"

namespace kernlens::ingest {
namespace {

using model::InputFormat;

constexpr std::string_view kNcuExports =
    "an Nsight Compute CSV export (--page raw --csv, --page details --csv, or --csv --print-summary per-kernel)";

// In detection order: the binary and JSON formats by their first bytes, then the text ones.
// Of those, an nsys stats report comes before the ncu pages (nsys reports other than the
// kernel summary may list a "Kernel Name" column), and the ncu pages go from the most
// particular header to the least.
constexpr std::array kFormats = {
    FormatEntry{InputFormat::kNsysSqlite, FormatFamily::kNsys, "Nsight Systems SQLite export", "an nsys SQLite export",
                "nsys export --type sqlite R.nsys-rep", false, &is_sqlite_header, nullptr, &read_nsys_sqlite, &read_nsys_sqlite_file},
    FormatEntry{InputFormat::kKltrace, FormatFamily::kKltrace, "kernlens tracer trace (.kltrace)",
                "a kernlens tracer trace (.kltrace)",
                "kernlens profile --discovery tracer (discovery/kernlens-PID.kltrace)", false, &trace_format::has_magic, nullptr, &read_kltrace},
    FormatEntry{InputFormat::kPytorchTrace, FormatFamily::kPytorch, "PyTorch profiler trace (chrome trace JSON)",
                "a PyTorch profiler trace (.json, .json.gz)",
                "torch.profiler's export_chrome_trace (.json or .json.gz)", false, &looks_like_chrome_trace, &json_near_miss,
                &read_pytorch_trace, &read_pytorch_trace_file, true},
    FormatEntry{InputFormat::kNsysStatsCsv, FormatFamily::kNsys, "Nsight Systems stats kernel summary CSV",
                "an nsys stats CSV (--report cuda_gpu_kern_sum --format csv)",
                "nsys stats --report cuda_gpu_kern_sum --format csv --output - R.nsys-rep", true, &is_nsys_stats_csv,
                &other_nsys_stats, &read_nsys_stats_csv},
    FormatEntry{InputFormat::kNcuSummaryCsv, FormatFamily::kNcu, "Nsight Compute summary CSV", kNcuExports,
                "ncu --import R.ncu-rep --csv --print-summary per-kernel", true,
                &is_ncu_summary_csv, nullptr, &read_ncu_summary_csv},
    FormatEntry{InputFormat::kNcuDetailsCsv, FormatFamily::kNcu, "Nsight Compute details page CSV", kNcuExports,
                "ncu --import R.ncu-rep --page details --csv", true, &is_ncu_details_csv, nullptr, &read_ncu_details_csv},
    FormatEntry{InputFormat::kNcuRawCsv, FormatFamily::kNcu, "Nsight Compute raw page CSV", kNcuExports,
                "ncu --import R.ncu-rep --page raw --csv", true,
                &is_ncu_raw_csv, &ncu_near_miss, &read_ncu_raw_csv, &read_ncu_raw_csv_file},
};

bool looks_binary(std::string_view bytes) {
  std::string_view head = bytes.substr(0, 1 << 16);
  return std::memchr(head.data(), '\0', head.size()) != nullptr;
}

const FormatEntry* first_detecting(std::string_view bytes, bool text) {
  for (const auto& f : kFormats) {
    if (f.text == text && f.detect(bytes)) return &f;
  }
  return nullptr;
}

// What the first entry of that kind that knows the bytes says of them.
std::optional<Detection> first_near_miss(std::string_view bytes, bool text) {
  for (const auto& f : kFormats) {
    if (f.text != text || !f.near_miss) continue;
    if (auto miss = f.near_miss(bytes)) {
      return Detection{nullptr, miss->list_formats ? miss->why + "; " + expected_formats() : miss->why, miss->line};
    }
  }
  return std::nullopt;
}

// The entries family by family, in detection order within a family.
std::vector<const FormatEntry*> by_family() {
  std::vector<const FormatEntry*> entries;
  for (const auto& f : kFormats) entries.push_back(&f);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const FormatEntry* a, const FormatEntry* b) { return a->family < b->family; });
  return entries;
}

}  // namespace

std::span<const FormatEntry> formats() { return kFormats; }

const FormatEntry* find_format(model::InputFormat id) {
  for (const auto& f : kFormats) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

std::string formats_help() {
  std::string text;
  for (const FormatEntry* f : by_family()) {
    text += "  ";
    text += f->description;
    text += ": ";
    text += f->produce;
    text += "\n";
  }
  return text;
}

std::string expected_formats() {
  std::vector<std::string_view> phrases;
  for (const FormatEntry* f : by_family()) {
    if (std::find(phrases.begin(), phrases.end(), f->expected) == phrases.end()) phrases.push_back(f->expected);
  }
  std::string text = "expected ";
  for (std::size_t i = 0; i < phrases.size(); ++i) {
    if (i > 0) text += i + 1 == phrases.size() ? " or " : ", ";
    text += phrases[i];
  }
  return text;
}

Detection guess_format(std::string_view bytes) {
  if (const FormatEntry* f = first_detecting(bytes, false)) return {f, {}};
  if (auto miss = first_near_miss(bytes, false)) return *miss;
  if (looks_binary(bytes)) return {nullptr, "a binary file, not a text export; " + expected_formats()};
  if (const FormatEntry* f = first_detecting(bytes, true)) return {f, {}};
  if (auto miss = first_near_miss(bytes, true)) return *miss;
  return {nullptr, expected_formats()};
}

}  // namespace kernlens::ingest
