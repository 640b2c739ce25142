// Nsight Compute command lines, as argv vectors (never shell strings):
//
//   discovery_argv()   timing mode: every launch, only gpu__time_duration.sum, into a report
//   launch_argv(), attach_argv()   the deep pass's first run in two halves (early_start.h)
//   deep_argv()        one deep-pass invocation: the tier's sections, one kernel filter and
//                      an invocation number or a window of its launches, into
//                      <out>/deep/<name>.ncu-rep
//   export_argvs()     the report to the raw page (base units) and the details page, as CSV
//   nvtx_*_filter()    --nvtx-include expressions for push/pop and start/end ranges, names
//                      escaped
//
// Tiers are a table (kTiers), not code.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/error.h"

namespace kernlens::profile {

enum class Tier : std::uint8_t { kQuick, kMemory, kOccupancy, kRoofline, kDetailed, kFull };

// What a tier asks ncu for: a section set, or sections one by one.
struct TierSpec {
  Tier tier;
  std::string_view name;                       // as the user writes it: "quick"
  std::string_view set;                        // --set value; empty when sections are listed
  std::span<const std::string_view> sections;  // --section values
};

std::span<const TierSpec> tier_table();
const TierSpec& tier_spec(Tier tier);
Result<Tier> parse_tier(std::string_view name);

enum class ReplayMode : std::uint8_t { kKernel, kApplication };
enum class ClockControl : std::uint8_t { kNone, kBase };
std::string_view to_string(ReplayMode mode);
std::string_view to_string(ClockControl clocks);
Result<ClockControl> parse_clock_control(std::string_view name);

// Settings every ncu run of a profile shares.
struct NcuSettings {
  std::string ncu = "ncu";                           // path of the executable
  ClockControl clock_control = ClockControl::kNone;  // kernlens never changes clocks unasked
  std::vector<std::string> nvtx_include;             // ncu --nvtx-include expressions
  // The deep pass ends the program once its last planned launch is profiled (--kill 1),
  // skipping the rest of the run (decode steps after a profiled prefill, teardown).
  bool kill_after_last = false;
  // Section identifiers `ncu --list-sections` printed; empty: unknown, every section is passed.
  std::vector<std::string> available_sections;
};

// Whether `settings`' ncu has `section` (true when its sections are unknown).
bool section_available(const NcuSettings& settings, std::string_view section);

// Discovery in timing mode: all launches, one metric, no cache flushes, written to
// `report_base` (ncu appends ".ncu-rep"), then read through export_argvs()'s raw page.
std::vector<std::string> discovery_argv(const NcuSettings& settings, const std::string& report_base,
                                        std::span<const std::string> program);

struct DeepInvocation {
  std::string kernel_name_base;  // "function", "demangled" or "mangled"
  std::string kernel_name;       // "regex:^...$"
  std::string kernel_id;         // "::regex:^...$:N": replaces kernel_name and launch_skip
  std::uint64_t launch_skip = 0;
  std::uint64_t launch_count = 1;
  std::string report_base;  // <out>/deep/<name>, without ".ncu-rep"
};

std::vector<std::string> deep_argv(const NcuSettings& settings, Tier tier, ReplayMode replay,
                                   const DeepInvocation& invocation,
                                   std::span<const std::string> program);

// The same run in two halves (early_start.h): launch_argv() starts the program, which waits at
// its first CUDA call on `port` (127.0.0.1); attach_argv() connects there later with what to
// measure. ncu 2025.3.1 on the H100 refused --nvtx at attach and took the NVTX filters there
// when the launch had --nvtx (scripts/device/ncu_attach_probe.sh).
inline constexpr int kEarlyStartPorts = 4;  // --max-connections: ports from --port on
std::vector<std::string> launch_argv(const NcuSettings& settings, int port, std::span<const std::string> program);
std::vector<std::string> attach_argv(const NcuSettings& settings, Tier tier, ReplayMode replay,
                                     const DeepInvocation& invocation, int port);

// The exports of one report: [0] raw page in base units, [1] details page. Each writes CSV
// to stdout; the caller sends it to a file.
std::vector<std::vector<std::string>> export_argvs(const std::string& ncu,
                                                   const std::string& report_path);

// A domain or range name with ncu's NVTX quantifiers (@ , [ ] / * + and \) escaped by '\'.
std::string nvtx_escape(std::string_view name);
// Kernels inside the push/pop ranges `path` (outermost first) of `domain` (empty: the
// default domain). A single range gets the trailing '/' that marks it push/pop.
std::string nvtx_push_pop_filter(std::string_view domain, std::span<const std::string> path);
// Kernels inside all the start/end ranges `ranges` of `domain`.
std::string nvtx_start_end_filter(std::string_view domain, std::span<const std::string> ranges);


}  // namespace kernlens::profile
