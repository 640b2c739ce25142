#include "kernlens/ingest/ncu/raw.h"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kernlens/common/bits.h"
#include "kernlens/common/chunk_reader.h"
#include "kernlens/common/file.h"
#include "kernlens/common/memory.h"
#include "kernlens/common/numeric.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/ingest/csv/scanner.h"
#include "kernlens/ingest/ncu/page.h"
#include "kernlens/ingest/ncu/values.h"
#include "kernlens/ingest/part_merge.h"
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

// Which columns a row is read for and how, computed once from the header and units rows.
struct RawLayout {
  std::size_t width = 0;
  std::vector<std::string> names;  // header, for messages
  std::vector<ColumnPlan> plan;
  std::vector<std::pair<std::size_t, const DeviceAttributeColumn*>> device_plan;
  std::vector<std::size_t> decoded;  // every column a row is read for, ascending
};

RawLayout make_layout(const ColumnMap& columns, const std::vector<std::string>& units,
                      const NcuLaunchColumns& identity, ReadContext& ctx) {
  static constexpr std::array<std::string_view, 13> kIdentityColumns = {
      "ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
      "Block Size", "Grid Size", "Device", "CC", "thread Domain:Push/Pop_Range",
      "Id:Domain:Start/Stop_Range"};
  RawLayout layout;
  layout.width = columns.size();
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string& name = columns.name(i);
    layout.names.push_back(name);
    bool is_identity = false;
    for (auto id : kIdentityColumns) is_identity = is_identity || starts_with(name, id);
    if (is_identity) continue;
    if (starts_with(name, "device__attribute_")) {
      for (const auto& d : kDeviceAttributeColumns) {
        if (d.column == name) layout.device_plan.push_back({i, &d});
      }
      continue;
    }
    std::string_view unit = i < units.size() ? std::string_view(units[i]) : std::string_view();
    model::UnitScale scale = model::to_base_unit(unit);
    ColumnPlan plan;
    plan.index = i;
    plan.pow10 = scale.pow10;
    plan.field = ncu_named_field(name);
    plan.keep_metric = ctx.wants_metric(name);
    plan.numeric = !unit.empty() || plan.field != NcuNamedField::kNone;
    if (!plan.keep_metric && plan.field == NcuNamedField::kNone) continue;
    if (plan.keep_metric) plan.metric = ctx.profile.metrics.intern(name, scale.base_unit);
    layout.plan.push_back(plan);
  }
  // One duration column is enough: ncu writes .avg, .max, .min and .sum, equal for a launch.
  bool have_duration = false;
  for (std::string_view preferred : {"gpu__time_duration.sum", "gpu__time_duration.avg", "gpu__time_duration"}) {
    for (auto& plan : layout.plan) {
      if (plan.field != NcuNamedField::kDuration || layout.names[plan.index] != preferred) continue;
      if (have_duration) plan.field = NcuNamedField::kNone;
      have_duration = true;
    }
  }
  layout.plan.erase(std::remove_if(layout.plan.begin(), layout.plan.end(),
                                   [](const ColumnPlan& p) { return !p.keep_metric && p.field == NcuNamedField::kNone; }),
                    layout.plan.end());
  // Device columns are not decoded row by row: a device's first row is read again whole.
  layout.decoded = identity.indices();
  for (const auto& plan : layout.plan) layout.decoded.push_back(plan.index);
  std::sort(layout.decoded.begin(), layout.decoded.end());
  layout.decoded.erase(std::unique(layout.decoded.begin(), layout.decoded.end()), layout.decoded.end());
  return layout;
}

// The first row of each device a part of the rows saw, in order: its properties are read when
// the parts are merged, and only for a device no earlier part saw (as one thread reads them
// from the file's first row on the device only).
using DeviceRows = std::vector<std::pair<std::int32_t, std::string_view>>;

