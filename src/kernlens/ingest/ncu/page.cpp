#include "kernlens/ingest/ncu/page.h"

#include <algorithm>
#include <array>
#include <cctype>

#include "kernlens/common/numeric.h"
#include "kernlens/ingest/ncu/nvtx.h"
#include "kernlens/ingest/ncu/values.h"

namespace kernlens::ingest {

std::optional<HeaderLocation> find_ncu_header(std::string_view data) {
  return find_csv_header(data, "Kernel Name", [](const CsvRecord& rec) {
    return std::find(rec.fields.begin(), rec.fields.end(), "Kernel Name") != rec.fields.end();
  });
}

namespace {

// A page is recognised by columns its header must have; the first match wins. Both long
// pages have "Metric Name"; only the summary has "Invocations". The columns a reader needs
// beyond these are checked by the reader, which names what is missing.
struct PageSignature {
  NcuPage page;
  std::array<std::string_view, 2> columns;
};
constexpr std::array kPageSignatures = {
    PageSignature{NcuPage::kSummary, {"Invocations", "Metric Name"}},
    PageSignature{NcuPage::kDetails, {"Section Name", "Metric Name"}},
    PageSignature{NcuPage::kRaw, {"Kernel Name", "Kernel Name"}},
};

// Columns only Nsight Compute CSV pages have: a header with one of them but no "Kernel Name"
// is an ncu export missing its most important column.
constexpr std::array<std::string_view, 7> kNcuMarkerColumns = {
    "ID", "Process ID", "Host Name", "Section Name", "Metric Name", "Invocations", "gpu__time_duration.sum"};

bool has_column(const CsvRecord& rec, std::string_view column) {
  return std::find(rec.fields.begin(), rec.fields.end(), column) != rec.fields.end();
}

}  // namespace

std::optional<NcuPage> ncu_page(std::string_view bytes) {
  auto header_at = find_ncu_header(bytes);
  if (!header_at) return std::nullopt;
  CsvScanner scanner(bytes.substr(header_at->offset), header_at->line);
  CsvRecord header;
  scanner.next(header);
  for (const auto& sig : kPageSignatures) {
    if (has_column(header, sig.columns[0]) && has_column(header, sig.columns[1])) return sig.page;
  }
  return std::nullopt;
}

std::optional<NearMiss> ncu_near_miss(std::string_view bytes) {
  if (find_ncu_header(bytes)) return std::nullopt;
  CsvScanner scanner(strip_bom(bytes));
  CsvRecord first;  // the first line that is not ncu console output or blank
  if (next_ncu_row(scanner, first)) {
    for (auto marker : kNcuMarkerColumns) {
      if (has_column(first, marker)) {
        return NearMiss{"missing column 'Kernel Name' in the Nsight Compute CSV header", first.line, false};
      }
    }
  }
  return NearMiss{"no CSV header with a 'Kernel Name' column", 0, true};
}

Result<NcuHeader> read_ncu_header(std::string_view bytes, std::string_view page,
                                  std::initializer_list<std::string_view> required, ReadContext& ctx) {
  auto header_at = find_ncu_header(bytes);
  if (!header_at) {
    return ctx.error(0, "not an Nsight Compute " + std::string(page) +
                            " CSV: no header row with a 'Kernel Name' column");
  }
  CsvScanner scanner(bytes.substr(header_at->offset), header_at->line);
  CsvRecord rec;
  scanner.next(rec);
  if (!rec.closed || scanner.at_end()) {
    return ctx.error(rec.line, "the file ends in the header row: it is truncated or holds no launches");
  }
  NcuHeader header{ColumnMap(rec.fields), std::move(scanner), header_at->offset, rec.line};
  for (std::string_view column : required) {
    if (!header.columns.find(column)) {
      return ctx.error(rec.line, "missing column '" + std::string(column) + "'");
    }
  }
  return header;
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

std::vector<std::size_t> NcuLaunchColumns::indices() const {
  std::vector<std::size_t> out;
  for (const auto& c : {id_, pid_, process_name_, host_, push_pop_, start_end_, name_, context_,
                        stream_, block_, grid_, device_, cc_}) {
    if (c) out.push_back(*c);
  }
  return out;
}

Status NcuLaunchColumns::stage_of(std::string_view push_pop, std::string_view start_end,
                                  std::int64_t line, model::Launch& launch) {
  if (have_stage_ && push_pop == last_push_pop_ && start_end == last_start_end_) {
    launch.stage = last_stage_;
    launch.thread_id = last_thread_;
    return ok_status();
  }
  model::StageKey stage;
  std::int64_t thread_id = model::kUnknown;
  std::string why;
  if (!trim(push_pop).empty()) {
    auto cell = parse_ncu_nvtx_cell(push_pop, model::RangeKind::kPushPop, why);
    if (!cell) return ctx_.error(line, "NVTX push/pop column: " + why);
    thread_id = cell->thread_id;
    stage.push_pop = std::move(cell->ranges);
  }
  if (!trim(start_end).empty()) {
    auto cell = parse_ncu_nvtx_cell(start_end, model::RangeKind::kStartEnd, why);
    if (!cell) return ctx_.error(line, "NVTX start/end column: " + why);
    stage.start_end = std::move(cell->ranges);
  }
  have_stage_ = true;
  last_push_pop_.assign(push_pop);
  last_start_end_.assign(start_end);
  last_thread_ = thread_id;
  last_stage_ = ctx_.profile.intern_stage(std::move(stage));
  launch.stage = last_stage_;
  launch.thread_id = last_thread_;
  return ok_status();
}

Status NcuLaunchColumns::process_of(std::string_view pid, std::string_view host,
                                    std::string_view name, std::int64_t line, model::Launch& launch) {
  if (!have_process_ || pid != last_pid_ || host != last_host_ || name != last_process_name_) {
    std::int64_t pid_value = model::kUnknown;
    if (!trim(pid).empty()) {
      auto v = parse_ncu_integer(pid);
      if (!v) {
        return ctx_.error(line, "column 'Process ID': expected an integer, got '" +
                                    std::string(trim(pid)) + "'");
      }
      pid_value = *v;
    }
    last_process_ = ctx_.profile.intern_process(model::ProcessInfo{std::string(host), pid_value, std::string(name)});
    have_process_ = true;
    last_pid_.assign(pid);
    last_host_.assign(host);
    last_process_name_.assign(name);
  }
  launch.process = last_process_;
  return ok_status();
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
  if (name != last_name_ || ctx_.profile.names.size() == 0) {
    last_name_id_ = ctx_.profile.names.intern(name);
    last_name_.assign(name);
  }
  launch.name = last_name_id_;
  launch.input = ctx_.input_index;

  std::int64_t launch_id = model::kUnknown;
  if (auto s = integer(id_, "ID", launch_id); !s) return s;
  if (launch_id != model::kUnknown && !model::Id32::fits(launch_id)) {
    return ctx_.error(rec.line, "column 'ID': " + std::to_string(launch_id) + " is no launch ID (0 to 2^32 - 2)");
  }
  launch.id = launch_id;
  for (auto [col, what, to] : {std::tuple{context_, "Context", &launch.context_id},
                               std::tuple{stream_, "Stream", &launch.stream_id}}) {
    std::int64_t id = *to;
    if (auto s = integer(col, what, id); !s) return s;
    auto narrow = model::stream_id_of(id);
    if (!narrow) {
      return ctx_.error(rec.line, "column '" + std::string(what) + "': " + std::to_string(id) +
                                      " needs more than CUPTI's 32 bits");
    }
    *to = *narrow;
  }
  std::int64_t device = model::kUnknown;
  if (auto s = integer(device_, "Device", device); !s) return s;

  model::LaunchConfig config = ctx_.profile.config_of(launch);
  for (auto [col, what, dim] : {std::tuple{block_, "Block Size", &config.block},
                                std::tuple{grid_, "Grid Size", &config.grid}}) {
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
  launch.config = ctx_.profile.intern_config(config);
  if (auto s = process_of(cell(pid_), cell(host_), cell(process_name_), rec.line, launch); !s) return s;

  if (device != model::kUnknown) {
    auto ordinal = exact_integer<std::int16_t>(static_cast<double>(device));
    if (!ordinal || *ordinal < 0) {
      return ctx_.error(rec.line, "column 'Device': " + std::to_string(device) + " is not a device ordinal");
    }
    launch.device_ordinal = *ordinal;
    model::Device& d = ctx_.profile.device(launch.device_ordinal);
    if (d.cc.empty()) d.cc = std::string(trim(cell(cc_)));
  }
  return stage_of(cell(push_pop_), cell(start_end_), rec.line, launch);
}

}  // namespace kernlens::ingest

namespace kernlens::ingest {

NcuNamedField ncu_named_field(std::string_view metric_name) {
  struct Entry {
    std::string_view name;
    NcuNamedField field;
  };
  static constexpr std::array<Entry, 12> kFields = {{
      {"Duration", NcuNamedField::kDuration},
      {"gpu__time_duration.sum", NcuNamedField::kDuration},
      {"gpu__time_duration.avg", NcuNamedField::kDuration},  // equal to .sum for one launch
      {"gpu__time_duration", NcuNamedField::kDuration},
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

std::optional<std::string> no_value_problem(NcuNamedField field, std::string_view cell) {
  if (field != NcuNamedField::kDuration) return std::nullopt;
  std::string text(trim(cell));
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.erase(0, 1);
  if (text != "inf" && text != "nan" && text != "infinity") return std::nullopt;
  return "the launch's duration is '" + std::string(trim(cell)) + "', which no GPU measures";
}

bool apply_ncu_named_field(NcuNamedField field, double value, model::Launch& launch,
                           model::Profile& profile) {
  switch (field) {
    case NcuNamedField::kDuration:
      if (!plausible_duration_ns(value)) return false;
      if (!launch.duration_ns) launch.duration_ns = value;
      return true;
    case NcuNamedField::kRegisters: {
      auto v = exact_integer<std::int32_t>(value);
      if (!v || *v < 0) return false;
      profile.edit_config(launch, [&](model::LaunchConfig& c) {
        if (c.registers_per_thread < 0) c.registers_per_thread = *v;
      });
      return true;
    }
    case NcuNamedField::kStaticShared:
    case NcuNamedField::kDynamicShared: {
      auto v = exact_integer<std::int64_t>(value);
      if (!v || *v < 0) return false;
      profile.edit_config(launch, [&](model::LaunchConfig& c) {
        std::int64_t& slot = field == NcuNamedField::kStaticShared ? c.static_shared_bytes : c.dynamic_shared_bytes;
        if (slot < 0) slot = *v;
      });
      return true;
    }
    case NcuNamedField::kSmCount: {
      auto v = exact_integer<std::int64_t>(value);
      if (!v || *v <= 0) return false;
      if (launch.device_ordinal >= 0) {
        model::Device& d = profile.device(launch.device_ordinal);
        if (!d.sm_count) d.sm_count = *v;
      }
      return true;
    }
    case NcuNamedField::kNone:
      return true;
  }
  return true;
}

bool next_ncu_row(CsvScanner& scanner, CsvRecord& rec) {
  while (!scanner.at_end()) {
    if (scanner.peek_byte() == '=' && is_ncu_console_line(scanner.peek_line())) {
      scanner.skip_line();
      continue;
    }
    if (!scanner.next(rec)) return false;
    if (!is_blank_record(rec)) return true;
  }
  return false;
}

}  // namespace kernlens::ingest
