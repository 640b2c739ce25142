// What would help a kernel: Nsight Compute's own rule results from the details page, summed
// over the kernel's launches, and kernlens's rules, which look at the whole picture (the
// verdict, the operation, how many launches) the way an engineer would.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/analysis/bottleneck.h"
#include "kernlens/analysis/kernel_metrics.h"
#include "kernlens/model/profile.h"

namespace kernlens::analysis {

struct Advice {
  std::string rule;  // "ncu:<RuleName>" or "kernlens:<rule-id>"
  std::string text;
  // Estimated share of the kernel's time a fix would save, 0..100 (ncu's estimate, weighted
  // by the time of the launches it was measured on); absent when there is no estimate.
  std::optional<double> est_speedup_pct;
};

// ncu's rule results of type OPT and WRN over a kernel's launches, added in order (add, then
// merge() a later stretch's: kSumStretchLaunches); advice() makes one entry per rule (its
// message with the largest estimated speedup), largest speedup first.
class NcuRuleSums {
 public:
  void add(const model::Profile& profile, std::span<const model::LaunchIndex> launch_indices);
  void merge(NcuRuleSums&& later);
  std::vector<Advice> advice() &&;

 private:
  struct RuleTotals {
    std::string text;
    double best_speedup = -1;  // of the message kept as the text
    double weighted_speedup = 0;
    bool any_estimate = false;
  };
  std::map<std::string, RuleTotals, std::less<>> by_rule_;  // ordered: ties in speedup stay stable
  double measured_ns_ = 0;  // time of the launches that carry rule results
};

// What kernlens sees about one kernel (or family).
struct AdviceInput {
  const KernelMetrics& metrics;
  const Verdict& verdict;
  std::string_view op_class;  // names::OpClass spelling: "gemm", "elementwise", ...; "" unknown
  std::uint64_t launches = 0;
  std::optional<double> mean_ns;
};

// kernlens's own rules (the table in advice.cpp); in table order.
std::vector<Advice> kernlens_advice(const AdviceInput& input);

}  // namespace kernlens::analysis