// Reads data rows (no header) into ctx.profile, one window of a file at a time.
class RowParser {
 public:
  // With `device_rows`, a device's first row is recorded there instead of read.
  RowParser(const RawLayout& layout, const ColumnMap& columns, ReadContext& ctx, std::size_t file_bytes,
            DeviceRows* device_rows = nullptr)
      : layout_(layout), ctx_(ctx), identity_(columns, ctx), file_bytes_(file_bytes), device_rows_(device_rows) {}

  struct Outcome {
    Status status = ok_status();
    std::size_t consumed = 0;  // bytes of the region read; the rest is a record cut short
    std::int64_t next_line = 0;
  };

  // Reads the rows of `region`, whose first line is `first_line` and which starts at byte
  // `file_offset` of the file. When `last` is false the region was cut off: a record not
  // ended by a line break is left for the next region. When it is true, a last row cut
  // short is a warning (the file is truncated).
  Outcome parse(std::string_view region, std::int64_t first_line, std::uint64_t file_offset, bool last) {
    Outcome out;
    CsvScanner scanner(region, first_line);
    scanner.select_fields(layout_.decoded);
    CsvRecord rec;
    const bool ends_with_break = !region.empty() && region.back() == '\n';
    while (!scanner.at_end()) {
      const std::size_t start = scanner.offset();
      const std::int64_t start_line = scanner.line();
      if (scanner.peek_byte() == '=' && is_ncu_console_line(scanner.peek_line())) {
        if (!last && region.find('\n', start) == std::string_view::npos) return stop_at(out, start, start_line);
        scanner.skip_line();
        continue;
      }
      scanner.next(rec);
      const bool whole = rec.closed && (!scanner.at_end() || ends_with_break);
      if (!last && !whole) return stop_at(out, start, start_line);
      if (is_blank_record(rec)) continue;
      if (rec.fields.size() != layout_.width || !rec.closed) {
        if (last && scanner.at_end()) {
          if (auto why = unclosed_quote(rec, scanner)) {
            out.status = ctx_.error(rec.line, *why);
            return out;
          }
          ctx_.warn(rec.line, "the last row is cut short (" + std::to_string(rec.fields.size()) +
                                  " of " + std::to_string(layout_.width) +
                                  " fields): the file is truncated; that launch is ignored");
          break;
        }
        out.status = ctx_.error(rec.line, "row has " + std::to_string(rec.fields.size()) +
                                              " fields, the header has " + std::to_string(layout_.width));
        return out;
      }
      if (Status s = read_launch(rec, region.substr(start, scanner.offset() - start)); !s) {
        out.status = s;
        return out;
      }
      if (rows_++ == 0) reserve_for(scanner.offset() - start);
      if (rows_ % 4096 == 0 && ctx_.progress) ctx_.progress(file_offset + scanner.offset());
    }
    out.consumed = region.size();
    out.next_line = scanner.line();
    return out;
  }

  std::size_t rows() const { return rows_; }
  void add_rows(std::size_t rows) { rows_ += rows; }

  // A device's properties from its first row, unless this parser has seen the device.
  void read_device_once(std::int32_t ordinal, std::string_view row_text) {
    if (!device_seen(ordinal)) read_device(row_text, ordinal);
  }

 private:
  static Outcome stop_at(Outcome& out, std::size_t offset, std::int64_t line) {
    out.consumed = offset;
    out.next_line = line;
    return out;
  }

