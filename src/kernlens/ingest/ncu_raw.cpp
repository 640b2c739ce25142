#include "kernlens/ingest/ncu_raw.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "kernlens/common/memory.h"
#include "kernlens/common/numeric.h"
#include "kernlens/ingest/csv.h"
#include "kernlens/ingest/ncu_csv_common.h"
#include "kernlens/ingest/ncu_values.h"
#include "kernlens/model/units.h"

namespace kernlens::ingest {
namespace {

// Device properties ncu reports as device__attribute_* columns (unitless in the export).
enum class DeviceField : std::uint8_t {
  kName, kSmCount, kSmClock, kMemoryClock, kBusWidth, kL2, kMemoryTotal, kThreadsPerSm, kSharedPerSm
};

struct DeviceAttributeColumn {
  std::string_view column;
  DeviceField field;
  int pow10;  // to base units: the clock rates are in kHz
};

constexpr std::array kDeviceAttributeColumns = {
    DeviceAttributeColumn{"device__attribute_display_name", DeviceField::kName, 0},
    DeviceAttributeColumn{"device__attribute_multiprocessor_count", DeviceField::kSmCount, 0},
    DeviceAttributeColumn{"device__attribute_clock_rate", DeviceField::kSmClock, 3},
    DeviceAttributeColumn{"device__attribute_memory_clock_rate", DeviceField::kMemoryClock, 3},
    DeviceAttributeColumn{"device__attribute_global_memory_bus_width", DeviceField::kBusWidth, 0},
    DeviceAttributeColumn{"device__attribute_l2_cache_size", DeviceField::kL2, 0},
    DeviceAttributeColumn{"device__attribute_total_memory", DeviceField::kMemoryTotal, 0},
    DeviceAttributeColumn{"device__attribute_max_threads_per_multiprocessor",
                          DeviceField::kThreadsPerSm, 0},
    DeviceAttributeColumn{"device__attribute_max_shared_memory_per_multiprocessor",
                          DeviceField::kSharedPerSm, 0},
};

// Sets one device property from its cell; values that cannot be that property are ignored.
void set_device_field(model::Device& d, DeviceField field, std::string_view text, NcuNumber n) {
  if (field == DeviceField::kName) {
    if (d.name.empty()) d.name = std::string(trim(text));
    return;
  }
  if (n.kind != CellKind::kNumber || n.value < 0) return;
  auto count = exact_integer<std::int64_t>(n.value);
  auto fill = [](std::optional<std::int64_t>& slot, std::optional<std::int64_t> v) {
    if (!slot && v) slot = v;
  };
  switch (field) {
    case DeviceField::kSmCount: fill(d.sm_count, count); return;
    case DeviceField::kBusWidth: fill(d.memory_bus_width_bits, count); return;
    case DeviceField::kL2: fill(d.l2_cache_bytes, count); return;
    case DeviceField::kMemoryTotal: fill(d.memory_total_bytes, count); return;
    case DeviceField::kThreadsPerSm: fill(d.max_threads_per_sm, count); return;
    case DeviceField::kSharedPerSm: fill(d.max_shared_memory_per_sm_bytes, count); return;
    case DeviceField::kSmClock: if (!d.sm_clock_max_hz) d.sm_clock_max_hz = n.value; return;
    case DeviceField::kMemoryClock: if (!d.memory_clock_max_hz) d.memory_clock_max_hz = n.value; return;
    case DeviceField::kName: return;
  }
}

// How one column is decoded. Only columns with something to do are planned, so a row
// costs nothing for the metric columns nobody asked for.
struct ColumnPlan {
  std::size_t index = 0;
  int pow10 = 0;
  bool keep_metric = false;             // store as a metric sample
  std::optional<model::MetricId> metric;
  bool numeric = false;                 // a non-number is an error (it has a unit, or we use it)
  NcuNamedField field = NcuNamedField::kNone;
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

class RawReader {
 public:
  RawReader(std::string_view bytes, ReadContext& ctx) : bytes_(bytes), ctx_(ctx) {}

