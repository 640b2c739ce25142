// Communication kernels (NCCL, NVSHMEM, custom all-reduce: the kernel rules' op class "comm")
// are left out of the deep pass: ncu's kernel replay of a collective on one rank cannot finish
// while the other ranks do not replay it (issue 24: 409 s of "ncu: 0/4 kernels" until killed).
// Their time is discovery's; the deep pass aims at the compute kernels, and its coverage is a
// share of compute kernel time.
#pragma once

#include <string>
#include <vector>

#include "kernlens/analysis/aggregate.h"

namespace kernlens::profile {

struct CommSplit {
  // The aggregate without the communication kernels: its total kernel time is compute time,
  // and each kernel's share is of that.
  analysis::Aggregate compute;
  double comm_ns = 0;                   // the communication kernels' time
  std::vector<std::string> comm_names;  // their names as shown, by time
};

CommSplit split_communication(const model::Profile& profile, const analysis::Aggregate& aggregate);

}  // namespace kernlens::profile