  Status read_launch(const CsvRecord& rec, std::string_view row_text) {
    model::Launch launch;
    if (auto s = identity_.fill(rec, launch); !s) return s;
    if (launch.device_ordinal >= 0 && !device_seen(launch.device_ordinal)) {
      if (device_rows_) {
        device_rows_->emplace_back(launch.device_ordinal, row_text);
      } else {
        read_device(row_text, launch.device_ordinal);
      }
    }
    for (const ColumnPlan& plan : layout_.plan) {
      std::string_view cell = rec.fields[plan.index];
      NcuNumber n = parse_ncu_number(cell, plan.pow10);
      if (n.kind == CellKind::kNoValue) {
        if (auto why = no_value_problem(plan.field, cell)) return ctx_.error(rec.line, *why);
        continue;
      }
      if (n.kind == CellKind::kInvalid) {
        if (!plan.numeric) continue;  // a text attribute such as "PolicySpread"
        return ctx_.error(rec.line, "column '" + layout_.names[plan.index] + "': expected a number, got '" +
                                        std::string(trim(cell)) + "'");
      }
      if (plan.keep_metric) ctx_.profile.add_metric(launch, {*plan.metric, n.value});
      if (!apply_ncu_named_field(plan.field, n.value, launch, ctx_.profile)) {
        return ctx_.error(rec.line, "column '" + layout_.names[plan.index] + "': value " +
                                        std::string(trim(cell)) + " is out of range");
      }
    }
    ctx_.profile.launches.push_back(std::move(launch));
    return ok_status();
  }

  // A device's properties, from the first row that ran on it (scanned again in full).
  void read_device(std::string_view row_text, std::int32_t ordinal) {
    CsvScanner scanner(row_text);
    CsvRecord full;
    if (!scanner.next(full) || full.fields.size() != layout_.width) return;
    model::Device& d = ctx_.profile.device(ordinal);
    for (const auto& [index, column] : layout_.device_plan) {
      set_device_field(d, column->field, full.fields[index], parse_ncu_number(full.fields[index], column->pow10));
    }
  }

  // Sizes the metric pool and launch list from the first row, so that a big file does not
  // copy them over and over as they grow.
  void reserve_for(std::size_t first_row_bytes) {
    reserve_rows(first_row_bytes, ctx_.profile.launches.back().metrics_count);  // before reserve moves it
  }

 public:
  // The same from a row's size and metric count (merged parts: their first rows).
  void reserve_rows(std::size_t row_bytes, std::size_t metrics_per_row) {
    if (row_bytes == 0) return;
    // Rows vary in length; reserving half again more costs address space, not memory
    // (capacity that is never written is never faulted in).
    const std::size_t rows = file_bytes_ / row_bytes * 3 / 2 + 16;
    auto& launches = ctx_.profile.launches;
    launches.reserve(launches.size() + rows);
    advise_huge_pages(launches.data(), launches.capacity() * sizeof(model::Launch));
    auto& pool = ctx_.profile.metric_samples;
    pool.reserve(pool.size() + rows * metrics_per_row);
    advise_huge_pages(pool.data(), pool.capacity() * sizeof(model::MetricSample));
  }

 private:
  bool device_seen(std::int32_t ordinal) {
    for (auto o : devices_seen_) {
      if (o == ordinal) return true;
    }
    devices_seen_.push_back(ordinal);
    return false;
  }

  const RawLayout& layout_;
  ReadContext& ctx_;
  NcuLaunchColumns identity_;
  std::size_t file_bytes_;
  DeviceRows* device_rows_;
  std::size_t rows_ = 0;
  std::vector<std::int32_t> devices_seen_;
};

// One part of a region, parsed on a thread of its own into a profile of its own.
struct alignas(kThreadStateAlign) Part {  // filled row by row, slots side by side
  std::string_view text;
  std::size_t begin = 0;  // where `text` begins in what the region's round cut
  bool last = false;      // the round's last part
  model::Profile profile;
  DeviceRows device_rows;
  RowParser::Outcome out;
  std::size_t rows = 0;

  // Empty again for the next region, keeping the room of the launch list and metric pool (on
  // this kind of VM every first touch of a page costs about a microsecond).
  void reset(std::string_view part_text, std::uint32_t input_index) {
    auto launches = std::move(profile.launches);
    auto samples = std::move(profile.metric_samples);
    launches.clear();
    samples.clear();
    profile = model::Profile();
    profile.launches = std::move(launches);
    profile.metric_samples = std::move(samples);
    profile.inputs.resize(input_index + 1);
    device_rows.clear();
    text = part_text;
    out = {};
    rows = 0;
  }

