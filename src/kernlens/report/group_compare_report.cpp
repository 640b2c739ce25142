#include "kernlens/report/group_compare_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernlens/common/text.h"
#include "kernlens/report/delta_format.h"
#include "kernlens/report/format.h"
#include "kernlens/report/markdown_report.h"

namespace kernlens::report {
namespace {

using analysis::GroupComparison;
using analysis::GroupRow;
using Json = nlohmann::ordered_json;

// A figure: a time, or a normalised one that can be a fraction of a nanosecond.
std::string figure_text(double ns) {
  return std::fabs(ns) < 100 ? fmt::format("{:.3g} ns", ns) : human_duration_ns(ns);
}

std::string median_text(const GroupRow& r, bool base) {
  const std::size_t n = base ? r.base_samples : r.candidate_samples;
  return n ? figure_text(base ? r.estimate.base_median : r.estimate.candidate_median) : "-";
}

std::string change_text(const GroupRow& r) {
  if (auto pct = r.change_pct()) return fmt::format("{:+.1f}%", *pct);
  if (r.base_samples && r.candidate_samples) return "-";
  return r.base_samples ? "gone" : "new";
}

std::string interval_text(const GroupRow& r) {
  if (!r.estimate.interval) return "-";
  return fmt::format("[{:+.1f}%, {:+.1f}%]", (r.estimate.interval->low - 1) * 100, (r.estimate.interval->high - 1) * 100);
}

// "+10.0% [+9.9%, +10.1%]", or the change alone without an interval.
std::string change_with_interval(const GroupRow& r) {
  return r.estimate.interval ? change_text(r) + " " + interval_text(r) : change_text(r);
}

std::string side_label(const std::vector<const model::RunRecord*>& runs, std::size_t samples, bool repetitions) {
  std::vector<std::string> labels;
  for (const auto* r : runs) labels.push_back(run_label(*r));
  return fmt::format("{} run{}, {} sample{} ({}): {}", runs.size(), runs.size() == 1 ? "" : "s", samples,
                     samples == 1 ? "" : "s", repetitions ? "repetitions" : "whole runs", fmt::join(labels, "; "));
}

std::string figures_line(const GroupComparison& c) {
  if (c.normalization == analysis::Normalization::kNone) return "kernel time";
  return fmt::format("kernel time {}{}", analysis::normalization_unit(c.normalization),
                     c.normalization_reason.empty() ? "" : " (" + c.normalization_reason + ")");
}

std::string statistics_line(const GroupComparison& c) {
  if (!c.statistics) {
    return fmt::format("none possible ({} sample{} against {}: an interval needs 2 or more on each side; run "
                       "`kernlens profile --repeat N`, or give several runs per side)",
                       c.base_samples, c.base_samples == 1 ? "" : "s", c.candidate_samples);
  }
  return fmt::format("medians; ratio candidate/base with a {:g}% bootstrap interval ({} resamples, runs then their "
                     "samples drawn, fixed seed); a regression is larger than {:g}% and significant at {:g}",
                     (1 - c.options.bootstrap.alpha) * 100, c.options.bootstrap.resamples,
                     c.options.compare.threshold_pct, c.options.bootstrap.alpha);
}

std::string floor_text(const std::optional<double>& pct) {
  return pct ? fmt::format("{:.2f}%", *pct) : "-";
}

std::string noise_line(const GroupComparison& c) {
  return fmt::format("base {}, candidate {} (each group against its own halves)", floor_text(c.base_noise_floor_pct),
                     floor_text(c.candidate_noise_floor_pct));
}

std::string verdict_line(const GroupComparison& c) {
  return fmt::format("verdict: {}{}{}", analysis::verdict_name(c.verdict), c.reasons.empty() ? "" : ": ",
                     fmt::join(c.reasons, "; "));
}

std::size_t shown(const std::vector<GroupRow>& rows, const CompareReportOptions& o) {
  return o.top ? std::min(o.top, rows.size()) : rows.size();
}

std::string text_table(const std::string& title, const std::vector<GroupRow>& rows, std::size_t count,
                       const CompareReportOptions& o) {
  std::string out = fmt::format("{}:\n  {:>8}  {:>18}  {:>11}  {:>11}  {:>5}  {}\n", title, "change", "interval", "base",
                                "candidate", "n", "name");
  for (std::size_t i = 0; i < count; ++i) {
    const auto& r = rows[i];
    out += fmt::format("{} {:>8}  {:>18}  {:>11}  {:>11}  {:>5}  {}\n", r.regressed ? "!" : " ", change_text(r),
                       interval_text(r), median_text(r, true), median_text(r, false),
                       fmt::format("{}/{}", r.base_samples, r.candidate_samples), ellipsize(r.name, o.name_width));
  }
  return out + "\n";
}

std::string md_table(const std::vector<GroupRow>& rows, std::size_t count, const std::string& what,
                     const CompareReportOptions& o) {
  std::string out = fmt::format("\n| change | interval | base | candidate | n | {} |\n|---:|---:|---:|---:|---:|---|\n", what);
  for (std::size_t i = 0; i < count; ++i) {
    const auto& r = rows[i];
    out += fmt::format("| {}{} | {} | {} | {} | {}/{} | {} |\n", r.regressed ? "⚠️ " : "", change_text(r),
                       interval_text(r), median_text(r, true), median_text(r, false), r.base_samples,
                       r.candidate_samples, tight_code_span(ellipsize(r.name, o.name_width)));
  }
  return out;
}

Json row_json(const GroupRow& r, bool kernel) {
  Json j{{"name", r.name}};
  if (!r.candidate_name.empty()) j["candidate_name"] = r.candidate_name;
  if (kernel) j["match"] = analysis::match_kind_name(r.match);
  j["base_median"] = r.base_samples ? json_number(r.estimate.base_median) : Json(nullptr);
  j["candidate_median"] = r.candidate_samples ? json_number(r.estimate.candidate_median) : Json(nullptr);
  j["base_samples"] = r.base_samples;
  j["candidate_samples"] = r.candidate_samples;
  j["ratio"] = opt_json(r.estimate.ratio);
  j["change_pct"] = opt_json(r.change_pct());
  j["interval"] = r.estimate.interval ? Json{json_number(r.estimate.interval->low), json_number(r.estimate.interval->high)}
                                      : Json(nullptr);
  j["significant"] = r.estimate.significant();
  j["weight"] = json_number(r.weight);
  j["regressed"] = r.regressed;
  return j;
}

Json rows_json(const std::vector<GroupRow>& rows, bool kernel) {
  Json a = Json::array();
  for (const auto& r : rows) a.push_back(row_json(r, kernel));
  return a;
}

Json side_json(const std::vector<const model::RunRecord*>& runs, std::size_t samples,
               const std::optional<double>& noise_floor) {
  Json keys = Json::array();
  for (const auto* r : runs) keys.push_back(r->meta.run_key);
  return Json{{"runs", keys}, {"samples", samples}, {"noise_floor_pct", opt_json(noise_floor)}};
}

// --- HTML -----------------------------------------------------------------------------------

constexpr double kChartWidth = 360, kRowHeight = 18;

// One row's interval on a scale of -span..+span percent, with the threshold marked.
std::string interval_svg(const GroupRow& r, double span_pct, double threshold_pct) {
  auto x = [&](double pct) { return kChartWidth / 2 + std::clamp(pct, -span_pct, span_pct) / span_pct * (kChartWidth / 2 - 4); };
  std::string svg = fmt::format(R"(<svg width="{}" height="{}" role="img">)", kChartWidth, kRowHeight);
  svg += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="0" y2="{1}" class="zero"/>)", x(0), kRowHeight);
  svg += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="0" y2="{1}" class="threshold"/>)", x(threshold_pct), kRowHeight);
  if (r.estimate.interval) {
    svg += fmt::format(R"(<line x1="{0:.1f}" x2="{1:.1f}" y1="{2}" y2="{2}" class="interval"/>)",
                       x((r.estimate.interval->low - 1) * 100), x((r.estimate.interval->high - 1) * 100), kRowHeight / 2);
  }
  if (auto pct = r.change_pct()) {
    svg += fmt::format(R"(<circle cx="{:.1f}" cy="{}" r="3" class="{}"/>)", x(*pct), kRowHeight / 2,
                       r.regressed ? "regressed" : "point");
  }
  return svg + "</svg>";
}

