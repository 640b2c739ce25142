#include "kernlens/model/input_format.h"

#include <array>
#include <utility>

namespace kernlens::model {

std::string_view format_id(InputFormat format) {
  static constexpr std::array<std::pair<InputFormat, std::string_view>, 8> kIds = {{
      {InputFormat::kNcuRawCsv, "ncu-raw-csv"},
      {InputFormat::kNcuDetailsCsv, "ncu-details-csv"},
      {InputFormat::kNcuSummaryCsv, "ncu-summary-csv"},
      {InputFormat::kNsysSqlite, "nsys-sqlite"},
      {InputFormat::kNsysStatsCsv, "nsys-stats-csv"},
      {InputFormat::kPytorchTrace, "pytorch-trace"},
      {InputFormat::kKltrace, "kltrace"},
      {InputFormat::kRunDirectory, "kernlens-run"},
  }};
  for (const auto& [f, id] : kIds) {
    if (f == format) return id;
  }
  return {};
}

}  // namespace kernlens::model
