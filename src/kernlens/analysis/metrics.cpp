#include "kernlens/analysis/metrics.h"

#include <algorithm>
#include <atomic>

#include "kernlens/common/parallel_chunks.h"

namespace kernlens::analysis {
namespace {

using Names = std::vector<std::string_view>;

struct FigureNames {
  Figure figure;
  std::string_view key;
  Names names;  // first preferred; raw metric names, then details-page "Section / Label"
};

// The alias table. Names drift between Nsight Compute versions (e.g. DRAM throughput was
// dram__throughput.* and is gpu__dram_throughput.* in 2025.3); the details page shows labels.
const std::vector<FigureNames>& figure_table() {
  static const std::vector<FigureNames> table = {
      {Figure::kSmPct, "sm_pct",
       {"sm__throughput.avg.pct_of_peak_sustained_elapsed",
        "GPU Speed Of Light Throughput / Compute (SM) Throughput"}},
      {Figure::kMemoryPct, "memory_pct",
       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
        "GPU Speed Of Light Throughput / Memory Throughput"}},
      {Figure::kDramPct, "dram_pct",
       {"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "GPU Speed Of Light Throughput / DRAM Throughput"}},
      {Figure::kL1Pct, "l1_pct",
       {"l1tex__throughput.avg.pct_of_peak_sustained_active",
        "GPU Speed Of Light Throughput / L1/TEX Cache Throughput"}},
      {Figure::kL2Pct, "l2_pct",
       {"lts__throughput.avg.pct_of_peak_sustained_elapsed",
        "GPU Speed Of Light Throughput / L2 Cache Throughput"}},
      {Figure::kL1HitPct, "l1_hit_pct",
       {"l1tex__t_sector_hit_rate.pct", "Memory Workload Analysis / L1/TEX Hit Rate"}},
      {Figure::kL2HitPct, "l2_hit_pct",
       {"lts__t_sector_hit_rate.pct", "Memory Workload Analysis / L2 Hit Rate"}},
      {Figure::kAchievedOccupancyPct, "achieved_occupancy_pct",
       {"sm__warps_active.avg.pct_of_peak_sustained_active", "Occupancy / Achieved Occupancy"}},
      {Figure::kTheoreticalOccupancyPct, "theoretical_occupancy_pct",
       {"sm__maximum_warps_per_active_cycle_pct", "Occupancy / Theoretical Occupancy"}},
      {Figure::kBlockLimitRegisters, "block_limit_registers",
       {"launch__occupancy_limit_registers", "Occupancy / Block Limit Registers"}},
      {Figure::kBlockLimitSharedMem, "block_limit_shared_mem",
       {"launch__occupancy_limit_shared_mem", "Occupancy / Block Limit Shared Mem"}},
      {Figure::kBlockLimitWarps, "block_limit_warps",
       {"launch__occupancy_limit_warps", "Occupancy / Block Limit Warps"}},
      {Figure::kBlockLimitBlocks, "block_limit_blocks",
       {"launch__occupancy_limit_blocks", "Occupancy / Block Limit SM"}},
      {Figure::kBlockLimitBarriers, "block_limit_barriers",
       {"launch__occupancy_limit_barriers", "Occupancy / Block Limit Barriers"}},
      {Figure::kDramBytes, "dram_bytes", {"dram__bytes.sum"}},
      {Figure::kDramReadBytes, "dram_read_bytes",
       {"dram__bytes_read.sum", "Command line profiler metrics / dram__bytes_read.sum"}},
      {Figure::kDramWriteBytes, "dram_write_bytes",
       {"dram__bytes_write.sum", "Command line profiler metrics / dram__bytes_write.sum"}},
      {Figure::kDramBytesPerSecond, "dram_bytes_per_s",
       {"dram__bytes.sum.per_second", "Memory Workload Analysis / Memory Throughput"}},
      {Figure::kSmClockHz, "sm_clock_hz",
       {"sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second",
        "GPU Speed Of Light Throughput / SM Frequency"}},
      {Figure::kDramClockHz, "dram_clock_hz",
       {"dram__cycles_elapsed.avg.per_second", "GPU Speed Of Light Throughput / DRAM Frequency"}},
      {Figure::kWavesPerSm, "waves_per_sm",
       {"launch__waves_per_multiprocessor", "Launch Statistics / Waves Per SM"}},
      {Figure::kTensorPipePct, "tensor_pipe_pct",
       {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"}},
  };
  return table;
}

constexpr std::array<std::string_view, static_cast<std::size_t>(SassOp::kCount)> kSassOps = {
    "fadd", "fmul", "ffma", "hadd", "hmul", "hfma", "dadd", "dmul", "dfma"};

std::string sass_name(SassOp op, std::string_view suffix) {
  return "smsp__sass_thread_inst_executed_op_" + std::string(kSassOps[static_cast<std::size_t>(op)]) +
         "_pred_on.sum" + std::string(suffix);
}

struct PathNames {
  FlopPath path;
  std::string_view name;
  // SIMT paths: FLOPs = sum of coefficient x instruction count.
  std::vector<std::pair<SassOp, double>> sass_terms;
  Names tensor_counts;  // tensor paths: operations done (they are FLOPs)
  Names peaks;          // dense peak per cycle: tensor ops, or SIMT instructions
  double peak_flops_per_op;  // FLOPs per peak unit (2 for an FMA instruction)
  // SIMT paths: how outputs name the sum, from counters or from per-cycle rates.
  std::string_view counted_from = {};
  std::string_view rated_from = {};
};

// Tensor operations are counted per source precision (sm__ops_path_tensor_src_*: on Hopper
// a bf16 1024^3 GEMM reports exactly 2*M*N*K). Their peak_sustained is the sparse peak, so
// dense peaks come from the per-instruction paths with sparsity off.
const std::vector<PathNames>& path_table() {
  static const std::vector<PathNames> table = {
      {FlopPath::kSimtFp64, "fp64", {{SassOp::kDadd, 1}, {SassOp::kDmul, 1}, {SassOp::kDfma, 2}}, {},
       {"sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained"}, 2,
       "dadd + dmul + 2 dfma (smsp__sass_thread_inst_executed_op_*_pred_on.sum)",
       "dadd + dmul + 2 dfma (smsp__sass_thread_inst_executed_op_*_pred_on.sum.per_cycle_elapsed x SM clock x duration)"},
      {FlopPath::kSimtFp32, "fp32", {{SassOp::kFadd, 1}, {SassOp::kFmul, 1}, {SassOp::kFfma, 2}}, {},
       {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"}, 2,
       "fadd + fmul + 2 ffma (smsp__sass_thread_inst_executed_op_*_pred_on.sum)",
       "fadd + fmul + 2 ffma (smsp__sass_thread_inst_executed_op_*_pred_on.sum.per_cycle_elapsed x SM clock x duration)"},
      {FlopPath::kSimtFp16, "fp16", {{SassOp::kHadd, 2}, {SassOp::kHmul, 2}, {SassOp::kHfma, 4}}, {},
       {"sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained"}, 4,
       "2 hadd + 2 hmul + 4 hfma (smsp__sass_thread_inst_executed_op_*_pred_on.sum)",
       "2 hadd + 2 hmul + 4 hfma (smsp__sass_thread_inst_executed_op_*_pred_on.sum.per_cycle_elapsed x SM clock x duration)"},
      {FlopPath::kTensorFp64, "tensor_fp64", {}, {"sm__ops_path_tensor_src_fp64.sum"},
       {"sm__ops_path_tensor_src_fp64.sum.peak_sustained"}, 1},
      {FlopPath::kTensorFp16, "tensor_fp16", {}, {"sm__ops_path_tensor_src_fp16.sum"},
       {"sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained",
        "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum.peak_sustained"}, 1},
      {FlopPath::kTensorBf16, "tensor_bf16", {}, {"sm__ops_path_tensor_src_bf16_dst_fp32.sum"},
       {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
        "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"}, 1},
      {FlopPath::kTensorTf32, "tensor_tf32", {}, {"sm__ops_path_tensor_src_tf32_dst_fp32.sum"},
       {"sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained",
        "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained"}, 1},
      {FlopPath::kTensorFp8, "tensor_fp8", {},
       {"sm__ops_path_tensor_src_fp8_sparsity_off.sum", "sm__ops_path_tensor_src_fp8.sum"},
       {"sm__ops_path_tensor_src_fp8_sparsity_off.sum.peak_sustained"}, 1},
      {FlopPath::kTensorInt8, "tensor_int8", {}, {"sm__ops_path_tensor_src_int8.sum"},
       {"sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum.peak_sustained",
        "sm__ops_path_tensor_op_imma_src_int8_sparsity_off.sum.peak_sustained"}, 1},
  };
  return table;
}

const PathNames& path_names(FlopPath path) { return path_table()[static_cast<std::size_t>(path)]; }

constexpr std::string_view kDramPeak = "dram__bytes.sum.peak_sustained";

// Warp stall reasons of the Warp State Statistics section (ncu 2022 and later).
constexpr std::array<std::string_view, 19> kStallReasons = {
    "barrier",     "branch_resolving", "dispatch_stall", "drain",     "gmma",
    "imc_miss",    "lg_throttle",      "long_scoreboard", "math_pipe_throttle", "membar",
    "mio_throttle", "misc",            "no_instruction", "not_selected", "selected",
    "short_scoreboard", "sleeping",    "tex_throttle",   "wait"};

std::string stall_name(std::string_view reason) {
  return "smsp__average_warps_issue_stalled_" + std::string(reason) + "_per_issue_active.ratio";
}

}  // namespace

std::string_view figure_key(Figure figure) {
  for (const auto& f : figure_table()) {
    if (f.figure == figure) return f.key;
  }
  return {};
}

std::string_view path_name(FlopPath path) { return path_names(path).name; }

MetricResolver::MetricResolver(const model::Profile& profile) : profile_(profile) {
  for (const auto& f : figure_table()) figures_[static_cast<std::size_t>(f.figure)] = ask(f.names);
  for (std::size_t op = 0; op < kSassOps.size(); ++op) {
    std::string count = sass_name(static_cast<SassOp>(op), "");
    std::string rate = sass_name(static_cast<SassOp>(op), ".per_cycle_elapsed");
    std::string label = "Command line profiler metrics / " + count;
    std::array<std::string_view, 2> counts = {count, label};
    std::array<std::string_view, 1> rates = {rate};
    sass_counts_[op] = ask(counts);
    sass_rates_[op] = ask(rates);
  }
  for (const auto& p : path_table()) {
    tensor_[static_cast<std::size_t>(p.path)] = ask(p.tensor_counts);
    peaks_[static_cast<std::size_t>(p.path)] = ask(p.peaks);
  }
  std::array<std::string_view, 1> dram = {kDramPeak};
  dram_peak_ = ask(dram);
  for (std::size_t reason = 0; reason < kStallReasons.size(); ++reason) {
    const std::string name = stall_name(kStallReasons[reason]);
    const std::array<std::string_view, 1> names = {name};
    if (profile.metrics.find(name)) stall_questions_.emplace_back(reason, ask(names));
  }
  deep_.resize(profile.metrics.size());
  for (model::MetricId id = 0; id < profile.metrics.size(); ++id) {
    const std::string& name = profile.metrics[id].name;
    deep_[id] = !name.starts_with("launch__") && !name.starts_with("device__") && !name.starts_with("gpu__time_duration");
  }
  by_id_.resize(profile.metrics.size());
  answers_.resize(questions_.size());
  none_.assign(questions_.size(), Answer{Answer::kAbsent, {}});
  current_ = none_.data();
}

MetricResolver::Question MetricResolver::ask(std::span<const std::string_view> names) {
  std::vector<model::MetricId> ids;
  for (auto n : names) {
    if (auto id = profile_.metrics.find(n)) ids.push_back(*id);
  }
  questions_.push_back(std::move(ids));
  return static_cast<Question>(questions_.size() - 1);
}

void MetricResolver::index(const model::Launch& launch) const {
  if (indexed_ == &launch) return;
  indexed_ = &launch;
  if (launch.metrics_count == 0) {
    current_ = none_.data();
    return;
  }
  current_ = answers_.data();
  const auto samples = profile_.metrics_of(launch);
  samples_ = samples.data();
  if (samples.size() == layout_.size() &&
      std::equal(samples.begin(), samples.end(), layout_.begin(),
                 [](const model::MetricSample& m, model::MetricId id) { return m.id == id; })) {
    return;  // the layout of the launch before: its answers hold
  }
  layout_.resize(samples.size());
  for (std::size_t i = 0; i < samples.size(); ++i) layout_[i] = samples[i].id;
  for (Answer& a : answers_) a.position = Answer::kUnasked;
  layout_deep_.reset();
  if (++generation_ == 0) {  // wrapped: no slot may look current
    by_id_.assign(by_id_.size(), Slot{});
    generation_ = 1;
  }
  for (std::uint32_t i = 0; i < samples.size(); ++i) {
    if (samples[i].id >= by_id_.size()) continue;
    Slot& slot = by_id_[samples[i].id];
    if (slot.generation != generation_) slot = {generation_, i};  // the first sample wins, as in find_metric
  }
}

const model::MetricSample* MetricResolver::sample(model::MetricId id) const {
  if (id >= by_id_.size() || by_id_[id].generation != generation_) return nullptr;
  return samples_ + by_id_[id].position;
}

bool MetricResolver::has_deep_metrics(const model::Launch& launch) const {
  if (launch.metrics_count == 0) return false;
  index(launch);
  if (!layout_deep_) {
    layout_deep_ = std::any_of(layout_.begin(), layout_.end(), [&](model::MetricId id) { return id < deep_.size() && deep_[id]; });
  }
  return *layout_deep_;
}

const MetricResolver::Answer& MetricResolver::answer(Question q) const {
  Answer& a = answers_[q];
  a.position = Answer::kAbsent;
  for (auto id : questions_[q]) {
    if (const auto* m = sample(id)) {
      a = {static_cast<std::int32_t>(m - samples_), profile_.metrics[id].name};
      break;
    }
  }
  return a;
}

std::optional<Sourced> MetricResolver::sass_count(const model::Launch& launch, SassOp op) const {
  const auto i = static_cast<std::size_t>(op);
  if (auto count = first(launch, sass_counts_[i])) return count;
  // The roofline sections give a rate per elapsed cycle: the count is rate x cycles.
  auto rate = first(launch, sass_rates_[i]);
  auto clock = get(launch, Figure::kSmClockHz);
  if (!rate || !clock || !launch.duration_ns) return std::nullopt;
  return Sourced{rate->value * clock->value * *launch.duration_ns * 1e-9, rate->source};
}

std::optional<Sourced> MetricResolver::flops(const model::Launch& launch, FlopPath path) const {
  const PathNames& p = path_names(path);
  if (p.sass_terms.empty()) return first(launch, tensor_[static_cast<std::size_t>(path)]);
  Sourced total{0, p.counted_from};
  for (const auto& [op, coefficient] : p.sass_terms) {
    auto n = sass_count(launch, op);
    if (!n) return std::nullopt;  // a partial sum would be a made-up number
    if (n->source.ends_with(".per_cycle_elapsed")) total.source = p.rated_from;
    total.value += coefficient * n->value;
  }
  return total;
}

std::optional<Sourced> MetricResolver::peak_flops_per_cycle(const model::Launch& launch, FlopPath path) const {
  auto peak = first(launch, peaks_[static_cast<std::size_t>(path)]);
  if (peak) peak->value *= path_names(path).peak_flops_per_op;
  return peak;
}

std::optional<Sourced> MetricResolver::dram_peak_bytes_per_cycle(const model::Launch& launch) const {
  return first(launch, dram_peak_);
}

void MetricResolver::stalls(const model::Launch& launch, std::vector<std::pair<std::size_t, double>>& out) const {
  out.clear();
  for (const auto& [reason, q] : stall_questions_) {
    if (auto v = first(launch, q)) out.emplace_back(reason, v->value);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
}

std::size_t MetricResolver::stall_reason_count() { return kStallReasons.size(); }

std::string_view MetricResolver::stall_reason(std::size_t index) { return kStallReasons.at(index); }

std::vector<std::string> MetricResolver::metric_names() {
  std::vector<std::string> names;
  for (const auto& f : figure_table()) names.insert(names.end(), f.names.begin(), f.names.end());
  for (std::size_t op = 0; op < kSassOps.size(); ++op) {
    names.push_back(sass_name(static_cast<SassOp>(op), ""));
    names.push_back("Command line profiler metrics / " + sass_name(static_cast<SassOp>(op), ""));
    names.push_back(sass_name(static_cast<SassOp>(op), ".per_cycle_elapsed"));
  }
  for (const auto& p : path_table()) {
    names.insert(names.end(), p.tensor_counts.begin(), p.tensor_counts.end());
    names.insert(names.end(), p.peaks.begin(), p.peaks.end());
  }
  names.emplace_back(kDramPeak);
  for (auto reason : kStallReasons) names.push_back(stall_name(reason));
  return names;
}

void for_each_with_resolver(const MetricResolver& resolver, std::size_t items, std::size_t threads,
                            const std::function<void(const MetricResolver&, std::size_t)>& work) {
  std::atomic<std::size_t> next{0};
  run_parallel(std::max<std::size_t>(1, std::min(threads, items)), [&](std::size_t thread) {
    std::optional<MetricResolver> own;
    if (thread > 0) own.emplace(resolver.profile());
    const MetricResolver& r = own ? *own : resolver;
    for (std::size_t i; (i = next.fetch_add(1)) < items;) work(r, i);
  });
}

}  // namespace kernlens::analysis
