#include "kernlens/ingest/ncu_csv_common.h"

#include <algorithm>
#include <array>

#include "kernlens/ingest/ncu_nvtx.h"
#include "kernlens/ingest/ncu_values.h"

namespace kernlens::ingest {

std::optional<HeaderLocation> find_ncu_header(std::string_view data) {
  std::string_view body = strip_bom(data);
  const std::size_t bom = data.size() - body.size();
  CsvScanner scanner(body);
  CsvRecord rec;
  while (!scanner.at_end()) {
    std::size_t offset = scanner.offset();
    std::int64_t line = scanner.line();
    if (scanner.peek_line().find("Kernel Name") == std::string_view::npos) {
      scanner.skip_line();
      continue;
    }
    if (!scanner.next(rec)) break;
    if (std::find(rec.fields.begin(), rec.fields.end(), "Kernel Name") != rec.fields.end()) {
      return HeaderLocation{offset + bom, line};
    }
  }
  return std::nullopt;
}

ColumnMap::ColumnMap(const std::vector<std::string_view>& header) {
  names_.reserve(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) {
    names_.emplace_back(header[i]);
    index_.emplace(names_.back(), i);  // the first of duplicate names wins
  }
}

std::optional<std::size_t> ColumnMap::find(std::string_view name) const {
  if (auto it = index_.find(std::string(name)); it != index_.end()) return it->second;
  return std::nullopt;
}

std::optional<std::size_t> ColumnMap::find_prefix(std::string_view prefix) const {
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (std::string_view(names_[i]).substr(0, prefix.size()) == prefix) return i;
  }
  return std::nullopt;
}

std::optional<std::int64_t> parse_ncu_integer(std::string_view cell) {
  NcuNumber n = parse_ncu_number(cell);
  if (n.kind != CellKind::kNumber || n.value != static_cast<double>(static_cast<std::int64_t>(n.value))) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(n.value);
}

NcuLaunchColumns::NcuLaunchColumns(const ColumnMap& columns, ReadContext& ctx) : ctx_(ctx) {
  id_ = columns.find("ID");
  pid_ = columns.find("Process ID");
  process_name_ = columns.find("Process Name");
  host_ = columns.find("Host Name");
  // The NVTX headers spell out the entry layout; match on their stable start.
  push_pop_ = columns.find_prefix("thread Domain:Push/Pop_Range");
  start_end_ = columns.find_prefix("Id:Domain:Start/Stop_Range");
  name_ = columns.find("Kernel Name");
  context_ = columns.find("Context");
  stream_ = columns.find("Stream");
  block_ = columns.find("Block Size");
  grid_ = columns.find("Grid Size");
  device_ = columns.find("Device");
  cc_ = columns.find("CC");
  for (const auto& c : {id_, pid_, process_name_, host_, push_pop_, start_end_, name_, context_,
                        stream_, block_, grid_, device_, cc_}) {
    if (c) last_ = std::max(last_, *c);
  }
}

model::StageId NcuLaunchColumns::stage_of(std::string_view push_pop, std::string_view start_end,
                                          std::int64_t line, std::int64_t& thread_id,
                                          Status& status) {
  std::string key;
  key.reserve(push_pop.size() + start_end.size() + 1);
  key.append(push_pop).push_back('\x1f');
  key.append(start_end);
  if (key == last_nvtx_key_) {
    thread_id = last_thread_;
    return last_stage_;
  }
  model::StageKey stage;
  std::string why;
  if (!trim(push_pop).empty()) {
    auto cell = parse_ncu_nvtx_cell(push_pop, model::RangeKind::kPushPop, why);
    if (!cell) {
      status = ctx_.error(line, "NVTX push/pop column: " + why);
      return 0;
    }
    thread_id = cell->thread_id;
    stage.push_pop = std::move(cell->ranges);
  }
  if (!trim(start_end).empty()) {
    auto cell = parse_ncu_nvtx_cell(start_end, model::RangeKind::kStartEnd, why);
    if (!cell) {
      status = ctx_.error(line, "NVTX start/end column: " + why);
      return 0;
    }
    stage.start_end = std::move(cell->ranges);
  }
  last_nvtx_key_ = std::move(key);
  last_thread_ = thread_id;
  last_stage_ = ctx_.profile.intern_stage(std::move(stage));
  return last_stage_;
}

