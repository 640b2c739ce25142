#include "kernlens/ingest/nsys/stats.h"

#include <algorithm>
#include <charconv>
#include <string>
#include <tuple>

#include "kernlens/common/numeric.h"
#include "kernlens/ingest/csv/scanner.h"
#include "kernlens/ingest/ncu/values.h"
#include "kernlens/model/units.h"

namespace kernlens::ingest {
namespace {

bool has_field(const CsvRecord& rec, std::string_view name) {
  return std::find(rec.fields.begin(), rec.fields.end(), name) != rec.fields.end();
}

bool has_total_time(const CsvRecord& rec) {
  return std::any_of(rec.fields.begin(), rec.fields.end(),
                     [](std::string_view f) { return f.substr(0, 10) == "Total Time"; });
}

// nsys's preamble: "Processing [REPORT.sqlite] with [SCRIPT.py](ARGS)... ".
constexpr std::string_view kProcessing = "Processing [";

// Whether the preamble shows a report run without :nvtx-name (then names are never split).
bool preamble_rules_out_nvtx_name(std::string_view preamble) {
  std::size_t at = preamble.rfind(kProcessing);
  if (at == std::string_view::npos) return false;
  std::string_view line = preamble.substr(at);
  line = line.substr(0, line.find('\n'));
  std::size_t args = line.rfind("](");
  if (args == std::string_view::npos) return true;  // no arguments at all
  std::string_view list = line.substr(args + 2);
  return list.substr(0, list.find(')')).find("nvtx-name") == std::string_view::npos;
}

// "  32    1    1" (printf('%4d %4d %4d') in nsys's gb reports) -> {32, 1, 1}.
std::optional<model::Dim3> parse_xyz(std::string_view cell) {
  std::uint32_t v[3];
  const char* p = cell.data();
  const char* end = cell.data() + cell.size();
  for (auto& out : v) {
    while (p < end && *p == ' ') ++p;
    auto [next, ec] = std::from_chars(p, end, out);
    if (ec != std::errc() || next == p) return std::nullopt;
    p = next;
  }
  while (p < end && *p == ' ') ++p;
  if (p != end) return std::nullopt;
  return model::Dim3{v[0], v[1], v[2]};
}

class StatsReader {
 public:
  StatsReader(std::string_view bytes, ReadContext& ctx) : bytes_(bytes), ctx_(ctx) {}

  Status read() {
    auto at = find_nsys_stats_header(bytes_);
    if (!at) return no_header();
    split_names_ = !preamble_rules_out_nvtx_name(bytes_.substr(0, at->offset));
    CsvScanner scanner(bytes_.substr(at->offset), at->line);
    CsvRecord rec;
    scanner.next(rec);
    if (auto s = read_columns(rec); !s) return s;
    std::size_t rows = 0;
    while (!scanner.at_end() && scanner.peek_line().substr(0, kProcessing.size()) != kProcessing) {
      if (!scanner.next(rec) || is_blank_record(rec)) break;
      if (rec.fields.size() != width_ || !rec.closed) {
        if (!rec.closed || scanner.at_end()) {
          if (auto why = unclosed_quote(rec, scanner)) return ctx_.error(rec.line, *why);
          ctx_.warn(rec.line,
                    "the last row is cut short: the file is truncated; that row is ignored");
          break;
        }
        return ctx_.error(rec.line, "row has " + std::to_string(rec.fields.size()) +
                                        " fields, the header has " + std::to_string(width_));
      }
      if (auto s = read_row(rec); !s) return s;
      ++rows;
    }
    if (rows == 0) return ctx_.error(scanner.line(), "no kernels after the header row");
    return ok_status();
  }

 private:
  Status no_header() const {
    if (auto other = describe_other_nsys_stats(bytes_)) return ctx_.error(0, *other);
    return ctx_.error(
        0,
        "not an nsys stats kernel summary: no header row with 'Total Time', 'Instances' "
        "and 'Name' columns");
  }

  Status read_columns(const CsvRecord& header) {
    ColumnMap columns(header.fields);
    width_ = header.fields.size();
    total_ = *columns.find_prefix("Total Time");
    instances_ = *columns.find("Instances");
    name_ = *columns.find("Name");
    grid_ = columns.find("GridXYZ");
    block_ = columns.find("BlockXYZ");
    // "Total Time (us)" under --timeunit; the oldest reports print "(ns)" or no unit at all.
    std::string_view label = columns.name(total_);
    std::string_view unit = trim(label.substr(10));
    if (unit.empty()) return ok_status();
    if (unit.size() < 2 || unit.front() != '(' || unit.back() != ')')
      return bad_unit(header.line, label);
    model::UnitScale scale = model::to_base_unit(unit.substr(1, unit.size() - 2));
    if (!scale.known || scale.base_unit != "ns") return bad_unit(header.line, label);
    pow10_ = scale.pow10;
    return ok_status();
  }

