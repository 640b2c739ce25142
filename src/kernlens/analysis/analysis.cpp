#include "kernlens/analysis/analysis.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "kernlens/common/memory.h"
#include "kernlens/common/parallel_chunks.h"
#include "kernlens/common/step_times.h"

namespace kernlens::analysis {
namespace {

// The GPU's peaks: the datasheet table by device name, else the profile's own ncu peak
// metrics at the maximum clocks.
std::optional<PeakRates> device_peaks(const model::Profile& profile, const Aggregate& agg,
                                      const MetricResolver& resolver, std::string& why_not) {
  const model::Device* device = agg.device_ordinal ? profile.find_device(*agg.device_ordinal) : nullptr;
  if (!device || device->name.empty()) {
    why_not = "the GPU is unknown: the inputs do not name it";
    return std::nullopt;
  }
  if (const PeakRates* p = builtin_gpu_peaks().find(device->name)) return *p;
  for (const auto& launch : profile.launches) {
    if (launch.device_ordinal != device->ordinal) continue;
    if (auto p = peaks_from_metrics(resolver, launch, *device)) return p;
  }
  why_not = fmt::format("no peaks known for GPU '{}': it is not in the GPU table (data/gpu_peaks.txt) "
                        "and the profile has no ncu peak metrics",
                        device->name);
  return std::nullopt;
}

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// A grouping of kernel names: each name's group (or kNone), and how many groups.
struct NameGroups {
  std::vector<std::size_t> of_name;
  std::size_t count = 0;
};

// A grouping's launch lists back to back in one buffer: group g's launches, in launch order, are
// launches[begin[g], begin[g + 1]).
struct GroupedLaunches {
  std::vector<model::LaunchIndex> launches;
  std::vector<std::size_t> begin;

  std::span<const model::LaunchIndex> of(std::size_t g) const { return {launches.data() + begin[g], begin[g + 1] - begin[g]}; }
};

// The kernel launches of each group of each grouping, in launch order, in one pass for all the
// groupings; counted first, so that no list grows past its size (a million launches). The
// launches are cut into chunks, each counted and then placed on a thread of its own: chunk c's
// launches of a group go after those of chunks 0 .. c-1, so the lists are the ones a single
// pass makes. A grouping's lists are one buffer, its pages faulted in on several threads
// (resize_prefaulted): with a vector a group, each allocated and faulted in on one thread, an
// nsys export's step took 10-15 ms at 16 threads, 7-10 ms now. The chunks are taken as threads
// come free (stretches_for_threads): with one a thread, the 8 M export's step ended on 4-5
// CPUs of 16.
std::vector<GroupedLaunches> launches_by_groups(const model::Profile& profile, const std::vector<NameGroups>& groupings) {
  const auto& launches = profile.launches;
  std::size_t groups = 0;
  for (const auto& g : groupings) groups += g.count;
  // A chunk is worth a thread for a few thousand launches; each keeps a count a group.
  const unsigned threads = default_threads();
  const std::size_t chunks = stretches_for_threads(launches.size(), std::max<std::size_t>(4096, 4 * groups), threads);
  // Each chunk's counts, grouping after grouping.
  std::vector<std::vector<std::vector<std::size_t>>> next(chunks);
  for (auto& chunk : next) {
    for (const auto& g : groupings) chunk.emplace_back(g.count, 0);
  }
  auto each_group = [&](const model::Launch& l, auto&& f) {
    if (l.kind != model::LaunchKind::kKernel) return;
    for (std::size_t k = 0; k < groupings.size(); ++k) {
      if (const std::size_t g = groupings[k].of_name[l.name]; g != kNone) f(k, g);
    }
  };
  run_in_chunks_on(launches.size(), chunks, threads, [&](std::size_t c, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) each_group(launches[i], [&](std::size_t k, std::size_t g) { ++next[c][k][g]; });
  });
  std::vector<GroupedLaunches> out(groupings.size());
  for (std::size_t k = 0; k < groupings.size(); ++k) {
    GroupedLaunches& grouped = out[k];
    grouped.begin.resize(groupings[k].count + 1);
    std::size_t total = 0;
    for (std::size_t g = 0; g < groupings[k].count; ++g) {
      grouped.begin[g] = total;
      for (auto& chunk : next) total += std::exchange(chunk[k][g], total);  // a count becomes where the chunk starts
    }
    grouped.begin.back() = total;
    resize_prefaulted(grouped.launches, total, static_cast<unsigned>(std::min<std::size_t>(chunks, threads)));
  }
  run_in_chunks_on(launches.size(), chunks, threads, [&](std::size_t c, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      each_group(launches[i], [&](std::size_t k, std::size_t g) { out[k].launches[next[c][k][g]++] = static_cast<model::LaunchIndex>(i); });
    }
  });
  return out;
}

