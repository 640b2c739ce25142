#include "kernlens/analysis/timeline.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

namespace kernlens::analysis {

void merge_intervals(std::vector<Interval>& intervals) {
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; });
  std::size_t out = 0;
  for (const Interval& iv : intervals) {
    if (out > 0 && iv.begin_ns <= intervals[out - 1].end_ns) {
      intervals[out - 1].end_ns = std::max(intervals[out - 1].end_ns, iv.end_ns);
    } else {
      intervals[out++] = iv;
    }
  }
  intervals.resize(out);
}

Coverage coverage(const std::vector<Interval>& busy, const std::vector<Interval>& extents) {
  Coverage c;
  std::size_t k = 0;  // first busy interval that may overlap the current extent
  for (const Interval& e : extents) {
    c.wall_ns += static_cast<double>(e.end_ns - e.begin_ns);
    while (k < busy.size() && busy[k].end_ns <= e.begin_ns) ++k;
    std::int64_t cursor = e.begin_ns;  // covered up to here
    for (std::size_t j = k; j < busy.size() && busy[j].begin_ns < e.end_ns; ++j) {
      const std::int64_t b = std::max(busy[j].begin_ns, e.begin_ns);
      const std::int64_t end = std::min(busy[j].end_ns, e.end_ns);
      if (b > cursor) {
        const auto gap = static_cast<double>(b - cursor);
        ++c.gaps.count;
        c.gaps.total_ns += gap;
        c.gaps.largest_ns = std::max(c.gaps.largest_ns, gap);
      }
      c.busy_ns += static_cast<double>(end - b);
      cursor = std::max(cursor, end);
    }
    if (cursor < e.end_ns) {
      const auto gap = static_cast<double>(e.end_ns - cursor);
      ++c.gaps.count;
      c.gaps.total_ns += gap;
      c.gaps.largest_ns = std::max(c.gaps.largest_ns, gap);
    }
  }
  return c;
}

namespace {

// The one row a range instance is: its full push/pop path, or its start/end range.
std::string instance_row(const model::StageKey& key) {
  if (!key.push_pop.empty()) return model::push_pop_path(key);
  return key.start_end.empty() ? std::string() : model::range_label(key.start_end.front());
}

std::optional<Interval> kernel_interval(const model::Launch& l) {
  if (l.kind != model::LaunchKind::kKernel || !l.start_ns || !l.duration_ns) return std::nullopt;
  return Interval{*l.start_ns, *l.start_ns + std::llround(*l.duration_ns)};
}

}  // namespace

void add_timeline_figures(const model::Profile& profile, Aggregate& agg) {
  std::vector<Interval> all;
  for (const auto& l : profile.launches) {
    if (auto iv = kernel_interval(l)) all.push_back(*iv);
  }
  if (all.empty()) return;

  std::vector<std::vector<std::string>> rows_of_stage(profile.stages.size());
  for (std::size_t s = 0; s < profile.stages.size(); ++s) rows_of_stage[s] = stage_row_names(profile.stages[s]);
  std::unordered_map<std::string, std::vector<Interval>> busy, extents;
  for (const auto& l : profile.launches) {
    if (auto iv = kernel_interval(l)) {
      for (const auto& row : rows_of_stage[l.stage]) busy[row].push_back(*iv);
    }
  }
  for (const auto& r : profile.stage_ranges) {
    if (r.stage < profile.stages.size() && r.end_ns >= r.start_ns) {
      extents[instance_row(profile.stages[r.stage])].push_back(Interval{r.start_ns, r.end_ns});
    }
  }

  auto figures = [](StageRow& row, std::vector<Interval> kernels, std::vector<Interval> spans) {
    merge_intervals(kernels);
    if (spans.empty() && !kernels.empty()) {  // no range extents: the kernels' own span
      spans.push_back(Interval{kernels.front().begin_ns, kernels.back().end_ns});
    }
    merge_intervals(spans);
    Coverage c = coverage(kernels, spans);
    row.wall_ns = c.wall_ns;
    row.busy_ns = c.busy_ns;
    row.gaps = c.gaps;
  };
  for (StageRow& row : agg.stages) {
    auto b = busy.find(row.name);
    auto e = extents.find(row.name);
    if (b == busy.end() && e == extents.end()) continue;
    if (e != extents.end()) row.instances = e->second.size();
    figures(row, b == busy.end() ? std::vector<Interval>{} : std::move(b->second),
            e == extents.end() ? std::vector<Interval>{} : std::move(e->second));
  }

  StageRow whole;
  whole.name = whole.label = std::string(kWholeRunStage);
  for (const auto& l : profile.launches) {
    if (l.kind == model::LaunchKind::kKernel) whole.launches += l.count;
  }
  if (agg.totals.kernel_time_ns) {
    whole.kernel_time_ns = *agg.totals.kernel_time_ns;
    whole.has_kernel_time = true;
  }
  figures(whole, std::move(all), {});
  agg.stages.insert(agg.stages.begin(), std::move(whole));
}

}  // namespace kernlens::analysis
