// Pieces shared by the Nsight Compute CSV readers (raw, details, summary pages): the page a
// file holds, finding its header among console lines, and the launch identity columns (name,
// ids, dimensions, device, NVTX state) common to all pages.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernlens/ingest/csv/header.h"
#include "kernlens/ingest/csv/scanner.h"
#include "kernlens/ingest/reader.h"

namespace kernlens::ingest {

// The pages of an ncu CSV export, told apart by their header's columns.
enum class NcuPage : std::uint8_t { kRaw, kDetails, kSummary };

// The page `bytes` hold; nullopt without an ncu header (a line with a "Kernel Name" field).
std::optional<NcuPage> ncu_page(std::string_view bytes);

// For text that is no ncu page: a header of ncu's own columns that lacks "Kernel Name" (at
// its line), else that no header has one. nullopt when an ncu header is there.
std::optional<NearMiss> ncu_near_miss(std::string_view bytes);

// Finds the CSV header: the first line with a "Kernel Name" field. Lines before it (ncu's
// ==PROF== progress, the program's own output) are skipped. nullopt when there is none.
std::optional<HeaderLocation> find_ncu_header(std::string_view data);

struct NcuHeader;

// Finds and reads the header row of an ncu CSV `page` ("raw", "details", "summary") and
// checks that it has the `required` columns. Errors: no header, a file that ends in it,
// a missing column (at the header's line).
Result<NcuHeader> read_ncu_header(std::string_view bytes, std::string_view page,
                                  std::initializer_list<std::string_view> required, ReadContext& ctx);

struct NcuHeader {
  ColumnMap columns;
  CsvScanner rows;            // positioned on the line after the header
  std::size_t rows_base = 0;  // byte offset in the file of the scanner's first byte
  std::int64_t line = 0;      // the header's line
};

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