// Each name's launches, and each family's as its insight needs them. A family of one kernel
// row has that row's launches in the same order, and so the same figures: its insight is the
// row's (most families of a raw page are such), not worked out again. A family of several rows
// has their launches in launch order, gathered beside the names' (merging the rows' lists and
// sorting them was a serial tenth of the insights of a million-launch export).
struct NameAndFamilyLaunches {
  GroupedLaunches by_name;
  std::vector<std::size_t> family_row;  // by family: its one kernel row, or kNone
  GroupedLaunches by_family;            // by family: a family of several rows' launches
};

NameAndFamilyLaunches launches_by_name_and_family(const model::Profile& profile, const Aggregate& agg) {
  NameAndFamilyLaunches out;
  out.family_row.assign(agg.families.size(), kNone);
  std::vector<std::size_t> rows(agg.families.size(), 0);
  for (std::size_t k = 0; k < agg.kernels.size(); ++k) {
    const KernelRow& row = agg.kernels[k];
    ++rows[row.family];
    out.family_row[row.family] = rows[row.family] == 1 ? k : kNone;
  }
  NameGroups names{std::vector<std::size_t>(profile.names.size()), profile.names.size()};
  NameGroups families{std::vector<std::size_t>(profile.names.size(), kNone), agg.families.size()};
  for (std::size_t n = 0; n < names.count; ++n) names.of_name[n] = n;
  for (const auto& row : agg.kernels) {
    if (rows[row.family] > 1) families.of_name[row.name] = row.family;
  }
  auto lists = launches_by_groups(profile, {std::move(names), std::move(families)});
  out.by_name = std::move(lists[0]);
  out.by_family = std::move(lists[1]);
  return out;
}

// The op class of every kernel name, for the FLOPs of kernels never measured.
std::vector<names::OpClass> op_class_by_name(const model::Profile& profile, const Aggregate& agg) {
  std::vector<names::OpClass> out(profile.names.size(), names::OpClass::kOther);
  for (const auto& row : agg.kernels) out[row.name] = agg.families[row.family].cls.op_class;
  return out;
}

// What an insight sums over a stretch of its launches (kSumStretchLaunches), or, merged in
// order, over all of them.
struct alignas(kThreadStateAlign) InsightSums {  // summed launch by launch, stretches side by side
  LaunchSums metrics;
  FlopsTotal flops;
  NcuRuleSums rules;

  void add(const MetricsContext& ctx, const FlopsEstimates& estimates, std::span<const model::LaunchIndex> launches) {
    metrics.add(ctx, launches);
    for (model::LaunchIndex i : launches) flops.add(estimates.launch(i), ctx.profile.launches[i].total_duration_ns());
    rules.add(ctx.profile, launches);
  }
  void merge(InsightSums&& later) {
    metrics.merge(std::move(later.metrics));
    flops.merge(later.flops);
    rules.merge(std::move(later.rules));
  }
};

KernelInsight insight(const MetricsContext& ctx, InsightSums&& sums, const TimeStats& row, const AnalysisOptions& options,
                      std::string_view op_class) {
  KernelInsight k;
  k.metrics = std::move(sums.metrics).finish(ctx);
  k.flops = sums.flops;
  k.verdict = classify_bottleneck(k.metrics, row.mean_ns, options.thresholds);
  k.advice = kernlens_advice(AdviceInput{k.metrics, k.verdict, op_class, row.launches, row.mean_ns});
  auto from_ncu = std::move(sums.rules).advice();
  k.advice.insert(k.advice.end(), std::make_move_iterator(from_ncu.begin()), std::make_move_iterator(from_ncu.end()));
  return k;
}

