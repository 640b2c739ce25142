// Finding and probing NVIDIA's profilers: where `ncu` and `nsys` are installed, which version
// each is, which sections `ncu --list-sections` offers and which metrics `ncu --query-metrics`
// knows, so that requested sections and metrics can be adapted to the installed version.
// Parsers take the tools' text output and are unit-testable; the probe functions run the tools.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/profile/process.h"

namespace kernlens::profile {

enum class ProfilerTool { kNcu, kNsys };

// "2025.3.1.0": year.minor.patch.build; missing trailing parts are 0.
struct ToolVersion {
  int year = 0;
  int minor = 0;
  int patch = 0;
  int build = 0;
  std::string text;  // the version as printed, e.g. "2025.3.1.0"

  // True when this version is at least year.minor.
  bool at_least(int min_year, int min_minor) const {
    return year > min_year || (year == min_year && minor >= min_minor);
  }
};

// The version in `ncu --version` ("... Version 2025.3.1.0 (build 36398880) ...") or
// `nsys --version` ("NVIDIA Nsight Systems version 2025.3.1.0-..."): the number after the
// last word "version" (any case).
Result<ToolVersion> parse_tool_version(std::string_view version_output);

struct NcuSection {
  std::string identifier;    // what `--section` takes, e.g. "SpeedOfLight"
  std::string display_name;  // e.g. "GPU Speed Of Light Throughput"
  bool enabled = false;      // collected by default (no --section/--set given)
  std::string filename;      // as printed; ncu shortens long paths to "...tail"
};

// The table printed by `ncu --list-sections`: dashed rule, header (Identifier, Display Name,
// Enabled, Filename), dashed rule, one row per section, dashed rule. Columns are found from
// the header's rule, not assumed.
Result<std::vector<NcuSection>> parse_ncu_sections(std::string_view list_sections_output);

// The metric names in `ncu --query-metrics` output (base names such as "dram__bytes"; the
// rows under the "Metric Name" header), sorted and unique.
Result<std::vector<std::string>> parse_ncu_metric_names(std::string_view query_metrics_output);

// The base name of a requested metric: "dram__bytes_read.sum.per_second" -> "dram__bytes_read".
std::string_view metric_base_name(std::string_view metric);

// The requested metrics (full names with rollups) whose base name is not in `known_metrics`
// (sorted, as parse_ncu_metric_names returns them), in the order requested.
std::vector<std::string> unknown_metrics(const std::vector<std::string>& requested,
                                         const std::vector<std::string>& known_metrics);

// Where to look for a tool. Empty fields take the process's own values.
struct ToolSearchOptions {
  std::string explicit_path;       // --ncu / --nsys given by the user: only this is tried
  std::string path_env;            // PATH-style list; empty: $PATH
  bool search_system_dirs = true;  // /usr/local/cuda/bin and the /opt/nvidia install trees
};

// Every place looked at, in order: PATH, /usr/local/cuda/bin, the newest installs under
// /opt/nvidia first (and for nsys the copy bundled with Nsight Compute last).
std::vector<std::string> tool_candidates(ProfilerTool tool, const ToolSearchOptions& options);

// The first executable candidate. Error: "ncu not found (looked in: ...)".
Result<std::string> locate_tool(ProfilerTool tool, const ToolSearchOptions& options);

struct ToolInfo {
  std::string path;
  ToolVersion version;
  std::string version_output;  // what --version printed, for the manifest
};

constexpr std::int64_t kProbeTimeoutNs = 30'000'000'000;

// Runs `path --version` and parses it.
Result<ToolInfo> probe_tool(const std::string& path, std::int64_t timeout_ns = kProbeTimeoutNs);

// ncu's `--version` and `--list-sections`, started at once and read later: `kernlens profile`
// asks while discovery runs, which takes two ncu start-ups (about half a second) off the whole
// command.
struct NcuProbe {
  std::string ncu;
  Result<PendingCapture> version;
  Result<PendingCapture> sections;
};
struct NcuFacts {
  Result<ToolInfo> info;
  Result<std::vector<NcuSection>> sections;
};
NcuProbe start_ncu_probe(const std::string& ncu, std::int64_t timeout_ns = kProbeTimeoutNs);
NcuFacts finish_ncu_probe(NcuProbe& probe);
// Runs `ncu --query-metrics` (needs a GPU; with `chip` e.g. "gh100", `--chip` works without).
Result<std::vector<std::string>> query_ncu_metrics(const std::string& ncu_path,
                                                   const std::string& chip = {},
                                                   std::int64_t timeout_ns = kProbeTimeoutNs);

const char* tool_name(ProfilerTool tool);

}  // namespace kernlens::profile
