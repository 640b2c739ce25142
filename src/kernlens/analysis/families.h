// Kernel families: the kernels that share a base name (names/base_name.h), e.g. every dtype
// and vector width of at::vectorized_elementwise_kernel<mul>, with their time summed.
#pragma once

#include <vector>

#include "kernlens/analysis/aggregate.h"

namespace kernlens::analysis {

// Classifies the name of each kernel row (rows are distinct names, so each name once), sets
// the rows' `demangled` and `family`, and returns the families ordered like the kernels: by
// total time, descending, then by base name.
std::vector<FamilyRow> group_families(std::vector<KernelRow>& kernels,
                                      const model::Profile& profile,
                                      const names::KernelClassifier& classifier,
                                      const Totals& totals);

}  // namespace kernlens::analysis
