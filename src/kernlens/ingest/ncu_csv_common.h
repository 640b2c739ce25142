// Pieces shared by the Nsight Compute CSV readers (raw, details, summary pages):
// finding the header among console lines, columns by name, and the launch identity
// columns (name, ids, dimensions, device, NVTX state) common to all pages.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernlens/ingest/csv.h"
#include "kernlens/ingest/reader.h"

namespace kernlens::ingest {

struct HeaderLocation {
  std::size_t offset = 0;  // byte offset of the header line (after any BOM)
  std::int64_t line = 1;
};

// Finds the CSV header: the first line with a "Kernel Name" field. Lines before it (ncu's
// ==PROF== progress, the program's own output) are skipped. nullopt when there is none.
std::optional<HeaderLocation> find_ncu_header(std::string_view data);

// The first line that `is_header` accepts as a CSV record. Only lines whose text contains
// `marker` are parsed, so that long foreign lines cost a search, not a parse.
std::optional<HeaderLocation> find_csv_header(std::string_view data, std::string_view marker,
                                              const std::function<bool(const CsvRecord&)>& is_header);

class ColumnMap;
struct NcuHeader;

// Finds and reads the header row of an ncu CSV `page` ("raw", "details", "summary") and
// checks that it has the `required` columns. Errors: no header, a file that ends in it,
// a missing column (at the header's line).
Result<NcuHeader> read_ncu_header(std::string_view bytes, std::string_view page,
                                  std::initializer_list<std::string_view> required, ReadContext& ctx);

class ColumnMap {
 public:
  explicit ColumnMap(const std::vector<std::string_view>& header);
  std::optional<std::size_t> find(std::string_view name) const;
  std::optional<std::size_t> find_prefix(std::string_view prefix) const;
  std::size_t size() const { return names_.size(); }
  const std::string& name(std::size_t i) const { return names_[i]; }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::size_t> index_;
};

struct NcuHeader {
  ColumnMap columns;
  CsvScanner rows;            // positioned on the line after the header
  std::size_t rows_base = 0;  // byte offset in the file of the scanner's first byte
  std::int64_t line = 0;      // the header's line
};

// True for a record that is an empty line.
inline bool is_blank_record(const CsvRecord& rec) {
  return rec.fields.size() == 1 && rec.fields[0].empty();
}

// Reads the columns every ncu page uses to identify a launch. Construct once per file.
class NcuLaunchColumns {
 public:
  NcuLaunchColumns(const ColumnMap& columns, ReadContext& ctx);

  // Whether the page has a "Kernel Name" column (every page must).
  bool has_kernel_name() const { return name_.has_value(); }
  // The launch's identity from one row. Errors carry the row's line.
  Status fill(const CsvRecord& rec, model::Launch& launch);
  // The highest column index fill() reads (rows must be at least this wide).
  std::size_t last_index() const { return last_; }
  // The column indices fill() reads.
  std::vector<std::size_t> indices() const;

 private:
  Status stage_of(std::string_view push_pop, std::string_view start_end, std::int64_t line,
                  model::Launch& launch);
  Status process_of(std::string_view pid, std::string_view host, std::string_view name,
                    std::int64_t line, model::Launch& launch);

  ReadContext& ctx_;
  std::optional<std::size_t> id_, pid_, process_name_, host_, push_pop_, start_end_, name_;
  std::optional<std::size_t> context_, stream_, block_, grid_, device_, cc_;
  std::size_t last_ = 0;
  // Consecutive rows mostly share their NVTX state, process and name: cache the cells.
  bool have_stage_ = false;
  std::string last_push_pop_, last_start_end_;
  model::StageId last_stage_ = 0;
  std::int64_t last_thread_ = model::kUnknown;
  bool have_process_ = false;
  std::string last_pid_, last_host_, last_process_name_;
  std::uint32_t last_process_ = 0;
  std::string last_name_;
  model::NameId last_name_id_ = 0;
};

// Parses an integer cell ("1,024" allowed); nullopt when it is not one.
std::optional<std::int64_t> parse_ncu_integer(std::string_view cell);

}  // namespace kernlens::ingest

namespace kernlens::ingest {

// Launch fields that the details and summary pages report as named metrics. The names are
// the pages' labels, or the raw metric names under `--print-metric-name name`.
enum class NcuNamedField : std::uint8_t { kNone, kDuration, kRegisters, kStaticShared, kDynamicShared, kSmCount };
NcuNamedField ncu_named_field(std::string_view metric_name);

// "Section / Body / Name" with empty parts left out.
std::string ncu_metric_key(std::string_view section, std::string_view body, std::string_view name);

// Applies a named field's value to the launch (and its device). First value wins.
// False when the value cannot be that field (negative, fractional or too large a count).
// For a cell without a value (CellKind::kNoValue) of the metric that is `field`: fine for
// a metric ncu could not compute ("n/a"), an error for a duration of "inf" or "nan", which
// no GPU measures (dropping the launch's time without a word would be silent loss).
std::optional<std::string> no_value_problem(NcuNamedField field, std::string_view cell);

[[nodiscard]] bool apply_ncu_named_field(NcuNamedField field, double value, model::Launch& launch,
                                         model::Profile& profile);

// The next record that is neither ncu console output nor a blank line.
bool next_ncu_row(CsvScanner& scanner, CsvRecord& rec);

}  // namespace kernlens::ingest
