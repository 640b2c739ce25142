#include "kernlens/ingest/ncu/summary.h"

#include <string>
#include <unordered_map>

#include "kernlens/ingest/csv/scanner.h"
#include "kernlens/ingest/ncu/page.h"
#include "kernlens/ingest/ncu/values.h"
#include "kernlens/model/units.h"

namespace kernlens::ingest {
namespace {

class SummaryReader {
 public:
  SummaryReader(std::string_view bytes, ReadContext& ctx) : bytes_(bytes), ctx_(ctx) {}

  Status read() {
    auto header = read_ncu_header(bytes_, "summary", {"Invocations", "Metric Name", "Average"}, ctx_);
    if (!header) return header.error();
    const ColumnMap& columns = header->columns;
    CsvScanner& scanner = header->rows;
    CsvRecord rec;
    invocations_ = *columns.find("Invocations");
    metric_name_ = *columns.find("Metric Name");
    average_ = *columns.find("Average");
    section_ = columns.find("Section Name");
    metric_unit_ = columns.find("Metric Unit");
    // Every column before the per-metric ones identifies the kernel group.
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string& n = columns.name(i);
      if (n != "Section Name" && n != "Metric Name" && n != "Metric Unit" && n != "Minimum" &&
          n != "Maximum" && n != "Average") {
        key_columns_.push_back(i);
      }
    }
    NcuLaunchColumns identity(columns, ctx_);

    std::size_t groups_before = launch_of_key_.size();
    while (next_ncu_row(scanner, rec)) {
      if (rec.fields.size() != columns.size() || !rec.closed) {
        if (!rec.closed || scanner.at_end()) {
          if (auto why = unclosed_quote(rec, scanner)) return ctx_.error(rec.line, *why);
          ctx_.warn(rec.line, "the last row is cut short: the file is truncated; that row is ignored");
          break;
        }
        return ctx_.error(rec.line, "row has " + std::to_string(rec.fields.size()) +
                                        " fields, the header has " + std::to_string(columns.size()));
      }
      if (auto s = read_row(rec, identity); !s) return s;
    }
    if (launch_of_key_.size() == groups_before) {
      return ctx_.error(scanner.line(), "no kernels after the header row");
    }
    return ok_status();
  }

 private:
  Status read_row(const CsvRecord& rec, NcuLaunchColumns& identity) {
    std::string group;
    for (auto i : key_columns_) group.append(rec.fields[i]).push_back('\x1f');
    auto [it, is_new] = launch_of_key_.try_emplace(std::move(group), ctx_.profile.launches.size());
    if (is_new) {
      model::Launch launch;
      if (auto s = identity.fill(rec, launch); !s) return s;
      auto count = parse_execution_count(rec.fields[invocations_]);
      if (!count) {
        return ctx_.error(rec.line, "column 'Invocations': expected a positive integer below 2^32, got '" +
                                        std::string(trim(rec.fields[invocations_])) + "'");
      }
      launch.count = *count;
      ctx_.profile.launches.push_back(std::move(launch));
    }
    model::Launch& launch = ctx_.profile.launches[it->second];

    std::string_view name = trim(rec.fields[metric_name_]);
    if (name.empty()) return ok_status();
    std::string_view unit = metric_unit_ ? trim(rec.fields[*metric_unit_]) : std::string_view();
    model::UnitScale scale = model::to_base_unit(unit);
    NcuNumber n = parse_ncu_number(rec.fields[average_], scale.pow10);
    NcuNamedField field = ncu_named_field(name);
    if (n.kind == CellKind::kNoValue) {
      if (auto why = no_value_problem(field, rec.fields[average_])) return ctx_.error(rec.line, *why);
      return ok_status();
    }
    if (n.kind == CellKind::kInvalid) {
      if (unit.empty() && field == NcuNamedField::kNone) return ok_status();
      return ctx_.error(rec.line, "metric '" + std::string(name) + "': expected a number in 'Average', got '" +
                                      std::string(trim(rec.fields[average_])) + "'");
    }
    std::string_view section = section_ ? trim(rec.fields[*section_]) : std::string_view();
    std::string key = ncu_metric_key(section, {}, name);
    if (ctx_.wants_metric(key)) {
      model::MetricId metric = ctx_.profile.metrics.intern(key, scale.base_unit);
      if (!ctx_.profile.find_metric(launch, metric)) ctx_.profile.add_metric(launch, {metric, n.value});
    }
    if (!apply_ncu_named_field(field, n.value, launch, ctx_.profile)) {
      return ctx_.error(rec.line, "metric '" + std::string(name) + "': value " +
                                      std::string(trim(rec.fields[average_])) + " is out of range");
    }
    return ok_status();
  }

  std::string_view bytes_;
  ReadContext& ctx_;
  std::size_t invocations_ = 0, metric_name_ = 0, average_ = 0;
  std::optional<std::size_t> section_, metric_unit_;
  std::vector<std::size_t> key_columns_;
  std::unordered_map<std::string, std::size_t> launch_of_key_;  // group key -> launch index
};

}  // namespace

Status read_ncu_summary_csv(std::string_view bytes, ReadContext& ctx) {
  return SummaryReader(bytes, ctx).read();
}

bool is_ncu_summary_csv(std::string_view bytes) { return ncu_page(bytes) == NcuPage::kSummary; }

}  // namespace kernlens::ingest