// One kernel's or family's insight to work out: its launches, its row, its op class.
struct InsightJob {
  std::span<const model::LaunchIndex> launches;
  const TimeStats* row;
  std::string_view op_class;
};

// The insights of `jobs`, in their order, worked out on up to default_threads() threads: the
// stretches of every job's launches summed as threads come free (a kernel of a fifth of a
// million-launch profile's launches held the step on one thread), then each job's stretches
// merged in order. The stretches do not depend on the threads, so neither does the result.
std::vector<KernelInsight> insights_in_parallel(std::span<const InsightJob> jobs, const MetricsContext& ctx,
                                                const FlopsEstimates& flops, const AnalysisOptions& options) {
  struct Stretch {
    std::size_t job, begin, end;
  };
  std::vector<Stretch> stretches;
  std::vector<std::size_t> first_stretch;  // by job
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    first_stretch.push_back(stretches.size());
    for_each_sum_stretch(jobs[j].launches.size(), [&](std::size_t b, std::size_t e) { stretches.push_back({j, b, e}); });
    if (jobs[j].launches.empty()) stretches.push_back({j, 0, 0});  // a job sums to its empty sums
  }
  first_stretch.push_back(stretches.size());
  std::vector<std::size_t> largest_first(stretches.size());
  for (std::size_t i = 0; i < largest_first.size(); ++i) largest_first[i] = i;
  std::stable_sort(largest_first.begin(), largest_first.end(), [&](std::size_t x, std::size_t y) {
    return stretches[x].end - stretches[x].begin > stretches[y].end - stretches[y].begin;
  });
  std::size_t launches = 0;
  for (const auto& job : jobs) launches += job.launches.size();
  // A thread is worth starting for a few thousand launches (a profile of a few hundred is read
  // in a millisecond).
  const std::size_t threads = std::min<std::size_t>(default_threads(), 1 + launches / 4096);
  std::vector<InsightSums> sums(stretches.size());
  for_each_with_resolver(ctx.resolver, stretches.size(), threads, [&](const MetricResolver& resolver, std::size_t n) {
    const MetricsContext own{ctx.profile, resolver, ctx.device_peaks, ctx.top_stalls};
    const Stretch& s = stretches[largest_first[n]];
    sums[largest_first[n]].add(own, flops, jobs[s.job].launches.subspan(s.begin, s.end - s.begin));
  });
  std::vector<KernelInsight> out(jobs.size());
  for_each_with_resolver(ctx.resolver, jobs.size(), threads, [&](const MetricResolver& resolver, std::size_t j) {
    const MetricsContext own{ctx.profile, resolver, ctx.device_peaks, ctx.top_stalls};
    InsightSums& whole = sums[first_stretch[j]];
    for (std::size_t k = first_stretch[j] + 1; k < first_stretch[j + 1]; ++k) whole.merge(std::move(sums[k]));
    out[j] = insight(own, std::move(whole), *jobs[j].row, options, jobs[j].op_class);
  });
  return out;
}

}  // namespace

