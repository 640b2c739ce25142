// Figures kernlens derives from profiler metrics. Each figure is looked up through a table
// of the names it has had across Nsight Compute versions and pages (raw metric names,
// details-page "Section / Label" keys); the first one a launch has wins, and the figure
// remembers which metric it came from, so every number in an output can be traced.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/model/profile.h"

namespace kernlens::analysis {

enum class Figure : std::uint8_t {
  kSmPct,          // SM throughput, % of peak
  kMemoryPct,      // memory throughput (the busiest memory unit), % of peak
  kDramPct,        // DRAM throughput, % of peak
  kL1Pct,          // L1/TEX throughput, % of peak
  kL2Pct,          // L2 throughput, % of peak
  kL1HitPct,
  kL2HitPct,
  kAchievedOccupancyPct,
  kTheoreticalOccupancyPct,
  kBlockLimitRegisters,  // blocks per SM each resource allows
  kBlockLimitSharedMem,
  kBlockLimitWarps,
  kBlockLimitBlocks,
  kBlockLimitBarriers,
  kDramBytes,
  kDramReadBytes,
  kDramWriteBytes,
  kDramBytesPerSecond,
  kSmClockHz,
  kDramClockHz,
  kWavesPerSm,     // full waves of blocks across all SMs (< 1: the grid leaves SMs idle)
  kTensorPipePct,  // tensor pipe activity: 0 proves a kernel did no tensor-core work
  kCount
};

// How a figure is named in outputs ("sm_pct") and in which base unit its values are.
std::string_view figure_key(Figure figure);

// The SASS instruction counters SIMT FLOPs are counted from.
enum class SassOp : std::uint8_t { kFadd, kFmul, kFfma, kHadd, kHmul, kHfma, kDadd, kDmul, kDfma, kCount };

// The roofline's compute paths, as Nsight Compute's roofline charts split them: SIMT
// (CUDA cores) by precision, and tensor cores by source precision.
enum class FlopPath : std::uint8_t {
  kSimtFp64, kSimtFp32, kSimtFp16, kTensorFp64, kTensorFp16, kTensorBf16, kTensorTf32,
  kTensorFp8, kTensorInt8, kCount
};
std::string_view path_name(FlopPath path);  // "fp32", "tensor_bf16", ...

struct Sourced {
  double value;
  std::string_view source;  // the metric name it came from, or how it was derived
};

inline constexpr std::size_t kFigureCount = static_cast<std::size_t>(Figure::kCount);

// Resolves figure names against one profile's metric catalog, once; then answers per launch.
class MetricResolver {
 public:
  explicit MetricResolver(const model::Profile& profile);
  MetricResolver(const MetricResolver&) = delete;  // it points into itself (current_)
  MetricResolver& operator=(const MetricResolver&) = delete;

  std::optional<Sourced> get(const model::Launch& launch, Figure figure) const {
    return first(launch, figures_[static_cast<std::size_t>(figure)]);
  }
  // A SASS instruction count: the counter, else its per-cycle rate × SM clock × duration.
  std::optional<Sourced> sass_count(const model::Launch& launch, SassOp op) const;
  // FLOPs of one path: SIMT from instruction counts (fadd + fmul + 2 ffma; half precision
  // counts 2 per instruction, packed lanes, as ncu's roofline does), tensor paths from
  // sm__ops_path_tensor_src_* (they count FLOPs). Absent when not measured; the source
  // names the counters summed.
  std::optional<Sourced> flops(const model::Launch& launch, FlopPath path) const;
  // Dense peak FLOPs per SM cycle of a path, for the whole GPU.
  std::optional<Sourced> peak_flops_per_cycle(const model::Launch& launch, FlopPath path) const;
  std::optional<Sourced> dram_peak_bytes_per_cycle(const model::Launch& launch) const;
  // Whether the launch carries a metric beyond its timing and launch statistics: what a deep
  // pass collects. Nsight Compute's timing mode (discovery) records gpu__time_duration with
  // launch__* and device__* attributes only; such launches are timeline launches.
  bool has_deep_metrics(const model::Launch& launch) const;
  // Warp stall reasons the launch measured: (reason index, warps stalled per issued
  // instruction), largest first, into `out` (reused: this runs once per launch).
  void stalls(const model::Launch& launch, std::vector<std::pair<std::size_t, double>>& out) const;
  static std::size_t stall_reason_count();
  static std::string_view stall_reason(std::size_t index);  // "long_scoreboard", ...

