#include "kernlens/profile/kernels_csv.h"

#include <fmt/format.h>

#include "kernlens/common/escape.h"
#include "kernlens/names/rules.h"

namespace kernlens::profile {

std::string kernels_csv(const model::Profile& profile, const analysis::Aggregate& agg,
                        const std::unordered_set<std::string>& selected) {
  std::string out = "rank,total_ns,share,cumulative_share,launches,mean_ns,deep,library,op_class,base_name,name\n";
  double cumulative = 0;
  int rank = 0;
  auto number = [](const std::optional<double>& v, const char* format) {
    return v ? fmt::format(fmt::runtime(format), *v) : std::string();
  };
  for (const auto& row : agg.kernels) {
    const auto& cls = agg.families[row.family].cls;
    const std::string& name = profile.names[row.name];
    cumulative += row.share.value_or(0);
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}\n", ++rank, number(row.total_ns, "{:.0f}"),
                       number(row.share, "{:.6f}"), row.share ? fmt::format("{:.6f}", cumulative) : "",
                       row.launches, number(row.mean_ns, "{:.1f}"), selected.contains(name) ? "yes" : "no",
                       names::to_string(cls.library), names::to_string(cls.op_class), csv_field(cls.base_name),
                       csv_field(row.demangled.empty() ? name : row.demangled));
  }
  return out;
}

}  // namespace kernlens::profile
