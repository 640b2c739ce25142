#include "kernlens/ingest/ncu_raw.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "kernlens/ingest/csv.h"
#include "kernlens/ingest/ncu_csv_common.h"
#include "kernlens/ingest/ncu_values.h"
#include "kernlens/model/units.h"

namespace kernlens::ingest {
namespace {

// Columns that fill Launch fields besides being kept as metrics, in order of preference.
enum class LaunchField : std::uint8_t { kNone, kDuration, kRegisters, kStaticShared, kDynamicShared };

struct LaunchFieldColumn {
  std::string_view column;
  LaunchField field;
};

constexpr std::array kLaunchFieldColumns = {
    LaunchFieldColumn{"gpu__time_duration.sum", LaunchField::kDuration},
    LaunchFieldColumn{"gpu__time_duration.avg", LaunchField::kDuration},
    LaunchFieldColumn{"gpu__time_duration", LaunchField::kDuration},
    LaunchFieldColumn{"launch__registers_per_thread", LaunchField::kRegisters},
    LaunchFieldColumn{"launch__shared_mem_per_block_static", LaunchField::kStaticShared},
    LaunchFieldColumn{"launch__shared_mem_per_block_dynamic", LaunchField::kDynamicShared},
};

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

enum class Role : std::uint8_t { kIdentity, kMetric, kDevice, kSkip };

struct ColumnPlan {
  Role role = Role::kSkip;
  model::MetricId metric = 0;
  int pow10 = 0;
  bool numeric = false;  // a cell that is not a number is an error (it has a unit, or we use it)
  LaunchField field = LaunchField::kNone;
  const DeviceAttributeColumn* device = nullptr;
};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

void set_device_field(model::Device& d, DeviceField field, std::string_view text, double value,
                      bool numeric) {
  auto as_int = [&] { return static_cast<std::int64_t>(value); };
  switch (field) {
    case DeviceField::kName:
      if (d.name.empty()) d.name = std::string(trim(text));
      return;
    case DeviceField::kSmCount: if (numeric && !d.sm_count) d.sm_count = as_int(); return;
    case DeviceField::kSmClock: if (numeric && !d.sm_clock_max_hz) d.sm_clock_max_hz = value; return;
    case DeviceField::kMemoryClock:
      if (numeric && !d.memory_clock_max_hz) d.memory_clock_max_hz = value;
      return;
    case DeviceField::kBusWidth:
      if (numeric && !d.memory_bus_width_bits) d.memory_bus_width_bits = as_int();
      return;
    case DeviceField::kL2: if (numeric && !d.l2_cache_bytes) d.l2_cache_bytes = as_int(); return;
    case DeviceField::kMemoryTotal:
      if (numeric && !d.memory_total_bytes) d.memory_total_bytes = as_int();
      return;
    case DeviceField::kThreadsPerSm:
      if (numeric && !d.max_threads_per_sm) d.max_threads_per_sm = as_int();
      return;
    case DeviceField::kSharedPerSm:
      if (numeric && !d.max_shared_memory_per_sm_bytes) d.max_shared_memory_per_sm_bytes = as_int();
      return;
  }
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

    if (!next_ncu_row(scanner, rec)) return ctx_.error(scanner.line(), "no launches after the header row");
    std::vector<std::string> units;
    const bool has_units = is_units_row(rec, columns);
    if (has_units) {
      if (auto s = check_width(rec, width, scanner); !s) return s;
      units.assign(rec.fields.begin(), rec.fields.end());
    } else {
      ctx_.warn(rec.line,
                "no units row after the header: numbers are taken as base units (ns, byte); "
                "export with `--page raw --csv` to keep it");
    }
    plan_columns(columns, units);

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
    plan_.assign(columns.size(), ColumnPlan{});
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string& name = columns.name(i);
      ColumnPlan& plan = plan_[i];
      bool identity = false;
      for (auto id : kIdentityColumns) identity = identity || starts_with(name, id);
      if (identity) {
        plan.role = Role::kIdentity;
        continue;
      }
      for (const auto& d : kDeviceAttributeColumns) {
        if (d.column == name) plan.device = &d;
      }
      if (starts_with(name, "device__attribute_")) {
        plan.role = plan.device ? Role::kDevice : Role::kSkip;
        plan.pow10 = plan.device ? plan.device->pow10 : 0;
        continue;
      }
      std::string_view unit = i < units.size() ? std::string_view(units[i]) : std::string_view();
      model::UnitScale scale = model::to_base_unit(unit);
      plan.role = Role::kMetric;
      plan.pow10 = scale.pow10;
      plan.metric = ctx_.profile.metrics.intern(name, scale.base_unit);
      plan.numeric = !unit.empty();
      for (const auto& f : kLaunchFieldColumns) {
        if (f.column == name) {
          plan.field = f.field;
          plan.numeric = true;
        }
      }
    }
    // Only the most preferred duration column sets the duration.
    bool have_duration = false;
    for (const auto& f : kLaunchFieldColumns) {
      if (f.field != LaunchField::kDuration) continue;
      auto col = columns.find(f.column);
      if (!col) continue;
      if (have_duration) plan_[*col].field = LaunchField::kNone;
      have_duration = true;
    }
  }

  Status read_launch(const CsvRecord& rec, NcuLaunchColumns& identity) {
    model::Launch launch;
    if (auto s = identity.fill(rec, launch); !s) return s;
    model::Device* device = nullptr;
    if (launch.device_ordinal >= 0 && !device_seen(launch.device_ordinal)) {
      device = &ctx_.profile.device(launch.device_ordinal);
    }
    launch.metrics.reserve(plan_.size());
    for (std::size_t i = 0; i < plan_.size(); ++i) {
      const ColumnPlan& plan = plan_[i];
      if (plan.role == Role::kIdentity || plan.role == Role::kSkip) continue;
      if (plan.role == Role::kDevice && !device) continue;
      NcuNumber n = parse_ncu_number(rec.fields[i], plan.pow10);
      if (plan.role == Role::kDevice) {
        set_device_field(*device, plan.device->field, rec.fields[i], n.value,
                         n.kind == CellKind::kNumber);
        continue;
      }
      if (n.kind == CellKind::kNoValue) continue;
      if (n.kind == CellKind::kInvalid) {
        if (!plan.numeric) continue;  // a text attribute such as "PolicySpread"
        return ctx_.error(rec.line, "column '" + ctx_.profile.metrics[plan.metric].name +
                                        "': expected a number, got '" +
                                        std::string(trim(rec.fields[i])) + "'");
      }
      launch.metrics.push_back({plan.metric, n.value});
      switch (plan.field) {
        case LaunchField::kDuration: launch.duration_ns = n.value; break;
        case LaunchField::kRegisters: launch.registers_per_thread = static_cast<std::int32_t>(n.value); break;
        case LaunchField::kStaticShared: launch.static_shared_bytes = static_cast<std::int64_t>(n.value); break;
        case LaunchField::kDynamicShared: launch.dynamic_shared_bytes = static_cast<std::int64_t>(n.value); break;
        case LaunchField::kNone: break;
      }
    }
    if (launch.duration_ns && *launch.duration_ns < 0) {
      return ctx_.error(rec.line, "negative kernel duration");
    }
    ctx_.profile.launches.push_back(std::move(launch));
    return ok_status();
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
  std::vector<std::int32_t> devices_seen_;
};

}  // namespace

Status read_ncu_raw_csv(std::string_view bytes, ReadContext& ctx) {
  return RawReader(bytes, ctx).read();
}

}  // namespace kernlens::ingest