  // Moves the lines of what the part read (counted from 1 at its start) by `shift`.
  void shift_lines(std::int64_t shift, std::uint32_t input_index) {
    auto shifted = [shift](Error& e) {
      if (e.line > 0) e.line += shift;
    };
    for (Error& w : profile.inputs[input_index].warnings) shifted(w);
    if (!out.status) {
      Error e = out.status.error();
      shifted(e);
      out.status = e;
    }
    out.next_line += shift;
  }
};

// The profile's launches and metric samples, appended part by part (merge_part).
struct MergeRoom {
  FaultedAppends<model::Launch> launches;
  FaultedAppends<model::MetricSample> samples;
  MergeRoom(model::Profile& profile, unsigned threads)
      : launches(profile.launches, threads), samples(profile.metric_samples, threads) {}
};

// Appends what `part` read to `ctx.profile`, as if `main` had read it: devices read from
// their first row where `main` never saw them, then the launches (append_part).
void merge_part(Part& part, RowParser& main, ReadContext& ctx, MergeRoom& room) {
  model::Profile& into = ctx.profile;
  model::Profile& from = part.profile;
  for (const model::Device& d : from.devices) {
    into.device(d.ordinal);  // created in the order a single thread creates them
    for (const auto& [ordinal, row] : part.device_rows) {
      if (ordinal == d.ordinal) main.read_device_once(ordinal, row);
    }
    into.device(d.ordinal).fill_from(d);
  }
  if (main.rows() == 0 && part.rows > 0) main.reserve_rows(part.text.size() / part.rows, from.launches.front().metrics_count);
  room.launches.make_room(from.launches.size());
  room.samples.make_room(from.metric_samples.size());
  append_part(into, from, ctx.input_index);
  main.add_rows(part.rows);
}

// A region is cut into at least this many parts a thread, which the threads take as they come
// free and merge in order as each is ready (run_ordered_parts): while one thread merges a part,
// the others parse on, and no thread waits for a region's last part until the region ends. At
// most kSlotsPerThread parts a thread are parsed and not yet merged.
constexpr std::size_t kPartsPerThread = 4;
constexpr std::size_t kSlotsPerThread = 3;

// Parts are about this long where a region holds more than kPartsPerThread a thread (a mapped
// file on several threads is one region: its parts run on without a barrier). The parts read
// and not yet merged hold their text's pages: 1 MiB parts kept a gigabyte's peak where windows
// had it (100 MB on 2 threads, 150 on 16), 2 MiB parts took 107 and 197 and were no faster.
constexpr std::size_t kPartBytes = 1 << 20;

// Where the parts of a region's rest begin, as far as known: guessed one at a time as the
// parts are planned (GuessedCsvRecordCuts), or all at once where the quotes allow
// (split_csv_records).
class PartCuts {
 public:
  PartCuts(std::string_view rest, std::size_t parts, std::size_t min_bytes, bool guess) {
    if (guess) guessed_.emplace(rest, parts, min_bytes);
    else cuts_ = split_csv_records(rest, parts, min_bytes);
  }
  // Whether there is a cut i (where part i + 1 begins).
  bool has(std::size_t i) {
    while (guessed_ && cuts_.size() <= i) {
      if (auto cut = guessed_->next()) cuts_.push_back(*cut);
      else guessed_.reset();
    }
    return i < cuts_.size();
  }
  std::size_t operator[](std::size_t i) const { return cuts_[i]; }

 private:
  std::optional<GuessedCsvRecordCuts> guessed_;
  std::vector<std::size_t> cuts_;
};

// The parts of the regions of one file, kept from one region to the next (their tables keep
// their room), whether cuts are still guessed (GuessedCsvRecordCuts) for this file, and what
// to call, if anything, with the file offset before which every row is merged.
struct Parts {
  std::vector<Part> parts;
  bool guess_cuts = true;
  std::function<void(std::uint64_t)> merged_before;
};

