// The run directory `kernlens profile` writes (DESIGN.md §5): where each file lies, for the
// code that writes it (profile/) and the code that reads it back (load/, sweep/).
//   <out>/<run_id>/manifest.json   what ran, with which tools, how it ended (manifest.h)
//   <out>/<run_id>/discovery/      the timeline export + kernels.csv (all kernels, ranked)
//   <out>/<run_id>/deep/           *.ncu-rep, raw and details CSV exports, profiler logs
//   <out>/<run_id>/analysis.json   what `analyze --format json` prints for the run
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/error.h"

namespace kernlens::rundir {

inline constexpr std::string_view kManifestFile = "manifest.json";

struct RunDir {
  std::string run_id;
  std::filesystem::path root, discovery, deep;

  std::filesystem::path manifest() const { return root / kManifestFile; }
  std::filesystem::path analysis() const { return root / "analysis.json"; }
  std::filesystem::path kernels_csv() const { return discovery / "kernels.csv"; }
};

// A directory holding manifest.json.
bool is_run_directory(const std::string& path);
// manifest.json of the run directory `dir`.
std::string manifest_path(const std::string& dir);

// "20261122-181503-python3": UTC time, then the program's file name (letters, digits, '-',
// '_', '.' kept; anything else becomes '_'), so runs sort by time and say what ran.
std::string make_run_id(std::chrono::system_clock::time_point now, std::string_view program);

// Creates <out>/<run_id>/ with discovery/ and deep/. An existing run directory is an error
// (a run never overwrites another) unless `force_overwrite`, and even then only a kernlens run
// directory (it holds manifest.json) or an empty directory is replaced, never anything else.
Result<RunDir> create_run_dir(const std::filesystem::path& out, const std::string& run_id,
                              bool force_overwrite = false);

// The files under the run directory, relative to it, sorted (manifest.json left out).
std::vector<std::string> run_dir_files(const RunDir& dir);

// --- discovery/ ----------------------------------------------------------------------------

enum class DiscoveryMethod : std::uint8_t { kTracer, kNsys, kNcu };

// What one discovery method leaves in discovery/ and how its timeline is read back.
struct DiscoveryLayout {
  DiscoveryMethod method;
  std::string_view name;         // as --discovery and the manifest's options.discovery name it
  std::string_view report_stem;  // the profiler's own report: <stem>.nsys-rep, <stem>.ncu-rep
  // The timeline export kernlens reads: <prefix><suffix>, gzipped or not; with
  // `one_per_process`, every <prefix>*<suffix> (the tracer writes one per process).
  std::string_view export_prefix, export_suffix;
  bool one_per_process;
  // The method records every launch, so --nvtx-include is applied on reading (ncu filters
  // while it profiles).
  bool records_every_launch;

  std::string export_file() const { return std::string(export_prefix) + std::string(export_suffix); }
};

// Every method, in the order `--discovery auto` tries them: cheapest first.
std::span<const DiscoveryLayout> discovery_layouts();
const DiscoveryLayout& discovery_layout(DiscoveryMethod method);
// nullptr for a name no method has ("auto", or a manifest written before discovery ended).
const DiscoveryLayout* find_discovery_layout(std::string_view name);

// The exports `layout` left in the folder `discovery` (in name order); empty when there are none.
std::vector<std::string> discovery_exports_in(const std::filesystem::path& discovery, const DiscoveryLayout& layout);
// The discovery export of the run directory `dir` as the method named `method` writes it; for
// a name no method has, the first method's whose export is there, a single file before
// one per process (a fallback leaves the files of the methods that failed beside those of the
// one that ran). Empty when there is none.
std::vector<std::string> discovery_exports(const std::string& dir, std::string_view method);
// The files discovery_exports() looks for, in words, for an error message.
std::string discovery_export_names();

// --- deep/ ---------------------------------------------------------------------------------

// The pages the deep pass exports from each of its ncu reports, as deep/<stem>_<page>.csv.
inline constexpr std::array<std::string_view, 2> kDeepPages = {"raw", "details"};
std::filesystem::path deep_export(const RunDir& dir, std::string_view stem, std::string_view page);
// deep/<stem>_raw.csv and <stem>_details.csv (gzipped or not) of run directory `dir`, in name order.
std::vector<std::string> deep_exports(const std::string& dir);

}  // namespace kernlens::rundir