  // Every metric name any figure may read (what a reader needs to keep).
  static std::vector<std::string> metric_names();

  const model::Profile& profile() const { return profile_; }

 private:
  // A question: the metric ids that may answer it, preferred first (an index into questions_).
  using Question = std::uint16_t;
  // What answers a question for the current layout (below): a position in the launch's samples.
  struct Answer {
    static constexpr std::int32_t kUnasked = -2, kAbsent = -1;
    std::int32_t position = kUnasked;  // in the launch's samples
    std::string_view source;           // the metric's name
  };
  Question ask(std::span<const std::string_view> names);
  // Inline: the analysis asks ~50 questions of each launch, most of them answered by one load.
  std::optional<Sourced> first(const model::Launch& launch, Question q) const {
    if (indexed_ != &launch) index(launch);
    const Answer& a = current_[q].position == Answer::kUnasked ? answer(q) : current_[q];
    if (a.position < 0) return std::nullopt;
    return Sourced{samples_[a.position].value, a.source};
  }
  void index(const model::Launch& launch) const;  // makes `launch` the one answered for
  const Answer& answer(Question q) const;  // worked out for the layout, the first time asked
  const model::MetricSample* sample(model::MetricId id) const;

  const model::Profile& profile_;
  std::vector<std::vector<model::MetricId>> questions_;
  std::array<Question, static_cast<std::size_t>(Figure::kCount)> figures_{};
  std::array<Question, static_cast<std::size_t>(SassOp::kCount)> sass_counts_{}, sass_rates_{};
  std::array<Question, static_cast<std::size_t>(FlopPath::kCount)> tensor_{}, peaks_{};
  Question dram_peak_ = 0;
  std::vector<std::pair<std::size_t, Question>> stall_questions_;  // (reason index, question)
  std::vector<bool> deep_;  // by metric id: not a timing or launch statistic

  // The analysis asks dozens of questions of one launch in a row, and the launches of a raw
  // page (or of one kernel) carry the same metric ids in the same order: their "layout". The
  // answers are worked out once per layout, as positions in the launch's samples, and a
  // launch with the layout of the one before is only compared id by id (perf: resolving was a
  // fifth of `analyze` on a big raw page, then indexing each launch's samples a third of that).
  // Not thread-safe, like the rest of the analysis.
  struct Slot {  // by metric id: where the layout has it
    std::uint32_t generation = 0;
    std::uint32_t position = 0;
  };
  mutable const model::Launch* indexed_ = nullptr;
  mutable const model::MetricSample* samples_ = nullptr;  // the indexed launch's
  mutable std::vector<model::MetricId> layout_;
  mutable std::vector<Answer> answers_;  // by question, for layout_
  // A launch without samples (a timeline's) is answered by none_ and leaves the layout as it
  // was, so that a launch-order pass over deep and timeline launches does not index each anew.
  std::vector<Answer> none_;               // by question: all absent
  mutable const Answer* current_ = nullptr;  // answers_ or none_, for the indexed launch
  mutable std::optional<bool> layout_deep_;
  mutable std::uint32_t generation_ = 1;  // slots start at 0: none is current
  mutable std::vector<Slot> by_id_;
};

// Runs work(resolver, i) for every i in [0, items) on up to `threads` threads, each taking the
// next item as it comes free. A resolver's cache of one launch is not thread-safe: the calling
// thread works with `resolver`, every other thread with a resolver of its own.
void for_each_with_resolver(const MetricResolver& resolver, std::size_t items, std::size_t threads,
                            const std::function<void(const MetricResolver&, std::size_t)>& work);

}  // namespace kernlens::analysis