  Status read() {
    auto header_at = find_ncu_header(bytes_);
    if (!header_at) {
      return ctx_.error(0, "not an Nsight Compute raw CSV: no header row with a 'Kernel Name' column");
    }
    CsvScanner scanner(bytes_.substr(header_at->offset), header_at->line);
    CsvRecord rec;
    scanner.next(rec);
    if (!rec.closed || scanner.at_end()) {
      return ctx_.error(rec.line, "the file ends in the header row: it is truncated or holds no launches");
    }
    ColumnMap columns(rec.fields);
    NcuLaunchColumns identity(columns, ctx_);
    const std::size_t width = columns.size();
    for (std::size_t i = 0; i < width; ++i) header_names_.push_back(columns.name(i));

    std::size_t first_row_at = scanner.offset();
    if (!next_ncu_row(scanner, rec)) return ctx_.error(scanner.line(), "no launches after the header row");
    std::vector<std::string> units;
    const bool has_units = is_units_row(rec, columns);
    if (has_units) {
      if (auto s = check_width(rec, width, scanner); !s) return s;
      units.assign(rec.fields.begin(), rec.fields.end());
      first_row_at = scanner.offset();
    } else {
      ctx_.warn(rec.line,
                "no units row after the header: numbers are taken as base units (ns, byte); "
                "export with `--page raw --csv` to keep it");
    }
    plan_columns(columns, units);
    scanner.select_fields(decoded_columns(identity));

    bool pending = !has_units;  // without a units row, `rec` already holds the first launch
    std::size_t rows = 0;
    while (pending || next_ncu_row(scanner, rec)) {
      pending = false;
      if (rec.fields.size() != width || !rec.closed) {
        if (is_truncated_last(rec, scanner)) {
          ctx_.warn(rec.line, "the last row is cut short (" + std::to_string(rec.fields.size()) +
                                  " of " + std::to_string(width) +
                                  " fields): the file is truncated; that launch is ignored");
          break;
        }
        return ctx_.error(rec.line, "row has " + std::to_string(rec.fields.size()) +
                                        " fields, the header has " + std::to_string(width));
      }
      if (auto s = read_launch(rec, identity); !s) return s;
      if (rows == 0) reserve_for(bytes_.size() - header_at->offset, scanner.offset() - first_row_at);
      if (++rows % 4096 == 0 && ctx_.progress) ctx_.progress(header_at->offset + scanner.offset());
    }
    if (rows == 0) return ctx_.error(scanner.line(), "no launches after the header row");
    return ok_status();
  }

 private:
  static bool is_truncated_last(const CsvRecord& rec, const CsvScanner& scanner) {
    return !rec.closed || scanner.at_end();
  }

  Status check_width(const CsvRecord& rec, std::size_t width, const CsvScanner& scanner) const {
    if (rec.fields.size() == width && rec.closed) return ok_status();
    if (is_truncated_last(rec, scanner)) {
      return ctx_.error(rec.line, "the file ends in the units row: it is truncated or holds no launches");
    }
    return ctx_.error(rec.line, "units row has " + std::to_string(rec.fields.size()) +
                                    " fields, the header has " + std::to_string(width));
  }

  // The units row leaves the identity columns (ID, Kernel Name, ...) empty.
  static bool is_units_row(const CsvRecord& rec, const ColumnMap& columns) {
    for (auto name : {"Kernel Name", "ID"}) {
      auto col = columns.find(name);
      if (col && *col < rec.fields.size() && !trim(rec.fields[*col]).empty()) return false;
    }
    return true;
  }

  void plan_columns(const ColumnMap& columns, const std::vector<std::string>& units) {
    static constexpr std::array<std::string_view, 13> kIdentityColumns = {
        "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
        "Block Size", "Grid Size", "Device", "CC", "thread Domain:Push/Pop_Range",
        "Id:Domain:Start/Stop_Range"};
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string& name = columns.name(i);
      bool identity = false;
      for (auto id : kIdentityColumns) identity = identity || starts_with(name, id);
      if (identity) continue;
      if (starts_with(name, "device__attribute_")) {
        for (const auto& d : kDeviceAttributeColumns) {
          if (d.column == name) device_plan_.push_back({i, &d});
        }
        continue;
      }
      std::string_view unit = i < units.size() ? std::string_view(units[i]) : std::string_view();
      model::UnitScale scale = model::to_base_unit(unit);
      ColumnPlan plan;
      plan.index = i;
      plan.pow10 = scale.pow10;
      plan.field = ncu_named_field(name);
      plan.keep_metric = ctx_.wants_metric(name);
      plan.numeric = !unit.empty() || plan.field != NcuNamedField::kNone;
      if (!plan.keep_metric && plan.field == NcuNamedField::kNone) continue;
      if (plan.keep_metric) plan.metric = ctx_.profile.metrics.intern(name, scale.base_unit);
      plan_.push_back(plan);
    }
  }