// Reads the rows of `region` as main.parse does, on up to `threads` threads: the region is
// cut at record boundaries, each part parsed into a profile of its own and the parts merged
// in order as they are ready (run_ordered_parts), so the profile is the one a single thread
// makes. Part k began where a record began if every part before it ended at its cut; one that
// does not (its cut fell inside a record: a line break in a quoted field, or a stray quote in
// a console line) is merged up to where it stopped, the parts after it are not, and the rest
// of the region is cut again, where the quotes allow (and the file's later regions too); when
// even those cuts fail, the rest is parsed on one thread.
RowParser::Outcome parse_region(RowParser& main, const RawLayout& layout, const ColumnMap& columns, ReadContext& ctx,
                                Parts& parts, std::string_view region, std::int64_t first_line,
                                std::uint64_t file_offset, bool last) {
  const ReadOptions defaults;
  const ReadOptions& options = ctx.options ? *ctx.options : defaults;
  const unsigned threads = options.thread_count();
  std::size_t from = 0;  // where the next round starts: a record boundary of the region
  std::int64_t line = first_line;
  for (bool quote_cuts_failed = false;;) {
    const std::string_view rest = region.substr(from);
    const std::size_t wanted = std::max(std::size_t{threads} * kPartsPerThread, rest.size() / kPartBytes);
    PartCuts cuts(rest, wanted, options.min_part_bytes, parts.guess_cuts);
    if (quote_cuts_failed || threads < 2 || !cuts.has(0)) {
      RowParser::Outcome out = main.parse(rest, line, file_offset + from, last);
      out.consumed += from;
      return out;
    }
    const std::size_t slots = std::size_t{threads} * kSlotsPerThread;
    if (parts.parts.size() < slots) parts.parts.resize(slots);
    RowParser::Outcome out;
    MergeRoom room(ctx.profile, threads);
    bool cut_inside_a_record = false;
    auto has_part = [&](std::size_t i, std::size_t slot) {  // the cuts are only looked at here, one call at a time
      if (i > 0 && !cuts.has(i - 1)) return false;
      Part& part = parts.parts[slot];
      const std::size_t begin = i == 0 ? 0 : cuts[i - 1];
      part.reset(rest.substr(begin, (cuts.has(i) ? cuts[i] : rest.size()) - begin), ctx.input_index);
      part.begin = begin;
      part.last = !cuts.has(i);
      return true;
    };
    auto parse = [&](std::size_t, std::size_t slot) {
      Part& part = parts.parts[slot];
      ReadContext part_ctx{ctx.path, part.profile, ctx.input_index, nullptr, ctx.options};
      RowParser parser(layout, columns, part_ctx, part.text.size(), &part.device_rows);
      // Lines from 1 at the part's cut; shifted to the file's once the parts before it are merged.
      part.out = parser.parse(part.text, 1, 0, last && part.last);
      part.rows = parser.rows();
    };
    auto merge = [&](std::size_t, std::size_t slot) {
      Part& part = parts.parts[slot];
      part.shift_lines(line - 1, ctx.input_index);
      merge_part(part, main, ctx, room);
      out.status = part.out.status;
      out.consumed = from + part.begin + part.out.consumed;
      out.next_line = line = part.out.next_line;
      if (!part.out.status) return false;
      cut_inside_a_record = !part.last && part.out.consumed != part.text.size();
      if (parts.merged_before) parts.merged_before(file_offset + out.consumed);
      return !cut_inside_a_record;
    };
    run_ordered_parts(threads, slots, has_part, parse, merge);
    if (ctx.progress) ctx.progress(file_offset + out.consumed);
    if (!out.status || !cut_inside_a_record) return out;
    from = out.consumed;
    quote_cuts_failed = !parts.guess_cuts;
    parts.guess_cuts = false;
  }
}