std::string html_table(const std::string& title, const std::vector<GroupRow>& rows, std::size_t count,
                       const GroupComparison& c, const CompareReportOptions& o) {
  double span = std::max(2 * c.options.compare.threshold_pct, 1.0);
  for (std::size_t i = 0; i < count; ++i) {
    if (rows[i].estimate.interval) {
      span = std::max({span, std::abs(rows[i].estimate.interval->low - 1) * 100, std::abs(rows[i].estimate.interval->high - 1) * 100});
    }
  }
  span = std::min(span, 100.0);
  std::string out = fmt::format("<h2>{}</h2>\n<table>\n<tr><th>change</th><th>interval</th><th>base</th><th>candidate</th>"
                                "<th>n</th><th>change and interval, &#177;{:.0f}% (threshold dashed)</th><th>name</th></tr>\n",
                                html_escape(title), span);
  for (std::size_t i = 0; i < count; ++i) {
    const auto& r = rows[i];
    out += fmt::format("<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td><td>{}</td><td><code>{}</code></td></tr>\n",
                       r.regressed ? R"( class="regressed")" : "", change_text(r), interval_text(r),
                       median_text(r, true), median_text(r, false), r.base_samples, r.candidate_samples,
                       interval_svg(r, span, c.options.compare.threshold_pct), html_escape(ellipsize(r.name, o.name_width)));
  }
  return out + "</table>\n";
}

