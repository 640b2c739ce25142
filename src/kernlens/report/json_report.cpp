#include "kernlens/report/json_report.h"

#include <nlohmann/json.hpp>

#include "kernlens/report/format.h"

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

Json kernel_json(const model::Profile& profile, const analysis::Aggregate& agg,
                 const analysis::KernelRow& row) {
  Json j;
  j["name"] = analysis::shown_name(profile, row);
  if (!row.demangled.empty()) j["mangled_name"] = profile.names[row.name];
  add_class(j, agg.families[row.family].cls);
  add_time(j, row);
  return j;
}

Json family_json(const analysis::FamilyRow& row) {
  Json j;
  j["name"] = row.cls.base_name;
  add_class(j, row.cls);
  j["kernels"] = row.kernels;
  add_time(j, row);
  return j;
}

template <class Row, class ToJson>
Json top_rows(const std::vector<Row>& rows, std::size_t top, ToJson to_json) {
  Json out = Json::array();
  std::size_t n = top ? std::min(top, rows.size()) : rows.size();
  for (std::size_t i = 0; i < n; ++i) out.push_back(to_json(rows[i]));
  return out;
}

}  // namespace

std::string analysis_json(const model::Profile& profile, const analysis::Aggregate& agg,
                          const JsonOptions& options) {
  Json doc;
  doc["schema"] = "kernlens.analysis/1";
  Json inputs = Json::array();
  for (const auto& in : profile.inputs) {
    Json j{{"path", in.path}, {"format", in.format}};
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
  doc["totals"] = std::move(totals);

  doc["kernels"] = top_rows(agg.kernels, options.top, [&](const analysis::KernelRow& row) {
    return kernel_json(profile, agg, row);
  });
  doc["families"] = top_rows(agg.families, options.top, family_json);

  Json stages = Json::array();
  for (const auto& s : agg.stages) {
    Json j;
    j["name"] = s.name;
    j["depth"] = s.depth;
    if (s.has_kernel_time) j["kernel_time_ns"] = json_number(s.kernel_time_ns);
    j["launches"] = s.launches;
    stages.push_back(std::move(j));
  }
  doc["stages"] = std::move(stages);
  // Names come from files; a byte that is not UTF-8 becomes U+FFFD rather than an error.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace kernlens::report