Status NcuLaunchColumns::fill(const CsvRecord& rec, model::Launch& launch) {
  const auto& f = rec.fields;
  auto cell = [&](const std::optional<std::size_t>& col) -> std::string_view {
    return col && *col < f.size() ? f[*col] : std::string_view();
  };
  auto integer = [&](const std::optional<std::size_t>& col, std::string_view what,
                     std::int64_t& out) -> Status {
    std::string_view text = trim(cell(col));
    if (text.empty()) return ok_status();
    auto v = parse_ncu_integer(text);
    if (!v) {
      return ctx_.error(rec.line, "column '" + std::string(what) + "': expected an integer, got '" +
                                      std::string(text) + "'");
    }
    out = *v;
    return ok_status();
  };

  std::string_view name = trim(cell(name_));
  if (name.empty()) return ctx_.error(rec.line, "empty 'Kernel Name'");
  launch.name = ctx_.profile.names.intern(name);
  launch.input = ctx_.input_index;

  if (auto s = integer(id_, "ID", launch.id); !s) return s;
  if (auto s = integer(context_, "Context", launch.context_id); !s) return s;
  if (auto s = integer(stream_, "Stream", launch.stream_id); !s) return s;
  std::int64_t pid = model::kUnknown;
  if (auto s = integer(pid_, "Process ID", pid); !s) return s;
  std::int64_t device = model::kUnknown;
  if (auto s = integer(device_, "Device", device); !s) return s;

  for (auto [col, what, dim] : {std::tuple{block_, "Block Size", &launch.block},
                                std::tuple{grid_, "Grid Size", &launch.grid}}) {
    std::string_view text = trim(cell(col));
    if (text.empty()) continue;
    auto d = parse_dim3(text);
    if (!d) {
      return ctx_.error(rec.line, std::string("column '") + what +
                                      "': expected dimensions like (128, 1, 1), got '" +
                                      std::string(text) + "'");
    }
    *dim = *d;
  }

  std::string process_key = std::to_string(pid);
  process_key.append("\x1f").append(cell(host_)).append("\x1f").append(cell(process_name_));
  if (process_key != last_process_key_) {
    last_process_ = ctx_.profile.intern_process(
        model::ProcessInfo{std::string(cell(host_)), pid, std::string(cell(process_name_))});
    last_process_key_ = std::move(process_key);
  }
  launch.process = last_process_;

  if (device != model::kUnknown) {
    launch.device_ordinal = static_cast<std::int32_t>(device);
    model::Device& d = ctx_.profile.device(launch.device_ordinal);
    if (d.cc.empty()) d.cc = std::string(trim(cell(cc_)));
  }

  Status status = ok_status();
  launch.stage = stage_of(cell(push_pop_), cell(start_end_), rec.line, launch.thread_id, status);
  return status;
}

}  // namespace kernlens::ingest

namespace kernlens::ingest {

NcuNamedField ncu_named_field(std::string_view metric_name) {
  struct Entry {
    std::string_view name;
    NcuNamedField field;
  };
  static constexpr std::array<Entry, 10> kFields = {{
      {"Duration", NcuNamedField::kDuration},
      {"gpu__time_duration.sum", NcuNamedField::kDuration},
      {"Registers Per Thread", NcuNamedField::kRegisters},
      {"launch__registers_per_thread", NcuNamedField::kRegisters},
      {"Static Shared Memory Per Block", NcuNamedField::kStaticShared},
      {"launch__shared_mem_per_block_static", NcuNamedField::kStaticShared},
      {"Dynamic Shared Memory Per Block", NcuNamedField::kDynamicShared},
      {"launch__shared_mem_per_block_dynamic", NcuNamedField::kDynamicShared},
      {"# SMs", NcuNamedField::kSmCount},
      {"launch__sm_count", NcuNamedField::kSmCount},
  }};
  for (const auto& e : kFields) {
    if (e.name == metric_name) return e.field;
  }
  return NcuNamedField::kNone;
}

std::string ncu_metric_key(std::string_view section, std::string_view body, std::string_view name) {
  std::string key;
  for (std::string_view part : {section, body, name}) {
    if (part.empty()) continue;
    if (!key.empty()) key += " / ";
    key += part;
  }
  return key;
}

void apply_ncu_named_field(NcuNamedField field, double value, model::Launch& launch,
                           model::Profile& profile) {
  switch (field) {
    case NcuNamedField::kDuration:
      if (!launch.duration_ns) launch.duration_ns = value;
      return;
    case NcuNamedField::kRegisters:
      if (launch.registers_per_thread < 0) launch.registers_per_thread = static_cast<std::int32_t>(value);
      return;
    case NcuNamedField::kStaticShared:
      if (launch.static_shared_bytes < 0) launch.static_shared_bytes = static_cast<std::int64_t>(value);
      return;
    case NcuNamedField::kDynamicShared:
      if (launch.dynamic_shared_bytes < 0) launch.dynamic_shared_bytes = static_cast<std::int64_t>(value);
      return;
    case NcuNamedField::kSmCount:
      if (launch.device_ordinal >= 0) {
        model::Device& d = profile.device(launch.device_ordinal);
        if (!d.sm_count) d.sm_count = static_cast<std::int64_t>(value);
      }
      return;
    case NcuNamedField::kNone:
      return;
  }
}

bool next_ncu_row(CsvScanner& scanner, CsvRecord& rec) {
  while (!scanner.at_end()) {
    if (is_ncu_console_line(scanner.peek_line())) {
      scanner.skip_line();
      continue;
    }
    if (!scanner.next(rec)) return false;
    if (!is_blank_record(rec)) return true;
  }
  return false;
}

}  // namespace kernlens::ingest
