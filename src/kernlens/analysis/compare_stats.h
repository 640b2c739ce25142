// The statistics of a group comparison: medians of two groups of samples, the ratio of the
// candidate's median to the base's with a confidence interval, and the noise floor of a
// group compared with itself split in halves.
//
// A group is clustered: samples (one repetition of the measured region, or one whole run)
// come from runs (processes), and repetitions inside one process vary less than processes
// do. The interval is a two-stage percentile bootstrap: each resample draws the group's runs
// with replacement, then each drawn run's samples with replacement (a group of one run draws
// its samples alone), so the spread between processes is in the interval whenever there are
// several. Why the bootstrap and not Hodges-Lehmann / Mann-Whitney: those assume independent
// samples and a pure shift; the bootstrap takes the runs x repetitions structure as it is,
// and gives the ratio of medians (the figure the tables print) directly.
//
// The random numbers come from std::mt19937_64 (its sequence is fixed by the C++ standard)
// with a fixed seed, and indexes are drawn from it by our own arithmetic (the standard's
// distributions differ between library implementations): the same input gives the same
// interval on every machine, so outputs can be golden files.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace kernlens::analysis {

// Samples of one figure, per run: [run][repetition].
using Clustered = std::vector<std::vector<double>>;

struct BootstrapOptions {
  double alpha = 0.05;              // the interval is 1 - alpha, two-sided
  int resamples = 2000;
  std::uint64_t seed = 0x6b65726e6c656e73;  // "kernlens"
};

struct Interval {
  double low = 0, high = 0;
  bool contains(double x) const { return low <= x && x <= high; }
};

struct RatioEstimate {
  double base_median = 0, candidate_median = 0;
  std::optional<double> ratio;        // candidate / base; absent when the base median is 0
  std::optional<Interval> interval;   // absent when a side has fewer than 2 samples
  // The interval excludes 1: the change is significant at level alpha.
  bool significant() const { return interval && !interval->contains(1.0); }
};

// The median (the mean of the two middle values for an even count); 0 for no values.
double median(std::vector<double> values);

// Every sample of the group, runs in order.
std::vector<double> pooled(const Clustered& group);
std::size_t sample_count(const Clustered& group);

// The ratio of medians with its bootstrap interval.
RatioEstimate ratio_of_medians(const Clustered& base, const Clustered& candidate, const BootstrapOptions& options);

// The group in two halves that alternate (1st, 3rd, ... against 2nd, 4th, ...), so that a
// drift over time falls on both: by runs when it has several, else by the samples of its one
// run. Both halves empty when it has fewer than 2 samples.
std::pair<Clustered, Clustered> split_halves(const Clustered& group);

// The noise floor in percent: the largest change, up or down, inside the interval of the
// group compared with its own halves. Absent with fewer than 2 samples (or a median of 0).
std::optional<double> noise_floor_pct(const Clustered& group, const BootstrapOptions& options);

}  // namespace kernlens::analysis
