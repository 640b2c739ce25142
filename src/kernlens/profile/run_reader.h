// A run directory written by `kernlens profile` (DESIGN.md §5), read back into one profile:
// the discovery timeline with the deep pass's metrics joined onto it, the data its
// analysis.json came from. `profile` itself builds its profile with the same two halves.
//
//   is_run_directory()      a directory holding manifest.json
//   read_run_directory()    manifest + discovery/ + deep/ -> one profile
//   read_discovery()        the timeline export, keeping only the --nvtx-include stages
//   join_deep_exports()     the deep pass's CSV exports joined onto the timeline
//   read_profile_input()    a run directory or any export file (ingest::read_input)
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/model/profile.h"

namespace kernlens::profile {

// The format id of a run directory among a profile's inputs (its first; the exports read
// from it follow).
inline constexpr std::string_view kRunDirectoryFormat = "kernlens-run";

bool is_run_directory(const std::string& path);

// Reads the timeline export `path`; launches outside the push/pop `nvtx_include` paths
// ("[DOMAIN@]A/B", as the user gave them) leave it when `filter_stages` (nsys records every
// launch; ncu filtered them itself).
Status read_discovery(const std::string& path, const std::vector<std::string>& nvtx_include,
                      bool filter_stages, model::Profile& timeline, const ingest::ReadOptions& options);
// The same for several files of one timeline (the tracer writes one per process).
Status read_discovery(const std::vector<std::string>& paths, const std::vector<std::string>& nvtx_include,
                      bool filter_stages, model::Profile& timeline, const ingest::ReadOptions& options);

// Reads the deep pass's exports and joins them onto `timeline`. Returns warnings: an export
// that could not be read (the rest still count), a deep kernel the timeline does not have.
std::vector<std::string> join_deep_exports(const std::vector<std::string>& csv_paths,
                                           model::Profile& timeline, const ingest::ReadOptions& options);

// `profile` must be empty: a run directory is a profile of its own. The discovery export is
// discovery/timeline.sqlite (nsys) or discovery/timing_raw.csv (ncu), gzipped or not, or the
// tracer's discovery/kernlens-*.kltrace (one per process); the
// deep exports are deep/*_raw.csv and deep/*_details.csv. Warnings go to the inputs'.
Status read_run_directory(const std::string& dir, model::Profile& profile,
                          const ingest::ReadOptions& options);

// The discovery export of the run directory `dir` as `method` ("nsys", "ncu", "tracer") writes
// it: discovery/timeline.sqlite, discovery/timing_raw.csv (each gzipped or not) or the tracer's
// discovery/kernlens-*.kltrace; for another method (a manifest that does not say), the first
// of those found. Empty when there is none.
std::vector<std::string> discovery_exports(const std::string& dir, std::string_view method);

// The profiled program's argv from a run directory's manifest; empty when it has none.
std::vector<std::string> read_run_command(const std::string& dir);
// The manifest's "tags" (`profile --tag KEY=VALUE`), an object of strings (numbers are taken
// as their text) or a list of "KEY=VALUE" strings; empty when it has none.
std::map<std::string, std::string> read_run_tags(const std::string& dir);

// What the analysis reads and nothing more: a wide raw page decodes several times faster.
ingest::ReadOptions analysis_read_options();

// A run directory (alone) or an export file (any number of them) into `profile`.
Status read_profile_input(const std::string& path, model::Profile& profile,
                          const ingest::ReadOptions& options);

}  // namespace kernlens::profile
