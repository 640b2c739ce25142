#include "kernlens/profile/comm_kernels.h"

namespace kernlens::profile {

CommSplit split_communication(const model::Profile& profile, const analysis::Aggregate& aggregate) {
  CommSplit split;
  split.compute = aggregate;
  split.compute.kernels.clear();
  for (const auto& row : aggregate.kernels) {
    if (aggregate.families[row.family].cls.op_class != names::OpClass::kComm) {
      split.compute.kernels.push_back(row);
      continue;
    }
    split.comm_ns += row.total_ns.value_or(0);
    split.comm_names.push_back(analysis::shown_name(profile, row));
  }
  if (split.comm_names.empty()) return split;
  if (split.compute.totals.kernel_time_ns) *split.compute.totals.kernel_time_ns -= split.comm_ns;
  for (auto& row : split.compute.kernels) {
    row.share.reset();  // a share of compute time, computed from the new total
    analysis::finish_time_stats(row, split.compute.totals);
  }
  return split;
}

}  // namespace kernlens::profile
