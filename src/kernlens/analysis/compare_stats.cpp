#include "kernlens/analysis/compare_stats.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace kernlens::analysis {
namespace {

// An index in [0, n) from the generator's 64 bits, the same on every standard library (the
// modulo's bias, below n / 2^64, is nothing next to the bootstrap's own error).
std::size_t draw(std::mt19937_64& rng, std::size_t n) {
  return static_cast<std::size_t>(rng() % n);
}

// One bootstrap resample of the group, pooled: runs drawn with replacement, then samples
// within each drawn run (a group of one run: its samples alone).
void resample(const Clustered& group, std::mt19937_64& rng, std::vector<double>& out) {
  out.clear();
  const bool by_runs = group.size() > 1;
  for (std::size_t r = 0; r < group.size(); ++r) {
    const auto& run = group[by_runs ? draw(rng, group.size()) : r];
    for (std::size_t s = 0; s < run.size(); ++s) out.push_back(run[draw(rng, run.size())]);
  }
}

// The q-quantile (0..1) of sorted values, interpolated between neighbours.
double quantile(const std::vector<double>& sorted, double q) {
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(at));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (at - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

}  // namespace

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2) return upper;
  return (*std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

std::vector<double> pooled(const Clustered& group) {
  std::vector<double> all;
  for (const auto& run : group) all.insert(all.end(), run.begin(), run.end());
  return all;
}

std::size_t sample_count(const Clustered& group) {
  std::size_t n = 0;
  for (const auto& run : group) n += run.size();
  return n;
}

RatioEstimate ratio_of_medians(const Clustered& base, const Clustered& candidate, const BootstrapOptions& options) {
  RatioEstimate e;
  e.base_median = median(pooled(base));
  e.candidate_median = median(pooled(candidate));
  if (e.base_median <= 0) return e;
  e.ratio = e.candidate_median / e.base_median;
  if (sample_count(base) < 2 || sample_count(candidate) < 2 || options.resamples < 1) return e;
  std::mt19937_64 rng(options.seed);
  std::vector<double> ratios, b, c;
  ratios.reserve(static_cast<std::size_t>(options.resamples));
  for (int i = 0; i < options.resamples; ++i) {
    resample(base, rng, b);
    resample(candidate, rng, c);
    const double base_median = median(b);
    // A resample of a base with zeros can have a median of 0: it says nothing about a ratio.
    if (base_median > 0) ratios.push_back(median(c) / base_median);
  }
  if (ratios.empty()) return e;
  std::sort(ratios.begin(), ratios.end());
  e.interval = Interval{quantile(ratios, options.alpha / 2), quantile(ratios, 1 - options.alpha / 2)};
  return e;
}

std::pair<Clustered, Clustered> split_halves(const Clustered& group) {
  Clustered first, second;
  if (sample_count(group) < 2) return {first, second};
  if (group.size() > 1) {
    for (std::size_t r = 0; r < group.size(); ++r) (r % 2 ? second : first).push_back(group[r]);
    return {first, second};
  }
  first.emplace_back();
  second.emplace_back();
  for (std::size_t s = 0; s < group[0].size(); ++s) (s % 2 ? second : first)[0].push_back(group[0][s]);
  return {first, second};
}

std::optional<double> noise_floor_pct(const Clustered& group, const BootstrapOptions& options) {
  auto [first, second] = split_halves(group);
  if (first.empty()) return std::nullopt;
  const RatioEstimate e = ratio_of_medians(first, second, options);
  if (!e.ratio) return std::nullopt;
  double farthest = std::abs(*e.ratio - 1);
  if (e.interval) farthest = std::max({farthest, std::abs(e.interval->low - 1), std::abs(e.interval->high - 1)});
  return farthest * 100;
}

}  // namespace kernlens::analysis