  Status bad_unit(std::int64_t line, std::string_view label) const {
    return ctx_.error(
        line, "column '" + std::string(label) + "': expected a time unit like (ns) or (us)");
  }

  Status read_row(const CsvRecord& rec) {
    model::Launch l;
    l.input = ctx_.input_index;
    std::string_view name = trim(rec.fields[name_]);
    if (name.empty()) return ctx_.error(rec.line, "empty 'Name'");
    auto instances = parse_execution_count(rec.fields[instances_]);
    if (!instances) {
      return ctx_.error(rec.line, "column 'Instances': expected a positive integer below 2^32, got '" +
                                      std::string(trim(rec.fields[instances_])) + "'");
    }
    NcuNumber total = parse_ncu_number(rec.fields[total_], pow10_);
    if (total.kind != CellKind::kNumber || !plausible_duration_ns(total.value)) {
      return ctx_.error(rec.line, "column 'Total Time': expected a time, got '" +
                                      std::string(trim(rec.fields[total_])) + "'");
    }
    l.count = *instances;
    l.duration_ns = total.value / static_cast<double>(l.count);
    if (auto s = read_dims(rec, l); !s) return s;
    auto split = split_names_ ? split_nvtx_name(name) : std::nullopt;
    if (split && !split->first.empty() && !split->second.empty()) {
      name = split->second;
      model::StageKey key;
      key.push_pop.push_back(
          model::NvtxRange{"", std::string(split->first), model::RangeKind::kPushPop});
      l.stage = ctx_.profile.intern_stage(std::move(key));
    }
    l.name = ctx_.profile.names.intern(name);
    ctx_.profile.launches.push_back(std::move(l));
    return ok_status();
  }

  Status read_dims(const CsvRecord& rec, model::Launch& l) const {
    model::LaunchConfig config;
    for (auto [col, what, dim] :
         {std::tuple{grid_, "GridXYZ", &config.grid}, std::tuple{block_, "BlockXYZ", &config.block}}) {
      if (!col) continue;
      auto d = parse_xyz(rec.fields[*col]);
      if (!d) {
        return ctx_.error(rec.line, std::string("column '") + what +
                                        "': expected three integers, got '" +
                                        std::string(trim(rec.fields[*col])) + "'");
      }
      *dim = *d;
    }
    l.config = ctx_.profile.intern_config(config);
    return ok_status();
  }

  std::string_view bytes_;
  ReadContext& ctx_;
  bool split_names_ = true;
  std::size_t width_ = 0, total_ = 0, instances_ = 0, name_ = 0;
  std::optional<std::size_t> grid_, block_;
  int pow10_ = 0;
};

}  // namespace

std::optional<HeaderLocation> find_nsys_stats_header(std::string_view data) {
  return find_csv_header(data, "Instances", [](const CsvRecord& rec) {
    return has_field(rec, "Instances") && has_field(rec, "Name") && has_total_time(rec);
  });
}

std::optional<std::string> describe_other_nsys_stats(std::string_view bytes) {
  std::string_view head = bytes.substr(0, 4096);
  if (head.find(kProcessing) == std::string_view::npos ||
      head.find("] with [") == std::string_view::npos) {
    return std::nullopt;
  }
  std::string what =
      "nsys stats output without a kernel summary (kernlens reads the "
      "cuda_gpu_kern_sum report, formerly gpukernsum)";
  if (std::size_t at = head.find("SKIPPED:"); at != std::string_view::npos) {
    std::string_view line = head.substr(at);
    what += "; nsys says: " + std::string(trim(line.substr(0, line.find('\n'))));
  }
  return what;
}

bool is_nsys_stats_csv(std::string_view bytes) { return find_nsys_stats_header(bytes).has_value(); }

std::optional<NearMiss> other_nsys_stats(std::string_view bytes) {
  if (auto what = describe_other_nsys_stats(bytes)) return NearMiss{std::move(*what)};
  return std::nullopt;
}

std::optional<std::pair<std::string_view, std::string_view>> split_nvtx_name(
    std::string_view name) {
  // From the right, so that only the kernel name's brackets need to balance.
  int depth = 0;
  for (std::size_t i = name.size(); i-- > 0;) {
    switch (name[i]) {
      case ')':
      case '>':
      case ']':
      case '}':
        ++depth;
        break;
      case '(':
      case '<':
      case '[':
      case '{':
        --depth;
        break;
      case '/':
        if (depth == 0) return std::pair{name.substr(0, i), name.substr(i + 1)};
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

Status read_nsys_stats_csv(std::string_view bytes, ReadContext& ctx) {
  return StatsReader(bytes, ctx).read();
}

}  // namespace kernlens::ingest