// The header and units rows, and where the data rows begin.
struct RawStart {
  ColumnMap columns;
  RawLayout layout;
  std::size_t rows_at = 0;  // byte offset of the first data row
  std::int64_t rows_line = 0;
};

Result<RawStart> read_start(std::string_view bytes, ReadContext& ctx) {
  auto header = read_ncu_header(bytes, "raw", {}, ctx);
  if (!header) return header.error();
  CsvScanner& scanner = header->rows;
  CsvRecord rec;
  RawStart start{header->columns, {}, 0, 0};
  // The units row leaves the identity columns (ID, Kernel Name, ...) empty.
  std::size_t rows_at = scanner.offset();
  std::int64_t rows_line = scanner.line();
  if (!next_ncu_row(scanner, rec)) return ctx.error(scanner.line(), "no launches after the header row");
  bool has_units = true;
  for (auto name : {"Kernel Name", "ID"}) {
    auto col = start.columns.find(name);
    if (col && *col < rec.fields.size() && !trim(rec.fields[*col]).empty()) has_units = false;
  }
  std::vector<std::string> units;
  if (has_units) {
    if (rec.fields.size() != start.columns.size() || !rec.closed) {
      if (!rec.closed || scanner.at_end()) {
        return ctx.error(rec.line, "the file ends in the units row: it is truncated or holds no launches");
      }
      return ctx.error(rec.line, "units row has " + std::to_string(rec.fields.size()) +
                                     " fields, the header has " + std::to_string(start.columns.size()));
    }
    units.assign(rec.fields.begin(), rec.fields.end());
    rows_at = scanner.offset();
    rows_line = scanner.line();
  } else {
    ctx.warn(rec.line,
             "no units row after the header: numbers are taken as base units (ns, byte); "
             "export with `--page raw --csv` to keep it");
  }
  start.layout = make_layout(start.columns, units, NcuLaunchColumns(start.columns, ctx), ctx);
  start.rows_at = header->rows_base + rows_at;
  start.rows_line = rows_line;
  return start;
}

Status no_launches_unless(const RowParser& parser, std::int64_t line, ReadContext& ctx) {
  if (parser.rows() == 0) return ctx.error(line, "no launches after the header row");
  return ok_status();
}

Status read_mapped(FileMapping& file, ReadContext& ctx, std::size_t window_bytes);

}  // namespace

Status read_ncu_raw_csv(std::string_view bytes, ReadContext& ctx) {
  auto start = read_start(bytes, ctx);
  if (!start) return start.error();
  RowParser parser(start->layout, start->columns, ctx, bytes.size());
  Parts parts;
  auto out = parse_region(parser, start->layout, start->columns, ctx, parts, bytes.substr(start->rows_at),
                          start->rows_line, start->rows_at, true);
  if (!out.status) return out.status;
  return no_launches_unless(parser, start->rows_line, ctx);
}

Status read_ncu_raw_csv_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx) {
  // Windows that fit a core's L2 cache are read back while still there. With several threads
  // a mapped file is one window, read in parts of kPartBytes that run on without a barrier
  // (each window's end waited for its last part: 16 barriers for a gigabyte at 16 threads);
  // a streamed one comes in windows of 4 MiB a thread (a thread is worth starting for that much).
  const unsigned threads = ctx.threads();
  constexpr std::size_t kCarryBytes = 16 << 20;
  if (threads > 1) {
    if (auto file = FileMapping::open(path); file && !is_gzip(file->bytes()))
      return read_mapped(*file, ctx, std::numeric_limits<std::size_t>::max());
  }
  const std::size_t chunk = threads > 1 ? std::size_t{threads} * (4 << 20) : 256 << 10;
  return read_ncu_raw_csv_file(path, file_bytes, ctx, chunk, kCarryBytes);
}

