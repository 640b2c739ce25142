#include "kernlens/report/json_report.h"

#include <nlohmann/json.hpp>

#include "kernlens/report/format.h"
#include "kernlens/report/rank_tables.h"

namespace kernlens::report {
namespace {

using Json = nlohmann::ordered_json;

Json device_json(const model::Device& d) {
  Json j = Json::object();
  if (!d.name.empty()) j["name"] = d.name;
  if (!d.cc.empty()) j["cc"] = d.cc;
  if (d.sm_count) j["sm_count"] = *d.sm_count;
  j["ordinal"] = d.ordinal;
  if (d.sm_clock_max_hz) j["sm_clock_max_hz"] = json_number(*d.sm_clock_max_hz);
  if (d.memory_clock_max_hz) j["memory_clock_max_hz"] = json_number(*d.memory_clock_max_hz);
  if (d.memory_bus_width_bits) j["memory_bus_width_bits"] = *d.memory_bus_width_bits;
  if (d.l2_cache_bytes) j["l2_cache_bytes"] = *d.l2_cache_bytes;
  if (d.memory_total_bytes) j["memory_total_bytes"] = *d.memory_total_bytes;
  if (d.max_threads_per_sm) j["max_threads_per_sm"] = *d.max_threads_per_sm;
  if (d.max_shared_memory_per_sm_bytes) {
    j["max_shared_memory_per_sm_bytes"] = *d.max_shared_memory_per_sm_bytes;
  }
  return j;
}

// The figures written into `metrics` (duration-weighted means); block limits and DRAM
// byte counts per launch stay internal: occupancy_limiter and dram_bytes say it better.
constexpr std::array kShownFigures = {
    analysis::Figure::kSmPct,          analysis::Figure::kMemoryPct,
    analysis::Figure::kDramPct,        analysis::Figure::kL1Pct,
    analysis::Figure::kL2Pct,          analysis::Figure::kL1HitPct,
    analysis::Figure::kL2HitPct,       analysis::Figure::kAchievedOccupancyPct,
    analysis::Figure::kTheoreticalOccupancyPct, analysis::Figure::kWavesPerSm,
    analysis::Figure::kTensorPipePct,  analysis::Figure::kSmClockHz,
    analysis::Figure::kDramClockHz,
};

void put(Json& metrics, Json& sources, std::string_view key, const std::optional<analysis::Figured>& f) {
  if (!f) return;
  metrics[std::string(key)] = json_number(f->value);
  sources[std::string(key)] = f->source;
}

void put_metrics(Json& j, const analysis::KernelMetrics& m) {
  Json metrics = Json::object(), sources = Json::object();
  for (auto figure : kShownFigures) put(metrics, sources, analysis::figure_key(figure), m.figure(figure));
  put(metrics, sources, "flops", m.flops);
  if (m.flops) {
    Json by_path = Json::object();
    for (std::size_t p = 0; p < analysis::kFlopPathCount; ++p) {
      if (m.flops_by_path[p]) by_path[std::string(analysis::path_name(static_cast<analysis::FlopPath>(p)))] = json_number(*m.flops_by_path[p]);
    }
    metrics["flops_by_path"] = std::move(by_path);
  }
  put(metrics, sources, "dram_bytes", m.dram_bytes);
  if (auto ai = m.arithmetic_intensity()) metrics["arithmetic_intensity"] = json_number(*ai);
  if (auto f = m.achieved_flops_per_s()) metrics["achieved_flops_per_s"] = json_number(*f);
  if (auto b = m.achieved_dram_bytes_per_s()) metrics["achieved_dram_bytes_per_s"] = json_number(*b);
  if (m.dominant_path) metrics["dominant_path"] = analysis::path_name(*m.dominant_path);
  put(metrics, sources, "peak_flops_per_s", m.peak_flops_per_s);
  put(metrics, sources, "peak_dram_bytes_per_s", m.peak_dram_bytes_per_s);
  if (!m.occupancy_limiters.empty()) metrics["occupancy_limiter"] = m.occupancy_limiters;
  if (!m.top_stalls.empty()) {
    Json stalls = Json::array();
    for (const auto& s : m.top_stalls) {
      stalls.push_back(Json{{"reason", s.reason}, {"warps_per_issue", json_number(s.warps_per_issue)},
                            {"share", json_number(s.share)}});
    }
    metrics["top_stalls"] = std::move(stalls);
  }
  if (!metrics.empty()) {
    j["metrics"] = std::move(metrics);
    j["metric_sources"] = std::move(sources);
  }
  if (!m.flops && !m.flops_missing.empty()) j["flops_missing"] = m.flops_missing;
  if (m.time_ns > 0) j["coverage"] = json_number(m.deep_time_ns / m.time_ns);
}

// A kernel's FLOPs over all its launches (analysis/flops.h), when the profile measured any.
void put_flops(Json& j, const analysis::FlopsTotal& f) {
  if (f.known()) j["flops"] = json_number(f.flops);
  j["flops_low"] = json_number(f.low());
  if (auto high = f.high()) j["flops_high"] = json_number(*high);
  j["flops_source"] = f.source();
}

void put_insight(Json& j, const analysis::KernelInsight& k, bool flops_measured) {
  if (flops_measured) put_flops(j, k.flops);
  put_metrics(j, k.metrics);
  j["bottleneck"] = analysis::bottleneck_name(k.verdict.kind);
  j["bottleneck_reason"] = k.verdict.reason;
  Json evidence = Json::object();
  for (const auto& [key, value] : k.verdict.evidence) evidence[key] = json_number(value);
  j["bottleneck_evidence"] = std::move(evidence);
  Json advice = Json::array();
  for (const auto& a : k.advice) {
    Json item{{"rule", a.rule}, {"text", a.text}};
    if (a.est_speedup_pct) item["est_speedup_pct"] = json_number(*a.est_speedup_pct);
    advice.push_back(std::move(item));
  }
  j["advice"] = std::move(advice);
}


void put_work(Json& j, const analysis::StageWork& w) {
  if (w.flops) j["flops"] = json_number(*w.flops);
  if (w.flops_low) j["flops_low"] = json_number(*w.flops_low);
  if (w.flops_high) j["flops_high"] = json_number(*w.flops_high);
  j["flops_source"] = w.flops_source;
  if (w.precision) {
    j["precision"] = analysis::path_name(*w.precision);
    j["precision_source"] = w.precision_source;
  }
  j["mfu"] = w.mfu ? json_number(*w.mfu) : Json(nullptr);
  if (w.mfu) {
    j["mfu_low"] = json_number(*w.mfu_low);
    if (w.mfu_high) j["mfu_high"] = json_number(*w.mfu_high);
    j["mfu_peak_flops_per_s"] = json_number(*w.peak_flops_per_s);
    j["mfu_time_ns"] = json_number(w.time_ns);
    j["mfu_time_basis"] = w.time_basis;
  } else {
    j["mfu_missing"] = w.mfu_missing;
  }
  if (w.coverage) j["coverage"] = json_number(*w.coverage);
  if (w.analytic_source.empty()) return;
  if (w.analytic_flops) j["analytic_flops"] = json_number(*w.analytic_flops);
  j["analytic_source"] = w.analytic_source;
  if (w.analytic_mfu) j["analytic_mfu"] = json_number(*w.analytic_mfu);
  if (w.flops_ratio) j["flops_ratio"] = json_number(*w.flops_ratio);
  if (w.flops_ratio_high) j["flops_ratio_high"] = json_number(*w.flops_ratio_high);
  if (!w.flops_ratio_flag.empty()) j["flops_ratio_flag"] = w.flops_ratio_flag;
}

Json stage_json(const analysis::StageRow& s, const analysis::StageWork& work) {
  Json j;
  j["name"] = s.name;
  j["depth"] = s.depth;
  if (s.wall_ns) j["wall_ns"] = json_number(*s.wall_ns);
  if (s.has_kernel_time) j["kernel_time_ns"] = json_number(s.kernel_time_ns);
  if (s.busy_ns) j["busy_ns"] = json_number(*s.busy_ns);
  if (auto f = s.busy_fraction()) j["busy_fraction"] = json_number(*f);
  j["launches"] = s.launches;
  if (s.gaps) {
    j["gaps"] = Json{{"count", s.gaps->count},
                     {"total_ns", json_number(s.gaps->total_ns)},
                     {"largest_ns", json_number(s.gaps->largest_ns)}};
  }
  put_work(j, work);
  return j;
}

Json peaks_json(const analysis::Analysis& a) {
  if (!a.peaks) return Json{{"missing", a.no_peaks_reason}};
  Json j;
  j["gpu"] = a.peaks->gpu;
  j["source"] = a.peaks->source;
  Json flops = Json::object();
  for (std::size_t p = 0; p < analysis::kFlopPathCount; ++p) {
    if (a.peaks->flops_per_s[p]) flops[std::string(analysis::path_name(static_cast<analysis::FlopPath>(p)))] = json_number(*a.peaks->flops_per_s[p]);
  }
  j["flops_per_s"] = std::move(flops);
  if (a.peaks->dram_bytes_per_s) j["dram_bytes_per_s"] = json_number(*a.peaks->dram_bytes_per_s);
  return j;
}

Json coverage_json(const analysis::MetricCoverage& c) {
  Json j;
  if (auto f = c.fraction()) j["deep_metrics"] = json_number(*f);
  j["deep_launches"] = c.deep_launches;
  j["launches"] = c.launches;
  if (auto f = c.measured_kernel_fraction()) j["measured_kernels_time"] = json_number(*f);
  j["measured_kernels"] = c.measured_kernels;
  j["kernels"] = c.kernels;
  return j;
}

Json gemm_json(const names::GemmInfo& g) {
  Json j = Json::object();
  if (g.has_tile()) {
    Json tile{{"m", g.tile_m}, {"n", g.tile_n}};
    if (g.tile_k > 0) tile["k"] = g.tile_k;
    j["tile"] = std::move(tile);
  }
  if (g.stages > 0) j["stages"] = g.stages;
  if (!g.cluster.empty()) j["cluster"] = g.cluster;
  if (!g.layout.empty()) {
    j["layout"] = g.layout;
    j["transpose_a"] = *g.transposed_a();
    j["transpose_b"] = *g.transposed_b();
  }
  if (g.bias) j["bias"] = true;
  if (g.split_k) j["split_k"] = true;
  if (g.grouped) j["grouped"] = true;
  return j;
}

// The fields a kernel and its family share: base name, class, and what a GEMM's name tells.
void add_class(Json& j, const names::Classification& cls) {
  j["base_name"] = cls.base_name;
  j["library"] = to_string(cls.library);
  j["op_class"] = to_string(cls.op_class);
  j["rule"] = std::string(cls.rule);
  if (cls.gemm) j["gemm"] = gemm_json(*cls.gemm);
}

void add_time(Json& j, const analysis::TimeStats& t) {
  j["launches"] = t.launches;
  if (t.total_ns) j["total_ns"] = json_number(*t.total_ns);
  if (t.mean_ns) j["mean_ns"] = json_number(*t.mean_ns);
  if (t.share) j["share"] = json_number(*t.share);
  Json stages = Json::object();
  for (const auto& [label, ns] : t.stage_ns) stages[label] = json_number(ns);
  j["stages"] = std::move(stages);
}

Json kernel_json(const model::Profile& profile, const analysis::Analysis& analysis,
                 const analysis::KernelRow& row, const analysis::KernelInsight& insight) {
  const analysis::Aggregate& agg = analysis.agg;
  Json j;
  j["name"] = analysis::shown_name(profile, row);
  if (!row.demangled.empty()) j["mangled_name"] = profile.names[row.name];
  add_class(j, agg.families[row.family].cls);
  add_time(j, row);
  put_insight(j, insight, analysis.flops_measured);
  return j;
}

Json family_json(const analysis::FamilyRow& row, const analysis::KernelInsight& insight, bool flops_measured) {
  Json j;
  j["name"] = row.cls.base_name;
  add_class(j, row.cls);
  j["kernels"] = row.kernels;
  add_time(j, row);
  put_insight(j, insight, flops_measured);
  return j;
}

// The first `top` rows (all when 0), each with its insight (a parallel vector).
template <class Row, class ToJson>
Json top_rows(const std::vector<Row>& rows, const std::vector<analysis::KernelInsight>& insights,
              std::size_t top, ToJson to_json) {
  Json out = Json::array();
  std::size_t n = top ? std::min(top, rows.size()) : rows.size();
  for (std::size_t i = 0; i < n; ++i) out.push_back(to_json(rows[i], insights[i]));
  return out;
}

}  // namespace

std::string analysis_json(const model::Profile& profile, const analysis::Analysis& analysis,
                          const JsonOptions& options) {
  const analysis::Aggregate& agg = analysis.agg;
  Json doc;
  doc["schema"] = "kernlens.analysis/1";
  Json inputs = Json::array();
  for (const auto& in : profile.inputs) {
    Json j{{"path", in.path}, {"format", model::format_id(in.format)}};
    if (!in.warnings.empty()) {
      Json w = Json::array();
      for (const auto& e : in.warnings) w.push_back(e.to_string());
      j["warnings"] = std::move(w);
    }
    inputs.push_back(std::move(j));
  }
  doc["inputs"] = std::move(inputs);
  const model::Device* device = agg.device_ordinal ? profile.find_device(*agg.device_ordinal) : nullptr;
  doc["device"] = device ? device_json(*device) : Json(nullptr);

  Json totals;
  if (agg.totals.kernel_time_ns) totals["kernel_time_ns"] = json_number(*agg.totals.kernel_time_ns);
  totals["launches"] = agg.totals.launches;
  totals["unique_kernels"] = agg.totals.unique_kernels;
  put_work(totals, analysis.whole);
  doc["totals"] = std::move(totals);
  doc["coverage"] = coverage_json(analysis.coverage);
  doc["peaks"] = peaks_json(analysis);

  doc["kernels"] = top_rows(agg.kernels, analysis.kernels, options.top,
                            [&](const analysis::KernelRow& row, const analysis::KernelInsight& insight) {
                              return kernel_json(profile, analysis, row, insight);
                            });
  doc["families"] = top_rows(agg.families, analysis.families, options.top,
                             [&](const analysis::FamilyRow& row, const analysis::KernelInsight& insight) {
                               return family_json(row, insight, analysis.flops_measured);
                             });

  Json stages = Json::array();
  for (std::size_t i = 0; i < agg.stages.size(); ++i) stages.push_back(stage_json(agg.stages[i], analysis.stages[i]));
  doc["stages"] = std::move(stages);
  if (!agg.memory_ops.empty()) {
    Json ops = Json::array();
    for (const auto& m : agg.memory_ops) {
      Json op;
      op["name"] = profile.names[m.name];
      op["kind"] = m.kind == model::LaunchKind::kMemset ? "memset" : "memcpy";
      op["count"] = m.count;
      if (m.total_ns) op["total_ns"] = json_number(*m.total_ns);
      if (m.bytes) op["bytes"] = *m.bytes;
      ops.push_back(std::move(op));
    }
    doc["memory_ops"] = std::move(ops);
  }
  if (analysis.ranks.multi_rank()) doc["ranks"] = ranks_json(analysis.ranks);
  // Names come from files; a byte that is not UTF-8 becomes U+FFFD rather than an error.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace kernlens::report