  // Every column a row is read for, ascending: the scanner skips the rest.
  std::vector<std::size_t> decoded_columns(const NcuLaunchColumns& identity) const {
    std::vector<std::size_t> out = identity.indices();
    for (const auto& plan : plan_) out.push_back(plan.index);
    for (const auto& [index, column] : device_plan_) out.push_back(index);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  Status read_launch(const CsvRecord& rec, NcuLaunchColumns& identity) {
    model::Launch launch;
    if (auto s = identity.fill(rec, launch); !s) return s;
    if (launch.device_ordinal >= 0 && !device_seen(launch.device_ordinal)) {
      model::Device& d = ctx_.profile.device(launch.device_ordinal);
      for (const auto& [index, column] : device_plan_) {
        set_device_field(d, column->field, rec.fields[index], parse_ncu_number(rec.fields[index], column->pow10));
      }
    }
    for (const ColumnPlan& plan : plan_) {
      std::string_view cell = rec.fields[plan.index];
      NcuNumber n = parse_ncu_number(cell, plan.pow10);
      if (n.kind == CellKind::kNoValue) continue;
      if (n.kind == CellKind::kInvalid) {
        if (!plan.numeric) continue;  // a text attribute such as "PolicySpread"
        return ctx_.error(rec.line, "column '" + column_name(plan) + "': expected a number, got '" +
                                        std::string(trim(cell)) + "'");
      }
      if (plan.keep_metric) ctx_.profile.add_metric(launch, {*plan.metric, n.value});
      if (!apply_ncu_named_field(plan.field, n.value, launch, ctx_.profile)) {
        return ctx_.error(rec.line, "column '" + column_name(plan) + "': value " +
                                        std::string(trim(cell)) + " is out of range");
      }
    }
    ctx_.profile.launches.push_back(std::move(launch));
    return ok_status();
  }

  std::string column_name(const ColumnPlan& plan) const { return header_names_.at(plan.index); }

  // Sizes the metric pool and launch list from the first row, so that a big file does not
  // copy them over and over as they grow.
  void reserve_for(std::size_t bytes_left, std::size_t first_row_bytes) {
    if (first_row_bytes == 0) return;
    // Rows vary in length; reserving half again more costs address space, not memory
    // (capacity that is never written is never faulted in).
    const std::size_t rows = bytes_left / first_row_bytes * 3 / 2 + 16;
    const std::size_t per_row = ctx_.profile.launches.back().metrics_count;  // before reserve moves it
    ctx_.profile.launches.reserve(ctx_.profile.launches.size() + rows);
    auto& pool = ctx_.profile.metric_samples;
    pool.reserve(pool.size() + rows * per_row);
    advise_huge_pages(pool.data(), pool.capacity() * sizeof(model::MetricSample));
  }

  bool device_seen(std::int32_t ordinal) {
    for (auto o : devices_seen_) {
      if (o == ordinal) return true;
    }
    devices_seen_.push_back(ordinal);
    return false;
  }

  std::string_view bytes_;
  ReadContext& ctx_;
  std::vector<ColumnPlan> plan_;
  std::vector<std::pair<std::size_t, const DeviceAttributeColumn*>> device_plan_;
  std::vector<std::int32_t> devices_seen_;
  std::vector<std::string> header_names_;
};

}  // namespace

Status read_ncu_raw_csv(std::string_view bytes, ReadContext& ctx) {
  return RawReader(bytes, ctx).read();
}

}  // namespace kernlens::ingest
