// Free TCP ports of this host, for children that listen: the deep pass's programs started
// beside discovery (early_start.h) and each deep run's own torch store under a launcher
// (rank_lockstep.h).
#pragma once

#include <vector>

#include "kernlens/common/error.h"

namespace kernlens::profile {

// The first of `count` TCP ports of 127.0.0.1 in a row that are free now and not among the
// `count` ports from each of `taken` (ranges handed out already, not bound yet), or an Error.
Result<int> free_local_ports(int count, const std::vector<int>& taken = {});

}  // namespace kernlens::profile
