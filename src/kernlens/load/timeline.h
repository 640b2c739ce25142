// The two halves of a run directory's profile, as `kernlens profile` builds it while it runs
// and load() builds it again from the files: the discovery timeline (keeping the
// --nvtx-include stages), and the deep pass's exports joined onto it.
#pragma once

#include <string>
#include <vector>

#include "kernlens/common/error.h"
#include "kernlens/ingest/reader.h"
#include "kernlens/model/profile.h"

namespace kernlens::load {

// Reads the timeline exports `paths` (the tracer writes one per process); launches outside the
// push/pop `nvtx_include` paths ("[DOMAIN@]A/B", as the user gave them) leave it when
// `filter_stages` (nsys and the tracer record every launch; ncu filtered them itself).
Status read_discovery(const std::vector<std::string>& paths, const std::vector<std::string>& nvtx_include,
                      bool filter_stages, model::Profile& timeline, const ingest::ReadOptions& options);

// Reads the deep pass's exports and joins them onto `timeline`. Returns warnings: an export
// that could not be read (the rest still count), a deep kernel the timeline does not have.
std::vector<std::string> join_deep_exports(const std::vector<std::string>& csv_paths, model::Profile& timeline,
                                           const ingest::ReadOptions& options);

// What the analysis reads and nothing more: a wide raw page decodes several times faster.
ingest::ReadOptions analysis_read_options();

}  // namespace kernlens::load
