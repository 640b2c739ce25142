#include "kernlens/analysis/run_summary.h"

#include <fmt/format.h>

#include <unordered_map>

namespace kernlens::analysis {
namespace {

struct Shape {
  model::Dim3 grid, block;
  double duration_ns = -1;
};

// The shape of each kernel's longest launch: kernels launched with several shapes are
// matched across runs by the one that weighs most.
std::unordered_map<model::NameId, Shape> longest_launch_shapes(const model::Profile& profile) {
  std::unordered_map<model::NameId, Shape> shapes;
  for (const auto& launch : profile.launches) {
    if (launch.kind != model::LaunchKind::kKernel) continue;
    double duration_ns = launch.duration_ns.value_or(0);
    auto [it, added] = shapes.try_emplace(launch.name);
    if (added || duration_ns > it->second.duration_ns) {
      const model::LaunchConfig& config = profile.config_of(launch);
      it->second = {config.grid, config.block, duration_ns};
    }
  }
  return shapes;
}

void put_figures(model::RunKernel& k, const KernelMetrics& m) {
  k.sm_pct = m.value(Figure::kSmPct);
  k.memory_pct = m.value(Figure::kMemoryPct);
  k.dram_pct = m.value(Figure::kDramPct);
  k.l1_hit_pct = m.value(Figure::kL1HitPct);
  k.l2_hit_pct = m.value(Figure::kL2HitPct);
  k.achieved_occupancy_pct = m.value(Figure::kAchievedOccupancyPct);
  k.theoretical_occupancy_pct = m.value(Figure::kTheoreticalOccupancyPct);
  k.tensor_pipe_pct = m.value(Figure::kTensorPipePct);
  if (m.flops) k.flops = m.flops->value;
  if (m.dram_bytes) k.dram_bytes = m.dram_bytes->value;
  k.arithmetic_intensity = m.arithmetic_intensity();
  k.achieved_flops_per_s = m.achieved_flops_per_s();
  if (m.peak_flops_per_s) k.peak_flops_per_s = m.peak_flops_per_s->value;
  if (m.peak_dram_bytes_per_s) k.peak_dram_bytes_per_s = m.peak_dram_bytes_per_s->value;
  k.occupancy_limiter = fmt::format("{}", fmt::join(m.occupancy_limiters, ","));
}

model::RunKernel run_kernel(const model::Profile& profile, const Analysis& a, std::size_t i,
                            const std::unordered_map<model::NameId, Shape>& shapes) {
  const KernelRow& row = a.agg.kernels[i];
  const FamilyRow& family = a.agg.families[row.family];
  model::RunKernel k;
  k.name = shown_name(profile, row);
  k.base_name = family.cls.base_name;
  k.library = std::string(names::to_string(family.cls.library));
  k.op_class = std::string(names::to_string(family.cls.op_class));
  if (auto it = shapes.find(row.name); it != shapes.end()) {
    k.grid = dim3_text(it->second.grid);
    k.block = dim3_text(it->second.block);
  }
  k.launches = row.launches;
  k.total_ns = row.total_ns;
  k.mean_ns = row.mean_ns;
  k.share = row.share;
  put_figures(k, a.kernels[i].metrics);
  k.bottleneck = std::string(bottleneck_name(a.kernels[i].verdict.kind));
  k.bottleneck_reason = a.kernels[i].verdict.reason;
  return k;
}

model::RunStage run_stage(const StageRow& row, const StageWork& work) {
  model::RunStage s;
  s.name = row.name;
  s.depth = row.depth;
  s.launches = row.launches;
  if (row.has_kernel_time) s.kernel_time_ns = row.kernel_time_ns;
  s.wall_ns = row.wall_ns;
  s.busy_fraction = row.busy_fraction();
  if (row.gaps) {
    s.gap_count = static_cast<std::int64_t>(row.gaps->count);
    s.gap_total_ns = row.gaps->total_ns;
  }
  s.flops = work.flops;
  s.mfu = work.mfu;
  return s;
}

// The ranks of a multi-rank analysis, as the run record keeps them; none for one rank.
std::vector<model::RunRank> run_ranks(const RankAnalysis& ranks) {
  std::vector<model::RunRank> out;
  if (!ranks.multi_rank()) return out;
  for (const auto& r : ranks.ranks) {
    model::RunRank row;
    row.rank = r.rank;
    row.input = r.input;
    row.launches = r.launches;
    row.kernel_time_ns = r.kernel_time_ns;
    row.busy_ns = r.busy_ns;
    row.wall_ns = r.wall_ns;
    row.comm_ns = r.comm.comm_ns;
    row.exposed_comm_ns = r.comm.exposed_ns();
    row.role = std::string(role_name(r.role));
    for (const auto& s : r.stages) {
      row.stages.push_back(model::RunRankStage{s.name, s.kernel_time_ns, s.wall_ns, s.comm.comm_ns, s.comm.exposed_ns()});
    }
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

std::string dim3_text(const model::Dim3& dim) {
  if (!dim.known()) return "";
  return fmt::format("{},{},{}", dim.x, dim.y, dim.z);
}

model::RunRecord summarize_run(const model::Profile& profile, const Analysis& a) {
  model::RunRecord run;
  run.kernel_time_ns = a.agg.totals.kernel_time_ns;
  run.launches = a.agg.totals.launches;
  const model::Device* device = a.agg.device_ordinal ? profile.find_device(*a.agg.device_ordinal) : nullptr;
  if (!device && !profile.devices.empty()) device = &profile.devices.front();
  if (device) {
    run.device = model::RunDevice{device->name, device->cc, device->sm_count, device->memory_total_bytes,
                                  device->l2_cache_bytes};
  }
  auto shapes = longest_launch_shapes(profile);
  run.kernels.reserve(a.agg.kernels.size());
  for (std::size_t i = 0; i < a.agg.kernels.size(); ++i) run.kernels.push_back(run_kernel(profile, a, i, shapes));
  for (std::size_t i = 0; i < a.agg.stages.size(); ++i) run.stages.push_back(run_stage(a.agg.stages[i], a.stages[i]));
  run.ranks = run_ranks(a.ranks);
  return run;
}

}  // namespace kernlens::analysis
