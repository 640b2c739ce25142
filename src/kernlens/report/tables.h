// The content the HTML and Markdown reports share, as plain tables of formatted cells: both
// writers render these, so the two show the same numbers. Text is unescaped here; each writer
// escapes for its own language.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"
#include "kernlens/report/provenance.h"
#include "kernlens/model/scaling.h"

namespace kernlens::report {

struct Cell {
  std::string text;
  std::optional<double> sort_key;  // numeric order for sortable tables; absent: sort by text
  bool code = false;               // a kernel name or path: monospace, never reflowed
  std::string full;                // the whole text when `text` was cut short (hover in HTML)
  std::string brief;               // a shorter form for a writer that can show `full` on hover: a
                                   // kernel's base name (HTML); empty: `text`
  std::optional<Provenance> how;   // how the figure was obtained (hover and a mark in HTML)
};

// A row's details, for a writer that can unfold them (HTML): label and text pairs.
using Details = std::vector<std::pair<std::string, std::string>>;

struct Table {
  std::string id;  // HTML id, e.g. "kernels"
  std::vector<std::string> headers;
  std::vector<bool> numeric;  // per column: right-aligned
  std::vector<std::vector<Cell>> rows;
  std::string note;  // a line under the table ("12 more kernels: 3.2% of the time")
  std::vector<Details> details;  // per row (empty, or one per row): what the row's cells cut short
};

// Removes the columns named in `headers` whose cells all hold no value ("-"): a column that
// the inputs cannot fill (the report says once, elsewhere, which input would).
void drop_empty_columns(Table& t, const std::vector<std::string_view>& headers);

// What the report is about: the inputs and the command that was profiled.
struct ReportContext {
  std::vector<std::string> command;  // the profiled program's argv (run directories), or empty
  std::size_t top = 25;              // kernels in the kernel table, and the charts' top lists
};

// Key/value rows: inputs, GPU, command, kernel time, peaks, metric coverage, MFU.
Table summary_table(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx);
// Stage, kernel time, share, launches, wall, busy, gaps, FLOPs, MFU, deep-metric coverage.
Table stage_table(const analysis::Analysis& analysis);
// The top kernels: name, library, op class, bottleneck, time, share, launches, mean, roofline figures.
Table kernel_table(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx);
// Kernel time by operation class, largest first.
Table op_class_table(const analysis::Analysis& analysis);
// The top kernels' largest warp stall reasons.
Table stall_table(const model::Profile& profile, const analysis::Analysis& analysis, const ReportContext& ctx);

struct OpClassTime {
  std::string op_class;
  double total_ns = 0;
  double share = 0;  // of all kernel time
  std::uint64_t launches = 0;
};
// Kernel time per operation class, largest first (families with a known time).
std::vector<OpClassTime> time_by_op_class(const analysis::Analysis& analysis);

// What to do about one kernel: its verdict and ncu's and kernlens's advice.
struct KernelAdvice {
  std::string name;       // cut to a table's width
  std::string full_name;  // the whole demangled name
  std::string base_name;
  std::string share;  // "12.3%"
  std::string bottleneck;
  std::string reason;
  std::vector<analysis::Advice> advice;
};
// The top kernels that have a verdict reason or advice, at most `ctx.top`.
std::vector<KernelAdvice> advice_list(const model::Profile& profile, const analysis::Analysis& analysis,
                                      const ReportContext& ctx);

// The cross-model page's tables: one row per op class (or family, `families`) and point,
// with the GPU, dtype, batch and tokens columns where they vary; SOL, SM and memory in % of
// peak, the share of the point's kernel time, and how much of it ncu measured. The first 300
// rows; the note says how to query the rest from the database `db_name`.
Table scaling_table(const std::vector<model::ScalingCell>& cells, bool families, std::string id,
                    const std::string& db_name);

}  // namespace kernlens::report