namespace {

// The rows of a mapped file, window by window as the streamed reader cuts them (a window ends
// at every multiple of `window_bytes` of the file; the rows a window leaves unfinished begin the
// next; a header beyond the first window: the whole file at once), each window's parts parsed
// where the bytes lie, so that both give the same profile and errors, but that a record may be
// of any length, as when the file is one window (several threads): nothing is buffered, and a
// window whose tail is more than half of it is followed by one twice as long. The pages behind
// the rows read are given back, also while a window is read on several threads (every
// kReleaseBytes).
Status read_mapped(FileMapping& file, ReadContext& ctx, std::size_t window_bytes) {
  constexpr std::size_t kReleaseBytes = 8 << 20;
  const std::string_view bytes = file.bytes();
  auto start = read_start(bytes, ctx);
  if (!start) return start.error();
  if (start->rows_at > window_bytes || window_bytes >= bytes.size()) window_bytes = bytes.size();
  RowParser parser(start->layout, start->columns, ctx, bytes.size());
  Parts parts;
  parts.merged_before = [&](std::uint64_t offset) {  // within a window read on several threads
    if (offset < file.released() + kReleaseBytes) return;
    file.release_before(offset);
    if (ctx.progress) ctx.progress(offset);
  };
  std::size_t begin = start->rows_at;
  std::size_t end = start->rows_at / window_bytes * window_bytes;
  std::int64_t line = start->rows_line;
  while (true) {
    end = std::min(bytes.size(), end + window_bytes);
    const bool last = end == bytes.size();
    auto out = parse_region(parser, start->layout, start->columns, ctx, parts, bytes.substr(begin, end - begin), line,
                            begin, last);
    if (!out.status) return out.status;
    if (last) break;
    line = out.next_line;
    begin += out.consumed;
    if (end - begin > window_bytes / 2) window_bytes *= 2;  // a long record: scanned a few times, not once a window
    file.release_before(begin);
  }
  return no_launches_unless(parser, start->rows_line, ctx);
}

Status read_streamed(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx, std::size_t chunk_bytes,
                     std::size_t carry_bytes) {
  auto reader = ChunkReader::open(path, chunk_bytes, carry_bytes, ChunkReader::worth_reading_ahead());
  if (!reader) return reader.error();
  auto window = (*reader)->next({});
  if (!window) return window.error();
  auto start = read_start(*window, ctx);
  if (!start) {
    if ((*reader)->at_end()) return start.error();
    // The header is not within the first chunk (a long console preamble): read it whole.
    auto buffer = InputBuffer::open(path);
    if (!buffer) return buffer.error();
    return read_ncu_raw_csv(buffer->bytes(), ctx);
  }
  RowParser parser(start->layout, start->columns, ctx, static_cast<std::size_t>(file_bytes));
  std::string_view region = window->substr(start->rows_at);
  Parts parts;
  std::int64_t line = start->rows_line;
  std::uint64_t offset = start->rows_at;
  while (true) {
    const bool last = (*reader)->at_end();
    auto out = parse_region(parser, start->layout, start->columns, ctx, parts, region, line, offset, last);
    if (!out.status) return out.status;
    if (last) break;
    line = out.next_line;
    offset = (*reader)->offset() - (region.size() - out.consumed);
    auto next = (*reader)->next(region.substr(out.consumed));
    if (!next) return ctx.error(line, "cannot read the row: " + next.error().message);
    region = *next;
  }
  return no_launches_unless(parser, start->rows_line, ctx);
}

}  // namespace

Status read_ncu_raw_csv_file(const std::string& path, std::uint64_t file_bytes, ReadContext& ctx,
                             std::size_t chunk_bytes, std::size_t carry_bytes, FileAccess access) {
  if (access == FileAccess::kMapped) {
    if (auto file = FileMapping::open(path); file && !is_gzip(file->bytes())) {
      return read_mapped(*file, ctx, chunk_bytes);
    }
  }
  return read_streamed(path, file_bytes, ctx, chunk_bytes, carry_bytes);
}

bool is_ncu_raw_csv(std::string_view bytes) { return ncu_page(bytes) == NcuPage::kRaw; }

}  // namespace kernlens::ingest
