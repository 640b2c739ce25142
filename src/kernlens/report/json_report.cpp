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

Json kernel_json(const model::Profile& profile, const analysis::KernelRow& row) {
  Json j;
  j["name"] = profile.names[row.name];
  j["launches"] = row.launches;
  if (row.total_ns) j["total_ns"] = json_number(*row.total_ns);
  if (row.mean_ns) j["mean_ns"] = json_number(*row.mean_ns);
  if (row.share) j["share"] = json_number(*row.share);
  Json stages = Json::object();
  for (const auto& [label, ns] : row.stage_ns) stages[label] = json_number(ns);
  j["stages"] = std::move(stages);
  return j;
}

Json stage_json(const analysis::StageRow& s) {
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
  return j;
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

  Json kernels = Json::array();
  std::size_t n = options.top ? std::min(options.top, agg.kernels.size()) : agg.kernels.size();
  for (std::size_t i = 0; i < n; ++i) kernels.push_back(kernel_json(profile, agg.kernels[i]));
  doc["kernels"] = std::move(kernels);

  Json stages = Json::array();
  for (const auto& s : agg.stages) stages.push_back(stage_json(s));
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
  // Names come from files; a byte that is not UTF-8 becomes U+FFFD rather than an error.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace kernlens::report