namespace {

// The kernels' and families' insights, and the coverage of the deep measurements.
void add_insights(const model::Profile& profile, const MetricsContext& ctx, const FlopsEstimates& flops,
                  const AnalysisOptions& options, Analysis& a) {
  StepTimes* times = options.step_times;
  const NameAndFamilyLaunches launches =
      timed_step(times, "launches by name and family", [&] { return launches_by_name_and_family(profile, a.agg); });
  std::vector<InsightJob> jobs;
  jobs.reserve(a.agg.kernels.size() + a.agg.families.size());
  for (const auto& row : a.agg.kernels) {
    jobs.push_back({launches.by_name.of(row.name), &row, names::to_string(a.agg.families[row.family].cls.op_class)});
  }
  std::vector<std::size_t> family_job(a.agg.families.size(), kNone);
  for (std::size_t i = 0; i < a.agg.families.size(); ++i) {
    if (launches.family_row[i] != kNone) continue;
    const FamilyRow& family = a.agg.families[i];
    family_job[i] = jobs.size();
    jobs.push_back({launches.by_family.of(i), &family, names::to_string(family.cls.op_class)});
  }
  std::vector<KernelInsight> insights =
      timed_step(times, "bottlenecks and advice", [&] { return insights_in_parallel(jobs, ctx, flops, options); });
  a.families.reserve(a.agg.families.size());
  for (std::size_t i = 0; i < a.agg.families.size(); ++i) {
    a.families.push_back(launches.family_row[i] != kNone ? insights[launches.family_row[i]] : std::move(insights[family_job[i]]));
  }
  a.kernels.assign(std::make_move_iterator(insights.begin()),
                   std::make_move_iterator(insights.begin() + static_cast<std::ptrdiff_t>(a.agg.kernels.size())));
  // Every kernel launch is in one kernel's insight: the launch counts are theirs summed, not
  // resolved again launch by launch.
  for (const KernelInsight& k : a.kernels) {
    const KernelMetrics& m = k.metrics;
    a.coverage.launches += m.launches;
    a.coverage.deep_launches += m.deep_launches;
    a.coverage.kernel_time_ns += m.time_ns;
    a.coverage.deep_time_ns += m.deep_time_ns;
    ++a.coverage.kernels;
    if (m.deep_time_ns > 0) {
      ++a.coverage.measured_kernels;
      a.coverage.measured_kernel_time_ns += m.time_ns;
    }
  }
}

// The analysis after the aggregate but its ranks: peaks, FLOPs, insights, coverage, MFU.
Status analyze_kernels(const model::Profile& profile, const AnalysisOptions& options, Analysis& a) {
  StepTimes* times = options.step_times;
  MetricResolver resolver(profile);
  a.peaks = device_peaks(profile, a.agg, resolver, a.no_peaks_reason);
  MetricsContext ctx{profile, resolver, a.peaks ? &*a.peaks : nullptr, options.top_stalls};
  const FlopsEstimates flops = timed_step(times, "FLOPs", [&] {
    return estimate_flops(profile, resolver, op_class_by_name(profile, a.agg), a.peaks ? &*a.peaks : nullptr);
  });
  a.flops_measured = flops.any_measured;
  // MFU reads the FLOPs and the stage rows, not the insights: worked out beside them, with a
  // resolver of its own (a resolver is not thread-safe).
  std::optional<Result<ProfileWork>> work;
  CpuTally mfu_cpu;  // its wall and its threads' CPU (--verbose)
  run_side_by_side([&] { add_insights(profile, ctx, flops, options, a); },
                   [&] {
                     const CpuTally::Charge charge(times ? &mfu_cpu : nullptr);
                     const MetricResolver own(profile);
                     const MfuInput mfu{profile, own, flops, a.peaks ? &*a.peaks : nullptr, a.no_peaks_reason};
                     work = profile_work(mfu, a.agg.stages, options.work);
                   });
  if (times) times->add("MFU per stage (beside)", mfu_cpu);
  if (!*work) return work->error();
  a.stages = std::move((*work)->stages);
  a.whole = std::move((*work)->whole);
  return ok_status();
}

}  // namespace

Result<Analysis> analyze(const model::Profile& profile, const names::KernelClassifier& classifier,
                         const AnalysisOptions& options) {
  if (profile.launches.size() > std::numeric_limits<model::LaunchIndex>::max()) {
    return make_error("", 0, fmt::format("more than {} launches: too many to analyse in one profile",
                                         std::numeric_limits<model::LaunchIndex>::max()));
  }
  Analysis a;
  StepTimes* times = options.step_times;
  const LaneMap lanes = timed_step(times, "ranks and GPU lanes", [&] { return map_rank_lanes(profile); });
  a.agg = timed_step(times, "kernels, families, stages, timeline", [&] { return aggregate(profile, classifier, &lanes, times); });
  // The ranks read only the aggregate: worked out beside the rest (untimed, off this thread).
  Status kernels = ok_status();
  timed_step(times, "insights, MFU and ranks, side by side", [&] {
    CpuTally ranks_cpu;
    run_side_by_side([&] { kernels = analyze_kernels(profile, options, a); },
                     [&] {
                       const CpuTally::Charge charge(times ? &ranks_cpu : nullptr);
                       a.ranks = analyze_ranks(profile, a.agg, &lanes);
                     });
    if (times) times->add("ranks (beside)", ranks_cpu);
  });
  if (!kernels) return kernels.error();
  return a;
}

std::vector<std::string> analysis_metric_names() { return MetricResolver::metric_names(); }

}  // namespace kernlens::analysis