constexpr const char* kHtmlStyle =
    "body{font-family:sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse}"
    "td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #ddd}td:last-child{text-align:left}"
    "tr.regressed td{background:#fde2e1}.zero{stroke:#888}.threshold{stroke:#c00;stroke-dasharray:3 2}"
    ".interval{stroke:#225;stroke-width:2}.point{fill:#225}.regressed{fill:#c00}";

}  // namespace

std::string group_compare_text(const GroupComparison& c, const CompareReportOptions& o) {
  std::string out = fmt::format("base:      {}\ncandidate: {}\n", side_label(c.base, c.base_samples, c.repetitions),
                                side_label(c.candidate, c.candidate_samples, c.repetitions));
  out += fmt::format("figures:     {}\nstatistics:  {}\nnoise floor: {}\n", figures_line(c), statistics_line(c), noise_line(c));
  for (const auto& note : c.notes) out += "note: " + note + "\n";
  out += fmt::format("total: {} -> {} ({})\n\n", median_text(c.total, true), median_text(c.total, false),
                     change_with_interval(c.total));
  out += text_table(fmt::format("kernels, by change ({} of {})", shown(c.kernels, o), c.kernels.size()), c.kernels,
                    shown(c.kernels, o), o);
  out += text_table(fmt::format("families, by change ({} of {})", shown(c.families, o), c.families.size()), c.families,
                    shown(c.families, o), o);
  out += text_table("operations (by op class)", c.operations, c.operations.size(), o);
  if (!c.stages.empty()) out += text_table("stages", c.stages, c.stages.size(), o);
  return out + verdict_line(c) + "\n";
}

