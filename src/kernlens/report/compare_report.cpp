#include "kernlens/report/compare_report.h"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernlens/analysis/normalize.h"
#include "kernlens/common/text.h"
#include "kernlens/report/delta_format.h"
#include "kernlens/report/format.h"
#include "kernlens/report/markdown_report.h"
#include "kernlens/report/rank_compare_report.h"

namespace kernlens::report {
namespace {

using analysis::Comparison;
using analysis::Delta;
using analysis::KernelDelta;
using Json = nlohmann::ordered_json;

}  // namespace

std::string run_label(const model::RunRecord& r) {
  std::string s = r.meta.run_key;
  std::vector<std::string> parts;
  if (!r.meta.model.empty()) parts.push_back("model " + r.meta.model);
  if (r.meta.batch) parts.push_back(fmt::format("batch {}", *r.meta.batch));
  if (r.meta.tokens) parts.push_back(fmt::format("tokens {}", *r.meta.tokens));
  if (!r.meta.dtype.empty()) parts.push_back(r.meta.dtype);
  if (!r.meta.gpu.empty()) parts.push_back(r.meta.gpu);
  if (!parts.empty()) s += fmt::format(" ({})", fmt::join(parts, ", "));
  return s;
}

namespace {

std::string bottleneck_text(const KernelDelta& k) {
  if (k.bottleneck_changed()) return k.base->bottleneck + " -> " + k.candidate->bottleneck;
  return k.either().bottleneck;
}

// "3 -> 4", or "3" when the count did not change; '*' marks new or vanished kernels among them.
std::string kernel_counts(const analysis::OperationDelta& op) {
  std::string s = op.base_kernels == op.candidate_kernels ? fmt::format("{}", op.base_kernels)
                                                          : fmt::format("{}->{}", op.base_kernels, op.candidate_kernels);
  return op.kernels_changed ? s + "*" : s;
}

std::size_t shown(const Comparison& c, const CompareReportOptions& o) {
  return o.top ? std::min(o.top, c.kernels.size()) : c.kernels.size();
}

struct NewAndGone {
  std::size_t new_count = 0, gone_count = 0;
  double new_ns = 0, gone_ns = 0;
};

NewAndGone new_and_gone(const Comparison& c) {
  NewAndGone n;
  for (const auto& k : c.kernels) {
    if (k.match == analysis::MatchKind::kNew) ++n.new_count, n.new_ns += k.candidate_ns.value_or(0);
    if (k.match == analysis::MatchKind::kVanished) ++n.gone_count, n.gone_ns += k.base_ns.value_or(0);
  }
  return n;
}

std::string verdict_line(const Comparison& c) {
  return fmt::format("verdict: {}{}{}", analysis::verdict_name(c.verdict), c.reasons.empty() ? "" : ": ",
                     fmt::join(c.reasons, "; "));
}

// "kernel time per token (the work differs: batch 4 -> 8)"; empty for plain kernel time.
std::string figures_text(const Comparison& c) {
  auto n = analysis::parse_normalization(c.normalization);
  if (!n || *n == analysis::Normalization::kNone) return "";
  return fmt::format("kernel time {}{}", analysis::normalization_unit(*n),
                     c.normalization_reason.empty() ? "" : " (" + c.normalization_reason + ")");
}

}  // namespace

std::string compare_text(const Comparison& c, const CompareReportOptions& o) {
  std::string out = fmt::format("base:      {}\ncandidate: {}\n", run_label(*c.base), run_label(*c.candidate));
  if (auto figures = figures_text(c); !figures.empty()) out += "figures:    " + figures + "\n";
  out += fmt::format("statistics: {}\n", analysis::kNoStatistics);
  out += fmt::format("total kernel time: {} -> {} ({}, {})\n\n", ns_or_dash(c.total.base_ns),
                     ns_or_dash(c.total.candidate_ns), change_text(c.total), signed_ns(c.total.delta_ns()));
  out += fmt::format("kernels, by change ({} of {}):\n", shown(c, o), c.kernels.size());
  out += fmt::format("  {:>8}  {:>11}  {:>11}  {:>11}  {:<9}  {:<20}  {}\n", "change", "base", "candidate", "delta",
                     "match", "bottleneck", "kernel");
  for (std::size_t i = 0; i < shown(c, o); ++i) {
    const auto& k = c.kernels[i];
    out += fmt::format("{} {:>8}  {:>11}  {:>11}  {:>11}  {:<9}  {:<20}  {}\n", k.regressed ? "!" : " ",
                       change_text(k), ns_or_dash(k.base_ns), ns_or_dash(k.candidate_ns), signed_ns(k.delta_ns()),
                       analysis::match_kind_name(k.match), bottleneck_text(k), ellipsize(k.either().name, o.name_width));
  }
  auto n = new_and_gone(c);
  out += fmt::format("new kernels: {} ({}); vanished: {} ({})\n\n", n.new_count, human_duration_ns(n.new_ns),
                     n.gone_count, human_duration_ns(n.gone_ns));
  out += fmt::format("operations (kernel time by op class):\n  {:>8}  {:>11}  {:>11}  {:>11}  {:>8}  {}\n", "change",
                     "base", "candidate", "delta", "kernels", "op");
  for (const auto& op : c.operations) {
    out += fmt::format("{} {:>8}  {:>11}  {:>11}  {:>11}  {:>8}  {}\n", op.regressed ? "!" : " ", change_text(op),
                       ns_or_dash(op.base_ns), ns_or_dash(op.candidate_ns), signed_ns(op.delta_ns()),
                       kernel_counts(op), op.op_class);
  }
  bool any_changed = std::any_of(c.operations.begin(), c.operations.end(),
                                 [](const analysis::OperationDelta& op) { return op.kernels_changed; });
  out += any_changed ? "  (* new or vanished kernels among them)\n\n" : "\n";
  if (!c.stages.empty()) {
    out += fmt::format("stages (kernel time):\n  {:>8}  {:>11}  {:>11}  {}\n", "change", "base", "candidate", "stage");
    for (const auto& s : c.stages) {
      out += fmt::format("  {:>8}  {:>11}  {:>11}  {}\n", change_text(s), ns_or_dash(s.base_ns),
                         ns_or_dash(s.candidate_ns), escape_controls(s.name));
    }
    out += "\n";
  }
  out += rank_compare_text(c.ranks, c.normalization != "none", o.top);
  return out + verdict_line(c) + "\n";
}

std::string compare_markdown(const Comparison& c, const CompareReportOptions& o) {
  std::string out = fmt::format("### kernlens compare: {}\n\n", analysis::verdict_name(c.verdict));
  out += fmt::format("- base: {}\n- candidate: {}\n", tight_code_span(run_label(*c.base)),
                     tight_code_span(run_label(*c.candidate)));
  if (auto figures = figures_text(c); !figures.empty()) out += "- figures: " + figures + "\n";
  out += fmt::format("- statistics: {}\n", analysis::kNoStatistics);
  out += fmt::format("- total kernel time: {} → {} (**{}**)\n", ns_or_dash(c.total.base_ns),
                     ns_or_dash(c.total.candidate_ns), change_text(c.total));
  for (const auto& r : c.reasons) out += fmt::format("- {}\n", r);
  out += "\n| change | base | candidate | delta | match | bottleneck | kernel |\n|---:|---:|---:|---:|---|---|---|\n";
  for (std::size_t i = 0; i < shown(c, o); ++i) {
    const auto& k = c.kernels[i];
    out += fmt::format("| {}{} | {} | {} | {} | {} | {} | {} |\n", k.regressed ? "⚠️ " : "", change_text(k),
                       ns_or_dash(k.base_ns), ns_or_dash(k.candidate_ns), signed_ns(k.delta_ns()),
                       analysis::match_kind_name(k.match), bottleneck_text(k),
                       tight_code_span(ellipsize(k.either().name, o.name_width)));
  }
  out += "\n| op | base | candidate | change | kernels |\n|---|---:|---:|---:|---:|\n";
  for (const auto& op : c.operations) {
    out += fmt::format("| {}{} | {} | {} | {} | {} |\n", op.regressed ? "⚠️ " : "", tight_code_span(op.op_class),
                       ns_or_dash(op.base_ns), ns_or_dash(op.candidate_ns), change_text(op), kernel_counts(op));
  }
  if (!c.stages.empty()) {
    out += "\n| stage | base | candidate | change |\n|---|---:|---:|---:|\n";
    for (const auto& s : c.stages) {
      out += fmt::format("| {} | {} | {} | {} |\n", tight_code_span(s.name), ns_or_dash(s.base_ns), ns_or_dash(s.candidate_ns),
                         change_text(s));
    }
  }
  return out + rank_compare_markdown(c.ranks, c.normalization != "none", o.top);
}

std::string compare_json(const Comparison& c) {
  Json j;
  j["schema"] = "kernlens.compare/1";
  j["base"] = c.base->meta.run_key;
  j["candidate"] = c.candidate->meta.run_key;
  j["threshold_pct"] = json_number(c.options.threshold_pct);
  j["normalization"] = c.normalization;
  j["statistics"] = nullptr;  // one sample per side
  j["total"] = Json{{"base_ns", opt_json(c.total.base_ns)}, {"candidate_ns", opt_json(c.total.candidate_ns)},
                    {"delta_ns", json_number(c.total.delta_ns())}, {"delta_pct", opt_json(c.total.delta_pct())}};
  Json kernels = Json::array();
  for (const auto& k : c.kernels) {
    Json row{{"name", k.either().name}, {"base_name", k.either().base_name}, {"match", analysis::match_kind_name(k.match)},
             {"base_ns", opt_json(k.base_ns)}, {"candidate_ns", opt_json(k.candidate_ns)},
             {"delta_ns", json_number(k.delta_ns())}, {"delta_pct", opt_json(k.delta_pct())},
             {"base_bottleneck", k.base ? Json(k.base->bottleneck) : Json(nullptr)},
             {"candidate_bottleneck", k.candidate ? Json(k.candidate->bottleneck) : Json(nullptr)},
             {"regressed", k.regressed}};
    if (k.base && k.candidate && k.base->name != k.candidate->name) row["candidate_name"] = k.candidate->name;
    kernels.push_back(std::move(row));
  }
  j["kernels"] = std::move(kernels);
  Json operations = Json::array();
  for (const auto& op : c.operations) {
    operations.push_back(Json{{"op_class", op.op_class}, {"base_ns", opt_json(op.base_ns)},
                              {"candidate_ns", opt_json(op.candidate_ns)}, {"delta_ns", json_number(op.delta_ns())},
                              {"delta_pct", opt_json(op.delta_pct())}, {"base_kernels", op.base_kernels},
                              {"candidate_kernels", op.candidate_kernels}, {"kernels_changed", op.kernels_changed},
                              {"regressed", op.regressed}});
  }
  j["operations"] = std::move(operations);
  Json stages = Json::array();
  for (const auto& s : c.stages) {
    stages.push_back(Json{{"name", s.name}, {"base_ns", opt_json(s.base_ns)}, {"candidate_ns", opt_json(s.candidate_ns)},
                          {"delta_pct", opt_json(s.delta_pct())}, {"base_wall_ns", opt_json(s.base_wall_ns)},
                          {"candidate_wall_ns", opt_json(s.candidate_wall_ns)}});
  }
  j["stages"] = std::move(stages);
  if (Json ranks = rank_compare_json(c.ranks); !ranks.is_null()) j["ranks"] = std::move(ranks);
  j["verdict"] = analysis::verdict_name(c.verdict);
  j["reasons"] = c.reasons;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace kernlens::report
