#include "kernlens/ingest/ncu/details.h"

#include <string>
#include <unordered_map>

#include "kernlens/ingest/csv/scanner.h"
#include "kernlens/ingest/ncu/page.h"
#include "kernlens/ingest/ncu/values.h"
#include "kernlens/model/units.h"

namespace kernlens::ingest {
namespace {

class DetailsReader {
 public:
  DetailsReader(std::string_view bytes, ReadContext& ctx) : bytes_(bytes), ctx_(ctx) {}

  Status read() {
    auto header = read_ncu_header(bytes_, "details", {"ID", "Section Name", "Metric Name", "Metric Value"}, ctx_);
    if (!header) return header.error();
    const ColumnMap& columns = header->columns;
    CsvScanner& scanner = header->rows;
    CsvRecord rec;
    id_ = *columns.find("ID");
    section_ = *columns.find("Section Name");
    metric_name_ = *columns.find("Metric Name");
    metric_value_ = *columns.find("Metric Value");
    metric_unit_ = columns.find("Metric Unit");
    body_ = columns.find("Body Item Label");
    rule_name_ = columns.find("Rule Name");
    rule_type_ = columns.find("Rule Type");
    rule_text_ = columns.find("Rule Description");
    speedup_type_ = columns.find("Estimated Speedup Type");
    speedup_ = columns.find("Estimated Speedup");
    NcuLaunchColumns identity(columns, ctx_);
    // Metric rows end after "Metric Value"; everything they need lies before it.
    const std::size_t min_width = std::max(identity.last_index(), metric_value_) + 1;

    std::size_t rows = 0;
    while (next_ncu_row(scanner, rec)) {
      if (rec.fields.size() < min_width || !rec.closed) {
        if (!rec.closed || scanner.at_end()) {
          if (auto why = unclosed_quote(rec, scanner)) return ctx_.error(rec.line, *why);
          ctx_.warn(rec.line, "the last row is cut short: the file is truncated; that row is ignored");
          break;
        }
        return ctx_.error(rec.line, "row has " + std::to_string(rec.fields.size()) +
                                        " fields, expected at least " + std::to_string(min_width));
      }
      if (rec.fields.size() > columns.size()) {
        return ctx_.error(rec.line, "row has " + std::to_string(rec.fields.size()) +
                                        " fields, the header has " + std::to_string(columns.size()));
      }
      if (auto s = read_row(rec, identity); !s) return s;
      if (++rows % 16384 == 0 && ctx_.progress) ctx_.progress(header->rows_base + scanner.offset());
    }
    if (launch_of_id_.empty()) return ctx_.error(scanner.line(), "no launches after the header row");
    return ok_status();
  }

 private:
  std::string_view cell(const CsvRecord& rec, const std::optional<std::size_t>& col) const {
    return col && *col < rec.fields.size() ? trim(rec.fields[*col]) : std::string_view();
  }

  Status read_row(const CsvRecord& rec, NcuLaunchColumns& identity) {
    auto id = parse_ncu_integer(rec.fields[id_]);
    if (!id) {
      return ctx_.error(rec.line, "column 'ID': expected an integer, got '" +
                                      std::string(trim(rec.fields[id_])) + "'");
    }
    auto [it, is_new] = launch_of_id_.try_emplace(*id, ctx_.profile.launches.size());
    if (is_new) {
      model::Launch launch;
      if (auto s = identity.fill(rec, launch); !s) return s;
      ctx_.profile.launches.push_back(std::move(launch));
    }
    model::Launch& launch = ctx_.profile.launches[it->second];

    std::string_view rule = cell(rec, rule_name_);
    if (!rule.empty()) return read_rule(rec, launch, rule);

    std::string_view name = cell(rec, metric_name_);
    if (name.empty()) return ok_status();
    std::string_view unit = cell(rec, metric_unit_);
    model::UnitScale scale = model::to_base_unit(unit);
    NcuNumber n = parse_ncu_number(rec.fields[metric_value_], scale.pow10);
    if (n.kind == CellKind::kNoValue) {
      auto why = cell(rec, body_).empty() ? no_value_problem(ncu_named_field(name), rec.fields[metric_value_])
                                          : std::nullopt;
      if (why) return ctx_.error(rec.line, *why);
      return ok_status();
    }
    if (n.kind == CellKind::kInvalid) {
      NcuNamedField field = ncu_named_field(name);
      if (unit.empty() && field == NcuNamedField::kNone) return ok_status();  // text, e.g. "PolicySpread"
      return ctx_.error(rec.line, "metric '" + std::string(name) + "': expected a number, got '" +
                                      std::string(trim(rec.fields[metric_value_])) + "'");
    }
    std::string key = ncu_metric_key(cell(rec, section_), cell(rec, body_), name);
    if (ctx_.wants_metric(key)) {
      model::MetricId metric = ctx_.profile.metrics.intern(key, scale.base_unit);
      // A breakdown table may repeat a name: the first value stands.
      if (!ctx_.profile.find_metric(launch, metric)) ctx_.profile.add_metric(launch, {metric, n.value});
    }
    if (cell(rec, body_).empty() &&
        !apply_ncu_named_field(ncu_named_field(name), n.value, launch, ctx_.profile)) {
      return ctx_.error(rec.line, "metric '" + std::string(name) + "': value " +
                                      std::string(trim(rec.fields[metric_value_])) + " is out of range");
    }
    return ok_status();
  }

  Status read_rule(const CsvRecord& rec, model::Launch& launch, std::string_view rule) {
    model::RuleResult r;
    r.section = std::string(cell(rec, section_));
    r.rule = std::string(rule);
    r.type = std::string(cell(rec, rule_type_));
    r.text = std::string(cell(rec, rule_text_));
    r.speedup_type = std::string(cell(rec, speedup_type_));
    std::string_view speedup = cell(rec, speedup_);
    NcuNumber n = parse_ncu_number(speedup);
    if (n.kind == CellKind::kInvalid) {
      return ctx_.error(rec.line, "column 'Estimated Speedup': expected a number, got '" +
                                      std::string(speedup) + "'");
    }
    if (n.kind == CellKind::kNumber) r.est_speedup_pct = n.value;
    ctx_.profile.rules_to_add_to(launch).push_back(std::move(r));
    return ok_status();
  }

  std::string_view bytes_;
  ReadContext& ctx_;
  std::size_t id_ = 0, section_ = 0, metric_name_ = 0, metric_value_ = 0;
  std::optional<std::size_t> metric_unit_, body_, rule_name_, rule_type_, rule_text_, speedup_type_,
      speedup_;
  std::unordered_map<std::int64_t, std::size_t> launch_of_id_;  // ID -> index in launches
};

}  // namespace

Status read_ncu_details_csv(std::string_view bytes, ReadContext& ctx) {
  return DetailsReader(bytes, ctx).read();
}

bool is_ncu_details_csv(std::string_view bytes) { return ncu_page(bytes) == NcuPage::kDetails; }

}  // namespace kernlens::ingest
