#include "kernlens/profile/ncu_command.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "kernlens/common/escape.h"

namespace kernlens::profile {
namespace {

// Section identifiers as `ncu --list-sections` names them (Nsight Compute 2025.3).
constexpr std::array<std::string_view, 1> kQuickSections = {"SpeedOfLight"};
constexpr std::array<std::string_view, 2> kMemorySections = {"SpeedOfLight",
                                                             "MemoryWorkloadAnalysis"};
constexpr std::array<std::string_view, 6> kOccupancySections = {
    "SpeedOfLight", "MemoryWorkloadAnalysis", "Occupancy",
    "LaunchStats",  "SchedulerStats",         "WarpStateStats"};
constexpr std::array<std::string_view, 10> kRooflineSections = {
    "SpeedOfLight",
    "MemoryWorkloadAnalysis",
    "Occupancy",
    "LaunchStats",
    "SchedulerStats",
    "WarpStateStats",
    "SpeedOfLight_RooflineChart",
    "SpeedOfLight_HierarchicalTensorRooflineChart",
    "SpeedOfLight_HierarchicalSingleRooflineChart",
    "SpeedOfLight_HierarchicalDoubleRooflineChart"};

// Each tier adds to the one before; detailed and full are ncu's own section sets.
constexpr std::array<TierSpec, 6> kTiers = {{
    {Tier::kQuick, "quick", "", kQuickSections},
    {Tier::kMemory, "memory", "", kMemorySections},
    {Tier::kOccupancy, "occupancy", "", kOccupancySections},
    {Tier::kRoofline, "roofline", "", kRooflineSections},
    {Tier::kDetailed, "detailed", "detailed", {}},
    {Tier::kFull, "full", "full", {}},
}};


void append(std::vector<std::string>& argv, std::initializer_list<std::string_view> args) {
  for (auto a : args) argv.emplace_back(a);
}

void append_program(std::vector<std::string>& argv, std::span<const std::string> program) {
  argv.insert(argv.end(), program.begin(), program.end());
}

// --nvtx records the NVTX context; it is also required by --nvtx-include (docs, "NVTX
// Filtering": "NVTX filtering requires --nvtx option").
void append_nvtx_filters(std::vector<std::string>& argv, const NcuSettings& settings) {
  for (const auto& expr : settings.nvtx_include) append(argv, {"--nvtx-include", expr});
}

}  // namespace

bool section_available(const NcuSettings& settings, std::string_view section) {
  const auto& known = settings.available_sections;
  return known.empty() || std::find(known.begin(), known.end(), section) != known.end();
}

std::span<const TierSpec> tier_table() {
  return kTiers;
}

const TierSpec& tier_spec(Tier tier) {
  return *std::find_if(kTiers.begin(), kTiers.end(),
                       [&](const TierSpec& spec) { return spec.tier == tier; });
}

Result<Tier> parse_tier(std::string_view name) {
  for (const auto& spec : kTiers) {
    if (spec.name == name) return spec.tier;
  }
  return make_error("", 0,
                    fmt::format("unknown tier '{}' (quick, memory, occupancy, roofline, "
                                "detailed or full)",
                                name));
}

std::string_view to_string(ReplayMode mode) {
  return mode == ReplayMode::kKernel ? "kernel" : "application";
}

std::string_view to_string(ClockControl clocks) {
  return clocks == ClockControl::kNone ? "none" : "base";
}

Result<ClockControl> parse_clock_control(std::string_view name) {
  if (name == "none") return ClockControl::kNone;
  if (name == "base") return ClockControl::kBase;
  return make_error("", 0, fmt::format("unknown clock control '{}' (none or base)", name));
}

// A report, not `--csv --page raw` on stdout: stdout carries the program's own output and
// ncu's ==PROF== lines before the CSV (tests/fixtures/ncu/demo_live_raw_stdout.csv), while a
// report holds only results, is still written when profiling fails part way (the
// "==PROF== Report:" line after "==ERROR==" in ncu_qwen_decode_stdout.log), and stays in the
// run directory for ncu-ui. --cache-control none: flushing caches before every launch would
// change the times being measured; one metric needs one pass, so there is no replay to keep
// consistent.
std::vector<std::string> discovery_argv(const NcuSettings& settings, const std::string& report_base,
                                        std::span<const std::string> program) {
  std::vector<std::string> argv{settings.ncu};
  append(argv, {"--target-processes", "all", "--clock-control", to_string(settings.clock_control),
                "--cache-control", "none", "--metrics", "gpu__time_duration.sum", "--nvtx"});
  append_nvtx_filters(argv, settings);
  append(argv, {"-o", report_base});
  append_program(argv, program);
  return argv;
}

namespace {

// What one deep-pass run measures: replay, clocks, the tier's sections, the NVTX filters, the
// kernel filter, the count, --kill and the report. `with_nvtx`: whether --nvtx goes too (ncu
// refuses it with --mode attach, where the launch gave it).
void append_deep_options(std::vector<std::string>& argv, const NcuSettings& settings, Tier tier, ReplayMode replay,
                         const DeepInvocation& invocation, bool with_nvtx) {
  append(argv, {"--replay-mode", to_string(replay), "--clock-control", to_string(settings.clock_control)});
  const TierSpec& spec = tier_spec(tier);
  if (!spec.set.empty()) append(argv, {"--set", spec.set});
  for (auto section : spec.sections) {
    if (section_available(settings, section)) append(argv, {"--section", section});
  }
  if (!settings.nvtx_include.empty()) {
    if (with_nvtx) argv.emplace_back("--nvtx");
    append_nvtx_filters(argv, settings);
  }
  append(argv, {"--kernel-name-base", invocation.kernel_name_base});
  if (!invocation.kernel_id.empty()) {
    append(argv, {"--kernel-id", invocation.kernel_id});
  } else {
    // --launch-skip and --launch-count count only launches that match the kernel filters
    // (docs, "Profile" options), NVTX filters included.
    append(argv, {"--kernel-name", invocation.kernel_name, "--launch-skip",
                  std::to_string(invocation.launch_skip)});
  }
  append(argv, {"--launch-count", std::to_string(invocation.launch_count)});
  // "--kill 1" printed "==PROF== Trying to shutdown target application" after the last
  // counted launch and ncu exited 0 (ncu_filter_probe.sh on the H100).
  if (settings.kill_after_last) append(argv, {"--kill", "1"});
  append(argv, {"-o", invocation.report_base});
}

// One target on its own ports: the launch listens there only, the attach looks there only, so
// two runs on one host never attach to each other's program. On the H100 (ncu 2025.3.1,
// scripts/device/ncu_attach_timing_probe.sh) an attach found nothing with --max-connections 1 or
// without --nvtx at launch, and found the program with 4 ports and --nvtx.
void append_port(std::vector<std::string>& argv, int port) {
  append(argv, {"--port", std::to_string(port), "--max-connections", std::to_string(kEarlyStartPorts)});
}

}  // namespace

std::vector<std::string> deep_argv(const NcuSettings& settings, Tier tier, ReplayMode replay,
                                   const DeepInvocation& invocation,
                                   std::span<const std::string> program) {
  std::vector<std::string> argv{settings.ncu};
  append(argv, {"--target-processes", "all"});
  append_deep_options(argv, settings, tier, replay, invocation, true);
  append_program(argv, program);
  return argv;
}

// application-only: a child process that uses CUDA would otherwise wait for an attach that
// never comes (the early start is used only when discovery saw one process).
std::vector<std::string> launch_argv(const NcuSettings& settings, int port, std::span<const std::string> program) {
  std::vector<std::string> argv{settings.ncu};
  append(argv, {"--mode", "launch", "--target-processes", "application-only", "--nvtx"});
  append_port(argv, port);
  append_program(argv, program);
  return argv;
}

std::vector<std::string> attach_argv(const NcuSettings& settings, Tier tier, ReplayMode replay,
                                     const DeepInvocation& invocation, int port) {
  std::vector<std::string> argv{settings.ncu};
  append(argv, {"--mode", "attach", "--hostname", "127.0.0.1"});
  append_port(argv, port);
  append_deep_options(argv, settings, tier, replay, invocation, false);
  return argv;
}

std::vector<std::vector<std::string>> export_argvs(const std::string& ncu,
                                                   const std::string& report_path) {
  // Mangled names: the one spelling --kernel-name-base mangled matches exactly. The default
  // (demangled) export simplifies names ("at::elementwise_kernel<128, ...>") unlike the form
  // --kernel-name-base demangled matches ("at::native::elementwise_kernel<(int)128, ...>"),
  // as ncu 2025.3.1's "Available Kernels" list showed on the H100.
  return {
      {ncu, "--import", report_path, "--page", "raw", "--csv", "--print-units", "base",
       "--print-kernel-base", "mangled"},
      {ncu, "--import", report_path, "--page", "details", "--csv", "--print-kernel-base", "mangled"},
  };
}

// ncu docs, "NVTX Filtering", Additional Information: the quantifiers @ , [ ] / * + "can be
// used in domain/range names using prefix '\'", and a '\' in a name is written doubled. The
// docs' "\\" variants are those characters inside a shell's double quotes; in an argv, which
// no shell reads, one backslash is the prefix.
std::string nvtx_escape(std::string_view name) { return backslash_escape(name, "@,[]/*+\\"); }

namespace {
std::string with_domain(std::string_view domain, std::string body) {
  if (domain.empty()) return body;  // no '@': ncu assumes the default domain
  return nvtx_escape(domain) + "@" + body;
}
}  // namespace

// Push/pop: ranges joined by '/'; "When only a single range name is given, the delimiter must
// be appended to indicate that this refers to a push/pop range" (docs, "NVTX Filtering").
std::string nvtx_push_pop_filter(std::string_view domain, std::span<const std::string> path) {
  std::string body;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i > 0) body += '/';
    body += nvtx_escape(path[i]);
  }
  if (path.size() == 1) body += '/';
  return with_domain(domain, std::move(body));
}

// Start/end: ranges joined by ',' (kernels inside all of them), no trailing delimiter.
std::string nvtx_start_end_filter(std::string_view domain, std::span<const std::string> ranges) {
  std::string body;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (i > 0) body += ',';
    body += nvtx_escape(ranges[i]);
  }
  return with_domain(domain, std::move(body));
}

}  // namespace kernlens::profile