std::string group_compare_markdown(const GroupComparison& c, const CompareReportOptions& o) {
  std::string out = fmt::format("### kernlens compare: {}\n\n", analysis::verdict_name(c.verdict));
  out += fmt::format("- base: {}\n- candidate: {}\n", side_label(c.base, c.base_samples, c.repetitions),
                     side_label(c.candidate, c.candidate_samples, c.repetitions));
  out += fmt::format("- figures: {}\n- statistics: {}\n- noise floor: {}\n", figures_line(c), statistics_line(c), noise_line(c));
  out += fmt::format("- total: {} → {} (**{}**)\n", median_text(c.total, true), median_text(c.total, false),
                     change_with_interval(c.total));
  for (const auto& r : c.reasons) out += fmt::format("- {}\n", r);
  for (const auto& note : c.notes) out += fmt::format("- note: {}\n", note);
  out += md_table(c.kernels, shown(c.kernels, o), "kernel", o);
  out += md_table(c.families, shown(c.families, o), "family", o);
  out += md_table(c.operations, c.operations.size(), "op", o);
  if (!c.stages.empty()) out += md_table(c.stages, c.stages.size(), "stage", o);
  return out;
}

std::string group_compare_json(const GroupComparison& c) {
  Json j;
  j["schema"] = "kernlens.compare-groups/1";
  j["base"] = side_json(c.base, c.base_samples, c.base_noise_floor_pct);
  j["candidate"] = side_json(c.candidate, c.candidate_samples, c.candidate_noise_floor_pct);
  j["samples_are"] = c.repetitions ? "repetitions" : "runs";
  j["normalization"] = analysis::normalization_name(c.normalization);
  j["normalization_reason"] = c.normalization_reason;
  j["threshold_pct"] = json_number(c.options.compare.threshold_pct);
  j["alpha"] = json_number(c.options.bootstrap.alpha);
  j["statistics"] = c.statistics ? Json{{"method", "bootstrap"}, {"resamples", c.options.bootstrap.resamples},
                                        {"interval", "percentile, ratio of medians"}}
                                 : Json(nullptr);
  j["noise_floor_pct"] = opt_json(c.noise_floor_pct());
  j["total"] = row_json(c.total, false);
  j["kernels"] = rows_json(c.kernels, true);
  j["families"] = rows_json(c.families, false);
  j["operations"] = rows_json(c.operations, false);
  j["stages"] = rows_json(c.stages, false);
  j["verdict"] = analysis::verdict_name(c.verdict);
  j["reasons"] = c.reasons;
  j["notes"] = c.notes;
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string group_compare_html(const GroupComparison& c, const CompareReportOptions& o) {
  std::string out = fmt::format("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>kernlens compare: {}"
                                "</title><style>{}</style></head><body>\n<h1>kernlens compare: {}</h1>\n<ul>\n",
                                analysis::verdict_name(c.verdict), kHtmlStyle, analysis::verdict_name(c.verdict));
  for (const auto& [label, text] :
       {std::pair{"base", side_label(c.base, c.base_samples, c.repetitions)},
        std::pair{"candidate", side_label(c.candidate, c.candidate_samples, c.repetitions)},
        std::pair{"figures", figures_line(c)}, std::pair{"statistics", statistics_line(c)},
        std::pair{"noise floor", noise_line(c)},
        std::pair{"total", fmt::format("{} &#8594; {} ({})", median_text(c.total, true), median_text(c.total, false),
                                       change_with_interval(c.total))}}) {
    out += fmt::format("<li><b>{}</b>: {}</li>\n", label, std::string(label) == "total" ? text : html_escape(text));
  }
  for (const auto& r : c.reasons) out += fmt::format("<li>{}</li>\n", html_escape(r));
  for (const auto& n : c.notes) out += fmt::format("<li>note: {}</li>\n", html_escape(n));
  out += "</ul>\n";
  out += html_table("kernels", c.kernels, shown(c.kernels, o), c, o);
  out += html_table("families", c.families, shown(c.families, o), c, o);
  out += html_table("operations", c.operations, c.operations.size(), c, o);
  if (!c.stages.empty()) out += html_table("stages", c.stages, c.stages.size(), c, o);
  return out + "</body></html>\n";
}

}  // namespace kernlens::report
