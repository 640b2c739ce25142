#include "kernlens/report/provenance.h"

#include <array>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "kernlens/report/format.h"
#include "kernlens/report/summary.h"

namespace kernlens::report {
namespace {

struct HowInfo {
  How how;
  std::string_view name;
  std::string_view mark;
  std::string_view footnote;
};

// Ordered from the most certain to the least: weaker() takes the later one.
constexpr std::array<HowInfo, 4> kHows = {{
    {How::kMeasured, "measured", "", "measured"},
    {How::kScaled, "scaled", "s", "scaled up from the launches that were measured"},
    {How::kAnalytic, "analytic", "a", "analytic: from the model's size or a count given on the command line"},
    {How::kAssumed, "assumed", "*", "rests on an assumption (e.g. the precision whose peak MFU divides by)"},
}};

const HowInfo& info(How how) { return kHows[static_cast<std::size_t>(how)]; }

// How a stage's FLOPs were found, read from the start of StageWork::flops_source (the words
// analysis/mfu.cpp writes). The first prefix that matches wins.
constexpr std::array<std::pair<std::string_view, How>, 4> kFlopsSources = {{
    {"measured on ", How::kScaled},  // "measured on 40.0% of the kernel time, scaled to all of it"
    {"measured", How::kMeasured},
    {"--model-flops", How::kAnalytic},
    {"2 x params x tokens", How::kAnalytic},
}};

std::optional<How> flops_how(std::string_view source) {
  for (const auto& [prefix, how] : kFlopsSources) {
    if (source.substr(0, prefix.size()) == prefix) return how;
  }
  return std::nullopt;
}

}  // namespace

std::string_view how_mark(How how) { return info(how).mark; }
std::string_view how_footnote(How how) { return info(how).footnote; }
std::string_view how_name(How how) { return info(how).name; }

How weaker(How a, How b) { return static_cast<int>(a) >= static_cast<int>(b) ? a : b; }

std::optional<Provenance> flops_provenance(const analysis::StageWork& work) {
  if (work.flops_source.empty()) return std::nullopt;
  auto how = flops_how(work.flops_source);
  if (!work.flops || !how) return Provenance{How::kMeasured, "not known: FLOPs " + work.flops_source};
  return Provenance{*how, fmt::format("{}: {}", how_name(*how), work.flops_source)};
}

Provenance mfu_provenance(const analysis::StageWork& work) {
  if (!work.mfu) return Provenance{How::kMeasured, mfu_note(work)};
  How how = flops_how(work.flops_source).value_or(How::kMeasured);
  if (work.precision_source != "measured" && work.precision_source != "--precision") how = weaker(how, How::kAssumed);
  return Provenance{how, fmt::format("{}: {}", how_name(how), mfu_note(work))};
}

Provenance deep_provenance(const analysis::KernelMetrics& m, std::uint64_t deep_launches) {
  std::string share = m.time_ns > 0 ? fmt::format(" ({} of its time)", human_percent(m.deep_time_ns / m.time_ns)) : "";
  if (deep_launches >= m.launches) {
    return Provenance{How::kMeasured, fmt::format("measured by ncu on all {} launches", m.launches)};
  }
  return Provenance{How::kScaled, fmt::format("scaled: measured by ncu on {} of {} launches{}, the others taken to "
                                              "run alike",
                                              deep_launches, m.launches, share)};
}

}  // namespace kernlens::report
