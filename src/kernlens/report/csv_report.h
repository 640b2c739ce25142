// `kernlens analyze --format csv`: the kernel, kernel-family and stage tables for spreadsheets
// and data frames. RFC 4180 CSV (CRLF line ends, fields quoted where they hold a comma, a quote
// or a line break), raw units as in the JSON output (ns, FLOP, bytes, 0-1 shares, ncu's 0-100
// percentages), an empty field for a value that was not measured.
//
// One table: a plain CSV file with one header row. All three: sections in one file, each a
// line "# kernels" (families, stages), its header and its rows, and a blank line between them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "kernlens/analysis/analysis.h"
#include "kernlens/model/profile.h"

namespace kernlens::report {

enum class CsvTable { kKernels, kFamilies, kStages };

// "kernels", "families", "stages"; nullopt for any other name.
std::optional<CsvTable> csv_table(std::string_view name);

// `table`: one table, or all three when absent. `top`: kernel and family rows (0: all).
std::string analysis_csv(const model::Profile& profile, const analysis::Analysis& analysis,
                         std::optional<CsvTable> table, std::size_t top);

}  // namespace kernlens::report
